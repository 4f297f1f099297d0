"""Reading members of a peer's wire objects, strictly and with messages that say where.

A peer that sends a malformed payload (a tool without ``name``, ``tools`` that is not a list)
broke the protocol: ``Fields`` raises ``RemoteProtocolError`` naming the method, the member
path and what it found. Unknown members are ignored (MCP 2025-11-25, Basic: receivers must
tolerate unknown fields). The payload records of this package read themselves with it
(``ToolAnnotations.from_wire``, ...), and so do the client's result records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from trimcp.errors import RemoteProtocolError

if TYPE_CHECKING:
    from ._json import JsonObject, JsonValue


def _shown(value: JsonValue) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@final
class Fields:
    """One wire object and where it sits in a message (``"tools/list: tools[2]"``).

    Raises:
        RemoteProtocolError: ``obj`` is not an object; the accessors raise it for a member
            of the wrong type.
    """

    __slots__ = ("obj", "where")

    def __init__(self, obj: JsonValue, where: str) -> None:
        if not isinstance(obj, dict):
            raise RemoteProtocolError(f"{where}: expected an object, got {_shown(obj)}")
        self.obj: JsonObject = obj
        self.where = where

    def bad(self, key: str, expected: str) -> RemoteProtocolError:
        """Return the error for member ``key``, which is not ``expected``."""
        value = self.obj.get(key)
        return RemoteProtocolError(
            f"{self.where}: member {key!r} must be {expected}, got {_shown(value)}"
        )

    def string(self, key: str) -> str:
        """Return a required string member."""
        value = self.obj.get(key)
        if not isinstance(value, str):
            raise self.bad(key, "a string")
        return value

    def opt_string(self, key: str) -> str | None:
        """Return an optional string member (``null`` counts as absent)."""
        value = self.obj.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self.bad(key, "a string")

    def opt_bool(self, key: str) -> bool | None:
        """Return an optional boolean member."""
        value = self.obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        raise self.bad(key, "true or false")

    def opt_number(self, key: str) -> float | None:
        """Return an optional number member (an int stays an int)."""
        value = self.obj.get(key)
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise self.bad(key, "a number")

    def opt_int(self, key: str) -> int | None:
        """Return an optional integer member."""
        value = self.obj.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise self.bad(key, "an integer")

    def opt_obj(self, key: str) -> JsonObject | None:
        """Return an optional object member."""
        value = self.obj.get(key)
        if value is None or isinstance(value, dict):
            return value
        raise self.bad(key, "an object")

    def obj_list(self, key: str, *, required: bool = False) -> list[Fields]:
        """Return the objects of a list member, each with its own location."""
        value = self.obj.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            raise self.bad(key, "a list")
        return [Fields(item, f"{self.where}: {key}[{index}]") for index, item in enumerate(value)]

    def str_list(self, key: str) -> tuple[str, ...]:
        """Return an optional list of strings."""
        value = self.obj.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.bad(key, "a list of strings")
        return tuple(item for item in value if isinstance(item, str))

    def objects(self, key: str) -> tuple[JsonObject, ...]:
        """Return an optional list member of raw objects (icons, content blocks)."""
        return tuple(item.obj for item in self.obj_list(key))
