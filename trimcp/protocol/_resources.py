"""``ResourceContents``: what reading a resource yields (MCP 2025-11-25, Server > Resources).

The schema's ``TextResourceContents`` and ``BlobResourceContents`` in one record: an item of
a ``resources/read`` result, or the ``resource`` of an embedded resource block. A server
writes it (``to_wire``), a client reads it (``from_wire``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.errors import RemoteProtocolError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._fields import Fields
    from ._json import JsonObject, JsonValue


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceContents:
    """One resource's contents: ``text``, or binary ``blob``, never both.

    ``blob`` holds the raw bytes; the wire form is base64 (Resources > Binary Content: binary
    data MUST be properly base64-encoded). An empty ``meta`` is left off the wire.

    Raises:
        ValueError: neither or both of ``text`` and ``blob`` were given.
    """

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    meta: Mapping[str, JsonValue] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("resource contents need exactly one of text and blob")

    def to_wire(self) -> JsonObject:
        """Return the wire ``TextResourceContents`` or ``BlobResourceContents``."""
        wire: JsonObject = {"uri": self.uri}
        if self.mime_type is not None:
            wire["mimeType"] = self.mime_type
        if self.blob is not None:
            wire["blob"] = base64.b64encode(self.blob).decode("ascii")
        else:
            wire["text"] = self.text
        if self.meta:
            wire["_meta"] = dict(self.meta)
        return wire

    @classmethod
    def from_wire(cls, fields: Fields) -> ResourceContents:
        """Read a wire ``TextResourceContents`` or ``BlobResourceContents``.

        Raises:
            RemoteProtocolError: no string ``uri``, neither or both of ``text`` and
                ``blob``, a ``blob`` that is not base64, or a member of the wrong type.
        """
        text, blob = fields.opt_string("text"), fields.opt_string("blob")
        if (text is None) == (blob is None):
            raise RemoteProtocolError(
                f"{fields.where}: resource contents need exactly one of 'text' and 'blob'"
            )
        return cls(
            uri=fields.string("uri"),
            text=text,
            blob=None if blob is None else _decoded(blob, fields),
            mime_type=fields.opt_string("mimeType"),
            meta=fields.opt_obj("_meta"),
        )


def _decoded(blob: str, fields: Fields) -> bytes:
    # The schema's ``format: byte`` is RFC 4648 base64; line breaks some encoders insert
    # (RFC 2045 style) are dropped rather than refused, any other stray character is an error.
    try:
        return base64.b64decode("".join(blob.split()), validate=True)
    except (binascii.Error, ValueError):
        raise fields.bad("blob", "base64") from None
