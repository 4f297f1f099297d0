"""MemoryEventStore: ids, ordering, isolation, bounds, time to live, and forgetting."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.errors import EventsLost, ReplayError, TransportClosed, UnknownEventId
from trimcp.transports._event_store import EventStore, MemoryEventStore

SESSION = "9b1d3c1e6f0a4c8e9a7d2b5f4e3c2a1b"
OTHER = "0000dead"


class Recorder:
    """A ``send`` callback that records what a replay sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    async def __call__(self, event_id: str, message: bytes) -> None:
        await trio.lowlevel.checkpoint()
        self.sent.append((event_id, message))


async def replay(store: EventStore, last_event_id: str, session: str = SESSION) -> list[str]:
    """Replay and return the messages sent, as text; check the ids match the stream."""
    recorder = Recorder()
    stream_id = await store.replay_events_after(session, last_event_id, recorder)
    assert all(event_id.startswith(stream_id + "-") for event_id, _ in recorder.sent)
    return [message.decode() for _, message in recorder.sent]


async def fill(store: EventStore, stream_id: str, *messages: str) -> list[str]:
    """Store a priming event and then ``messages``; return the event ids."""
    ids = [await store.store_event(SESSION, stream_id, None)]
    ids += [await store.store_event(SESSION, stream_id, m.encode()) for m in messages]
    return ids


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="max_events_per_stream"):
        MemoryEventStore(max_events_per_stream=0)
    for ttl in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="ttl"):
            MemoryEventStore(ttl=ttl)


async def test_ids_name_the_stream_and_count_its_events() -> None:
    store = MemoryEventStore()
    first, second = await store.open_stream(SESSION), await store.open_stream(SESSION)
    assert (first, second) == ("s0", "s1")
    assert await fill(store, first, "a", "b") == ["s0-0", "s0-1", "s0-2"]
    assert await fill(store, second, "c") == ["s1-0", "s1-1"]
    assert await store.store_event(SESSION, first, b"d") == "s0-3"
    # Another session numbers its own streams; its ids are looked up only there.
    assert await store.open_stream(OTHER) == "s0"


async def test_replay_sends_the_stream_after_the_id_in_order_without_priming() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "progress 1", "progress 3", "result")
    assert await replay(store, ids[0]) == ["progress 1", "progress 3", "result"]
    assert await replay(store, ids[2]) == ["result"]
    assert await replay(store, ids[-1]) == []
    recorder = Recorder()
    assert await store.replay_events_after(SESSION, ids[1], recorder) == stream
    assert recorder.sent == [(ids[2], b"progress 3"), (ids[3], b"result")]


async def test_priming_events_in_the_middle_are_skipped_too() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "a")
    await store.store_event(SESSION, stream, None)
    await store.store_event(SESSION, stream, b"b")
    assert await replay(store, ids[0]) == ["a", "b"]


async def test_replay_never_crosses_streams() -> None:
    store = MemoryEventStore()
    post, get = await store.open_stream(SESSION), await store.open_stream(SESSION)
    post_ids = [await store.store_event(SESSION, post, None)]
    for n in range(3):
        post_ids.append(await store.store_event(SESSION, post, f"post {n}".encode()))
        await store.store_event(SESSION, get, f"get {n}".encode())
    assert await replay(store, post_ids[0]) == ["post 0", "post 1", "post 2"]
    assert await replay(store, "s1-0") == ["get 1", "get 2"]


async def test_replay_never_crosses_sessions() -> None:
    store = MemoryEventStore()
    for session in (SESSION, OTHER):
        stream = await store.open_stream(session)
        await store.store_event(session, stream, None)
        await store.store_event(session, stream, session.encode())
    assert await replay(store, "s0-0", SESSION) == [SESSION]
    assert await replay(store, "s0-0", OTHER) == [OTHER]
    with pytest.raises(UnknownEventId):
        await replay(store, "s0-0", "never-seen")


@pytest.mark.parametrize(
    "bad_id",
    [
        "",
        "s",
        "s0",
        "0-0",
        "s0-",
        "s-0",
        "s0--1",
        "s0-1-2",
        "s00-1",
        "s0-01",
        "S0-1",
        " s0-1",
        "s0-1 ",
        "s0-1\n",
        "s0-1\0",
        "s٣-1",
        "s0-٣",
        "s" + "9" * 30 + "-1",
        "s0-" + "9" * 30,
        "x" * 10_000,
    ],
)
async def test_malformed_ids_are_unknown(bad_id: str) -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    await fill(store, stream, "a", "b")
    with pytest.raises(UnknownEventId) as caught:
        await replay(store, bad_id)
    assert caught.value.last_event_id == bad_id
    assert isinstance(caught.value, ReplayError)
    assert len(str(caught.value)) < 200


async def test_well_formed_ids_never_issued_are_unknown() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    await fill(store, stream, "a")
    for never_issued in ("s0-2", "s0-99", "s1-0", "s7-1"):
        with pytest.raises(UnknownEventId):
            await replay(store, never_issued)


