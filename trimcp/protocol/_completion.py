"""``Completion``: suggested argument values (MCP 2025-11-25, Utilities > Completion).

The ``completion`` member of a ``CompleteResult``: a server's completion handler returns one
(``to_wire``), a client reads it from ``completion/complete`` (``from_wire``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._fields import Fields
    from ._json import JsonObject, JsonValue


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Completion:
    """Completion values, with the optional ``total`` and ``has_more`` hints.

    At most 100 ``values`` go on the wire (Completion > Result); ``total`` may count more
    than were sent. ``total`` or ``has_more`` left at None is left off the wire.
    """

    values: Sequence[str] = ()
    total: int | None = None
    has_more: bool | None = None

    def to_wire(self) -> JsonObject:
        """Return the wire ``completion`` object, ``values`` as given (cut them first)."""
        wire: JsonObject = {"values": list["JsonValue"](self.values)}
        if self.total is not None:
            wire["total"] = self.total
        if self.has_more is not None:
            wire["hasMore"] = self.has_more
        return wire

    @classmethod
    def from_wire(cls, fields: Fields) -> Completion:
        """Read the ``completion`` member of a ``CompleteResult``.

        An absent ``hasMore`` reads as False, which is what the spec means by leaving it out.

        Raises:
            RemoteProtocolError: a member has the wrong type.
        """
        return cls(
            values=fields.str_list("values"),
            total=fields.opt_int("total"),
            has_more=bool(fields.opt_bool("hasMore")),
        )
