"""Lifecycle phases: the transition table, refusals, and a subclass that extends the table."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trimcp.actors import (
    ACTOR_PHASES,
    INITIALIZATION,
    OPERATION,
    SHUTDOWN,
    SHUTDOWN_PHASE,
    STARTED,
    STOP,
    Actor,
    ExitReason,
    Phase,
    ReplyTo,
    spawn,
    whereis,
)
from trimcp.errors import ActorGone, InvalidTransition, MessageRefused
from trimcp.testing import Script, ScriptedActor

HANDSHAKE = Phase("handshake")
PAUSED = Phase("paused")


@dataclass(frozen=True)
class Hello:
    client: str


@dataclass(frozen=True)
class Pause:
    pass


@dataclass(frozen=True)
class Resume:
    pass


class Session(Actor):
    """Accepts only ``Hello`` until the handshake is done; can pause (then only ``Resume``)."""

    phase_table = ACTOR_PHASES.extend(
        transitions={
            (INITIALIZATION, STARTED): HANDSHAKE,
            (HANDSHAKE, "hello"): OPERATION,
            (HANDSHAKE, STOP): SHUTDOWN_PHASE,
            (OPERATION, "pause"): PAUSED,
            (PAUSED, "resume"): OPERATION,
            (PAUSED, STOP): SHUTDOWN_PHASE,
        },
        accepts={HANDSHAKE: (Hello,), PAUSED: (Resume,)},
    )

    def __init__(self, gate: trio.Event | None = None) -> None:
        self.gate = gate
        self.phases_in_terminate: list[str] = []

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        match message:
            case Hello(client):
                self.transition("hello")
                return f"welcome {client}"
            case Resume():
                self.transition("resume")
                return "resumed"
            case _:
                return ("echo", message)

    async def handle_cast(self, message: object) -> None:
        match message:
            case "hold" if self.gate is not None:
                await self.gate.wait()
            case Pause():
                self.transition("pause")
            case _:
                pass

    async def terminate(self, reason: ExitReason) -> None:
        self.phases_in_terminate.append(self.phase.name)


class ForgetfulSession(Actor):
    """Its table gives the handshake phase no ``stop`` entry."""

    phase_table = ACTOR_PHASES.extend(
        transitions={(INITIALIZATION, STARTED): HANDSHAKE, (HANDSHAKE, "hello"): OPERATION},
        accepts={HANDSHAKE: (Hello,)},
    )

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        await trio.sleep_forever()


# --- the table itself ---------------------------------------------------------------------


def test_actor_phases_table() -> None:
    assert ACTOR_PHASES.initial == INITIALIZATION
    assert ACTOR_PHASES.next_phase(INITIALIZATION, STARTED) == OPERATION
    assert ACTOR_PHASES.next_phase(OPERATION, STOP) == SHUTDOWN_PHASE
    assert ACTOR_PHASES.next_phase(INITIALIZATION, STOP) == SHUTDOWN_PHASE
    assert ACTOR_PHASES.phases == {INITIALIZATION, OPERATION, SHUTDOWN_PHASE}
    with pytest.raises(InvalidTransition) as info:
        ACTOR_PHASES.next_phase(SHUTDOWN_PHASE, STARTED)
    assert (info.value.phase, info.value.event) == ("shutdown", "started")


def test_by_default_only_shutdown_refuses_messages() -> None:
    for message in ("x", 1, None, Hello("a")):
        assert ACTOR_PHASES.accepts_message(OPERATION, message)
        assert ACTOR_PHASES.accepts_message(INITIALIZATION, message)
        assert not ACTOR_PHASES.accepts_message(SHUTDOWN_PHASE, message)


def test_extend_returns_a_new_table() -> None:
    table = Session.phase_table
    assert table is not ACTOR_PHASES
    assert table.next_phase(INITIALIZATION, STARTED) == HANDSHAKE
    assert ACTOR_PHASES.next_phase(INITIALIZATION, STARTED) == OPERATION
    assert table.accepts_message(HANDSHAKE, Hello("a"))
    assert not table.accepts_message(HANDSHAKE, "x")
    assert table.accepts_message(OPERATION, "x")
    assert table.phases == {INITIALIZATION, HANDSHAKE, OPERATION, PAUSED, SHUTDOWN_PHASE}
    assert table.extend(initial=HANDSHAKE).initial == HANDSHAKE


PHASES = [INITIALIZATION, OPERATION, SHUTDOWN_PHASE, HANDSHAKE, PAUSED, Phase("other")]
EVENTS = [STARTED, STOP, "hello", "pause", "resume", "unknown"]
MESSAGES = st.one_of(
    st.none(), st.integers(), st.text(max_size=3), st.builds(Hello, st.text(max_size=3))
)


@given(phase=st.sampled_from(PHASES), event=st.sampled_from(EVENTS))
def test_every_phase_event_pair_is_a_phase_or_invalid_transition(phase: Phase, event: str) -> None:
    for table in (ACTOR_PHASES, Session.phase_table, ForgetfulSession.phase_table):
        if (phase, event) in table.transitions:
            assert table.next_phase(phase, event) in table.phases
        else:
            with pytest.raises(InvalidTransition) as info:  # and nothing else
                table.next_phase(phase, event)
            assert (info.value.phase, info.value.event) == (phase.name, event)


@given(
    transitions=st.dictionaries(
        st.tuples(st.sampled_from(PHASES), st.sampled_from(EVENTS)), st.sampled_from(PHASES)
    ),
    phase=st.sampled_from(PHASES),
    event=st.sampled_from(EVENTS),
    message=MESSAGES,
)
def test_any_extended_table_answers_every_pair_with_a_phase_or_invalid_transition(
    transitions: dict[tuple[Phase, str], Phase], phase: Phase, event: str, message: object
) -> None:
    table = ACTOR_PHASES.extend(transitions=transitions, accepts={HANDSHAKE: (Hello,)})
    merged = {**ACTOR_PHASES.transitions, **transitions}
    if (phase, event) in merged:
        following = table.next_phase(phase, event)
        assert following in table.phases
        assert following == merged[(phase, event)]
    else:
        with pytest.raises(InvalidTransition):
            table.next_phase(phase, event)
    assert table.accepts_message(phase, message) is table.accepts_message(phase, message)


# --- phases of a running actor --------------------------------------------------------------


async def test_messages_are_refused_until_the_handshake() -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session())
        assert ref.statistics().phase == "handshake"
        with pytest.raises(MessageRefused) as info:
            await ref.call("too early")
        assert (info.value.actor, info.value.phase, info.value.message) == (
            ref.name,
            "handshake",
            "too early",
        )
        with pytest.raises(MessageRefused):
            await ref.cast("too early")
        with pytest.raises(MessageRefused):
            ref.cast_nowait("too early")
        assert await ref.call(Hello("ana")) == "welcome ana"
        assert ref.statistics().phase == "operation"
        assert await ref.call("now") == ("echo", "now")
        await ref.stop()


async def test_a_message_accepted_when_sent_is_refused_if_the_phase_changed_meanwhile() -> None:
    gate = trio.Event()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(gate))
        await ref.call(Hello("ana"))
        await ref.cast("hold")
        await trio.testing.wait_all_tasks_blocked()
        ref.cast_nowait(Pause())
        ref.cast_nowait("cast while operating")

        async def call_while_operating() -> None:
            with pytest.raises(MessageRefused) as info:
                await ref.call("call while operating")
            assert info.value.phase == "paused"

        nursery.start_soon(call_while_operating)
        await trio.testing.wait_all_tasks_blocked()
        assert ref.statistics().mailbox_length == 3
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        stats = ref.statistics()
        assert (stats.phase, stats.dropped, stats.mailbox_length) == ("paused", 2, 0)
        assert await ref.call(Resume()) == "resumed"
        await ref.stop()


async def test_messages_during_init_wait_for_it(autojump_clock: trio.testing.MockClock) -> None:
    # OTP: a name is registered before init runs; what is sent meanwhile queues until init
    # has finished, then is served in the operation phase.
    slow_starter = ScriptedActor(Script(init_delay=1))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(functools.partial(spawn, name="slow"), nursery, slow_starter)
        await trio.testing.wait_all_tasks_blocked()
        ref = whereis("slow")
        assert ref is not None
        assert ref.statistics().phase == "initialization"
        assert await ref.call("hi") == "hi"
        assert trio.current_time() == 1.0
        assert ref.statistics().phase == "operation"
        await ref.stop()


async def test_a_table_may_refuse_messages_during_init(
    autojump_clock: trio.testing.MockClock,
) -> None:
    class Strict(ScriptedActor):
        phase_table = ACTOR_PHASES.extend(accepts={INITIALIZATION: ()})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(spawn, name="strict"), nursery, Strict(Script(init_delay=1))
        )
        await trio.testing.wait_all_tasks_blocked()
        ref = whereis("strict")
        assert ref is not None
        with pytest.raises(MessageRefused, match="initialization"):
            await ref.call("hi")
        await trio.sleep(1)
        await trio.testing.wait_all_tasks_blocked()  # init's own 1 s sleep ends at t=1 too
        assert await ref.call("hi") == "hi"
        await ref.stop()


async def test_terminate_runs_in_the_shutdown_phase() -> None:
    session = Session()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, session)
        await ref.call(Hello("ana"))
        await ref.cast(Pause())
        await ref.stop()
    assert session.phases_in_terminate == ["shutdown"]
    assert ref.statistics().phase == "shutdown"


async def test_an_invalid_transition_raises_in_the_handler() -> None:
    class Confused(Actor):
        async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
            try:
                self.transition("hello")
            except InvalidTransition as exc:
                return (exc.phase, exc.event)
            raise AssertionError("operation has no 'hello' transition")

    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Confused())
        assert await ref.call("x") == ("operation", "hello")
        await ref.stop()


async def test_a_phase_without_a_stop_entry_still_shuts_down(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Regression: stopping in such a phase raised InvalidTransition out of ``run`` (in an
    exception group) and left the queued callers waiting for their timeout."""
    failed_at: list[float] = []
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, ForgetfulSession())

        async def call() -> None:
            with pytest.raises(ActorGone):
                await ref.call(Hello("ana"), timeout=30)
            failed_at.append(trio.current_time())

        nursery.start_soon(call)  # in flight, forever
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(call)  # queued behind it
        await trio.testing.wait_all_tasks_blocked()
        await trio.sleep(1)
        assert await ref.stop() == SHUTDOWN
    assert failed_at == [1.0, 1.0]
    assert ref.statistics().phase == "shutdown"
