"""The ``_meta`` a client of the per-request era (MCP 2026-07-28) puts on every request.

From 2026-07-28 on there is no ``initialize``: every request carries the protocol version,
the client's capabilities and its identity in ``params._meta``
(https://modelcontextprotocol.io/specification/2026-07-28/basic#meta). ``ClientConnection``
in its per-request mode merges what ``request_meta`` returns into each request's params
(``with_meta``). What the client reads back (``server/discover``, caching hints, multi
round-trip results) is the client session's (``trimcp.client.session``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._codec_payloads import client_capabilities_to_wire, implementation_to_wire
from ._request_meta import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)

if TYPE_CHECKING:
    from ._capabilities import ClientCapabilities
    from ._json import JsonObject
    from ._types import Implementation

__all__ = ["request_meta", "with_meta"]


def request_meta(
    version: str,
    capabilities: ClientCapabilities,
    client_info: Implementation,
    log_level: str | None = None,
) -> JsonObject:
    """Return the ``io.modelcontextprotocol/*`` members of a modern request's ``_meta``.

    ``protocolVersion`` and ``clientCapabilities`` are required (an empty object declares
    no optional capability, and servers "MUST NOT infer capabilities from prior
    requests"); ``clientInfo`` is a SHOULD; ``logLevel`` asks for ``notifications/message``
    at that level and above for this request only, and without it the server sends none
    (2026-07-28, Basic > ``_meta``).
    """
    meta: JsonObject = {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: client_capabilities_to_wire(capabilities),
        META_CLIENT_INFO: implementation_to_wire(client_info),
    }
    if log_level is not None:
        meta[META_LOG_LEVEL] = log_level
    return meta


def with_meta(params: JsonObject | None, meta: JsonObject) -> JsonObject:
    """Return ``params`` with ``meta`` merged into its ``_meta`` (``meta`` wins).

    The caller's own ``_meta`` members (``progressToken``, trace context) stay.
    """
    merged: JsonObject = dict(params or {})
    own = merged.get("_meta")
    merged["_meta"] = {**own, **meta} if isinstance(own, dict) else dict(meta)
    return merged
