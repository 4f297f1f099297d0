"""What the in-memory pair adds to the conformance suite: its bound and its backpressure."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.errors import MessageTooLarge
from trimcp.transports import memory_stream_pair


async def test_send_waits_while_the_peer_queue_is_full() -> None:
    left, right = memory_stream_pair(capacity=2)
    sent: list[int] = []

    async def send_three() -> None:
        for i in range(3):
            await left.send_message(b"%d" % i)
            sent.append(i)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_three)
        await trio.testing.wait_all_tasks_blocked()
        assert sent == [0, 1]
        assert await right.receive_message() == b"0"
        await trio.testing.wait_all_tasks_blocked()
        assert sent == [0, 1, 2]
    assert [await right.receive_message() for _ in range(2)] == [b"1", b"2"]
    await left.aclose()
    await right.aclose()


async def test_limit_applies_on_the_receiving_side() -> None:
    left, right = memory_stream_pair(max_message_size=4)
    await left.send_message(b"12345")  # the sender does not check
    with pytest.raises(MessageTooLarge):
        await right.receive_message()
    await left.send_message(b"1234")
    assert await right.receive_message() == b"1234"
    await left.aclose()
    await right.aclose()


def test_bad_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        memory_stream_pair(max_message_size=0)
