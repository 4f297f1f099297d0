"""Convert validated JSON arguments to the Python values a function's hints describe.

The second step of argument checking (``_validation`` runs JSON Schema first). What does
not fit raises ``ArgumentError`` (``trimcp.errors``): every complaint names the argument
path, what was given and what was expected, so the model can correct its call (MCP
2025-11-25, Tools > Error Handling: input validation failures are tool execution errors).

Conversion never coerces between JSON types: ``"3"`` is not an integer. The only widening
is the JSON one: an integer is accepted where a number (``float``) is expected, and a
number with no fractional part (``3.0``) is an integer (2020-12 Validation, section 6.1.1).
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import typing
import uuid
from collections.abc import Callable

from trimcp.errors import ArgumentError, ArgumentProblem
from trimcp.server._hints import Hint, HintKind, classify, fields_of

__all__ = ["convert_value", "describe_value", "unexpected_problem"]


def describe_value(value: object) -> str:
    """Show a JSON value briefly with its JSON type: ``"abc" (string)``."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:  # circular structures passed from Python
        text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({_json_type(value)})"


def _json_type(value: object) -> str:
    names: list[tuple[type | tuple[type, ...], str]] = [
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (type(None), "null"),
        ((list, tuple), "array"),
        (dict, "object"),
    ]
    for types, name in names:
        if isinstance(value, types):
            return name
    return type(value).__name__


# --- conversion ------------------------------------------------------------------------------


def unexpected_problem(path: _Where, value: object, known: object) -> ArgumentProblem:
    names = ", ".join(sorted(map(str, known))) if isinstance(known, dict | set) else ""
    expected = f"known: {names}" if names else "no members are accepted here"
    return ArgumentProblem(path, describe_value(value), expected, "unexpected")


class _ConversionFailed(Exception):
    """Internal: a value does not fit a hint. Carries the path and the expectation."""

    def __init__(self, path: _Where, value: object, expected: str) -> None:
        super().__init__(expected)
        self.problem = ArgumentProblem(path, describe_value(value), expected)

    @classmethod
    def of(cls, problem: ArgumentProblem) -> _ConversionFailed:
        """Wrap a ready-made problem."""
        failed = cls(problem.path, None, problem.expected)
        failed.problem = problem
        return failed


_Where = tuple[str | int, ...]
_Converter = Callable[[Hint, object, _Where], object]


def convert_value(hint: object, value: object, path: _Where = ()) -> object:
    """Convert a JSON value to the Python value ``hint`` describes.

    Run it after schema validation; it re-checks what it relies on, so it is also safe on
    its own (it never coerces a string to a number, or a number to a string).

    Raises:
        ArgumentError: the value does not fit the hint.
        SchemaError: the hint cannot be described (a programming error).
    """
    try:
        return _convert(classify(hint), value, path)
    except _ConversionFailed as exc:
        raise ArgumentError([exc.problem]) from None


def _convert(shape: Hint, value: object, path: _Where) -> object:
    converter = _CONVERTERS[shape.kind]
    return converter(shape, value, path)


def _expect(ok: bool, path: _Where, value: object, expected: str) -> None:
    if not ok:
        raise _ConversionFailed(path, value, expected)


def _any(shape: Hint, value: object, path: _Where) -> object:
    return value


def _none(shape: Hint, value: object, path: _Where) -> object:
    _expect(value is None, path, value, "null")
    return None


def _bool(shape: Hint, value: object, path: _Where) -> object:
    _expect(isinstance(value, bool), path, value, "boolean")
    return value


def _int(shape: Hint, value: object, path: _Where) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 2020-12 Validation 6.1.1: 3.0 is an integer
    _expect(isinstance(value, int) and not isinstance(value, bool), path, value, "integer")
    return value


def _float(shape: Hint, value: object, path: _Where) -> object:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    _expect(ok, path, value, "number")
    return float(typing.cast("float", value))


def _str(shape: Hint, value: object, path: _Where) -> object:
    _expect(isinstance(value, str), path, value, "string")
    return value


def _parsed(parse: Callable[[str], object], expected: str) -> _Converter:
    def convert(shape: Hint, value: object, path: _Where) -> object:
        _expect(isinstance(value, str), path, value, expected)
        try:
            return parse(typing.cast("str", value))
        except ValueError:
            raise _ConversionFailed(path, value, expected) from None

    return convert


def _path(shape: Hint, value: object, path: _Where) -> object:
    _expect(isinstance(value, str), path, value, "a path string")
    assert isinstance(shape.tp, type)
    return shape.tp(value)


def _literal(shape: Hint, value: object, path: _Where) -> object:
    for option in shape.args:
        raw = option.value if isinstance(option, enum.Enum) else option
        if raw == value and isinstance(raw, bool) == isinstance(value, bool):
            return option
    raise _ConversionFailed(path, value, "one of " + ", ".join(map(repr, shape.args)))


def _enum(shape: Hint, value: object, path: _Where) -> object:
    assert isinstance(shape.tp, type)
    for member in typing.cast("type[enum.Enum]", shape.tp):
        raw = member.value
        if raw == value and isinstance(raw, bool) == isinstance(value, bool):
            return member
    values = ", ".join(repr(member.value) for member in typing.cast("type[enum.Enum]", shape.tp))
    raise _ConversionFailed(path, value, f"one of {values}")


