"""Hypothesis properties of the mailbox and of an actor under random traffic and exits.

The clock is pytest-trio's ``autojump_clock``. Hypothesis runs every example in a fresh
``trio.run`` but the fixture (one ``MockClock``) is shared by all of them, which is harmless
here because every time is measured from the example's own start; hence the suppressed
``function_scoped_fixture`` health check.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field
from typing import Literal

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.actors import KILLED, SHUTDOWN, ActorRef, Mailbox, ReplyTo
from trimcp.errors import ActorGone, CallTimeout, MailboxFull
from trimcp.testing import Script, ScriptedActor, ScriptedCrash, spawn_unlinked

SHARED_CLOCK = settings(
    max_examples=75,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# --- the mailbox against a model ------------------------------------------------------------

MailboxOp = tuple[Literal["put_nowait", "put_system", "put_overflow", "get", "close"], int]
MAILBOX_OPS = st.tuples(
    st.sampled_from(["put_nowait", "put_system", "put_overflow", "get", "close"]),
    st.integers(0, 1000),
)


@dataclass
class MailboxModel:
    """What a mailbox with one consumer and no waiting senders must do, op by op."""

    mailbox: Mailbox[int]
    capacity: int
    user: collections.deque[int] = field(default_factory=collections.deque)
    system: collections.deque[int] = field(default_factory=collections.deque)
    closed: bool = False
    peak: int = 0
    overflowed: int = 0

    async def apply(self, kind: str, value: int) -> None:
        if kind == "close":
            self.close()
        elif self.closed:
            await self.refused(kind, value)
        elif kind == "get":
            await self.get()
        else:
            self.put(kind, value)
            self.peak = max(self.peak, len(self.user) + len(self.system))

    def close(self) -> None:
        leftovers = [] if self.closed else [*self.system, *self.user]
        assert self.mailbox.close() == leftovers
        self.closed = True
        self.user.clear()
        self.system.clear()

    async def refused(self, kind: str, value: int) -> None:
        try:
            if kind == "get":
                await self.mailbox.get()
            else:
                getattr(self.mailbox, kind)(value)
        except trio.ClosedResourceError:
            return
        raise AssertionError(f"{kind} worked on a closed mailbox")

    async def get(self) -> None:
        if self.system or self.user:
            expected = self.system.popleft() if self.system else self.user.popleft()
            assert await self.mailbox.get() == expected

    def put(self, kind: str, value: int) -> None:
        if kind == "put_system":
            self.mailbox.put_system(value)
            self.system.append(value)
        elif kind == "put_overflow":
            self.mailbox.put_overflow(value)
            self.user.append(value)
            self.overflowed += 1
        elif len(self.user) < self.capacity:
            self.mailbox.put_nowait(value)
            self.user.append(value)
        else:
            with pytest.raises(trio.WouldBlock):
                self.mailbox.put_nowait(value)


@given(capacity=st.integers(1, 4), ops=st.lists(MAILBOX_OPS, max_size=40))
@settings(max_examples=100, deadline=None)
async def test_mailbox_matches_its_model(capacity: int, ops: list[MailboxOp]) -> None:
    mailbox = Mailbox[int](capacity)
    model = MailboxModel(mailbox, capacity)
    for kind, value in ops:
        await model.apply(kind, value)
        stats = mailbox.statistics()
        assert (stats.length, stats.peak, stats.overflowed, stats.closed) == (
            len(model.user) + len(model.system),
            model.peak,
            model.overflowed,
            model.closed,
        )
        assert mailbox.full() == (len(model.user) >= capacity)


# --- an actor under random traffic ----------------------------------------------------------

SendKind = Literal["cast", "cast_nowait", "call", "info", "pause"]
ExitHow = Literal["stop", "kill", "crash"]
CALL_TIMEOUT = 5.0


@dataclass
class Sent:
    """What happened to one message, from its sender's side (times relative to the start)."""

    kind: SendKind
    outcome: str
    started: float
    ended: float


