"""Check a merged TOML table against the settings dataclasses and build a SysConfig.

Generic on purpose: what a key may hold comes from the field's type hint and its
:class:`~trimcp.config._schema.Spec`, never from code written for that key. Supported hints:
``str``, ``int`` (not bool), ``float`` (ints accepted, bools not), ``bool``, ``Literal[...]``
choices, ``tuple[T, ...]`` (a TOML array) of those scalars or choices, and nested settings
dataclasses (TOML tables). Any other hint is a programming error and raises TypeError.

Every problem found is collected, walking keys in the order they were written, so one
``trimcp config check`` reports them all and the first one is always the same.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeGuard, TypeVar

from ._merge import Origins
from ._problem import Problem, config_error
from ._rules import check_rules
from ._schema import Spec, spec_of
from ._settings import SysConfig
from ._toml_text import KeyPath, describe, dotted, format_key, format_value

if TYPE_CHECKING:
    from collections.abc import Mapping

    from _typeshed import DataclassInstance

S = TypeVar("S", bound="DataclassInstance")

_SCALAR_PHRASES: dict[type, tuple[str, str]] = {
    str: ("a string", "strings"),
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    bool: ("true or false", "booleans (true or false)"),
}


class _Failed:
    """The sentinel type of a value that did not validate; its problem is already recorded."""


_FAILED = _Failed()


@dataclass(frozen=True, slots=True)
class _Setting:
    """One file-settable field of a settings dataclass, with its hint resolved."""

    name: str
    hint: object
    spec: Spec
    default: object


#: Top-level tables of sys_config.toml that this package does not read: ``[upstreams]``, the
#: MCP servers a host connects to, is ``trimcp.client``'s (its own validation names problems
#: there, and ``trimcp config check`` runs both).
FOREIGN_TABLES: frozenset[str] = frozenset({"upstreams"})


def validate_config(data: Mapping[str, object], *, file: str = "<mapping>") -> SysConfig:
    """Build a SysConfig from an already parsed TOML table, such as ``tomllib.loads`` returns.

    ``include`` is not understood here (it is a file feature of ``load_config``); ``sources``
    of the result is empty.

    Args:
        data: the top-level table.
        file: named as the source in error messages.

    Raises:
        ConfigError: describing every unknown key, wrong type and bad value, first found
            first; or, when every key is right, every broken rule between settings.
    """
    return build_config(data, Origins(file), sources=())


def build_config(
    data: Mapping[str, object], origins: Origins, *, sources: tuple[str, ...]
) -> SysConfig:
    """Build a SysConfig from merged tables, naming in errors the file that wrote each key.

    Each key is checked first; the rules between settings (``_rules.py``) only then.
    Tables read by other parts (``FOREIGN_TABLES``) are left to them.
    """
    own = {key: value for key, value in data.items() if key not in FOREIGN_TABLES}
    built = build_settings(SysConfig, own, origins)
    config = dataclasses.replace(built, sources=sources, written_by=origins.freeze())
    check_rules(config)
    return config


def build_settings(cls: type[S], data: Mapping[str, object], origins: Origins) -> S:
    """Build the settings dataclass ``cls`` from a table; see the module docstring.

    Raises:
        ConfigError: reporting every problem found, in the order the keys were written.
        TypeError: ``cls`` uses a type hint this module does not support.
    """
    validator = _Validator(origins)
    built = validator.table(cls, data, ())
    if not isinstance(built, cls):
        raise config_error(*validator.problems)
    return built


@functools.cache
def _settings_of(cls: type[DataclassInstance]) -> dict[str, _Setting]:
    # get_type_hints, not field.type: with `from __future__ import annotations` the latter is
    # only the annotation's source text.
    hints = typing.get_type_hints(cls)
    settings: dict[str, _Setting] = {}
    for field in dataclasses.fields(cls):
        spec = spec_of(field)
        if not spec.from_file:
            continue
        if field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = field.default
        settings[field.name] = _Setting(field.name, hints[field.name], spec, default)
    return settings


def _is_settings_class(hint: object) -> TypeGuard[type[DataclassInstance]]:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _phrase(hint: object, *, plural: bool = False) -> str:
    """Describe what a hint accepts, e.g. "an integer" or 'one of "text", "json"'."""
    if isinstance(hint, type) and hint in _SCALAR_PHRASES:
        return _SCALAR_PHRASES[hint][1 if plural else 0]
    if _is_settings_class(hint):
        return "tables" if plural else "a table"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        choices = ", ".join(format_value(arg) for arg in args)
        return f"values each one of {choices}" if plural else f"one of {choices}"
    if _is_array(origin, args):
        return f"an array of {_phrase(args[0], plural=True)}"
    raise TypeError(f"settings cannot use the type {hint!r}")


def _is_array(origin: object, args: tuple[object, ...]) -> bool:
    return origin is tuple and args[1:] == (Ellipsis,)


def _expected(setting: _Setting) -> str:
    text = _phrase(setting.hint)
    if setting.spec.check is not None:
        text += f" {setting.spec.check.rule}"
    if setting.spec.meaning:
        text += f" ({setting.spec.meaning})"
    return text


class _Validator:
    """Walks one table tree, converting values and recording a Problem for each bad one."""

    __slots__ = ("origins", "problems")

    def __init__(self, origins: Origins) -> None:
        self.origins = origins
        self.problems: list[Problem] = []

    def table(
        self, cls: type[DataclassInstance], data: object, path: KeyPath, meaning: str = ""
    ) -> object:
        """Return ``cls`` built from ``data``, or _FAILED after recording why not."""
        if not isinstance(data, dict):
            expected = f"a table ({meaning})" if meaning else "a table"
            known = ", ".join(_settings_of(cls))
            fix = f"write a [{dotted(path)}] table with any of the keys: {known}"
            return self._reject(path, data, expected, fix)
        values: dict[str, object] = {}
        failed = False
        for key, item in data.items():
            setting = _settings_of(cls).get(key) if isinstance(key, str) else None
            if setting is None:
                failed = True
                self._unknown_key(cls, path, key, item)
                continue
            value = self.value(setting, item, (*path, key))
            failed = failed or value is _FAILED
            values[key] = value
        return _FAILED if failed else cls(**values)

    def value(self, setting: _Setting, item: object, path: KeyPath) -> object:
        """Return ``item`` converted for ``setting``, or _FAILED after recording why not."""
        if _is_settings_class(setting.hint):
            return self.table(setting.hint, item, path, setting.spec.meaning)
        converted = self._convert(setting, setting.hint, item, path)
        if converted is _FAILED:
            return _FAILED
        check = setting.spec.check
        if check is not None and not check.test(converted):
            return self._bad_value(setting, item, path)
        return converted

    def _convert(self, setting: _Setting, hint: object, item: object, path: KeyPath) -> object:
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if _is_array(origin, args):
            if not isinstance(item, list):
                return self._bad_value(setting, item, path)
            items = [self._convert(setting, args[0], x, (*path, i)) for i, x in enumerate(item)]
            return _FAILED if _FAILED in items else tuple(items)
        value = _scalar(hint if origin is not Literal else type(args[0]), item)
        if isinstance(value, str) and setting.spec.normalize is not None:
            value = setting.spec.normalize(value)
        if value is _FAILED or (origin is Literal and not _is_choice(value, args)):
            return self._bad_value(setting, item, path)
        return value

    def _bad_value(self, setting: _Setting, item: object, path: KeyPath) -> _Failed:
        # Name the field's own key in the example, even when an array item was wrong.
        table = tuple(part for part in path if isinstance(part, str))[:-1]
        where = f"  in the [{dotted(table)}] table" if table else "  at the top level"
        shown = setting.default if setting.spec.example is None else setting.spec.example
        example = f"write e.g.  {format_key(setting.name)} = {format_value(shown)}"
        return self._reject(path, item, _expected(setting), example + where)

    def _unknown_key(
        self, cls: type[DataclassInstance], path: KeyPath, key: object, item: object
    ) -> None:
        known = list(_settings_of(cls))
        table = f"in [{dotted(path)}]" if path else "at the top level"
        name = key if isinstance(key, str) else repr(key)
        close = difflib.get_close_matches(name, known, n=1)
        fix = f'did you mean "{close[0]}"?' if close else "remove the key or correct its spelling"
        self._reject((*path, name), item, f"a key known {table}: {', '.join(known)}", fix)

    def _reject(self, path: KeyPath, item: object, expected: str, fix: str) -> _Failed:
        self.problems.append(
            Problem(
                file=self.origins.file_of(path),
                key=dotted(path),
                given=describe(item),
                expected=expected,
                fix=fix,
            )
        )
        return _FAILED


def _scalar(hint: object, item: object) -> object:
    """Return ``item`` as a value of the scalar type ``hint``, or _FAILED."""
    if not (isinstance(hint, type) and hint in _SCALAR_PHRASES):
        raise TypeError(f"settings cannot use the type {hint!r}")
    # bool is a subclass of int in Python, but `intensity = true` is a mistake in TOML.
    if isinstance(item, bool):
        return item if hint is bool else _FAILED
    if hint is float and isinstance(item, int):
        try:
            return float(item)
        except OverflowError:
            return _FAILED
    return item if isinstance(item, hint) else _FAILED


def _is_choice(value: object, choices: tuple[object, ...]) -> bool:
    # Compare type too: 1 == True, and a Literal[1] setting must not take true.
    return any(type(value) is type(choice) and value == choice for choice in choices)
