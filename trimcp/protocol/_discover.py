"""What 2026-07-28 replaced ``initialize`` with: ``server/discover``, and the methods it removed.

``server/discover`` (MCP 2026-07-28, Server > Discovery,
https://modelcontextprotocol.io/specification/2026-07-28/server/discover) tells a client the
versions a server speaks, its capabilities and who it is; servers MUST implement it. This
builds its result for any server (an ``MCPServer``, the gateway), so that each says the same
thing the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ._codec_payloads import implementation_to_wire, server_capabilities_to_wire
from ._request_meta import META_SERVER_INFO, offered_versions
from ._versions import MODERN_VERSION, features

if TYPE_CHECKING:
    from ._capabilities import ServerCapabilities
    from ._json import JsonObject, JsonValue
    from ._types import Implementation

__all__ = ["HANDSHAKE_ONLY_METHODS", "discover_result"]

#: Methods of the handshake era that 2026-07-28 removed (Changelog): -32601 on its path.
HANDSHAKE_ONLY_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/result",
        "tasks/list",
    }
)


def discover_result(
    server_info: Implementation,
    capabilities: ServerCapabilities,
    instructions: str | None,
) -> JsonObject:
    """Return a ``DiscoverResult`` (without ``resultType`` and the cache hints).

    ``capabilities`` are trimmed to what 2026-07-28 knows (no core ``tasks``: an extension
    now); top-level members the record keeps verbatim (``extensions``) pass through.
    """
    declared = capabilities.for_version(features(MODERN_VERSION))
    result: JsonObject = {
        "supportedVersions": list["JsonValue"](offered_versions()),
        "capabilities": server_capabilities_to_wire(declared),
        "_meta": {META_SERVER_INFO: implementation_to_wire(server_info)},
    }
    if instructions:
        result["instructions"] = instructions
    return result
