"""The MessageStream contract, checked against every implementation (``stream_pair``).

Modelled on trio's ``check_two_way_stream``: each test takes a factory of connected
(left, right) ends and checks one promise of ``trimcp.transports.MessageStream``. Senders
run in their own task because lockstep byte streams block a writer until the reader reads.
Messages here are non-empty, hold no ``\\n`` and do not end in ``\\r``: the domain every
transport carries unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from trimcp.errors import MessageTooLarge, TransportBroken, TransportClosed

from ._support import TooLarge, receive_all

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.transports import MessageStream

    from .conftest import PairFactory

LIMIT = 1000
MESSAGES = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', b"\xff\xfe not utf-8 \x00", b"x\ry"]


async def send_then_close(stream: MessageStream, messages: Sequence[bytes]) -> None:
    await stream.send_messages(messages)
    await stream.aclose()


async def test_round_trip_both_directions(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.send_message, b"hello")
        assert await right.receive_message() == b"hello"
        nursery.start_soon(right.send_message, b"world")
        assert await left.receive_message() == b"world"
    await left.aclose()
    await right.aclose()


async def test_batch_arrives_in_order_then_close(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, MESSAGES)
        assert await receive_all(right) == MESSAGES
    await right.aclose()


async def test_message_at_the_limit_passes(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, [b"a" * LIMIT])
        assert await receive_all(right) == [b"a" * LIMIT]
    await right.aclose()


async def test_oversized_message_is_dropped_and_stream_continues(
    stream_pair: PairFactory,
) -> None:
    left, right = stream_pair(LIMIT)
    batch = [b"a", b"b" * (LIMIT + 1), b"c", b"d" * (10 * LIMIT), b"e"]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, batch)
        outcomes = await receive_all(right)
    assert outcomes == [b"a", TooLarge(LIMIT + 1), b"c", TooLarge(10 * LIMIT), b"e"]
    await right.aclose()


async def test_too_large_carries_size_and_limit(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, [b"z" * (LIMIT + 5)])
        with pytest.raises(MessageTooLarge) as info:
            await right.receive_message()
        assert (info.value.size, info.value.limit) == (LIMIT + 5, LIMIT)
        with pytest.raises(TransportClosed):
            await right.receive_message()
    await right.aclose()


async def test_sending_and_receiving_run_concurrently(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    count = 200
    outgoing = [str(i).encode() for i in range(count)]
    got: dict[str, list[bytes]] = {}

    async def pump(name: str, stream: MessageStream) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_one_by_one, stream, outgoing)
            got[name] = [await stream.receive_message() for _ in range(count)]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pump, "left", left)
        nursery.start_soon(pump, "right", right)
    assert got == {"left": outgoing, "right": outgoing}
    await left.aclose()
    await right.aclose()


async def send_one_by_one(stream: MessageStream, messages: Sequence[bytes]) -> None:
    for message in messages:
        await stream.send_message(message)


async def test_peer_close_drains_then_transport_closed_for_good(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, [b"last words"])
        assert await right.receive_message() == b"last words"
        for _ in range(3):
            with pytest.raises(TransportClosed):
                await right.receive_message()
    await right.aclose()


async def test_send_to_closed_peer_is_broken(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    await right.aclose()
    with pytest.raises(TransportBroken):
        await left.send_message(b"anyone there?")
    await left.aclose()


async def test_after_own_close_everything_raises_closed(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    await left.aclose()
    await left.aclose()  # idempotent
    with pytest.raises(TransportClosed):
        await left.receive_message()
    with pytest.raises(TransportClosed):
        await left.send_message(b"x")
    with pytest.raises(TransportClosed):
        await left.send_messages([b"x", b"y"])
    await right.aclose()


async def test_close_wakes_a_blocked_receiver(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)

    async def receive_expecting_closed() -> None:
        with pytest.raises(TransportClosed):
            await left.receive_message()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(receive_expecting_closed)
        await trio.testing.wait_all_tasks_blocked()
        await left.aclose()
    await right.aclose()


async def test_async_with_closes(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with left:  # type: ignore[attr-defined]  # MessageStream itself is no resource
        pass
    with pytest.raises(TransportClosed):
        await left.send_message(b"x")
    await right.aclose()


async def test_cancelled_receive_loses_nothing(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    with trio.CancelScope() as scope:
        scope.cancel()
        await right.receive_message()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, [b"after the cancel"])
        assert await receive_all(right) == [b"after the cancel"]
    await right.aclose()


async def test_receive_ready_hands_over_what_arrived_without_waiting(
    stream_pair: PairFactory,
) -> None:
    left, right = stream_pair(LIMIT)
    assert right.receive_ready() == []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.send_messages, [b"one", b"x" * (LIMIT + 1), b"two", b"three"])
        first = await right.receive_message()
        await trio.testing.wait_all_tasks_blocked()
        rest = right.receive_ready()
    assert rest, "the batch arrived in one piece: the rest must be ready without waiting"
    got = [first, *(item if isinstance(item, bytes) else "too large" for item in rest)]
    # Lockstep byte streams may deliver the tail only on a later read: drain to the end.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.aclose)
        while True:
            try:
                got.append(await right.receive_message())
            except MessageTooLarge:
                got.append("too large")
            except TransportClosed:
                break
    assert got == [b"one", "too large", b"two", b"three"]
    await right.aclose()
