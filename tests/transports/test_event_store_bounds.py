"""MemoryEventStore's memory bounds: bytes across sessions, and released streams going soon."""

from __future__ import annotations

import gc
import tracemalloc

import orjson
import pytest
import trio
import trio.testing

from trimcp.errors import EventsLost, TransportClosed
from trimcp.transports._event_store import DEFAULT_MAX_BYTES, MemoryEventStore

from .test_event_store import OTHER, SESSION, fill, replay

ANSWER = "a" * 100


async def footprint_of_one_answer() -> int:
    """The footprint of one POST stream: a priming event and a 100-byte answer."""
    probe = MemoryEventStore()
    await fill(probe, await probe.open_stream(SESSION), ANSWER)
    return probe.statistics().footprint


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        MemoryEventStore(max_bytes=0)
    for grace in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="delivered_ttl"):
            MemoryEventStore(delivered_ttl=grace)
    assert DEFAULT_MAX_BYTES == 32 * 1024 * 1024


async def test_the_byte_bound_holds_across_sessions_and_evicts_the_oldest_first() -> None:
    one = await footprint_of_one_answer()
    store = MemoryEventStore(max_bytes=3 * one)
    opened: list[tuple[str, list[str]]] = []
    for n in range(50):  # far past the bound, alternating sessions
        session = (SESSION, OTHER)[n % 2]
        stream = await store.open_stream(session)
        ids = [await store.store_event(session, stream, None)]
        ids.append(await store.store_event(session, stream, f"{n:03d}{ANSWER[3:]}".encode()))
        await store.end_stream(session, stream)
        opened.append((session, ids))
        stats = store.statistics()
        assert stats.footprint <= 3 * one
        assert stats.events <= 6
    # The three newest streams are whole; every older one is gone, and resuming it is a
    # loss the caller can tell (the HTTP layer answers 410), never a silent gap.
    for n, (session, ids) in enumerate(opened):
        if n >= 47:
            assert await replay(store, ids[0], session) == [f"{n:03d}{ANSWER[3:]}"]
        else:
            with pytest.raises(EventsLost):
                await replay(store, ids[0], session)
    assert store.statistics().streams == 3


async def test_an_open_stream_loses_its_oldest_events_to_the_bound_and_keeps_going() -> None:
    one = await footprint_of_one_answer()
    store = MemoryEventStore(max_bytes=4 * one)
    flood = await store.open_stream(SESSION)
    ids = await fill(store, flood, *[f"{n:03d}{ANSWER[3:]}" for n in range(40)])
    stats = store.statistics()
    assert stats.footprint <= 4 * one
    assert 0 < stats.events < 41
    with pytest.raises(EventsLost):
        await replay(store, ids[0])
    # What is left is the newest run of the stream, replayable from its first id on.
    kept = 41 - stats.events
    assert await replay(store, ids[kept - 1]) == [
        f"{n:03d}{ANSWER[3:]}" for n in range(kept - 1, 40)
    ]
    assert await store.store_event(SESSION, flood, b"more") == "s0-41"


async def test_released_streams_are_evicted_before_older_unreleased_ones() -> None:
    one = await footprint_of_one_answer()
    store = MemoryEventStore(max_bytes=3 * one + 200)
    older = await store.open_stream(SESSION)
    older_ids = await fill(store, older, ANSWER)  # its client went away: still needed
    delivered = await store.open_stream(SESSION)
    await fill(store, delivered, ANSWER)
    await store.release_stream(SESSION, delivered)  # its client has it
    assert store.statistics().released == 1
    newest = await store.open_stream(SESSION)
    await fill(store, newest, ANSWER)
    await fill(store, await store.open_stream(SESSION), ANSWER)  # one more than fits
    with pytest.raises(EventsLost):
        await replay(store, "s1-0")
    assert await replay(store, older_ids[0]) == [ANSWER]
    stats = store.statistics()
    assert (stats.streams, stats.released) == (3, 0)


async def test_a_released_stream_goes_after_delivered_ttl(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = MemoryEventStore(ttl=300.0, delivered_ttl=5.0)
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "progress", "answer")
    await store.release_stream(SESSION, stream)
    with pytest.raises(TransportClosed):  # released means complete: nothing more comes
        await store.store_event(SESSION, stream, b"late")
    await trio.sleep(4.9)
    # Within the grace a client whose connection broke after the last write resumes.
    assert await replay(store, ids[1]) == ["answer"]
    await store.release_stream(SESSION, stream)  # again (the resumed copy): no new grace
    await trio.sleep(0.1)
    with pytest.raises(EventsLost):
        await replay(store, ids[1])
    stats = store.statistics()
    assert (stats.streams, stats.events, stats.released, stats.footprint) == (0, 0, 0, 0)
    assert stats.expiry_queue == 0  # the dead entries were compacted away


async def test_releasing_empty_unknown_or_forgotten_streams_leaves_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = MemoryEventStore(delivered_ttl=1.0)
    empty = await store.open_stream(SESSION)
    await store.release_stream(SESSION, empty)
    assert store.statistics().streams == 0
    await store.release_stream(SESSION, "s99")
    await store.release_stream("nobody", "s0")
    forgotten = await store.open_stream(SESSION)
    await fill(store, forgotten, ANSWER)
    await store.release_stream(SESSION, forgotten)
    await store.forget_session(SESSION)
    stats = store.statistics()
    assert (stats.sessions, stats.events, stats.released) == (0, 0, 1)
    assert stats.footprint == stats.released * 48  # only the queue entry, until its turn
    await trio.sleep(1)
    assert store.statistics().footprint == 0


async def test_the_release_queue_is_bounded_by_max_bytes() -> None:
    one = await footprint_of_one_answer()
    store = MemoryEventStore(max_bytes=10 * one, delivered_ttl=3600.0)
    for _ in range(1000):  # released far faster than the grace lets them go
        stream = await store.open_stream(SESSION)
        await fill(store, stream, ANSWER)
        await store.release_stream(SESSION, stream)
        stats = store.statistics()
        assert stats.footprint <= 10 * one
    assert stats.released <= 10
    assert stats.expiry_queue <= 2 * stats.events


async def test_a_message_larger_than_the_whole_bound_is_not_kept() -> None:
    store = MemoryEventStore(max_bytes=1000)
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "x" * 5000)
    assert ids == ["s0-0", "s0-1"]
    with pytest.raises(EventsLost):
        await replay(store, ids[0])
    assert store.statistics().footprint <= 1000
    assert await replay(store, ids[1]) == []  # nothing after the newest id was lost
    assert await store.store_event(SESSION, stream, b"small") == "s0-2"
    assert await replay(store, ids[1]) == ["small"]


async def test_stored_messages_cost_their_size_not_the_encoders_buffer() -> None:
    # orjson 3.12+ returns bytes whose buffer stays over-allocated (4 KiB for a short
    # message); the store keeps a right-sized copy instead.
    store = MemoryEventStore(max_events_per_stream=10_000)
    stream = await store.open_stream(SESSION)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(2000):
            message = orjson.dumps({"jsonrpc": "2.0", "method": "m", "params": {"n": n}})
            store.store_event_nowait(SESSION, stream, message)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / 2000 < 400  # ~190 bytes per event; ~4,200 with the encoder's buffers
    assert store.statistics().footprint >= held  # the bound counts at least what is held
