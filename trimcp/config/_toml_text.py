"""Write values and settings back out as TOML text.

One writer serves both error messages (``given: "three" (a string)``) and
``trimcp config show``, so what an error quotes is what a person would type. It covers the
values ``tomllib`` produces and the settings types; it is not a general TOML serialiser.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
from typing import TYPE_CHECKING

from ._schema import spec_of

if TYPE_CHECKING:
    from collections.abc import Iterator

KeyPath = tuple[str | int, ...]
"""A key's position: table keys as str, array indexes as int."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

# TOML basic strings may not hold control characters other than tab, nor DEL (TOML 1.0.0,
# "String"); these have short escapes, the rest use \uXXXX.
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
_SHORT_ESCAPES |= {"\f": "\\f", "\r": "\\r"}

# Error messages quote at most this much of a value; a whole pasted table helps nobody.
_MAX_QUOTE = 72


def format_key(key: str) -> str:
    """Return ``key`` as TOML writes it: bare when it can be, quoted otherwise."""
    return key if _BARE_KEY.fullmatch(key) else format_value(key)


def dotted(path: KeyPath) -> str:
    """Return a key path as a person reads it, e.g. ``supervision.intensity`` or ``a.b[2]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + format_key(part)
    return text


def format_value(value: object) -> str:
    """Return ``value`` as TOML source text (inline tables for dicts)."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{format_key(str(k))} = {format_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    return _format_scalar(value)


def describe(value: object) -> str:
    """Return ``value`` quoted and typed for an error message, e.g. ``"three" (a string)``."""
    text = format_value(value)
    if len(text) > _MAX_QUOTE:
        text = text[: _MAX_QUOTE - 3] + "..."
    return f"{text} ({_kind(value)})"


def render_settings(settings: object) -> str:
    """Return a settings dataclass as a TOML document that loads back to the same values.

    Fields that files may not set (such as ``SysConfig.sources``) are left out.
    """
    # lstrip: with no top-level scalars the document would open with a blank line.
    return "\n".join(_table_lines(settings, ())).lstrip("\n") + "\n"


def _table_lines(settings: object, path: tuple[str, ...]) -> Iterator[str]:
    if not dataclasses.is_dataclass(settings) or isinstance(settings, type):
        raise TypeError(f"expected a settings dataclass instance, got {settings!r}")
    tables: list[tuple[str, object]] = []
    if path:
        yield "[" + ".".join(format_key(part) for part in path) + "]"
    for field in dataclasses.fields(settings):
        if not spec_of(field).from_file:
            continue
        value = getattr(settings, field.name)
        if dataclasses.is_dataclass(value):
            tables.append((field.name, value))
        else:
            yield f"{format_key(field.name)} = {format_value(value)}"
    for name, table in tables:
        yield ""
        yield from _table_lines(table, (*path, name))


def _format_scalar(value: object) -> str:
    if isinstance(value, str):
        return '"' + "".join(_escape(char) for char in value) + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _format_int(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return repr(value)


def _escape(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\u{ord(char):04X}"
    return char


def _format_int(value: int) -> str:
    try:
        return str(value)
    except ValueError:
        # Past sys.get_int_max_str_digits() Python refuses to convert; no one wants to read
        # thousands of digits in an error message anyway.
        return f"<an integer of about {int(value.bit_length() * math.log10(2))} digits>"


def _format_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    # repr gives the shortest text that reads back as the same float, and always a "." or
    # an exponent, which TOML needs to tell a float from an integer.
    return repr(value)


def _kind(value: object) -> str:
    kinds: tuple[tuple[type | tuple[type, ...], str], ...] = (
        (str, "a string"),
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a float"),
        (dt.datetime, "a date-time"),
        (dt.date, "a date"),
        (dt.time, "a time"),
        ((list, tuple), "an array"),
        (dict, "a table"),
    )
    for kind, name in kinds:
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"
