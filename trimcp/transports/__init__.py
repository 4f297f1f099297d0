"""Transports: move whole MCP messages between a peer and a session, and nothing more.

A transport owns framing (stdio lines; later HTTP bodies, SSE events and WebSocket frames)
and the byte stream under it; it hands the layer above one message at a time through the
``MessageStream`` protocol, so every transport serves the same session actor.

* ``MessageStream``: the seam, and the contract every implementation keeps; its optional
  capabilities ``PushedInput`` (with ``InputSink``), ``RoutedOutput`` (``Routed`` messages),
  ``ImmediateOutput``, ``RequestStreamControl``, ``ReadyMarker`` and ``WrappingStream``.
* ``PendingAnswer``: one outgoing request's wait for its answer, for the sessions of both
  sides (timeouts that progress restarts).
* ``StdioStream`` / ``open_stdio_stream``: newline-delimited JSON over trio byte streams,
  by default the process's own stdin and stdout through trio's non-blocking ``FdStream``
  (no threads), with a bounded line length.
* ``encode_event`` / ``SSEDecoder``: Server-Sent Events framing, both directions.
* ``EventStore`` / ``MemoryEventStore``: the events of resumable SSE streams, replayed after
  a ``Last-Event-ID``.
* ``WebSocketStream`` / ``open_websocket_stream`` / ``serve_websocket``: MCP over
  WebSocket (subprotocol ``mcp``, one message per text frame), client and server, and
  ``AsgiWebSocketStream`` for a WebSocket route of an ASGI server.
* ``OriginPolicy`` / ``check_headers``: the Host and Origin allowlists (DNS rebinding).
* ``memory_stream_pair``: two connected in-memory ends with the same limits and close
  semantics, for tests and ``trimcp.testing``'s in-memory client.

Not here: JSON, JSON-RPC or MCP. Message bytes are never decoded, not even as UTF-8; that is
``trimcp.protocol``'s job (sans-IO, below), driven by ``trimcp.sessions`` (above), which
reads and writes through a ``MessageStream``. Transports log nothing to stdout, ever.
"""

from ._asgi_websocket import AsgiWebSocketStream as AsgiWebSocketStream
from ._asgi_websocket import accept_asgi_websocket as accept_asgi_websocket
from ._event_store import EventSender as EventSender
from ._event_store import EventStore as EventStore
from ._event_store import EventStoreStatistics as EventStoreStatistics
from ._event_store import MemoryEventStore as MemoryEventStore
from ._memory import MemoryMessageStream as MemoryMessageStream
from ._memory import memory_stream_pair as memory_stream_pair
from ._origin import LOCALHOST as LOCALHOST
from ._origin import HeaderProblem as HeaderProblem
from ._origin import OriginPolicy as OriginPolicy
from ._origin import check_headers as check_headers
from ._pending import PendingAnswer as PendingAnswer
from ._sse import DEFAULT_MAX_EVENT_SIZE as DEFAULT_MAX_EVENT_SIZE
from ._sse import SSEDecoder as SSEDecoder
from ._sse import SSEDecoderStatistics as SSEDecoderStatistics
from ._sse import SSEEvent as SSEEvent
from ._sse import encode_event as encode_event
from ._sse import keepalive_comment as keepalive_comment
from ._stdio import DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE
from ._stdio import StdioStream as StdioStream
from ._stdio import StdioStreamStatistics as StdioStreamStatistics
from ._stdio import open_stdio_stream as open_stdio_stream
from ._stream import ImmediateOutput as ImmediateOutput
from ._stream import InputSink as InputSink
from ._stream import MessageStream as MessageStream
from ._stream import PushedInput as PushedInput
from ._stream import ReadyMarker as ReadyMarker
from ._stream import RequestStreamControl as RequestStreamControl
from ._stream import Routed as Routed
from ._stream import RoutedOutput as RoutedOutput
from ._stream import WrappingStream as WrappingStream
from ._websocket import ReaderGuard as ReaderGuard
from ._websocket import WebSocketStream as WebSocketStream
from ._websocket_client import DEFAULT_CONNECT_TIMEOUT as DEFAULT_CONNECT_TIMEOUT
from ._websocket_client import open_websocket_stream as open_websocket_stream
from ._websocket_server import DEFAULT_PATH as DEFAULT_WEBSOCKET_PATH
from ._websocket_server import WebSocketServerInfo as WebSocketServerInfo
from ._websocket_server import WebSocketServerOptions as WebSocketServerOptions
from ._websocket_server import serve_websocket as serve_websocket
from ._ws_protocol import SUBPROTOCOL as WEBSOCKET_SUBPROTOCOL
from ._ws_protocol import CloseCode as CloseCode

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_EVENT_SIZE",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_WEBSOCKET_PATH",
    "LOCALHOST",
    "WEBSOCKET_SUBPROTOCOL",
    "AsgiWebSocketStream",
    "CloseCode",
    "EventSender",
    "EventStore",
    "EventStoreStatistics",
    "HeaderProblem",
    "ImmediateOutput",
    "InputSink",
    "MemoryEventStore",
    "MemoryMessageStream",
    "MessageStream",
    "OriginPolicy",
    "PendingAnswer",
    "PushedInput",
    "ReaderGuard",
    "ReadyMarker",
    "RequestStreamControl",
    "Routed",
    "RoutedOutput",
    "SSEDecoder",
    "SSEDecoderStatistics",
    "SSEEvent",
    "StdioStream",
    "StdioStreamStatistics",
    "WebSocketServerInfo",
    "WebSocketServerOptions",
    "WebSocketStream",
    "WrappingStream",
    "accept_asgi_websocket",
    "check_headers",
    "encode_event",
    "keepalive_comment",
    "memory_stream_pair",
    "open_stdio_stream",
    "open_websocket_stream",
    "serve_websocket",
]
