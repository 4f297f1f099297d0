"""A real supervisor driven by random programs, checked against a small model of OTP's rules.

A ``RuleBasedStateMachine`` cannot await, so each Hypothesis example is one whole program
(``@given(lists(operations))``) run in its own trio run under the autojump clock. After every
operation the test waits for quiescence and compares the supervisor with the model: which
children exist and run, which were (re)started or stopped and in what order, and whether the
supervisor gave up. The model is written from OTP's ``supervisor`` documentation, not from
``trimcp.supervision``'s helpers, so the two can disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import ActorRef
from trimcp.errors import ChildNotFound, RestartIntensityExceeded, SupervisorError
from trimcp.supervision import (
    delete_child,
    open_supervisor,
    restart_child,
    start_child,
    terminate_child,
    which_children,
)

from ._scripted import Crash, Exit, Journal, worker

Restart = Literal["permanent", "transient", "temporary"]
RESTARTS: tuple[Restart, ...] = ("permanent", "transient", "temporary")
STATIC_STRATEGIES = ("one_for_one", "one_for_all", "rest_for_one")

# --- the model -------------------------------------------------------------------------------


@dataclass(eq=False)
class ModelChild:
    id: str
    restart: Restart
    running: bool = True
    #: Bumped on every (re)start; the real child's ActorRef must change exactly then.
    generation: int = 1


@dataclass
class Expected:
    """What one operation should do: terminate calls and inits, in order."""

    terminated: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)


@dataclass
class Model:
    """OTP supervisor semantics for the static strategies, in plain Python."""

    strategy: str
    intensity: int
    period: float
    children: list[ModelChild]
    restarts: list[float] = field(default_factory=list)
    gave_up: bool = False

    def find(self, index: int) -> ModelChild | None:
        return self.children[index % len(self.children)] if self.children else None

    def exited(self, child: ModelChild, *, abnormal: bool, now: float, own: bool) -> Expected:
        """``child`` exited by itself; ``own``: its terminate ran (not for a kill)."""
        expected = Expected(terminated=[child.id] if own else [])
        child.running = False
        wanted = child.restart == "permanent" or (child.restart == "transient" and abnormal)
        if not wanted:
            if child.restart == "temporary":
                self.children.remove(child)
            return expected
        position = self.children.index(child)
        group = {
            "one_for_one": [child],
            "one_for_all": list(self.children),
            "rest_for_one": self.children[position:],
        }[self.strategy]
        # Siblings in the group stop in reverse start order; temporary ones are not restarted.
        for sibling in reversed(group):
            if sibling is not child and sibling.running:
                expected.terminated.append(sibling.id)
                sibling.running = False
        dropped = [c for c in group if c is not child and c.restart == "temporary"]
        group = [c for c in group if c not in dropped]
        self.children = [c for c in self.children if c not in dropped]
        # OTP checks the intensity before stopping the group; the stop order is the same either
        # way, because the group is the failed child alone, a suffix of the start order, or all.
        self.restarts.append(now)
        if sum(1 for t in self.restarts if now - self.period <= t <= now) > self.intensity:
            # Give up: every child still running stops, in reverse start order.
            self.gave_up = True
            expected.terminated += [c.id for c in reversed(self.children) if c.running]
            for c in self.children:
                c.running = False
            return expected
        for c in group:
            c.running = True
            c.generation += 1
            expected.started.append(c.id)
        return expected


# --- the program -----------------------------------------------------------------------------

#: (kind, argument): the argument picks a child (modulo the number of children), a restart
#: type for "start", or a duration for "advance". Exits are the common case, on purpose.
Operation = tuple[str, int]
KINDS = ["crash"] * 4 + ["exit"] * 2 + ["kill", "terminate", "restart", "delete", "start"]
KINDS += ["advance"] * 2
DURATIONS = (0.5, 1.0, 2.5, 5.0)

operations = st.tuples(st.sampled_from(KINDS), st.integers(0, 11))


@dataclass
class Run:
    """The real supervisor under test, plus what the test saw of it."""

    sup: ActorRef
    journal: Journal
    model: Model
    refs: dict[str, ActorRef] = field(default_factory=dict)
    generations: dict[str, int] = field(default_factory=dict)
    added: int = 0

    async def apply(self, op: Operation) -> Expected:
        kind, arg = op
        if kind == "advance":
            await trio.sleep(DURATIONS[arg % len(DURATIONS)])
            return Expected()
        if kind == "start":
            return await self._start(RESTARTS[arg % len(RESTARTS)])
        child = self.model.find(arg)
        if child is None:
            return Expected()
        if kind in ("crash", "exit", "kill"):
            return self._exit(kind, child)
        return await self._manage(kind, child)

    async def _start(self, restart: Restart) -> Expected:
        self.added += 1
        child_id = f"d{self.added}"
        await start_child(self.sup, worker(child_id, self.journal, restart=restart))
        self.model.children.append(ModelChild(child_id, restart))
        return Expected(started=[child_id])

    def _exit(self, kind: str, child: ModelChild) -> Expected:
        if not child.running:
            return Expected()
        ref = self.refs[child.id]
        now = trio.current_time()
        if kind == "kill":
            ref.kill()
        else:
            ref.cast_nowait(Crash() if kind == "crash" else Exit())
        return self.model.exited(child, abnormal=kind != "exit", now=now, own=kind != "kill")

    async def _manage(self, kind: str, child: ModelChild) -> Expected:
        if kind == "terminate":
            await terminate_child(self.sup, child.id)
            expected = Expected(terminated=[child.id] if child.running else [])
            child.running = False
            if child.restart == "temporary":
                self.model.children.remove(child)
            return expected
        if child.running:
            with pytest.raises(SupervisorError, match="is running"):
                await (restart_child if kind == "restart" else delete_child)(self.sup, child.id)
            return Expected()
        if kind == "restart":
            await restart_child(self.sup, child.id)
            child.running = True
            child.generation += 1
            return Expected(started=[child.id])
        await delete_child(self.sup, child.id)
        self.model.children.remove(child)
        with pytest.raises(ChildNotFound):
            await delete_child(self.sup, child.id)
        return Expected()

    async def check(self, expected: Expected, since: int) -> None:
        """Compare the supervisor (at quiescence) with the model after one operation."""
        entries = self.journal.entries[since:]
        assert [e.child for e in entries if e.event == "terminate"] == expected.terminated
        assert [e.child for e in entries if e.event == "init"] == expected.started
        children = await which_children(self.sup)
        model = self.model.children
        assert [(c.id, c.running, c.restart) for c in children] == [
            (c.id, c.running, c.restart) for c in model
        ]
        for real, modelled in zip(children, model, strict=True):
            ref = real.value
            assert isinstance(ref, ActorRef)
            assert ref.alive == modelled.running
            restarted = self.generations.get(real.id) != modelled.generation
            assert (self.refs.get(real.id) != ref) == restarted, real.id
            self.refs[real.id] = ref
            self.generations[real.id] = modelled.generation


@dataclass(frozen=True)
class Setup:
    """The supervisor's flags and its static children's restart types."""

    strategy: str
    intensity: int
    period: float
    initial: list[Restart]


setups = st.builds(
    Setup,
    strategy=st.sampled_from(STATIC_STRATEGIES),
    intensity=st.integers(0, 5),
    period=st.sampled_from([1.0, 2.0, 5.0, 10.0]),
    initial=st.lists(st.sampled_from(RESTARTS), min_size=1, max_size=4),
)


@settings(
    max_examples=60,
    deadline=None,
    # The clock fixture is shared by the examples; each example is its own trio run anyway.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(setup=setups, program=st.lists(operations, min_size=1, max_size=30))
async def test_supervisor_follows_the_otp_model(
    autojump_clock: trio.testing.MockClock, setup: Setup, program: list[Operation]
) -> None:
    journal = Journal()
    strategy, intensity, period = setup.strategy, setup.intensity, setup.period
    specs = [worker(f"s{i}", journal, restart=r) for i, r in enumerate(setup.initial)]
    model = Model(strategy, intensity, period, [ModelChild(s.id, s.restart) for s in specs])
    gave_up_at: int | None = None
    since = 0
    expected = Expected()
    try:
        async with open_supervisor(
            specs,
            strategy=strategy,  # type: ignore[arg-type]
            intensity=intensity,
            period=period,
        ) as sup:
            run = Run(sup, journal, model)
            await run.check(Expected(started=[s.id for s in specs]), since)
            for step, op in enumerate(program):
                since = len(journal.entries)
                expected = await run.apply(op)
                gave_up_at = step
                await wait_all_tasks_blocked()  # a supervisor that gives up cancels us here
                assert not model.gave_up, f"step {step} {op}: the supervisor did not give up"
                gave_up_at = None
                await run.check(expected, since)
    except RestartIntensityExceeded:
        assert model.gave_up, f"gave up at step {gave_up_at}, but the model did not"
        assert gave_up_at is not None
        entries = journal.entries[since:]
        assert [e.child for e in entries if e.event == "terminate"] == expected.terminated
        assert [e.child for e in entries if e.event == "init"] == []
        assert journal.all_stopped()
        event(f"{strategy}: gave up")
        return
    assert not model.gave_up
    assert journal.all_stopped()
    event(f"{strategy}: carried on after {len(model.restarts)} restart(s)")
