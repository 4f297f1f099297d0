"""Per-request ``_meta`` of MCP 2026-07-28, and which era a request belongs to.

From 2026-07-28 on there is no ``initialize``: every request names its protocol version and
the client's capabilities in ``params._meta`` (MCP 2026-07-28, Basic > ``_meta``,
https://modelcontextprotocol.io/specification/2026-07-28/basic). A dual-era server serves
such a request statelessly and everything else the handshake way (Basic > Versioning,
https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). This module
reads that ``_meta`` into a ``RequestMeta`` (or raises the spec's error) and decides the
era of a request from what the transport saw; it does no I/O.

Errors, in the order they are checked: ``_meta`` missing or not an object, no protocol
version, or a version that is not a string: -32602; a version that is not one we serve
per request: -32022 (``supported`` and ``requested`` in ``data``); no client capabilities,
or not an object: -32602; a log level that is not an RFC 5424 name: -32602.
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import InvalidParams, RemoteProtocolError, UnsupportedProtocolVersion

from ._codec_payloads import client_capabilities_from_wire, implementation_from_wire
from ._versions import MODERN_VERSIONS, SUPPORTED_VERSIONS, is_handshake_version

if TYPE_CHECKING:
    from ._capabilities import ClientCapabilities
    from ._json import JsonObject
    from ._types import Implementation

__all__ = [
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "TRACE_KEYS",
    "Era",
    "RequestMeta",
    "choose_era",
    "offered_versions",
    "read_request_meta",
]

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
#: W3C trace context keys, unprefixed in ``_meta`` (SEP-414).
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")

_LOG_LEVELS: Final = frozenset(
    ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
)


class Era(enum.Enum):
    """How a request is served: with a session (``initialize``) or on its own."""

    #: 2025-11-25 and earlier: ``initialize``, sessions, server-to-client requests.
    HANDSHAKE = "handshake"
    #: 2026-07-28 and later: per-request ``_meta``, no session.
    MODERN = "modern"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestMeta:
    """What a modern request says about itself in ``_meta``."""

    protocol_version: str
    client_capabilities: ClientCapabilities
    #: The declaration as sent (for ``requiredCapabilities`` and for relaying).
    client_capabilities_wire: JsonObject
    client_info: Implementation | None = None
    #: The lowest level of ``notifications/message`` the client wants for this request;
    #: None: none at all (the server MUST NOT send them).
    log_level: str | None = None
    #: ``traceparent``, ``tracestate`` and ``baggage`` as sent, when they are strings.
    trace: dict[str, str] = field(default_factory=dict)


def offered_versions() -> list[str]:
    """Every version this dual-era server speaks, newest first (discover and -32022)."""
    return [*MODERN_VERSIONS, *SUPPORTED_VERSIONS]


def read_request_meta(params: JsonObject | None) -> RequestMeta:
    """Read and check a modern request's ``_meta`` (see the module docstring).

    Raises:
        InvalidParams: a required member is missing or has the wrong type (-32602).
        UnsupportedProtocolVersion: the version is not one served per request (-32022).
    """
    meta = None if params is None else params.get("_meta")
    if not isinstance(meta, dict):
        raise InvalidParams(
            "params._meta is required on every request (MCP 2026-07-28): include "
            f'"{META_PROTOCOL_VERSION}" and "{META_CLIENT_CAPABILITIES}"',
            {"missing": "_meta"},
        )
    version = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise InvalidParams(
            f'params._meta["{META_PROTOCOL_VERSION}"] is required and must be a string, '
            f'e.g. "{MODERN_VERSIONS[0]}"',
            {"missing": META_PROTOCOL_VERSION},
        )
    if version not in MODERN_VERSIONS:
        raise UnsupportedProtocolVersion(
            version,
            offered_versions(),
            f"Unsupported protocol version {version!r}; this server speaks "
            f"{', '.join(offered_versions())} ({', '.join(SUPPORTED_VERSIONS)} after "
            "initialize)",
        )
    capabilities = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise InvalidParams(
            f'params._meta["{META_CLIENT_CAPABILITIES}"] is required and must be an object '
            "({} declares no optional capability)",
            {"missing": META_CLIENT_CAPABILITIES},
        )
    level = meta.get(META_LOG_LEVEL)
    # Checked as a string first: any JSON value may arrive, and a list or an object is
    # unhashable (a set lookup would raise TypeError instead of answering -32602).
    if level is not None and not (isinstance(level, str) and level in _LOG_LEVELS):
        raise InvalidParams(
            f'params._meta["{META_LOG_LEVEL}"] must be one of {", ".join(sorted(_LOG_LEVELS))}',
            {"invalid": META_LOG_LEVEL},
        )
    trace = {key: value for key in TRACE_KEYS if isinstance(value := meta.get(key), str)}
    return RequestMeta(
        protocol_version=sys.intern(version),
        client_capabilities=client_capabilities_from_wire(capabilities),
        client_capabilities_wire=capabilities,
        client_info=_client_info(meta.get(META_CLIENT_INFO)),
        log_level=level if isinstance(level, str) else None,
        trace=trace,
    )


def _client_info(value: object) -> Implementation | None:
    # A SHOULD: a malformed one is ignored rather than failing the request. The reader
    # refuses with InvalidParams (a wrong name or version), which must not escape here.
    if not isinstance(value, dict):
        return None
    try:
        return implementation_from_wire(value, META_CLIENT_INFO)
    except (InvalidParams, RemoteProtocolError):
        return None


def choose_era(header_version: str | None, method: str, params: object) -> Era:
    """Decide the era of one request (Basic > Versioning, "Compatibility Matrix").

    ``header_version`` is HTTP's ``MCP-Protocol-Version`` (None on stdio, or when absent).
    A header naming a handshake version means the handshake era; any other header (the
    modern version, or one we do not know, which the modern path refuses with -32022)
    means modern, as the official SDKs route. Without a header: ``initialize`` is always
    the handshake, and a request whose ``_meta`` names a protocol version (or that is
    ``server/discover``) is modern; anything else is the handshake era's.
    """
    if header_version is not None:
        return Era.HANDSHAKE if is_handshake_version(header_version) else Era.MODERN
    if method == "initialize":
        return Era.HANDSHAKE
    if method == "server/discover":
        return Era.MODERN
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return Era.MODERN
    return Era.HANDSHAKE