@dataclass
class Traffic:
    ref: ActorRef
    t0: float
    sent: dict[tuple[int, int], Sent] = field(default_factory=dict)
    exited_at: float | None = None

    def now(self) -> float:
        return trio.current_time() - self.t0

    async def send(self, sender: int, plan: list[SendKind]) -> None:
        for seq, kind in enumerate(plan):
            if kind == "pause":
                await trio.sleep(0.25)
                continue
            message = (sender, seq)
            started = self.now()
            outcome = await self._send_one(kind, message)
            self.sent[message] = Sent(kind, outcome, started, self.now())

    async def _send_one(self, kind: SendKind, message: tuple[int, int]) -> str:
        ref = self.ref
        try:
            if kind == "cast":
                await ref.cast(message)
            elif kind == "cast_nowait":
                ref.cast_nowait(message)
            elif kind == "info":
                ref.send_info(message)
            else:
                reply = await ref.call(message, timeout=CALL_TIMEOUT)
                assert reply == message
        except MailboxFull:
            return "full"
        except ActorGone:
            return "gone"
        except CallTimeout:
            return "timeout"
        return "ok"

    async def watch_exit(self) -> None:
        await self.ref.wait_exited()
        self.exited_at = self.now()


PLANS = st.lists(
    st.lists(st.sampled_from(["cast", "cast_nowait", "call", "info", "pause"]), max_size=8),
    min_size=1,
    max_size=3,
)


@dataclass(frozen=True)
class Scenario:
    """Senders' plans, the actor's shape, and how and when (if ever) it exits."""

    plans: list[list[SendKind]]
    mailbox_size: int
    handle_delay: float
    exit_at: float | None
    exit_how: ExitHow


SCENARIOS = st.builds(
    Scenario,
    plans=PLANS,
    mailbox_size=st.integers(1, 3),
    handle_delay=st.sampled_from([0.0, 0.5, 2.0]),
    exit_at=st.none() | st.sampled_from([0.0, 0.25, 1.0, 2.5]),
    exit_how=st.sampled_from(["stop", "kill", "crash"]),
)


@given(scenario=SCENARIOS)
@SHARED_CLOCK
async def test_no_call_hangs_and_no_message_is_lost_or_duplicated(
    autojump_clock: trio.testing.MockClock, scenario: Scenario
) -> None:
    exit_at, exit_how = scenario.exit_at, scenario.exit_how
    crash_at = exit_at if exit_how == "crash" else None
    actor = ScriptedActor(Script(handle_delay=scenario.handle_delay, crash_at=crash_at))
    with trio.fail_after(1000):  # a hang shows up as TooSlowError, not as a stuck suite
        async with trio.open_nursery() as nursery:
            ref = await spawn_unlinked(nursery, actor, mailbox_size=scenario.mailbox_size)
            traffic = Traffic(ref, trio.current_time())
            nursery.start_soon(traffic.watch_exit)
            async with trio.open_nursery() as senders:
                for sender, plan in enumerate(scenario.plans):
                    senders.start_soon(traffic.send, sender, plan)
                if exit_at is not None and exit_how != "crash":
                    senders.start_soon(exit_later, ref, exit_at, exit_how)
            if exit_at is None:
                # Everything accepted so far is queued before this call: it drains the mailbox.
                await ref.call("drain", timeout=math.inf)
                await ref.stop()
    check_traffic(actor, traffic, exit_at, exit_how)


async def exit_later(ref: ActorRef, delay: float, how: ExitHow) -> None:
    await trio.sleep(delay)
    if how == "kill":
        ref.kill()
    else:
        ref.request_stop()


def check_traffic(
    actor: ScriptedActor, traffic: Traffic, exit_at: float | None, exit_how: ExitHow
) -> None:
    handled = [m for m in actor.messages() if m != "drain"]
    counts = collections.Counter(handled)
    assert all(n == 1 for n in counts.values()), f"duplicated: {counts}"
    assert set(handled) <= set(traffic.sent), "handled a message nobody sent"
    check_order(actor)

    exited_at = traffic.exited_at
    assert exited_at is not None
    accepted = {m for m, s in traffic.sent.items() if s.outcome == "ok" and s.kind != "call"}
    lost = accepted - set(handled)
    if exit_at is None:
        assert lost == set(), "a message was lost while the actor was alive"
        assert traffic.ref.statistics().dropped == 0
        assert traffic.ref.exit_reason == SHUTDOWN
    else:
        # Only what was still queued at the exit is dropped, and each drop is counted.
        assert len(lost) == traffic.ref.statistics().dropped
        expected = {"stop": SHUTDOWN, "kill": KILLED}.get(exit_how)
        reason = traffic.ref.exit_reason
        assert reason is not None
        if expected is None:
            assert isinstance(reason.error, ScriptedCrash)
        else:
            assert reason == expected
    for message, sent in traffic.sent.items():
        check_sent(message, sent, handled, exit_at, exited_at)


