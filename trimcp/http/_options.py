"""Settings of the Streamable HTTP endpoint (the ``[http]`` table of sys_config.toml)."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trimcp.transports import LOCALHOST

if TYPE_CHECKING:
    from trimcp.auth import ResourceServer

__all__ = ["HttpOptions"]


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """How the MCP endpoint behaves.

    Attributes:
        path: the MCP endpoint (POST, GET, DELETE).
        websocket_path: MCP over WebSocket on the same port (None: off).
        json_response: answer requests with one ``application/json`` body instead of an SSE
            stream (no progress or server-to-client requests on it then: those go to the
            GET stream, if open).
        stateless: no sessions: every POST is served on its own and server-to-client
            requests are refused with a clear error.
        max_body_size: bytes; a larger POST gets 413 before any session is touched.
        keepalive_interval: seconds between SSE comment lines on an idle stream (None: off).
        retry_ms: the ``retry:`` a client waits before reconnecting a stream the server
            closed (2025-11-25 polling).
        resumable: store SSE events so a client can resume with ``Last-Event-ID``.
        max_events_per_stream / event_ttl: bounds of the in-memory event store.
        max_event_store_bytes: what the in-memory event store may hold across all sessions,
            counted as its ``statistics().footprint`` (messages and their bookkeeping);
            past it, streams already delivered go first, then the oldest events. A stream
            its client read to the end goes a few seconds later anyway, so this bound is
            reached by clients that do not read their answers (or resume them).
        allowed_hosts / allowed_origins: the DNS-rebinding allowlists (``Host`` and
            ``Origin``; default the localhost names on any port).
        legacy_sse: also serve the 2024-11-05 HTTP+SSE transport for old clients: GET
            ``legacy_sse_path`` opens a session's event stream, POST
            ``legacy_messages_path?session_id=...`` sends it messages.
        auth: check a bearer token on every request (MCP 2025-11-25, Basic >
            Authorization), serve the Protected Resource Metadata, and bind each session to
            the principal that started it; None (the default): no authorization.
    """

    path: str = "/mcp"
    websocket_path: str | None = "/mcp/ws"
    json_response: bool = False
    stateless: bool = False
    max_body_size: int = 4 * 1024 * 1024
    keepalive_interval: float | None = 15.0
    retry_ms: int = 1000
    resumable: bool = True
    max_events_per_stream: int = 1000
    event_ttl: float = 300.0
    # 32 MiB: ~60,000 undelivered answers of a few hundred bytes; MemoryEventStore's default.
    max_event_store_bytes: int = 32 * 1024 * 1024
    allowed_hosts: tuple[str, ...] = LOCALHOST
    allowed_origins: tuple[str, ...] = LOCALHOST
    legacy_sse: bool = False
    legacy_sse_path: str = "/sse"
    legacy_messages_path: str = "/messages"
    auth: ResourceServer | None = None

    def __post_init__(self) -> None:
        if not self.path.startswith("/"):
            raise ValueError(f"HttpOptions.path must start with '/': {self.path!r}")
        if self.max_body_size < 1:
            raise ValueError("HttpOptions.max_body_size must be positive")
        if self.keepalive_interval is not None and not self.keepalive_interval > 0:
            raise ValueError("HttpOptions.keepalive_interval must be positive (None: off)")
        if self.retry_ms < 0:
            raise ValueError("HttpOptions.retry_ms must not be negative")
        if self.max_event_store_bytes < 1:
            raise ValueError("HttpOptions.max_event_store_bytes must be positive")
