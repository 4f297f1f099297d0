"""MCP over Streamable HTTP (and WebSocket on the same port), on trimcp's own HTTP/1.1 server.

* ``serve_http`` / ``http_listener_spec``: run a ``RequestHandler`` (an ``MCPServer``) at
  ``http://127.0.0.1:<port>/mcp`` under a supervisor with its ``SessionManager``.
* ``McpHttpApp``: the ASGI callable itself, for mounting in another ASGI server.
* ``HttpOptions``: endpoint path, JSON or SSE answers, body limit, keep-alive, resumability,
  the Host/Origin allowlists, and ``auth``: a ``trimcp.auth.ResourceServer`` that checks the
  bearer token of every request, serves the RFC 9728 metadata and binds each session to the
  principal that started it (MCP 2025-11-25, Basic > Authorization).
* ``H1Settings``: how the HTTP/1.1 server treats connections (head and body deadlines, idle
  keep-alive, the connection limit). hypercorn can serve the same endpoint instead
  (``engine="hypercorn"``), for HTTP/2 or TLS in-process.

The endpoint follows MCP 2025-11-25, Transports > Streamable HTTP: sessions (``MCP-Session-Id``),
the protocol version header, resumable SSE streams with ``Last-Event-ID``, DNS-rebinding
protection. Sessions are the same ``Session`` actors stdio uses.
"""

from ._app import McpHttpApp as McpHttpApp
from ._checks import HttpRefusal as HttpRefusal
from ._h1 import H1Settings as H1Settings
from ._options import HttpOptions as HttpOptions
from ._serve import HttpListener as HttpListener
from ._serve import ListenerSettings as ListenerSettings
from ._serve import http_listener_spec as http_listener_spec
from ._serve import serve_http as serve_http
from ._stream import HttpSessionStream as HttpSessionStream
from ._stream import ResponseStream as ResponseStream

__all__ = [
    "H1Settings",
    "HttpListener",
    "HttpOptions",
    "HttpRefusal",
    "HttpSessionStream",
    "ListenerSettings",
    "McpHttpApp",
    "ResponseStream",
    "http_listener_spec",
    "serve_http",
]
