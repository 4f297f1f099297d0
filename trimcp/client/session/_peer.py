"""Which transport a client session's stream is, for telemetry (``network.transport``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.client.process import ServerProcess
from trimcp.telemetry import Peer
from trimcp.transports import StdioStream, WebSocketStream
from trimcp.transports.http_client import HttpClientStream, LegacySseClientStream

if TYPE_CHECKING:
    from trimcp.telemetry import Transport
    from trimcp.transports import MessageStream

__all__ = ["peer_of"]


def peer_of(stream: MessageStream) -> Peer:
    """Return the ``Peer`` a session over ``stream`` reports; made once per session."""
    transport: Transport | None = None
    if isinstance(stream, ServerProcess | StdioStream):
        transport = "stdio"
    elif isinstance(stream, HttpClientStream | LegacySseClientStream):
        transport = "http"
    elif isinstance(stream, WebSocketStream):
        transport = "websocket"
    return Peer(transport)