def check_sent(
    message: tuple[int, int],
    sent: Sent,
    handled: list[object],
    exit_at: float | None,
    exited_at: float,
) -> None:
    """Check one message against its sender's outcome and the actor's exit time."""
    if sent.outcome == "gone":
        # Refused at once after the exit, or failed exactly when the actor exited.
        assert exit_at is not None
        assert sent.ended == max(sent.started, exited_at), (message, sent, exited_at)
        assert sent.kind != "call" or sent.ended - sent.started <= CALL_TIMEOUT
    elif sent.outcome == "timeout":
        # Always the full timeout, and only if the actor was still alive by then (a crash
        # waits behind queued notices, so it can come later than ``exit_at``).
        assert sent.ended - sent.started == CALL_TIMEOUT
        assert exited_at >= sent.ended
    elif sent.outcome == "full":
        assert sent.kind == "cast_nowait"
        assert message not in handled
    elif sent.kind == "call":
        assert message in handled
        assert sent.ended <= exited_at


def check_order(actor: ScriptedActor) -> None:
    """Each sender's messages are handled in the order it sent them, per mailbox lane."""
    lanes: dict[tuple[object, bool], list[int]] = collections.defaultdict(list)
    for entry in actor.handled:
        match entry.message:
            case (sender, int(seq)):
                lanes[(sender, entry.kind == "info")].append(seq)
    for seqs in lanes.values():
        assert seqs == sorted(seqs)


# --- actors casting to each other -----------------------------------------------------------


class Mesh(ScriptedActor):
    """On ``("go", targets)`` waits for ``gate``, then casts one ``"x"`` to each target."""

    def __init__(self, gate: trio.Event) -> None:
        super().__init__()
        self.gate = gate
        self.peers: list[ActorRef] = []
        self.received = 0

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        if isinstance(message, list):
            self.peers = message
        return self.received

    async def handle_cast(self, message: object) -> None:
        match message:
            case ("go", list(targets)):
                await self.gate.wait()
                for target in targets:
                    await self.peers[target].cast("x")
            case _:
                self.received += 1


@given(
    sizes=st.lists(st.integers(1, 2), min_size=2, max_size=4),
    data=st.data(),
)
@SHARED_CLOCK
async def test_actors_casting_to_each_other_never_deadlock(
    autojump_clock: trio.testing.MockClock, sizes: list[int], data: st.DataObject
) -> None:
    count = len(sizes)
    targets = st.lists(st.integers(0, count - 1), max_size=6)
    plans = [data.draw(targets) for _ in sizes]
    outsiders = data.draw(st.lists(st.integers(0, count - 1), max_size=6))
    gate = trio.Event()
    meshes = [Mesh(gate) for _ in sizes]
    t0 = trio.current_time()
    with trio.fail_after(100):  # a deadlock jumps the clock here instead of hanging
        async with trio.open_nursery() as nursery:
            refs = [
                await spawn_unlinked(nursery, mesh, mailbox_size=size)
                for mesh, size in zip(meshes, sizes, strict=True)
            ]
            for ref, plan in zip(refs, plans, strict=True):
                await ref.call(refs)
                await ref.cast(("go", plan))
            await trio.testing.wait_all_tasks_blocked()
            async with trio.open_nursery() as senders:
                # Plain tasks compete for the same mailboxes (they wait; they are not actors).
                for target in outsiders:
                    senders.start_soon(refs[target].cast, "x")
                gate.set()
            await trio.testing.wait_all_tasks_blocked()  # every flood has finished or is stuck
            received = [await ref.call("count", timeout=math.inf) for ref in refs]
            for ref in refs:
                await ref.stop()
    expected = collections.Counter(t for plan in [*plans, outsiders] for t in plan)
    assert received == [expected[i] for i in range(count)]
    assert trio.current_time() == t0
