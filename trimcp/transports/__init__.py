"""Transports: move whole MCP messages between a peer and a session, and nothing more.

A transport owns framing (stdio lines; later HTTP bodies, SSE events and WebSocket frames)
and the byte stream under it; it hands the layer above one message at a time through the
``MessageStream`` protocol, so every transport serves the same session actor.

* ``MessageStream``: the seam, and the contract every implementation keeps.
* ``StdioStream`` / ``open_stdio_stream``: newline-delimited JSON over trio byte streams,
  by default the process's own stdin and stdout through trio's non-blocking ``FdStream``
  (no threads), with a bounded line length.
* ``memory_stream_pair``: two connected in-memory ends with the same limits and close
  semantics, for tests and ``trimcp.testing``'s in-memory client.

Not here: JSON, JSON-RPC or MCP. Message bytes are never decoded, not even as UTF-8; that is
``trimcp.protocol``'s job (sans-IO, below), driven by ``trimcp.sessions`` (above), which
reads and writes through a ``MessageStream``. Transports log nothing to stdout, ever.
"""

from ._memory import MemoryMessageStream as MemoryMessageStream
from ._memory import memory_stream_pair as memory_stream_pair
from ._stdio import DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE
from ._stdio import StdioStream as StdioStream
from ._stdio import StdioStreamStatistics as StdioStreamStatistics
from ._stdio import open_stdio_stream as open_stdio_stream
from ._stream import MessageStream as MessageStream

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "MemoryMessageStream",
    "MessageStream",
    "StdioStream",
    "StdioStreamStatistics",
    "memory_stream_pair",
    "open_stdio_stream",
]
