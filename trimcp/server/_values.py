"""Turn Python values into JSON values: the inverse of argument conversion.

Used for ``structuredContent`` (``_schema.structured_content``) and for schema ``default``
and ``examples`` keywords. Pure; raises ``OutputError`` for anything with no JSON form.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
import uuid
from collections.abc import Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING

from trimcp.errors import OutputError

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject, JsonValue

__all__ = ["to_jsonable"]


# --- conversion ----------------------------------------------------------------------------------

_MAX_DEPTH = 256


def to_jsonable(value: object, *, _depth: int = 0) -> JsonValue:
    """Convert a Python value to JSON types: the inverse of argument conversion.

    Enums become their values, dates and times ISO 8601 strings, UUIDs and paths strings,
    dataclasses and mappings objects, sequences and sets arrays, pydantic models
    ``model_dump(mode="json")``.

    Raises:
        OutputError: a value with no JSON form (``bytes``, NaN, non-``str`` keys, ...) or
            nesting deeper than 256 levels.
    """
    if _depth > _MAX_DEPTH:
        raise OutputError("value nests too deeply to be JSON")
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, _depth=_depth + 1)
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise OutputError(f"{value!r} has no JSON form")
        return value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | PurePath):
        return str(value)
    return _composite_to_jsonable(value, _depth)


def _composite_to_jsonable(value: object, depth: int) -> JsonValue:
    if isinstance(value, Mapping):
        out: JsonObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise OutputError(f"object key {key!r} is not a string")
            out[key] = to_jsonable(item, _depth=depth + 1)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: to_jsonable(getattr(value, field.name), _depth=depth + 1)
            for field in dataclasses.fields(value)
        }
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return to_jsonable(dump(mode="json"), _depth=depth + 1)
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(item, _depth=depth + 1) for item in value]
    raise OutputError(f"a {type(value).__name__} value has no JSON form")
