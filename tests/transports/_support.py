"""Scripted byte streams and helpers shared by the transport tests."""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio
import trio.testing

from trimcp.errors import MessageTooLarge, TransportClosed
from trimcp.transports import StdioStream

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.transports import MessageStream


@dataclass(frozen=True, slots=True)
class TooLarge:
    """Stands for a ``MessageTooLarge(size, ...)`` in an expected sequence of outcomes."""

    size: int


Outcome = bytes | TooLarge


class ScriptedReceiveStream(trio.abc.ReceiveStream):
    """Return exactly the given chunks, one per read (an exception is raised), then EOF."""

    def __init__(self, chunks: Iterable[bytes | Exception]) -> None:
        self._chunks: deque[bytes | Exception] = deque(chunks)
        self.reads = 0
        self.closed = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        if self.closed:
            raise trio.ClosedResourceError
        self.reads += 1
        if not self._chunks:
            return b""
        chunk = self._chunks.popleft()
        if isinstance(chunk, Exception):
            raise chunk
        assert max_bytes is None or len(chunk) <= max_bytes
        return chunk

    async def aclose(self) -> None:
        self.closed = True
        await trio.lowlevel.checkpoint()


def stdio_from_chunks(
    chunks: Iterable[bytes | Exception], *, max_message_size: int = 1024, receive_size: int = 64
) -> tuple[StdioStream, ScriptedReceiveStream, trio.testing.MemorySendStream]:
    """Return a StdioStream reading ``chunks``, its scripted input and its recording output."""
    receive = ScriptedReceiveStream(chunks)
    send = trio.testing.MemorySendStream()
    stream = StdioStream(
        receive, send, max_message_size=max_message_size, receive_size=receive_size
    )
    return stream, receive, send


def chunked(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """Split ``data`` at the given offsets (any order, duplicates allowed)."""
    points = sorted({0, len(data), *(cut for cut in cuts if 0 <= cut <= len(data))})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


async def receive_all(stream: MessageStream) -> list[Outcome]:
    """Receive until ``TransportClosed``, recording ``MessageTooLarge`` as ``TooLarge``."""
    outcomes: list[Outcome] = []
    while True:
        try:
            outcomes.append(await stream.receive_message())
        except MessageTooLarge as exc:
            outcomes.append(TooLarge(exc.size))
        except TransportClosed:
            return outcomes
