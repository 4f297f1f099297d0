"""Plain-words errors for the client's HTTP transports: what failed, why, and what to try.

Pure functions from what httpx raised, or from a status and a body, to one of
``trimcp.errors``' exceptions. The caller raises them ``from`` the raw exception, so it stays
available as ``__cause__``. Not here: deciding which failures end the stream and which only
fail one request (``_post.py``).
"""

from __future__ import annotations

import re
import ssl
import urllib.parse
from http import HTTPStatus

import httpx
import orjson

from trimcp.errors import (
    ConnectFailed,
    EndpointNotFound,
    HttpAuthRequired,
    HttpStatusError,
    NotAnMcpEndpoint,
    SessionExpired,
    TransportBroken,
)

__all__ = [
    "body_excerpt",
    "connection_error",
    "server_message",
    "status_error",
    "unexpected_content",
]

# How much of a body an error quotes.
_QUOTE = 300
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def connection_error(url: str, exc: httpx.HTTPError, *, connected: bool) -> TransportBroken:
    """Explain a network failure; ``connected`` says whether the session had started."""
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) and _tls_failure(exc):
        return ConnectFailed(
            url,
            f"the TLS handshake failed ({exc}).\n"
            "  likely causes: a self-signed or expired certificate, or an https:// URL for a\n"
            "  server that speaks plain HTTP (a local server usually wants http://)",
        )
    if isinstance(exc, httpx.ConnectTimeout):
        return ConnectFailed(url, f"nothing answered in time at {_where(url)}; is it reachable?")
    if isinstance(exc, httpx.ConnectError):
        return ConnectFailed(
            url,
            f"the connection to {_where(url)} was refused or unreachable ({exc}); "
            "is the server running?",
        )
    if isinstance(exc, httpx.TimeoutException):
        return TransportBroken(f"the server at {url} stopped answering ({type(exc).__name__})")
    when = "while in use" if connected else "while starting"
    return TransportBroken(f"the connection to the server at {url} broke {when} ({exc!r})")


def _tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):  # the chain is short: httpx -> httpcore -> trio -> ssl
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _where(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts.netloc or url


def status_error(url: str, status: int, detail: str, *, session: bool) -> TransportBroken:
    """Explain an HTTP error status; ``session`` says whether the request carried a session id.

    ``detail`` is ``server_message`` of the body. A 404 for a request with a session id is
    ``SessionExpired``: the server ended the session, and the client starts a new one.
    """
    said = f"\n  the server said: {detail}" if detail else ""
    name = _status_name(status)
    if status == 404 and session:
        return SessionExpired(f"the server at {url} no longer knows this session (HTTP 404)")
    if status in (401, 403):
        return HttpAuthRequired(
            url,
            status,
            f"the server wants authorization (HTTP {status} {name}).{said}\n"
            '  how to fix: set "auth": "oauth" for the server (signing in through a browser), '
            "or add the credentials it expects to its `headers` "
            '(e.g. "Authorization": "Bearer ...")',
            detail=detail,
        )
    if status == 404:
        return EndpointNotFound(
            url,
            status,
            f"nothing serves MCP at this URL (HTTP 404 Not Found).{said}\n"
            f"  likely cause: a wrong path; MCP servers usually listen at /mcp "
            f"(try {_suggest_mcp(url)})",
            detail=detail,
        )
    return HttpStatusError(url, status, f"{_explain(status, name)}{said}", detail=detail)


def _status_name(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "(unknown status)"


def _explain(status: int, name: str) -> str:
    if status in (400, 406, 415):
        return (
            f"the server refused the request (HTTP {status} {name}); it may speak another "
            "version of MCP's HTTP transport"
        )
    if status == 405:
        return (
            "the server does not take MCP messages by POST here (HTTP 405); it may be a "
            'legacy HTTP+SSE server: set "transport": "sse" for it'
        )
    if status >= 500:
        return f"the server failed (HTTP {status} {name}); look at its logs"
    return f"the server answered HTTP {status} {name}"


def _suggest_mcp(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/mcp", "", ""))


def unexpected_content(url: str, content_type: str, body: bytes) -> NotAnMcpEndpoint:
    """Explain a 2xx answer that is neither JSON nor an event stream (or is not valid JSON)."""
    shown = content_type or "no Content-Type"
    looks_html = b"<html" in body[:1024].lower() or content_type.startswith("text/html")
    kind = "a web page (HTML)" if looks_html else f"{shown}"
    excerpt = body_excerpt(body)
    quoted = f"\n  it begins: {excerpt}" if excerpt else ""
    return NotAnMcpEndpoint(
        url,
        f"the server answered with {kind} where MCP expects JSON or an event stream.{quoted}\n"
        f"  likely cause: the URL points at a website or a proxy, not at the MCP endpoint "
        f"(often {_suggest_mcp(url)})",
        content_type=content_type,
    )


def server_message(body: bytes) -> str:
    """Return the JSON-RPC error message in ``body``, or else the start of its text."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body_excerpt(body)
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])[:_QUOTE]
    return body_excerpt(body)


def body_excerpt(body: bytes) -> str:
    """Return the start of ``body`` as one short line of text (tags and runs of space gone)."""
    text = body[: _QUOTE * 4].decode("utf-8", "replace")
    text = _SPACE.sub(" ", _TAG.sub(" ", text)).strip()
    return text[:_QUOTE]
