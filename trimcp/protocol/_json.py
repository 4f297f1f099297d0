"""The JSON value type used everywhere in the protocol core instead of ``Any``."""

from __future__ import annotations

import enum
import math
from typing import TypeAlias, TypeGuard

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"

#: A JSON-RPC request id: a string or an integer, never null and never a boolean
#: (MCP 2025-11-25, Basic > Messages > Requests; the schema types ``RequestId`` as
#: ``string | integer``). A progress token has the same type.
RequestId: TypeAlias = "int | str"
ProgressToken: TypeAlias = "int | str"


class Absent(enum.Enum):
    """Marks a JSON member that is not there, which JSON-RPC distinguishes from ``null``."""

    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = Absent.ABSENT


def is_request_id(value: object) -> TypeGuard[int | str]:
    """Tell whether ``value`` may be a request id or progress token (``bool`` is not an int)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_number(value: object) -> TypeGuard[int | float]:
    """Tell whether ``value`` is a finite JSON number (``bool`` is not a number here)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value)


def is_json_value(value: object, *, _depth: int = 0) -> TypeGuard[JsonValue]:
    """Tell whether ``value`` is made only of JSON types (finite floats, ``str`` keys).

    Used where a caller hands us ``object`` (exception ``data``) before it reaches the
    encoder. Nesting deeper than 512 levels is refused rather than recursed into.
    """
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if _depth > 512:
        return False
    if isinstance(value, list):
        return all(is_json_value(item, _depth=_depth + 1) for item in value)
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and is_json_value(item, _depth=_depth + 1)
            for key, item in value.items()
        )
    return False
