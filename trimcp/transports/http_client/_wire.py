"""httpx requests and bodies without async generators left behind for the garbage collector.

httpx and httpcore stream bodies through chains of async generators. A chain abandoned at
a ``yield`` (a reader cancelled, or stopping early, while it handles a chunk) is finalized by
the garbage collector, and trio reports each one as a ``ResourceWarning``. So request bodies
here are plain iterator objects, and response bodies are read by ``read_chunks``, which
always runs the chain to its end: when it stops early it resumes the chain once more inside
a cancelled scope, so that trio's ``Cancelled`` goes up through every generator and ends it.
"""

from __future__ import annotations

import urllib.request
from typing import TYPE_CHECKING, final

import httpx
import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = ["Sender", "close_response", "new_request", "read_chunks", "read_limited"]

# Seconds allowed to close a response whose task is being cancelled.
_CLOSE_GRACE = 1.0


@final
class _Once:
    """Yield one bytes object, then stop: an async iterator that is not a generator.

    ``on_end`` runs when the iterator is asked for more after its one chunk: httpcore asks
    only once it wrote that chunk (and the headers before it) to the connection, so that is
    the moment the request has left (``httpcore/_async/http11.py``, ``_send_request_body``).
    """

    def __init__(self, data: bytes, on_end: Callable[[], object] | None) -> None:
        self._data: bytes | None = data or None
        self._on_end = on_end

    def __aiter__(self) -> _Once:
        return self

    async def __anext__(self) -> bytes:
        data = self._data
        if data is None:
            if self._on_end is not None:
                self._on_end()
                self._on_end = None
            raise StopAsyncIteration
        self._data = None
        return data


@final
class _Body(httpx.AsyncByteStream):
    """A request body; each sending (a redirect sends it again) gets a fresh iterator."""

    def __init__(self, data: bytes, on_sent: Callable[[], object] | None) -> None:
        self._data = data
        self._on_sent = on_sent

    def __aiter__(self) -> _Once:
        return _Once(self._data, self._on_sent)

    async def aclose(self) -> None:
        """Nothing to release."""


def new_request(  # noqa: PLR0913  # the request's parts, and the one hook
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: dict[str, str],
    data: bytes = b"",
    *,
    on_sent: Callable[[], object] | None = None,
) -> httpx.Request:
    """Build a request with the client's settings (timeouts) and a generator-free body.

    ``on_sent`` is called once the headers and the body are written to the connection
    (before any answer is read); not at all if writing fails.
    """
    request = client.build_request(method, url, headers=headers, content=data or None)
    request.stream = _Body(data, on_sent)
    return request


@final
class Sender:
    """Send requests through ``transport`` itself, and through ``client`` when a redirect
    needs following.

    ``AsyncClient.send`` wraps the transport in its auth flow, redirect loop, event hooks,
    cookie jar and an INFO log line per request: over half of this client's CPU per call
    on a small answer, for features an MCP endpoint rarely uses. So a request goes to the
    transport (``AsyncBaseTransport.handle_async_request``, httpx's public interface for
    transports) and what ``send`` would add is added here only when it applies: cookies a
    response sets are kept (a load balancer's affinity cookie must come back on the next
    request; ``build_request`` adds the jar's cookies), and a redirect is followed by
    sending the request again through ``client``, which follows it (and every later
    request then goes through ``client``).

    Proxies set in the environment (``HTTP_PROXY``, ``ALL_PROXY``, ...) are the client's to
    apply, per URL: when any is set, every request goes through ``client.send``.
    """

    __slots__ = ("_client", "_transport")

    def __init__(self, client: httpx.AsyncClient, transport: httpx.AsyncBaseTransport) -> None:
        self._client = client
        # The same table httpx reads its environment proxies from (``trust_env``).
        proxied = client.trust_env and any(
            scheme in ("http", "https", "all") for scheme in urllib.request.getproxies()
        )
        self._transport = None if proxied else transport

    @property
    def client(self) -> httpx.AsyncClient:
        """The client whose settings (timeouts, cookies) requests are built with."""
        return self._client

    async def __aenter__(self) -> Sender:
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._client.aclose()

    async def send(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; return the response with its body not read yet.

        Raises:
            httpx.HTTPError: the connection failed, or timed out.
        """
        if self._transport is None:
            return await self._client.send(request, stream=True)
        response = await self._transport.handle_async_request(request)
        response.request = request
        if response.is_redirect:
            # From now on through the client, which follows redirects (an endpoint that
            # moved once is likely to answer the next request with a redirect too).
            await close_response(response)
            self._transport = None
            return await self._client.send(request, stream=True)
        if "set-cookie" in response.headers:
            self._client.cookies.extract_cookies(response)
        return response


async def read_chunks(
    response: httpx.Response, consume: Callable[[bytes], Awaitable[bool]]
) -> None:
    """Pass each chunk of ``response``'s body to ``consume`` until it returns False or the
    body ends.

    Raises:
        httpx.HTTPError: the connection broke.
    """
    chunks = _body_of(response)
    try:
        async for chunk in chunks:
            if not await consume(chunk):
                return
    finally:
        with trio.CancelScope() as scope:
            scope.cancel()
            try:
                while True:  # each step ends at a checkpoint, raising Cancelled up the chain
                    await chunks.__anext__()
            except (StopAsyncIteration, httpx.HTTPError):
                pass


def _body_of(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body's chunks: straight from the transport's stream when it is not encoded.

    ``aiter_bytes`` adds two generators and a decoder per chunk, needed only to undo a
    ``Content-Encoding`` (httpx asks for gzip, deflate, ...); an SSE answer rarely has one.
    """
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    stream = response.stream
    if encoding in ("", "identity") and isinstance(stream, httpx.AsyncByteStream):
        return aiter(stream)
    return response.aiter_bytes()


async def read_limited(response: httpx.Response, limit: int) -> bytes:
    """Read ``response``'s body, stopping once ``limit`` bytes or more are in.

    Raises:
        httpx.HTTPError: the connection broke.
    """
    body = bytearray()

    async def keep(chunk: bytes) -> bool:
        body.extend(chunk)
        return len(body) < limit

    await read_chunks(response, keep)
    return bytes(body)


async def close_response(response: httpx.Response) -> None:
    """Close ``response``, even from a task being cancelled, within a short grace."""
    with trio.move_on_after(_CLOSE_GRACE, shield=True):
        await response.aclose()
