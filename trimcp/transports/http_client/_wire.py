"""httpx requests and bodies without async generators left behind for the garbage collector.

httpx and httpcore stream bodies through chains of async generators. A chain abandoned at
a ``yield`` (a reader cancelled, or stopping early, while it handles a chunk) is finalized by
the garbage collector, and trio reports each one as a ``ResourceWarning``. So request bodies
here are plain iterator objects, and response bodies are read by ``read_chunks``, which
always runs the chain to its end: when it stops early it resumes the chain once more inside
a cancelled scope, so that trio's ``Cancelled`` goes up through every generator and ends it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import httpx
import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["close_response", "new_request", "read_chunks", "read_limited"]

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


async def read_chunks(
    response: httpx.Response, consume: Callable[[bytes], Awaitable[bool]]
) -> None:
    """Pass each chunk of ``response``'s body to ``consume`` until it returns False or the
    body ends.

    Raises:
        httpx.HTTPError: the connection broke.
    """
    chunks = response.aiter_bytes()
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
