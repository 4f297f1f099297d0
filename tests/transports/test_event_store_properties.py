"""Hypothesis: MemoryEventStore against a naive model that keeps every event forever.

The model decides from first principles what a replay may send: the events of a stream are
retained while they are among its last ``MAX_EVENTS`` and younger than ``TTL``, and a
released stream goes ``DELIVERED_TTL`` after its release. The store gets there with shared
expiry and release queues, lazy eviction and compaction; both must agree after every
operation, footprint included. Under a byte bound too small for the model to predict
cheaply, the store may hold less, but a replay still sends all the model would, or raises
``EventsLost``. The clock is pytest-trio's ``autojump_clock``, shared by every example
(each measures from its own start), hence the suppressed ``function_scoped_fixture`` check.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.errors import EventsLost, TransportClosed, UnknownEventId
from trimcp.transports._event_store import (
    _EVENT_COST,
    _RELEASED_COST,
    _STREAM_COST,
    MemoryEventStore,
)

MAX_EVENTS = 3
TTL = 10.0
DELIVERED_TTL = 3.0
SMALL_BOUND = 1200  # a few streams' worth: the byte bound evicts all the time
SESSIONS = ("alpha", "beta")


@dataclass
class ModelStream:
    times_and_messages: list[tuple[float, bytes | None]] = field(default_factory=list)
    ended: bool = False
    forgotten: bool = False
    released_at: float | None = None

    def first_retained(self, now: float) -> int:
        events = self.times_and_messages
        first = max(0, len(events) - MAX_EVENTS)
        while first < len(events) and events[first][0] <= now - TTL:
            first += 1
        return first

    def gone(self, now: float) -> bool:
        return (
            self.forgotten
            or (self.ended and self.first_retained(now) == len(self.times_and_messages))
            or (self.released_at is not None and self.released_at <= now - DELIVERED_TTL)
        )


@dataclass
class Model:
    sessions: dict[str, list[ModelStream]] = field(default_factory=dict)
    # When each release the store queued happened; an entry stays until its grace ends.
    releases: list[float] = field(default_factory=list)

    def live_streams(self, now: float) -> list[ModelStream]:
        return [s for streams in self.sessions.values() for s in streams if not s.gone(now)]


Op = tuple[str, int, int, int]  # (operation, session index, stream index, argument)
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                *("open", "store", "store", "store", "prime", "sleep", "replay", "replay"),
                *("end", "release", "forget_stream", "forget_session", "replay_junk"),
            ]
        ),
        st.integers(0, len(SESSIONS) - 1),
        st.integers(0, 7),
        st.integers(-1, 8),
    ),
    max_size=60,
)
SHARED_CLOCK = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    async def __call__(self, event_id: str, message: bytes) -> None:
        self.sent.append((event_id, message))


async def check_replay(
    store: MemoryEventStore, model: Model, session: str, number: int, seq: int, *, exact: bool
) -> None:
    """Replay after ``s<number>-<seq>`` and compare with what the model allows.

    Not ``exact``: the store may have lost more than the model (its byte bound), so where
    the model replays, the store may raise ``EventsLost`` instead, but never send less.
    """
    now = trio.current_time()
    event_id = f"s{number}-{seq}"
    streams = model.sessions.get(session)
    recorder = Recorder()
    if seq < 0 or streams is None or number >= len(streams):
        with pytest.raises(UnknownEventId):
            await store.replay_events_after(session, event_id, recorder)  # "s0--1" is malformed
        return
    stream = streams[number]
    events = stream.times_and_messages
    if stream.gone(now):
        with pytest.raises(EventsLost):
            await store.replay_events_after(session, event_id, recorder)
    elif seq >= len(events):
        with pytest.raises(UnknownEventId):
            await store.replay_events_after(session, event_id, recorder)
    elif seq + 1 < stream.first_retained(now):
        with pytest.raises(EventsLost):
            await store.replay_events_after(session, event_id, recorder)
    else:
        try:
            assert await store.replay_events_after(session, event_id, recorder) == f"s{number}"
        except EventsLost:
            assert not exact
            return
        assert recorder.sent == [
            (f"s{number}-{n}", message)
            for n, (_, message) in enumerate(events)
            if n > seq and message is not None
        ]
    assert recorder.sent == [] or not stream.gone(now)


def check_statistics(store: MemoryEventStore, model: Model) -> None:
    now = trio.current_time()
    live = model.live_streams(now)
    retained = [
        message
        for stream in live
        for _, message in stream.times_and_messages[stream.first_retained(now) :]
    ]
    stats = store.statistics()
    assert stats.sessions == len(model.sessions)
    assert stats.streams == len(live)
    assert stats.events == len(retained)
    assert stats.bytes == sum(len(message or b"") for message in retained)
    assert stats.expiry_queue <= 2 * stats.events
    releases = [at for at in model.releases if at > now - DELIVERED_TTL]
    assert stats.released == len(releases)
    holding = sum(
        1 for stream in live if stream.first_retained(now) < len(stream.times_and_messages)
    )
    assert stats.footprint == (
        stats.bytes
        + _EVENT_COST * stats.events
        + _STREAM_COST * holding
        + _RELEASED_COST * len(releases)
    )


async def store_one(
    store: MemoryEventStore,
    session: str,
    stream_id: str,
    stream: ModelStream,
    message: bytes | None,
) -> None:
    if stream.ended or stream.gone(trio.current_time()):
        with pytest.raises(TransportClosed):
            await store.store_event(session, stream_id, message)
    else:
        seq = len(stream.times_and_messages)
        assert await store.store_event(session, stream_id, message) == f"{stream_id}-{seq}"
        stream.times_and_messages.append((trio.current_time(), message))


async def release(
    store: MemoryEventStore, model: Model, session: str, stream_id: str, stream: ModelStream
) -> None:
    now = trio.current_time()
    await store.release_stream(session, stream_id)
    if not stream.gone(now) and stream.released_at is None:
        stream.ended = True
        stream.released_at = now
        if stream.first_retained(now) < len(stream.times_and_messages):
            model.releases.append(now)  # an empty stream goes at once, without an entry


async def apply(store: MemoryEventStore, model: Model, op: Op, *, exact: bool = True) -> None:
    name, session_index, stream_index, argument = op
    session = SESSIONS[session_index]
    streams = model.sessions.get(session, [])
    stream = streams[stream_index % len(streams)] if streams else None
    number = stream_index % len(streams) if streams else 0
    stream_id = f"s{number}"
    if name == "open":
        assert await store.open_stream(session) == f"s{len(streams)}"
        model.sessions.setdefault(session, []).append(ModelStream())
    elif name in ("store", "prime") and stream is not None:
        message = None if name == "prime" else b"m" * (argument + 1)
        await store_one(store, session, stream_id, stream, message)
    elif name == "sleep":
        await trio.sleep(max(argument, 0) * 1.25)
    elif name == "replay":
        await check_replay(store, model, session, stream_index, argument, exact=exact)
    elif name == "replay_junk":
        with pytest.raises(UnknownEventId):
            await store.replay_events_after(session, f"s0{argument}-x", Recorder())
    elif name == "end" and stream is not None:
        await store.end_stream(session, stream_id)
        stream.ended = True
    elif name == "release" and stream is not None:
        await release(store, model, session, stream_id, stream)
    elif name == "forget_stream" and stream is not None:
        await store.forget_stream(session, stream_id)
        stream.forgotten = True
    elif name == "forget_session":
        await store.forget_session(session)
        model.sessions.pop(session, None)


@given(OPS)
@SHARED_CLOCK
async def test_store_agrees_with_the_model(
    autojump_clock: trio.testing.MockClock, ops: list[Op]
) -> None:
    store = MemoryEventStore(max_events_per_stream=MAX_EVENTS, ttl=TTL, delivered_ttl=DELIVERED_TTL)
    model = Model()
    for op in ops:
        await apply(store, model, op)
        check_statistics(store, model)


@given(OPS)
@SHARED_CLOCK
async def test_under_a_small_byte_bound_a_replay_is_whole_or_lost(
    autojump_clock: trio.testing.MockClock, ops: list[Op]
) -> None:
    store = MemoryEventStore(
        max_events_per_stream=MAX_EVENTS,
        ttl=TTL,
        delivered_ttl=DELIVERED_TTL,
        max_bytes=SMALL_BOUND,
    )
    model = Model()
    for op in ops:
        if op[0] in ("store", "prime"):  # a stream the bound emptied is still open
            await apply(store, model, op)
        else:
            await apply(store, model, op, exact=False)
        stats = store.statistics()
        assert stats.footprint <= SMALL_BOUND
        assert stats.expiry_queue <= 2 * stats.events
