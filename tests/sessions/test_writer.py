"""``SessionWriter``: one session's outgoing messages, in order, bounded, closed cleanly.

Driven directly with scripted streams (no session, no protocol): a plain stream whose writes
the test holds and releases, one that can write without waiting (``ImmediateOutput``), and a
routed one (``RoutedOutput``). Times are virtual and asserted exactly.
"""

from __future__ import annotations

import math
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from trimcp.errors import TransportBroken
from trimcp.sessions import SessionOptions
from trimcp.sessions._writer import SessionWriter

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.protocol import RequestId
    from trimcp.transports import Routed


class Owner:
    """The session side of a writer: helper tasks in the test's nursery."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery
        self.ended = 0

    @property
    def name(self) -> str:
        return "writer-test"

    def start_soon(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        self.nursery.start_soon(fn, *args)

    def output_ended(self) -> None:
        self.ended += 1


class HeldStream:
    """A plain ``MessageStream`` whose ``send_messages`` waits until the test releases it."""

    def __init__(self) -> None:
        self.batches: list[list[bytes]] = []
        self.hold = False
        self.started = trio.Event()
        self._release = trio.Event()
        self.fail_with: Exception | None = None

    def release(self) -> None:
        self.hold = False
        self._release.set()
        self._release = trio.Event()

    @property
    def sent(self) -> list[bytes]:
        return [message for batch in self.batches for message in batch]

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        self.started.set()
        if self.fail_with is not None:
            raise self.fail_with
        while self.hold:
            await self._release.wait()
        await trio.lowlevel.checkpoint()
        self.batches.append(list(messages))

    async def send_message(self, data: bytes) -> None:
        await self.send_messages([data])

    async def receive_message(self) -> bytes:
        raise AssertionError("the writer never reads")

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        raise AssertionError("the writer never reads")

    async def aclose(self) -> None:
        pass


class NowStream(HeldStream):
    """Takes messages without waiting while ``take_now`` (stdio's fast path).

    Otherwise it keeps them, as ``ImmediateOutput`` says, for the next ``send_messages``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.take_now = True
        self.now: list[bytes] = []
        self.kept: list[bytes] = []

    def send_messages_now(self, messages: Sequence[bytes]) -> bool:
        if not self.take_now:
            self.kept.extend(messages)
            return False
        self.now.extend(messages)
        return True

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        kept, self.kept = self.kept, []
        await super().send_messages([*kept, *messages])


class RoutedStream(HeldStream):
    """Takes routed messages (HTTP's shape); nothing goes at once, all is kept for later."""

    def __init__(self) -> None:
        super().__init__()
        self.routed: list[Routed] = []
        self.kept: list[Routed] = []

    def send_routed_now(self, messages: Sequence[Routed]) -> bool:
        self.kept.extend(messages)
        return False

    def send_one_now(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        return False

    async def send_routed(self, messages: Sequence[Routed]) -> None:
        await trio.lowlevel.checkpoint()
        kept, self.kept = self.kept, []
        self.routed.extend([*kept, *messages])


@asynccontextmanager
async def _open(
    stream: HeldStream, **options: float
) -> AsyncIterator[tuple[SessionWriter, Owner, trio.Nursery]]:
    async with trio.open_nursery() as nursery:
        owner = Owner(nursery)
        writer = SessionWriter(stream, SessionOptions(**options), owner)  # type: ignore[arg-type]
        yield writer, owner, nursery
        nursery.cancel_scope.cancel()


def _msg(n: int) -> Routed:
    return (f"m{n}".encode(), None, False)


async def test_messages_leave_in_the_order_written(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stream = HeldStream()
    stream.hold = True
    async with _open(stream) as (writer, _, nursery):
        nursery.start_soon(writer.write, _msg(1))  # writes itself, held by the stream
        await stream.started.wait()
        # Meanwhile others only queue: they return at once, with no wait for the stream.
        with trio.CancelScope() as scope:
            scope.cancel()
            assert await writer.write(_msg(2))
            assert await writer.write(_msg(3))
        stream.release()
        await trio.testing.wait_all_tasks_blocked()
        assert stream.batches == [[b"m1"], [b"m2", b"m3"]]


async def test_queued_replies_leave_together_on_flush_soon() -> None:
    stream = HeldStream()
    async with _open(stream) as (writer, _, _):
        for n in range(3):
            assert writer.queue(_msg(n))
        assert stream.batches == []
        writer.flush_soon()
        await trio.testing.wait_all_tasks_blocked()
        assert stream.batches == [[b"m0", b"m1", b"m2"]]


async def test_a_full_queue_holds_writers_back_until_the_flush_takes_it(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stream = HeldStream()
    stream.hold = True
    async with _open(stream, write_queue=2) as (writer, _, nursery):
        nursery.start_soon(writer.write, _msg(1))
        await stream.started.wait()
        assert await writer.write(_msg(2))
        assert await writer.write(_msg(3))  # the queue is now full
        third_done = trio.Event()

        async def third() -> None:
            await writer.write(_msg(4))
            third_done.set()

        nursery.start_soon(third)
        await trio.testing.wait_all_tasks_blocked()
        assert not third_done.is_set()
        assert not writer.queue(_msg(5))  # the reader's non-waiting path says "full"
        stream.release()
        await third_done.wait()
        await trio.testing.wait_all_tasks_blocked()
        assert stream.sent == [b"m1", b"m2", b"m3", b"m4"]


async def test_a_client_that_reads_nothing_ends_the_output_after_write_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stream = HeldStream()
    stream.hold = True  # never released
    async with _open(stream, write_timeout=30.0) as (writer, owner, _):
        assert await writer.write(_msg(1))  # it was taken; the flush gave up on the client
        assert trio.current_time() == 30.0
        assert owner.ended == 1
        assert writer.closed
        assert not await writer.write(_msg(2))  # dropped: the session is closing
        assert stream.batches == []


async def test_cancelling_the_flushing_task_does_not_cut_the_flush(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stream = HeldStream()
    stream.hold = True
    async with _open(stream) as (writer, _, nursery):
        scope = trio.CancelScope()

        async def cancel_then_release() -> None:
            await stream.started.wait()
            scope.cancel()  # the writing task is cancelled mid-flush...
            await trio.sleep(1)
            stream.release()  # ...and the flush still finishes

        nursery.start_soon(cancel_then_release)
        with scope:
            await writer.write(_msg(1))
        assert stream.sent == [b"m1"]
        assert trio.current_time() == 1.0


async def test_close_waits_for_the_flush_writes_the_queue_then_refuses(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stream = HeldStream()
    stream.hold = True
    async with _open(stream) as (writer, _, nursery):
        nursery.start_soon(writer.write, _msg(1))
        await stream.started.wait()
        assert await writer.write(_msg(2))  # queued behind the flush
        closed = trio.Event()

        async def close() -> None:
            await writer.close()
            closed.set()

        nursery.start_soon(close)
        await trio.sleep(1)
        assert not closed.is_set()  # the flush in progress is finished first
        stream.release()
        await closed.wait()
        assert stream.sent == [b"m1", b"m2"]
        assert writer.closed
        assert not await writer.write(_msg(3))
        assert not writer.queue(_msg(4))


async def test_a_broken_stream_ends_the_output_and_drops_the_queue() -> None:
    stream = HeldStream()
    stream.fail_with = TransportBroken("the peer went away")
    async with _open(stream) as (writer, owner, _):
        assert writer.queue(_msg(1))
        assert await writer.write(_msg(2))
        assert owner.ended == 1
        assert writer.closed
        assert not await writer.write(_msg(3))


async def test_a_stream_that_takes_messages_now_is_written_without_a_schedule_point() -> None:
    stream = NowStream()
    async with _open(stream) as (writer, _, _):
        with trio.CancelScope() as scope:
            scope.cancel()
            assert await writer.write(_msg(1))
            assert await writer.write(_msg(2))
        assert stream.now == [b"m1", b"m2"]
        assert stream.batches == []
        stream.take_now = False  # output full: the rest goes in a flush
        assert await writer.write(_msg(3))
        assert stream.batches == [[b"m3"]]


@pytest.mark.parametrize("routed", [True, False])
async def test_only_a_routed_stream_hears_that_no_response_will_come(routed: bool) -> None:
    stream = RoutedStream() if routed else HeldStream()
    cancelled: Routed = (b"", 5, True)
    async with _open(stream, drain_timeout=math.inf) as (writer, _, _):
        assert await writer.write((b"progress", 5, False))
        assert await writer.write(cancelled)
        assert await writer.write((b"", None, False))  # nothing to send, for anyone
        await trio.testing.wait_all_tasks_blocked()
    if isinstance(stream, RoutedStream):
        assert stream.routed == [(b"progress", 5, False), cancelled]
    else:
        assert stream.sent == [b"progress"]
