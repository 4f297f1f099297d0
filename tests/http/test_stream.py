"""HttpSessionStream routing and the standalone stream's slow-consumer policy (no network)."""

from __future__ import annotations

import logging

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from trimcp.http import HttpSessionStream
from trimcp.http._stream import peek_id, progress_token_of
from trimcp.protocol import (
    ErrorObject,
    ErrorResponse,
    Notification,
    Request,
    Result,
    encode_message,
)
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


ids = st.one_of(st.integers(-(2**53), 2**53), st.text(max_size=20))


@given(ids)
def test_peek_id_reads_what_the_encoder_wrote(request_id: str | int) -> None:
    assert peek_id(encode_message(Result(id=request_id, result={"a": [1]}))) == (request_id, True)
    error = ErrorResponse(id=request_id, error=ErrorObject(code=-1, message="m"))
    assert peek_id(encode_message(error)) == (request_id, True)
    request = Request(id=request_id, method="roots/list", params=None)
    assert peek_id(encode_message(request)) == (request_id, False)


@given(ids, st.floats(0, 1e6, allow_nan=False))
def test_progress_token_of_reads_what_the_encoder_wrote(token: str | int, value: float) -> None:
    params = {"progressToken": token, "progress": value}
    data = encode_message(Notification(method="notifications/progress", params=params))
    assert progress_token_of(data) == token