def _union(shape: Hint, value: object, path: _Where) -> object:
    # A JSON scalar whose own type is a member is taken as is: int | float keeps 3 an int,
    # str | datetime keeps a string a string. Otherwise members are tried in order.
    if type(value) in shape.args or (value is None and None in shape.args):
        return value
    failures: list[_ConversionFailed] = []
    for member in shape.args:
        try:
            return _convert(classify(member), value, path)
        except _ConversionFailed as exc:
            failures.append(exc)
    real = [arg for arg in shape.args if arg not in (None, type(None))]
    if len(real) == 1 and value is not None:  # Optional[X]: X's own complaint is the useful one
        raise failures[shape.args.index(real[0])]
    raise _ConversionFailed(path, value, " or ".join(_hint_name(arg) for arg in shape.args))


def _sequence(shape: Hint, value: object, path: _Where) -> object:
    _expect(isinstance(value, list), path, value, "array")
    item = classify(shape.args[0])
    entries = typing.cast("list[object]", value)
    items = [_convert(item, entry, (*path, i)) for i, entry in enumerate(entries)]
    if shape.kind is HintKind.VARTUPLE:
        return tuple(items)
    if shape.kind is HintKind.SET:
        try:
            return typing.cast("type", shape.tp)(items)
        except TypeError:  # unhashable members
            raise _ConversionFailed(path, value, "an array of hashable items") from None
    return items


def _tuple(shape: Hint, value: object, path: _Where) -> object:
    ok = isinstance(value, list) and len(value) == len(shape.args)
    _expect(ok, path, value, f"an array of {len(shape.args)} items")
    entries = typing.cast("list[object]", value)
    return tuple(
        _convert(classify(hint), entry, (*path, i))
        for i, (hint, entry) in enumerate(zip(shape.args, entries, strict=True))
    )


def _mapping(shape: Hint, value: object, path: _Where) -> object:
    _expect(isinstance(value, dict), path, value, "object")
    item = classify(shape.args[0])
    entries = typing.cast("dict[str, object]", value)
    return {key: _convert(item, entry, (*path, key)) for key, entry in entries.items()}


def _fields(shape: Hint, value: object, path: _Where) -> dict[str, object]:
    assert isinstance(shape.tp, type)
    _expect(isinstance(value, dict), path, value, f"a {shape.tp.__name__} object")
    entries = typing.cast("dict[str, object]", value)
    specs = fields_of(shape)
    known = {spec.name for spec in specs}
    for key in entries:
        if key not in known:
            raise _ConversionFailed.of(unexpected_problem((*path, key), entries[key], known))
    out: dict[str, object] = {}
    for spec in specs:
        if spec.name in entries:
            out[spec.name] = _convert(classify(spec.hint), entries[spec.name], (*path, spec.name))
        elif spec.required:
            problem = ArgumentProblem((*path, spec.name), "nothing", "a value", "missing")
            raise _ConversionFailed.of(problem)
    return out


def _typeddict(shape: Hint, value: object, path: _Where) -> object:
    return _fields(shape, value, path)


def _dataclass(shape: Hint, value: object, path: _Where) -> object:
    kwargs = _fields(shape, value, path)
    assert isinstance(shape.tp, type)
    try:
        return shape.tp(**kwargs)
    except (TypeError, ValueError) as exc:  # __post_init__ checks of the dataclass itself
        raise _ConversionFailed(path, value, f"a valid {shape.tp.__name__} ({exc})") from None


def _pydantic(shape: Hint, value: object, path: _Where) -> object:
    assert isinstance(shape.tp, type)
    validate = shape.tp.model_validate  # type: ignore[attr-defined]  # duck-typed pydantic
    try:
        return validate(value)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        first = str(exc).splitlines()[1:3]
        detail = " ".join(line.strip() for line in first)
        raise _ConversionFailed(path, value, f"a valid {shape.tp.__name__} ({detail})") from None


def _hint_name(hint: object) -> str:
    if hint is None or hint is type(None):
        return "null"
    return getattr(hint, "__name__", None) or repr(hint)


_CONVERTERS: dict[HintKind, _Converter] = {
    HintKind.ANY: _any,
    HintKind.NONE: _none,
    HintKind.BOOL: _bool,
    HintKind.INT: _int,
    HintKind.FLOAT: _float,
    HintKind.STR: _str,
    HintKind.DATETIME: _parsed(dt.datetime.fromisoformat, "an ISO 8601 date-time string"),
    HintKind.DATE: _parsed(dt.date.fromisoformat, "an ISO 8601 date string"),
    HintKind.TIME: _parsed(dt.time.fromisoformat, "an ISO 8601 time string"),
    HintKind.UUID: _parsed(uuid.UUID, "a UUID string"),
    HintKind.PATH: _path,
    HintKind.LITERAL: _literal,
    HintKind.ENUM: _enum,
    HintKind.UNION: _union,
    HintKind.LIST: _sequence,
    HintKind.SET: _sequence,
    HintKind.VARTUPLE: _sequence,
    HintKind.TUPLE: _tuple,
    HintKind.MAPPING: _mapping,
    HintKind.TYPEDDICT: _typeddict,
    HintKind.DATACLASS: _dataclass,
    HintKind.PYDANTIC: _pydantic,
}
