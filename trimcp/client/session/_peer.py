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

__all__ = ["peer_of", "with_session_id"]


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


def with_session_id(peer: Peer, stream: MessageStream) -> Peer:
    """Return ``peer`` with the Streamable HTTP session id ``stream`` holds now, if any.

    The id is known only once the server answered ``initialize`` (and changes if the
    session is renewed), so it is read per request, and only while telemetry is on.
    """
    if isinstance(stream, HttpClientStream):
        session_id = stream.session_id
        if session_id is not None and session_id != peer.session_id:
            return Peer(peer.transport, session_id)
    return peer