async def test_oldest_events_go_beyond_the_bound_and_older_ids_report_loss() -> None:
    store = MemoryEventStore(max_events_per_stream=3)
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "1", "2", "3", "4", "5")  # s0-0 .. s0-5; keeps 3, 4, 5
    assert store.statistics().events == 3
    assert await replay(store, ids[2]) == ["3", "4", "5"]  # "2" went, but nothing after it
    assert await replay(store, ids[3]) == ["4", "5"]
    for lost_after in ids[:2]:
        with pytest.raises(EventsLost) as caught:
            await replay(store, lost_after)
        assert (caught.value.last_event_id, caught.value.stream_id) == (lost_after, stream)


async def test_bounds_are_per_stream() -> None:
    store = MemoryEventStore(max_events_per_stream=2)
    busy, quiet = await store.open_stream(SESSION), await store.open_stream(SESSION)
    quiet_ids = await fill(store, quiet, "q")
    await fill(store, busy, *"abcdef")
    assert await replay(store, quiet_ids[0]) == ["q"]


async def test_events_expire_after_the_ttl(autojump_clock: trio.testing.MockClock) -> None:
    store = MemoryEventStore(ttl=10.0)
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "at 0")
    await trio.sleep(6)
    ids.append(await store.store_event(SESSION, stream, b"at 6"))
    await trio.sleep(3.5)
    assert await replay(store, ids[0]) == ["at 0", "at 6"]  # 9.5 s old: still there
    await trio.sleep(0.5)
    assert trio.current_time() == 10.0
    with pytest.raises(EventsLost):
        await replay(store, ids[0])  # "at 0" is 10 s old: gone
    assert await replay(store, ids[1]) == ["at 6"]
    assert store.statistics().events == 1
    await trio.sleep(6)
    # Everything expired, but the open stream stays and nothing after "at 6" was lost.
    assert await replay(store, ids[2]) == []
    stats = store.statistics()
    assert (stats.streams, stats.events, stats.bytes, stats.expiry_queue) == (1, 0, 0, 0)
    assert await store.store_event(SESSION, stream, b"later") == "s0-3"
    assert await replay(store, ids[2]) == ["later"]


async def test_an_ended_stream_replays_until_its_events_expire(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = MemoryEventStore(ttl=5.0)
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "result")
    await store.end_stream(SESSION, stream)
    with pytest.raises(TransportClosed):
        await store.store_event(SESSION, stream, b"too late")
    assert await replay(store, ids[0]) == ["result"]
    assert store.statistics().streams == 1
    await trio.sleep(5)
    assert store.statistics().streams == 0
    with pytest.raises(EventsLost):
        await replay(store, ids[0])
    assert await store.open_stream(SESSION) == "s1"  # never reused


async def test_ending_an_empty_stream_drops_it_at_once() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    await store.end_stream(SESSION, stream)
    assert store.statistics().streams == 0
    await store.end_stream(SESSION, stream)
    await store.end_stream(SESSION, "nonsense")
    await store.end_stream("nobody", stream)


async def test_forgetting_a_stream_frees_it() -> None:
    store = MemoryEventStore()
    kept, forgotten = await store.open_stream(SESSION), await store.open_stream(SESSION)
    kept_ids = await fill(store, kept, "keep")
    forgotten_ids = await fill(store, forgotten, "x" * 1000, "y" * 1000)
    await store.forget_stream(SESSION, forgotten)
    stats = store.statistics()
    assert (stats.streams, stats.events, stats.bytes) == (1, 2, 4)
    assert stats.expiry_queue <= 2 * stats.events
    with pytest.raises(EventsLost):
        await replay(store, forgotten_ids[0])
    with pytest.raises(TransportClosed):
        await store.store_event(SESSION, forgotten, b"z")
    assert await replay(store, kept_ids[0]) == ["keep"]
    assert await store.open_stream(SESSION) == "s2"
    await store.forget_stream(SESSION, forgotten)  # again: nothing to do
    await store.forget_stream(SESSION, "s99")
    await store.forget_stream("nobody", kept)


async def test_forgetting_a_session_frees_everything() -> None:
    store = MemoryEventStore()
    for session in (SESSION, OTHER):
        for _ in range(3):
            stream = await store.open_stream(session)
            await store.store_event(session, stream, None)
            await store.store_event(session, stream, b"message")
    await store.forget_session(SESSION)
    stats = store.statistics()
    assert (stats.sessions, stats.streams, stats.events, stats.bytes) == (1, 3, 6, 21)
    with pytest.raises(UnknownEventId):
        await replay(store, "s0-0")
    with pytest.raises(TransportClosed) as caught:
        await store.store_event(SESSION, "s0", b"late")
    assert SESSION not in str(caught.value)  # a session id is a credential
    await store.forget_session(OTHER)
    await store.forget_session(OTHER)
    stats = store.statistics()
    assert (stats.sessions, stats.streams, stats.events, stats.bytes, stats.expiry_queue) == (
        0,
        0,
        0,
        0,
        0,
    )


