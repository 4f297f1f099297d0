r"""The client side of MCP over HTTP: Streamable HTTP (2025-11-25) and the legacy HTTP+SSE
transport (2024-11-05), as ``MessageStream``\ s a ``ClientSession`` runs over.

``open_http_client_stream`` keeps the session id and protocol version, reads POST answers
(JSON or SSE) and the GET stream in the background, resumes broken streams with
``Last-Event-ID`` after the server's ``retry:``, never holds one message behind another
request's answer, and explains HTTP failures in plain words; ``open_legacy_sse_client_stream``
speaks the older transport. Both take an ``HttpAuth`` that supplies each request's
``Authorization`` header and renews it after a 401 or 403 (``trimcp.auth.client`` has
OAuth's). httpx does the HTTP.
"""

from ._auth import HttpAuth as HttpAuth
from ._client import HttpClientStream as HttpClientStream
from ._client import open_http_client_stream as open_http_client_stream
from ._legacy import LegacySseClientStream as LegacySseClientStream
from ._legacy import open_legacy_sse_client_stream as open_legacy_sse_client_stream
from ._resume import ReconnectPolicy as ReconnectPolicy
from ._seams import ServerIdentity as ServerIdentity
from ._seams import ToolHeaderSink as ToolHeaderSink

__all__ = [
    "HttpAuth",
    "HttpClientStream",
    "LegacySseClientStream",
    "ReconnectPolicy",
    "ServerIdentity",
    "ToolHeaderSink",
    "open_http_client_stream",
    "open_legacy_sse_client_stream",
]
