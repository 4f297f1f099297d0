"""``Root``: a directory or file the client lets servers work in (MCP 2025-11-25, Roots).

A client lists its roots in answer to ``roots/list`` (``to_wire``); a server reads them
(``from_wire``). The spec requires ``file://`` URIs for now; that is the URI's author's
promise, not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from ._fields import Fields
    from ._json import JsonObject


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Root:
    """A root the client exposes: its ``uri``, an optional display ``name`` and ``_meta``."""

    uri: str
    name: str | None = None
    meta: JsonObject | None = None

    def to_wire(self) -> JsonObject:
        """Return the wire ``Root``."""
        wire: JsonObject = {"uri": self.uri}
        if self.name is not None:
            wire["name"] = self.name
        if self.meta is not None:
            wire["_meta"] = self.meta
        return wire

    @classmethod
    def from_wire(cls, fields: Fields) -> Root:
        """Read a wire ``Root``.

        Raises:
            RemoteProtocolError: no string ``uri``, or a member of the wrong type.
        """
        return cls(
            uri=fields.string("uri"),
            name=fields.opt_string("name"),
            meta=fields.opt_obj("_meta"),
        )
