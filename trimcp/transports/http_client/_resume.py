"""Resuming SSE streams: when to reconnect, and which replayed events were seen already.

Pure parts of MCP 2025-11-25, Transports > Streamable HTTP > Resumability and Redelivery:
the server may close an SSE connection without ending the stream (SEP-1699 polling), after
a ``retry:`` hint; the client waits that long and resumes with ``GET`` and
``Last-Event-ID``. ``ReconnectPolicy`` says how long to wait and when to give up;
``SeenIds`` drops events a server replays twice; ``decode`` turns a chunk into events and
over-size errors, in stream order. The loop that acts on them is in ``_sse.py``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.errors import SSEEventTooLarge

if TYPE_CHECKING:
    from trimcp.transports import SSEDecoder, SSEEvent

__all__ = ["ReconnectPolicy", "SeenIds", "decode"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReconnectPolicy:
    """How a broken or server-closed SSE stream is resumed.

    Attributes:
        default_delay: seconds to wait before reconnecting when the server sent no
            ``retry:`` (1.0, the delay browsers' EventSource uses by default).
        max_delay: the backoff's ceiling in seconds (30.0); a larger ``retry:`` still wins,
            since the spec says the client MUST wait at least that long.
        max_attempts: reconnections in a row that bring no new event before giving up (5).
            A reconnection that delivers an event starts the count again, so a server that
            polls forever is followed forever.
    """

    default_delay: float = 1.0
    max_delay: float = 30.0
    max_attempts: int = 5

    def __post_init__(self) -> None:
        if self.default_delay < 0 or self.max_delay < 0:
            raise ValueError("ReconnectPolicy delays must not be negative")
        if self.max_attempts < 1:
            raise ValueError("ReconnectPolicy.max_attempts must be at least 1")

    def delay(self, retry_ms: int | None, failures: int) -> float | None:
        """Seconds to wait before the next attempt, or None to give up.

        ``retry_ms`` is the server's last ``retry:`` (None: none sent); ``failures`` the
        attempts in a row that brought nothing (0 after a stream that delivered events).
        The wait doubles with each failure, from the server's value or the default.
        """
        if failures >= self.max_attempts:
            return None
        base = self.default_delay if retry_ms is None else retry_ms / 1000
        return min(base * (1 << failures), max(self.max_delay, base))


@final
class SeenIds:
    """The ids of the last ``limit`` events of one stream, to drop replayed duplicates.

    A server resuming after ``Last-Event-ID`` should send only later events; one that
    replays from further back (or twice) would otherwise deliver a message again.
    """

    def __init__(self, limit: int = 4096) -> None:
        self._limit = limit
        self._order: deque[str] = deque()
        self._ids: set[str] = set()

    def add(self, event_id: str) -> bool:
        """Remember ``event_id``; return False if it was seen already."""
        if event_id in self._ids:
            return False
        self._ids.add(event_id)
        self._order.append(event_id)
        if len(self._order) > self._limit:
            self._ids.discard(self._order.popleft())
        return True


def decode(
    decoder: SSEDecoder, chunk: bytes, *, eof: bool = False
) -> list[SSEEvent | SSEEventTooLarge]:
    """Feed ``chunk`` (or the end of the body) and return events and over-size errors in order.

    ``SSEDecoder`` raises for an over-size event and keeps what follows for the next call;
    this collects all of it in one list.
    """
    items: list[SSEEvent | SSEEventTooLarge] = []
    try:
        items.extend(decoder.feed_eof() if eof else decoder.feed(chunk))
    except SSEEventTooLarge as exc:
        items.append(exc)
    while decoder.statistics().ready_events:
        try:
            items.extend(decoder.feed(b""))
        except SSEEventTooLarge as exc:
            items.append(exc)
    return items