async def test_store_event_needs_an_open_stream() -> None:
    store = MemoryEventStore()
    with pytest.raises(TransportClosed):
        await store.store_event(SESSION, "s0", b"x")
    await store.open_stream(SESSION)
    spellings = ("s1", "s01", "s00", "0", "nonsense", "s", "s-0", "s+0", "s\u0660", "s" + "9" * 19)
    for never_opened in spellings:
        with pytest.raises(TransportClosed):
            await store.store_event(SESSION, never_opened, b"x")


async def test_statistics_count_bytes_and_priming_events() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    await fill(store, stream, "abc", "de")
    stats = store.statistics()
    assert (stats.sessions, stats.streams, stats.events, stats.bytes) == (1, 1, 3, 5)


async def test_expiry_queue_stays_proportional_under_bound_evictions() -> None:
    store = MemoryEventStore(max_events_per_stream=4)
    stream = await store.open_stream(SESSION)
    for n in range(1000):
        await store.store_event(SESSION, stream, b"%d" % n)
        stats = store.statistics()
        assert stats.expiry_queue <= 2 * stats.events
    assert stats.events == 4


async def test_events_stored_during_a_replay_are_not_part_of_it() -> None:
    store = MemoryEventStore(max_events_per_stream=3)
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "a", "b")
    sent: list[bytes] = []

    async def send_and_store(event_id: str, message: bytes) -> None:
        sent.append(message)
        # Mutates (and, by the bound, evicts from) the stream being replayed.
        await store.store_event(SESSION, stream, b"new " + message)

    assert await store.replay_events_after(SESSION, ids[0], send_and_store) == stream
    assert sent == [b"a", b"b"]
    assert await replay(store, "s0-2") == ["new a", "new b"]


async def test_a_failing_send_leaves_the_store_as_it_was() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    ids = await fill(store, stream, "a", "b")

    async def broken(event_id: str, message: bytes) -> None:
        raise trio.BrokenResourceError("client went away")

    with pytest.raises(trio.BrokenResourceError):
        await store.replay_events_after(SESSION, ids[0], broken)
    assert await replay(store, ids[0]) == ["a", "b"]


async def test_ids_are_visible_ascii() -> None:
    store = MemoryEventStore()
    stream = await store.open_stream(SESSION)
    for event_id in [stream, *await fill(store, stream, "a")]:
        assert event_id.isascii()
        assert all(0x21 <= ord(char) <= 0x7E for char in event_id)


async def test_the_synchronous_path_is_the_same_store() -> None:
    store = MemoryEventStore(max_events_per_stream=3)
    stream = await store.open_stream(SESSION)
    first = store.store_event_nowait(SESSION, stream, None)
    ids = [store.store_event_nowait(SESSION, stream, b"%d" % n) for n in range(5)]
    assert ids == [f"{stream}-{n}" for n in range(1, 6)]
    assert await replay(store, ids[1]) == ["2", "3", "4"]
    with pytest.raises(EventsLost):
        await replay(store, first)
    store.end_stream_nowait(SESSION, stream)
    with pytest.raises(TransportClosed):
        store.store_event_nowait(SESSION, stream, b"late")
    assert await replay(store, ids[2]) == ["3", "4"]


async def test_events_dropped_by_the_bound_or_forgotten_expire_without_a_trace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store = MemoryEventStore(max_events_per_stream=2, ttl=10.0)
    kept = await store.open_stream(SESSION)
    dropped = await store.open_stream(SESSION)
    for n in range(6):  # interleaved, so each stream's dead entries sit among live ones
        await store.store_event(SESSION, kept, b"k%d" % n)
        await store.store_event(SESSION, dropped, b"d%d" % n)
        await trio.sleep(1)
    await store.forget_stream(SESSION, dropped)
    stats = store.statistics()
    assert (stats.streams, stats.events) == (1, 2)
    assert stats.expiry_queue <= 2 * stats.events
    ids = await fill(store, kept, "x")
    assert await replay(store, ids[0]) == ["x"]
    await trio.sleep(10)
    stats = store.statistics()
    assert (stats.events, stats.bytes, stats.expiry_queue) == (0, 0, 0)


async def test_a_stream_stored_to_a_moment_ago_is_refused_once_forgotten_or_ended() -> None:
    store = MemoryEventStore()
    first = await store.open_stream(SESSION)
    await store.store_event(SESSION, first, b"a")
    await store.forget_stream(SESSION, first)
    with pytest.raises(TransportClosed):
        await store.store_event(SESSION, first, b"b")
    second = await store.open_stream(SESSION)
    await store.store_event(SESSION, second, b"c")
    await store.end_stream(SESSION, second)
    with pytest.raises(TransportClosed):
        await store.store_event(SESSION, second, b"d")
    # A session forgotten and used again starts afresh, with stream numbers from 0 again.
    await store.forget_session(SESSION)
    again = await store.open_stream(SESSION)
    assert again == first
    ids = await fill(store, again, "e")
    assert await replay(store, ids[0]) == ["e"]
