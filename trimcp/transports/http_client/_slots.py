"""``Slots``: how many requests one HTTP client stream keeps in flight, and who waits next.

Over Streamable HTTP each request in flight holds a connection (and a task) until its answer
is read to the end, which for a tool call may take minutes. ``Slots`` bounds them; a request
beyond the bound waits for a slot in arrival order, outside the sender, so that the
messages behind it (a cancel, an answer to the server's own request) still leave at once.
A waiting request can leave the queue (its caller cancelled it before it was sent).

Pure bookkeeping: the caller wakes the holder that ``release`` returns. Not here: the
tasks that wait (``_post.run_post``) and the sender (``_client.HttpClientStream``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar, final

__all__ = ["SlotStatistics", "Slots"]

T = TypeVar("T")


@final
@dataclass(frozen=True, slots=True)
class SlotStatistics:
    """A snapshot: requests holding a slot, requests waiting for one, and the bound."""

    in_flight: int
    waiting: int
    limit: int


@final
class Slots(Generic[T]):
    """At most ``limit`` holders at once; the others wait, first come, first served."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the number of requests in flight must be at least 1")
        self._limit = limit
        self._free = limit
        self._waiting: deque[T] = deque()

    def take(self, holder: T) -> bool:
        """Give ``holder`` a slot now (True), or queue it behind the others (False)."""
        if self._free and not self._waiting:
            self._free -= 1
            return True
        self._waiting.append(holder)
        return False

    def release(self) -> T | None:
        """Free one slot; return the waiter that holds it now (None: nobody waited)."""
        if self._waiting:
            return self._waiting.popleft()
        self._free += 1
        return None

    def leave(self, holder: T) -> bool:
        """Take a waiting ``holder`` out of the queue; False if it was not waiting."""
        try:
            self._waiting.remove(holder)
        except ValueError:
            return False
        return True

    def statistics(self) -> SlotStatistics:
        """Return how many hold a slot and how many wait."""
        return SlotStatistics(
            in_flight=self._limit - self._free, waiting=len(self._waiting), limit=self._limit
        )
