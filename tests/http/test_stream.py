"""HttpSessionStream: routing, the synchronous send path, pushed input, slow readers."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import TransportClosed
from trimcp.http import HttpSessionStream
from trimcp.http._live import LiveQueue
from trimcp.http._stream import peek_id
from trimcp.protocol import (
    ErrorObject,
    ErrorResponse,
    Request,
    Result,
    encode_message,
)
from trimcp.transports import EventSender, MemoryEventStore, SSEDecoder, encode_event
from trimcp.transports._sse import _encode_fields

RESPONSE_7 = b'{"jsonrpc":"2.0","id":7,"result":{}}'
PROGRESS = (
    b'{"jsonrpc":"2.0","method":"notifications/progress",'
    b'"params":{"progressToken":"t","progress":1}}'
)
CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


def progress(n: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"t","progress":%d}}' % n
    )


class AsyncOnlyStore:
    """A MemoryEventStore seen only through the async ``EventStore`` protocol (a remote one)."""

    def __init__(self) -> None:
        self._inner = MemoryEventStore()

    async def open_stream(self, session_id: str) -> str:
        return await self._inner.open_stream(session_id)

    async def store_event(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        await trio.lowlevel.checkpoint()
        return await self._inner.store_event(session_id, stream_id, message)

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send: EventSender
    ) -> str:
        return await self._inner.replay_events_after(session_id, last_event_id, send)

    async def end_stream(self, session_id: str, stream_id: str) -> None:
        await self._inner.end_stream(session_id, stream_id)

    async def release_stream(self, session_id: str, stream_id: str) -> None:
        await self._inner.release_stream(session_id, stream_id)

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        await self._inner.forget_stream(session_id, stream_id)

    async def forget_session(self, session_id: str) -> None:
        await self._inner.forget_session(session_id)


async def read_all(live: LiveQueue) -> list[bytes]:
    events = []
    while (event := await live.get()) is not None:
        events.append(event)
    return events


def decoded(chunks: list[bytes]) -> list[tuple[str | None, bytes]]:
    """The (id, data) of SSE-framed events."""
    return [(e.id, e.data.encode()) for e in SSEDecoder().feed(b"".join(chunks))]


async def test_tagged_progress_and_response_go_to_their_post_and_the_rest_to_get() -> None:
    stream = HttpSessionStream("session-a", MemoryEventStore())
    post = await stream.open_post([7])
    post_live = post.attach()
    get = await stream.open_standalone()
    get_live = get.attach()
    assert stream.busy
    # Synchronous all the way: nothing here waits for a reader.
    messages = [(PROGRESS, 7, False), (CHANGED, None, False), (RESPONSE_7, 7, True)]
    assert stream.send_routed_now(messages)
    # Each stored, then framed as an SSE event with its id.
    assert decoded(await read_all(post_live)) == [("s0-0", PROGRESS), ("s0-1", RESPONSE_7)]
    assert post.ended  # answered: the POST stream ended
    assert decoded(get_live.take_ready(10)) == [("s1-0", CHANGED)]
    assert not stream.in_flight(7)
    await stream.aclose()


async def test_untagged_messages_are_routed_by_their_id() -> None:
    stream = HttpSessionStream("session-u", None)
    post = await stream.open_post([7])
    live = post.attach(sse=False)
    await stream.send_messages([CHANGED, RESPONSE_7])
    # The response finds its POST by its id. The notification has no GET stream to go on,
    # and a JSON answer holds responses only: it is not put on this one.
    assert await read_all(live) == [RESPONSE_7]


async def test_with_no_get_stream_a_notification_goes_on_the_post_stream_read_as_sse() -> None:
    stream = HttpSessionStream("session-v", None)
    json_post = await stream.open_post([7])
    json_live = json_post.attach(sse=False)
    sse_post = await stream.open_post([8])
    sse_live = sse_post.attach()
    third = await stream.open_post([9])
    third.attach(sse=False)  # the newest, but JSON
    await stream.send_messages([CHANGED, RESPONSE_7])
    assert await read_all(json_live) == [RESPONSE_7]
    assert len(sse_live) == 1
    event = await sse_live.get()
    assert event is not None
    assert [data for _, data in decoded([event])] == [CHANGED]


async def test_a_full_post_queue_keeps_the_rest_in_order_until_the_reader_takes_it() -> None:
    store = MemoryEventStore()
    stream = HttpSessionStream("session-f", store)
    post = await stream.open_post([7])
    live = post.attach()
    messages = [(progress(n), 7, False) for n in range(100)] + [(RESPONSE_7, 7, True)]
    assert not stream.send_routed_now(messages)
    assert len(live) == 64  # the reader's queue is full; the rest waits, unstored
    assert store.statistics().events == 64
    assert not stream.send_routed_now([])  # still behind: kept, in order
    received: list[bytes] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream.send_routed, [])

        async def reader() -> None:
            received.extend(await read_all(live))

        nursery.start_soon(reader)
    # Every event was stored before it was sent, in order, each with its own id.
    assert decoded(received) == [(f"s0-{n}", m[0]) for n, m in enumerate(messages)]
    assert post.ended
    assert stream.send_routed_now([(CHANGED, None, False)])  # nothing open: dropped at once
    await stream.aclose()


async def test_a_store_without_a_synchronous_path_is_awaited() -> None:
    stream = HttpSessionStream("session-r", AsyncOnlyStore())  # type: ignore[arg-type]
    post = await stream.open_post([7])
    first = await post.priming_event_id()
    assert first is not None
    live = post.attach()
    assert not stream.send_routed_now([(PROGRESS, 7, False), (RESPONSE_7, 7, True)])
    assert not stream.send_one_now(CHANGED, None, False)  # behind the others: kept out
    assert len(live) == 0  # nothing done synchronously
    await stream.send_routed([])
    assert [data for _, data in decoded(await read_all(live))] == [PROGRESS, RESPONSE_7]
    _, replay, _ = await stream.resume(first)
    assert [data for _, data in replay] == [PROGRESS, RESPONSE_7]


async def test_a_cancelled_request_ends_its_post_stream_without_an_event() -> None:
    store = MemoryEventStore()
    stream = HttpSessionStream("session-x", store)
    post = await stream.open_post([7])
    live = post.attach()
    assert stream.send_one_now(PROGRESS, 7, False)
    assert stream.send_one_now(b"", 7, True)
    assert [data for _, data in decoded(await read_all(live))] == [PROGRESS]
    assert post.ended
    assert not stream.busy
    assert store.statistics().events == 1


async def test_a_stalled_get_reader_is_dropped_then_disconnected_and_never_blocks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = HttpSessionStream("session-b", MemoryEventStore(max_events_per_stream=10_000))
    get = await stream.open_standalone()
    live = get.attach()  # never read
    with trio.fail_after(1):  # nothing here may wait for the reader
        for _ in range(64 + 256 + 10):
            await stream.send_messages([CHANGED])
    assert get.dropped == 256
    assert not get.attached
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "fell 256 messages behind" in warnings[0].getMessage()
    # What it did get is intact and in order; the rest can be resumed from the store.
    assert len(await read_all(live)) == 64
    await stream.aclose()


async def test_close_request_stream_keeps_collecting_for_resumption() -> None:
    stream = HttpSessionStream("session-c", MemoryEventStore())
    post = await stream.open_post([7])
    live = post.attach()
    first = await post.priming_event_id()
    assert first is not None
    assert stream.close_request_stream(7)
    assert await live.get() is None
    await stream.send_messages([RESPONSE_7])
    target, replay, resumed = await stream.resume(first)
    assert [data for _, data in replay] == [RESPONSE_7]
    assert target.ended
    assert await resumed.get() is None
    await stream.aclose()


async def test_a_reader_cut_off_while_the_writer_waits_loses_nothing_stored() -> None:
    stream = HttpSessionStream("session-w", MemoryEventStore())
    post = await stream.open_post([7])
    first = await post.priming_event_id()
    assert first is not None
    post.attach()  # never read
    messages = [(progress(n), 7, False) for n in range(70)]
    assert not stream.send_routed_now(messages)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stream.send_routed, [])
        await trio.testing.wait_all_tasks_blocked()
        assert stream.close_request_stream(7)  # the writer was waiting for room
    assert stream.send_routed_now([(RESPONSE_7, 7, True)])
    _, replay, _ = await stream.resume(first)
    assert [data for _, data in replay] == [m[0] for m in messages] + [RESPONSE_7]


class Sink:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.ended = False

    async def push_input(self, body: bytes) -> None:
        self.bodies.append(body)

    def input_ended(self) -> None:
        self.ended = True


async def test_input_is_pushed_to_the_attached_session() -> None:
    stream = HttpSessionStream("session-p", None)
    sink = Sink()
    stream.attach_input(sink)
    await stream.feed(b"{}")
    assert sink.bodies == [b"{}"]
    await stream.aclose()
    assert sink.ended
    with pytest.raises(TransportClosed):
        await stream.feed(b"{}")


async def test_without_a_pushed_session_input_is_read() -> None:
    stream = HttpSessionStream("session-q", None)
    await stream.feed(b"1")
    await stream.feed(b"2")
    assert await stream.receive_message() == b"1"
    assert stream.receive_ready() == [b"2"]
    await stream.aclose()
    with pytest.raises(TransportClosed):
        await stream.receive_message()


async def test_live_queue_bounds_wakes_and_closes() -> None:
    live = LiveQueue(2)
    assert live.put_nowait(b"1")
    assert live.put_nowait(b"2")
    assert live.full
    assert not live.put_nowait(b"3")
    async with trio.open_nursery() as nursery:

        async def producer() -> None:
            await live.wait_room()
            assert live.put_nowait(b"3")
            live.close()

        nursery.start_soon(producer)
        await trio.testing.wait_all_tasks_blocked()
        assert live.take_ready(1) == [b"1"]
    assert await read_all(live) == [b"2", b"3"]
    assert live.finished
    with pytest.raises(trio.ClosedResourceError):
        live.put_nowait(b"4")


async def test_live_queue_abandoned_by_its_reader_fails_the_waiting_producer() -> None:
    live = LiveQueue(1)
    assert live.put_nowait(b"1")
    async with trio.open_nursery() as nursery:

        async def producer() -> None:
            with pytest.raises(trio.BrokenResourceError):
                await live.wait_room()

        nursery.start_soon(producer)
        await trio.testing.wait_all_tasks_blocked()
        live.abandon()
    assert live.abandoned
    with pytest.raises(trio.BrokenResourceError):
        live.put_nowait(b"2")


async def test_live_queue_get_is_cancellable() -> None:
    live = LiveQueue(1)
    with trio.move_on_after(0.01):
        await live.get()
    assert live.put_nowait(b"1")
    assert await live.get() == b"1"


ids = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=20))


@given(ids)
def test_peek_id_reads_what_the_encoder_wrote(request_id: str | int) -> None:
    assert peek_id(encode_message(Result(id=request_id, result={"a": [1]}))) == (request_id, True)
    error = ErrorResponse(id=request_id, error=ErrorObject(code=-1, message="m"))
    assert peek_id(encode_message(error)) == (request_id, True)
    request = Request(id=request_id, method="roots/list", params=None)
    assert peek_id(encode_message(request)) == (request_id, False)


@given(
    st.binary(max_size=40),
    st.one_of(st.none(), st.text(max_size=12)),
)
def test_the_framing_fast_path_writes_what_the_general_one_does(
    data: bytes, event_id: str | None
) -> None:
    try:
        expected = _encode_fields(data, event_id, None, None)
    except ValueError:
        with pytest.raises(ValueError, match="SSE"):
            encode_event(data, event_id=event_id)
        return
    assert encode_event(data, event_id=event_id) == expected


async def test_a_reader_that_had_the_whole_post_stream_releases_it() -> None:
    store = MemoryEventStore()
    stream = HttpSessionStream("session-d", store)
    post = await stream.open_post([7])
    await post.priming_event_id()
    live = post.attach()
    assert stream.send_routed_now([(PROGRESS, 7, False), (RESPONSE_7, 7, True)])
    assert len(await read_all(live)) == 2
    assert live.complete  # closed because the stream ended, not because it was cut off
    await post.release()
    assert store.statistics().released == 1
    await stream.aclose()


async def test_a_reader_cut_off_is_not_complete_and_the_resumed_one_is() -> None:
    store = MemoryEventStore()
    stream = HttpSessionStream("session-e", store)
    post = await stream.open_post([7])
    first = await post.priming_event_id()
    assert first is not None
    live = post.attach()
    assert stream.close_request_stream(7)  # the server closes the connection (polling)
    assert await live.get() is None
    assert not live.complete
    await stream.send_messages([RESPONSE_7])
    assert store.statistics().released == 0  # stored, ended, not yet delivered
    target, replay, resumed = await stream.resume(first)
    assert [data for _, data in replay] == [RESPONSE_7]
    assert await resumed.get() is None
    assert resumed.complete  # the replay held the rest of an ended stream
    assert target.stream_id == post.stream_id
    await target.release()
    assert store.statistics().released == 1
    await stream.aclose()


async def test_the_standalone_stream_is_never_released() -> None:
    store = MemoryEventStore()
    stream = HttpSessionStream("session-g", store)
    get = await stream.open_standalone()
    live = get.attach()
    await stream.send_messages([CHANGED])
    await get.release()
    assert store.statistics().released == 0
    assert len(live) == 1
    await stream.aclose()
    assert store.statistics().streams == 0


def test_the_synchronous_store_path_is_found_by_its_protocol() -> None:
    # MemoryEventStore offers store_event_nowait/end_stream_nowait: the SSE fast path uses
    # them. A store without them (or none) takes the awaited path.
    assert HttpSessionStream("s", MemoryEventStore()).sync_store is not None
    assert HttpSessionStream("s", None).sync_store is None
