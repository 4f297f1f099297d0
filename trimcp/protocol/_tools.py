"""``ToolAnnotations``: the behaviour hints a tool carries (MCP 2025-11-25, Server > Tools).

One record for both sides: a server writes it into its ``Tool`` definitions (``to_wire``)
and a client reads it back from ``tools/list`` (``from_wire``). Every member is a hint;
the schema's own note: clients should never make tool use decisions based on annotations
received from untrusted servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from ._fields import Fields
    from ._json import JsonObject


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """Hints about a tool's behaviour, untrusted unless the server is.

    A member left at None is left off the wire, so the spec's default applies: read-only
    false, destructive true, idempotent false, open-world true.
    """

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    def to_wire(self) -> JsonObject:
        """Return the wire ``ToolAnnotations``, without the members that are None."""
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only_hint,
            "destructiveHint": self.destructive_hint,
            "idempotentHint": self.idempotent_hint,
            "openWorldHint": self.open_world_hint,
        }
        return {key: value for key, value in pairs.items() if value is not None}

    @classmethod
    def from_wire(cls, fields: Fields) -> ToolAnnotations:
        """Read a wire ``ToolAnnotations``.

        Raises:
            RemoteProtocolError: a member has the wrong type.
        """
        return cls(
            title=fields.opt_string("title"),
            read_only_hint=fields.opt_bool("readOnlyHint"),
            destructive_hint=fields.opt_bool("destructiveHint"),
            idempotent_hint=fields.opt_bool("idempotentHint"),
            open_world_hint=fields.opt_bool("openWorldHint"),
        )
