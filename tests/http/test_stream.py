"""HttpSessionStream routing and the standalone stream's slow-consumer policy (no network)."""

from __future__ import annotations

import logging

import pytest
import trio

from trimcp.http import HttpSessionStream
from trimcp.transports import MemoryEventStore

RESPONSE_7 = b'{"jsonrpc":"2.0","id":7,"result":{}}'
PROGRESS = (
    b'{"jsonrpc":"2.0","method":"notifications/progress",'
    b'"params":{"progressToken":"t","progress":1}}'
)
CHANGED = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


async def test_responses_and_progress_go_to_their_post_and_the_rest_to_get() -> None:
    stream = HttpSessionStream("session-a", MemoryEventStore())
    post = await stream.open_post([7], [("t", 7)])
    post_live = post.attach()
    get = await stream.open_standalone()
    get_live = get.attach()
    assert stream.busy
    await stream.send_messages([PROGRESS, CHANGED, RESPONSE_7])
    assert [data for _, data in [post_live.receive_nowait(), post_live.receive_nowait()]] == [
        PROGRESS,
        RESPONSE_7,
    ]
    with pytest.raises(trio.EndOfChannel):
        await post_live.receive()  # answered: the POST stream ended
    assert get_live.receive_nowait()[1] == CHANGED
    assert not stream.in_flight(7)
    await stream.aclose()


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
    received = 0
    async for _ in live:
        received += 1
    assert received == 64
    await stream.aclose()


async def test_close_request_stream_keeps_collecting_for_resumption() -> None:
    stream = HttpSessionStream("session-c", MemoryEventStore())
    post = await stream.open_post([7])
    live = post.attach()
    first = await post.priming_event_id()
    assert first is not None
    assert stream.close_request_stream(7)
    with pytest.raises(trio.EndOfChannel):
        await live.receive()
    await stream.send_messages([RESPONSE_7])
    target, replay, resumed = await stream.resume(first)
    assert [data for _, data in replay] == [RESPONSE_7]
    assert target.ended
    with pytest.raises(trio.EndOfChannel):
        await resumed.receive()
    await stream.aclose()
