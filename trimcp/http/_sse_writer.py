"""``SseWriter``: the SSE answer of a Streamable HTTP request, from a ``LiveQueue`` to ASGI.

The endpoint (``_app.py``) decides which ``ResponseStream`` a POST or GET answers with and
attaches to it; from there this module writes: the priming event (2025-11-25), the events
the session delivers, keep-alive comments on an idle stream, and the end. It batches events
that are already waiting into one write, and watches for the client leaving only once the
stream outlives its first write. It does not decide what goes on a stream (``_stream.py``)
nor store anything itself (``_response.py`` does, before an event reaches the queue).
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

import trio

from trimcp.http._asgi import chunk
from trimcp.transports import encode_event, keepalive_comment

if TYPE_CHECKING:
    from trimcp.http._asgi import Receive, Send
    from trimcp.http._live import LiveQueue
    from trimcp.http._options import HttpOptions
    from trimcp.http._response import ResponseStream

__all__ = ["SSE_HEADERS", "SseWriter"]

SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    # Each event must reach the client as it is written: no cache may answer with it, no
    # proxy may recompress it (no-transform), and nginx must not buffer it (X-Accel-Buffering).
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
# Most events joined into one write when a stream has a backlog.
_EVENT_BATCH = 64
# Seconds an SSE answer waits for its first events before sending what it has.
_FIRST_EVENT_WAIT = 0.05


def _priming_versions(version: str) -> bool:
    # 2025-11-25 added the priming event and retry polling; older clients may not expect
    # an event without data.
    return version >= "2025-11-25"


@typing.final
class SseWriter:
    """Write SSE answers with one endpoint's ``keepalive_interval`` and ``retry_ms``."""

    __slots__ = ("_options",)

    def __init__(self, options: HttpOptions) -> None:
        self._options = options

    async def priming(self, response: ResponseStream, version: str) -> bytes:
        """Store and render the priming event (an id, ``retry``, empty data) for 2025-11-25.

        Returns b"" for an older ``version``: nothing is stored then.
        """
        if not _priming_versions(version):
            return b""
        event_id = await response.priming_event_id()
        return encode_event(None, event_id=event_id, retry_ms=self._options.retry_ms)

    async def stream(
        self,
        response: ResponseStream,
        live: LiveQueue,
        receive: Receive,
        send: Send,
        head: bytes,
    ) -> None:
        """Answer with an SSE stream: ``head`` (priming or replayed events), then ``live``.

        Most answers to a POST are ready within milliseconds: the first events are awaited
        briefly (``_FIRST_EVENT_WAIT``) and leave in one write with ``head``, and a stream
        that has already ended is finished in that same write, with no watcher task at all.
        Only a stream still open after that gets the task that notices the client leaving.
        A stream written to its end is released in the store (``_delivered``): its
        resumption window was this delivery, not the store's ``ttl``.

        The standalone stream a GET opens is answered at once: nothing is on its way, and a
        client may wait for its status before sending the requests whose messages it carries.

        However it ends (a disconnect, a failed write, cancellation), the response stops
        reading ``live`` then: the session keeps storing the stream's events for a
        resumption, and never waits for this reader again.
        """
        try:
            await self._write(response, live, receive, send, head)
        finally:
            live.abandon()

    async def _write(
        self,
        response: ResponseStream,
        live: LiveQueue,
        receive: Receive,
        send: Send,
        head: bytes,
    ) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        # A POST's stream (``waiting`` its requests) waits briefly for its first answers.
        first_wait = _FIRST_EVENT_WAIT if response.waiting is not None else 0.0
        chunks = [head] if head else []
        ended = False
        if first_wait > 0:
            with trio.move_on_after(first_wait):
                item = await live.get()
                if item is None:
                    ended = True
                else:
                    chunks.append(item)
                    ended = _drain(live, chunks)
        else:
            ended = _drain(live, chunks)
        if ended:
            await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": False})
            await _delivered(response, live)
            return
        if chunks or not first_wait > 0:
            # An empty part still sends the status line and headers.
            await send(chunk(b"".join(chunks)))
        gone = False
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            try:
                await self._pump(live, send)
            finally:
                if gone:
                    response.detach()
                nursery.cancel_scope.cancel()
        if not gone:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            await _delivered(response, live)

    async def _pump(self, live: LiveQueue, send: Send) -> None:
        """Write ``live``'s events as they come, and a comment after each idle interval."""
        keepalive = self._options.keepalive_interval
        while True:
            if keepalive is None:
                item = await live.get()
            else:
                item = None
                with trio.move_on_after(keepalive) as idle:
                    item = await live.get()
                if idle.cancelled_caught:
                    await send(chunk(keepalive_comment()))
                    continue
            if item is None:
                return
            chunks = [item]
            # Let the producer run once more per round while it keeps adding events, so a
            # burst (progress) leaves in a few writes instead of one write per event.
            while not _drain(live, chunks) and len(chunks) < _EVENT_BATCH:
                await trio.lowlevel.checkpoint()
                if not live:
                    break
            await send(chunk(b"".join(chunks)))


async def _delivered(response: ResponseStream, live: LiveQueue) -> None:
    """The stream's last event was written: let the store drop the stream soon.

    Only if this reader had the stream to its end (``live`` closed ``complete``), not
    when it was cut off for another reader. Written means handed to the kernel; the
    store's grace after a release (``MemoryEventStore(delivered_ttl=...)``) covers a
    connection that broke before the client read it.
    """
    if live.complete:
        await response.release()


def _drain(live: LiveQueue, chunks: list[bytes]) -> bool:
    """Add the events already waiting (up to ``_EVENT_BATCH``); True if the stream ended."""
    chunks.extend(live.take_ready(_EVENT_BATCH - len(chunks)))
    return live.finished
