"""The ``Supervisor`` actor: starts children, restarts them by strategy, stops them in order.

Follows OTP's ``supervisor`` (its ``-moduledoc`` states every default; so does this module):

* strategies ``one_for_one`` (default), ``one_for_all``, ``rest_for_one`` and
  ``simple_one_for_one`` (one template spec; children added at runtime with ``start_child``
  and stopped all at once, concurrently, on shutdown);
* restart intensity: at most ``intensity`` (default 1) restarts within ``period`` (default
  5 s); one more and the supervisor stops every child in reverse start order and exits with
  ``RestartIntensityExceeded`` for its own parent to decide. Failed restarts count;
* ``auto_shutdown`` (``never`` by default) with ``significant`` children;
* every abnormal child exit is logged once, here, with the supervisor, child id, reason and
  traceback in the record's ``extra``.

Children run in a nursery around the supervisor actor's own, each inside a cancel scope
shielded from outside cancellation, so that cancelling a supervisor still stops its children
in order; each child stop is bounded by the child's ``shutdown``, and whatever still runs when
the actor has exited (a killed supervisor skips ``terminate``) is cancelled. Decisions come
from ``_strategy.py`` and ``_intensity.py``; this module carries them out.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import math
import typing
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack, final

import trio

from trimcp.actors import (
    DEFER,
    KILLED,
    NORMAL,
    SHUTDOWN,
    Actor,
    ActorRef,
    ExitReason,
    Registry,
    ReplyTo,
    StartedFlag,
    crashed,
)
from trimcp.errors import (
    ActorGone,
    ChildNotFound,
    DuplicateChild,
    InvalidChildSpec,
    RestartIntensityExceeded,
    StartFailed,
    SupervisorError,
)

from ._child_spec import BRUTAL_KILL, ChildSpec, _run_actor
from ._describe import ChildSnapshot, ChildState, ExitRecord, SupervisorSnapshot, _Describe
from ._intensity import add_restart
from ._strategy import (
    AUTO_SHUTDOWNS,
    STRATEGIES,
    AutoShutdown,
    Strategy,
    SupervisorFlags,
    affected_children,
)
from ._strategy import should_restart as restart_wanted

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Sequence

logger = logging.getLogger(__name__)


@final
@dataclass(frozen=True, slots=True)
class ChildInfo:
    """One child as ``which_children`` reports it (OTP's ``{Id, Child, Type, Modules}``)."""

    id: str
    value: object
    running: bool
    restart: str
    kind: str


@final
@dataclass(frozen=True, slots=True)
class ChildCounts:
    """``count_children``'s answer: specs known, children running, by kind."""

    specs: int
    active: int
    supervisors: int
    workers: int


@dataclass(slots=True, eq=False)
class _Child:
    spec: ChildSpec
    value: object = None
    running: bool = False
    # Bumped on every start; an exit notice from an older generation is stale.
    generation: int = 0
    # Set while the supervisor itself stops this child, so its exit is not a failure.
    stopping: bool = False
    # Made by ``_start`` for each run.
    scope: trio.CancelScope | None = None
    # Set when the current run ended; made only when someone waits for that (``_stop``), as
    # a supervisor of many idle children (sessions) would otherwise hold an event per child.
    exited: trio.Event | None = None
    reason: ExitReason | None = None
    # For ``describe_tree``: restarts of this child so far, and how and when it last exited.
    restarts: int = 0
    last_exit: ExitRecord | None = None


# --- messages --------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class _ChildExited:
    id: str
    generation: int
    reason: ExitReason


@final
@dataclass(frozen=True, slots=True)
class _StartChild:
    spec: ChildSpec | None
    args: tuple[object, ...]


@final
@dataclass(frozen=True, slots=True)
class _TerminateChild:
    id: str


@final
@dataclass(frozen=True, slots=True)
class _RestartChild:
    id: str


@final
@dataclass(frozen=True, slots=True)
class _DeleteChild:
    id: str


@final
@dataclass(frozen=True, slots=True)
class _WhichChildren:
    pass


@final
@dataclass(frozen=True, slots=True)
class _CountChildren:
    pass


class Supervisor(Actor):
    """An actor that supervises children (see the module docstring for the OTP rules).

    Args:
        children: the child specs, started in order by ``init``; for ``simple_one_for_one``
            exactly one spec, the template, which ``init`` does not start.
        strategy: ``one_for_one`` | ``one_for_all`` | ``rest_for_one`` |
            ``simple_one_for_one``.
        intensity: restarts allowed within ``period`` seconds (default 1 in 5 s).
        period: the sliding window for ``intensity``, in seconds.
        auto_shutdown: ``never`` | ``any_significant`` | ``all_significant``.
    """

    # The supervisor bounds its children's shutdown itself, so its own stop waits as long as
    # they need (OTP's ``shutdown => infinity`` for supervisors).
    terminate_timeout = math.inf
    mailbox_size = 256

    def __init__(
        self, children: Sequence[ChildSpec] = (), **flags: Unpack[SupervisorFlags]
    ) -> None:
        strategy = flags.get("strategy", "one_for_one")
        self._strategy: Strategy = strategy
        self._intensity = flags.get("intensity", 1)
        self._period = flags.get("period", 5.0)
        self._auto_shutdown: AutoShutdown = flags.get("auto_shutdown", "never")
        _check_flags(children, strategy, self._intensity, self._period, self._auto_shutdown)
        self._template = children[0] if strategy == "simple_one_for_one" else None
        self._initial = () if self._template else tuple(children)
        self._children: dict[str, _Child] = {}
        self._restarts: tuple[float, ...] = ()
        self._recent_failures: deque[str] = deque(maxlen=5)
        self._dynamic_ids = itertools.count(1)
        # The nursery the children run in; it wraps the actor's own (see ``run``).
        self._host: trio.Nursery | None = None

    async def run(
        self,
        *,
        name: str | None = None,
        registry: Registry | None = None,
        mailbox_size: int | None = None,
        task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run as ``Actor.run`` does, with the children in a nursery around the actor's own.

        ``terminate`` stops the children in order. A killed supervisor skips ``terminate``,
        and the children's scopes are shielded from outside cancellation, so whatever still
        runs once the actor has exited is cancelled here: no child outlives ``run``.
        """
        failure: list[Exception] = []
        async with trio.open_nursery() as host:
            self._host = host
            try:
                await super().run(
                    name=name, registry=registry, mailbox_size=mailbox_size, task_status=task_status
                )
            except Exception as exc:  # noqa: BLE001  (re-raised below, outside the nursery)
                failure.append(exc)
            finally:
                for child in self._children.values():
                    _kill(child)
        if failure:
            raise failure[0]

    # --- callbacks --------------------------------------------------------------------------

    async def init(self) -> None:
        """Start every child in order.

        If one fails to start, or the supervisor is cancelled meanwhile, the children started
        so far are stopped in reverse order (each within its ``shutdown``) before init fails.
        """
        started = False
        try:
            for spec in self._initial:
                child = _Child(spec)
                self._children[spec.id] = child
                await self._start(child)
            started = True
        finally:
            if not started:
                # terminate() does not run after a failed init; stopping is ours, and bounded.
                with trio.CancelScope(shield=True):
                    await self._stop_all()

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        """Serve the dynamic-children API; errors go to the caller, not into a crash."""
        if isinstance(message, _Describe):
            return self._snapshot(message.max_children)
        try:
            return await self._serve_call(message)
        except RestartIntensityExceeded:
            raise
        except SupervisorError as exc:
            reply_to.fail(exc)
            return DEFER

    async def handle_info(self, message: object) -> None:
        """React to a child's exit: restart it or not, maybe auto-shut down.

        The exit was already logged by the child's wrapper (``_run_child``) as it happened.
        """
        if not isinstance(message, _ChildExited):
            await super().handle_info(message)
            return
        child = self._children.get(message.id)
        if child is None or child.generation != message.generation or child.stopping:
            return
        await self._on_exit(child, message.reason)

    async def terminate(self, reason: ExitReason) -> None:
        """Stop every child in reverse start order (concurrently for simple_one_for_one)."""
        await self._stop_all()

    # --- starting and stopping children --------------------------------------------------------

    async def _start(self, child: _Child) -> None:
        assert self._host is not None, "children start only while run() runs"
        # Cancelled (or stopped, or killed) supervisors start nothing more. The wait below is
        # shielded: the child's own start is (child.scope), and trio's task_status.started()
        # leaves a child whose starter was cancelled where it was, so the starter would then
        # wait for a shielded child to exit, forever.
        await trio.lowlevel.checkpoint_if_cancelled()
        child.generation += 1
        child.stopping = False
        child.scope = scope = trio.CancelScope(shield=True)
        child.exited = None
        child.reason = None
        runner = functools.partial(self._run_child, child, child.generation, scope)
        try:
            with trio.CancelScope(shield=True):
                child.value = await self._host.start(runner)
        except Exception as exc:
            child.running = False
            raise StartFailed(self.name, child.spec.id, exc) from exc
        child.running = True
        logger.debug(
            "supervisor %s started child %s",
            self.name,
            child.spec.id,
            extra={"supervisor": self.name, "child_id": child.spec.id},
        )

    async def _run_child(
        self,
        child: _Child,
        generation: int,
        scope: trio.CancelScope,
        task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        spec = child.spec
        flag = StartedFlag(_LetGo(task_status))
        # The child runs for as long as this frame: holding trio's task status here would
        # keep the start's temporary nursery alive (~1 KB a child; see ``_LetGo``).
        del task_status
        reason = NORMAL
        try:
            with scope:
                await _child_run(spec, flag)
        except Exception as exc:
            if not flag.done:
                raise
            reason = crashed(exc)
        else:
            if isinstance(flag.value, ActorRef) and flag.value.exit_reason is not None:
                reason = flag.value.exit_reason
        finally:
            if child.generation == generation:
                child.running = False
                child.reason = reason
                child.last_exit = ExitRecord.of(reason)
                if child.exited is not None:
                    child.exited.set()
        if flag.done and child.generation == generation and not child.stopping:
            # An exit this supervisor did not cause. Report it here, once, as it happens: its
            # notice may go stale (a sibling's restart replaces the child) or be dropped (the
            # supervisor is stopping). Exits the supervisor causes are _stop's to report.
            if reason.abnormal:
                self._report(spec.id, "exited abnormally", reason)
            self._notify(_ChildExited(spec.id, generation, reason))

    def _notify(self, message: _ChildExited) -> None:
        # If this supervisor is stopping, terminate() reaps the child instead.
        with contextlib.suppress(ActorGone):
            self.ref.send_info(message)

    async def _stop(self, child: _Child) -> None:
        """Stop one child: ask, wait its ``shutdown`` seconds, then cancel it outright.

        A child sends no exit notice while it is being stopped, so an exit other than the one
        asked for (a crash, or overrunning the budget) is reported here.
        """
        if not child.running:
            return
        child.stopping = True
        budget = child.spec.shutdown_seconds
        if child.spec.shutdown == BRUTAL_KILL:
            _kill(child)
            await _wait_exited(child)
            if child.reason is not None and child.reason.error is not None:
                self._report(child.spec.id, "crashed while being killed", child.reason)
            return
        if isinstance(child.value, ActorRef):
            child.value.request_stop(SHUTDOWN, timeout=budget)
        else:
            # A plain task's stop signal is cancellation; it must bound its own cleanup.
            _cancel(child)
        with trio.move_on_after(budget) as waiting:
            await _wait_exited(child)
        timed_out = waiting.cancelled_caught
        if timed_out:
            _kill(child)
            await _wait_exited(child)
        reason = child.reason or KILLED
        if timed_out or reason == KILLED:
            self._report(child.spec.id, f"did not stop within {budget:g} s", reason)
        elif reason.abnormal:
            self._report(child.spec.id, "crashed while stopping", reason)

    async def _stop_all(self) -> None:
        try:
            if self._template is not None:
                async with trio.open_nursery() as nursery:
                    for child in list(self._children.values()):
                        nursery.start_soon(self._stop, child)
            else:
                for child in reversed(list(self._children.values())):
                    await self._stop(child)
        finally:
            # Reached early only if this supervisor itself is killed: take the children along.
            for child in self._children.values():
                if child.running:
                    _kill(child)

    # --- exits and restarts ----------------------------------------------------------------------

    def _report(self, child_id: str, what: str, reason: ExitReason) -> None:
        """Log one abnormal child exit, once (OTP's supervisor report), and remember it."""
        self._recent_failures.append(f"{child_id}: {what}: {reason}")
        logger.error(
            "supervisor %s: child %s %s: %s",
            self.name,
            child_id,
            what,
            reason,
            exc_info=reason.error,
            extra={"supervisor": self.name, "child_id": child_id, "reason": str(reason)},
        )

    async def _on_exit(self, child: _Child, reason: ExitReason) -> None:
        spec = child.spec
        if restart_wanted(spec.restart, reason.abnormal):
            await self._restart(spec.id)
            return
        if spec.restart == "temporary" or self._template is not None:
            del self._children[spec.id]
        if spec.significant:
            self._maybe_auto_shutdown()

    def _maybe_auto_shutdown(self) -> None:
        if self._auto_shutdown == "any_significant" or (
            self._auto_shutdown == "all_significant"
            and not any(c.running and c.spec.significant for c in self._children.values())
        ):
            logger.info(
                "supervisor %s: significant child exited; shutting down (%s)",
                self.name,
                self._auto_shutdown,
                extra={"supervisor": self.name},
            )
            self.stop(SHUTDOWN)

    async def _restart(self, failed_id: str) -> None:
        affected = affected_children(self._strategy, list(self._children), failed_id)
        for child_id in reversed(affected):
            if child_id != failed_id:
                await self._stop(self._children[child_id])
        to_start: list[_Child] = []
        for child_id in affected:
            child = self._children[child_id]
            if child_id == failed_id or child.spec.restart != "temporary":
                to_start.append(child)
            else:
                del self._children[child_id]  # OTP: a temporary sibling is not restarted
        while True:
            self._count_restart()
            started: list[_Child] = []
            try:
                for child in to_start:
                    child.restarts += 1
                    await self._start(child)
                    started.append(child)
            except StartFailed as exc:
                self._report(exc.child_id, "restart failed", crashed(exc.__cause__ or exc))
                for child in reversed(started):
                    await self._stop(child)
                continue
            return

    def _count_restart(self) -> None:
        self._restarts, exceeded = add_restart(
            self._restarts, trio.current_time(), self._intensity, self._period
        )
        if exceeded:
            logger.error(
                "supervisor %s: more than %d restart(s) in %g s; stopping all children",
                self.name,
                self._intensity,
                self._period,
                extra={"supervisor": self.name, "reason": "reached_max_restart_intensity"},
            )
            raise RestartIntensityExceeded(
                self.name, self._intensity, self._period, list(self._recent_failures)
            )

    # --- the dynamic-children API ------------------------------------------------------------

    async def _serve_call(self, message: object) -> object:
        if isinstance(message, _StartChild):
            return await self._start_child(message)
        if isinstance(message, _TerminateChild):
            child = self._find(message.id)
            await self._stop(child)
            if self._template is not None or child.spec.restart == "temporary":
                del self._children[message.id]
            return None
        if isinstance(message, _RestartChild):
            child = self._find(message.id)
            if child.running:
                raise SupervisorError(f"child {message.id!r} is running; terminate it first")
            await self._start(child)
            return child.value
        if isinstance(message, _DeleteChild):
            child = self._find(message.id)
            if child.running:
                raise SupervisorError(f"child {message.id!r} is running; terminate it first")
            del self._children[message.id]
            return None
        if isinstance(message, _WhichChildren):
            return [_info(c) for c in self._children.values()]
        if isinstance(message, _CountChildren):
            return _counts(self._children.values())
        raise SupervisorError(f"supervisor {self.name!r} does not understand {message!r}")

    async def _start_child(self, message: _StartChild) -> ChildInfo:
        if self._template is not None:
            if message.spec is not None:
                raise InvalidChildSpec("a simple_one_for_one supervisor takes args, not a spec")
            template = self._template
            spec = ChildSpec(
                f"{template.id}-{next(self._dynamic_ids)}",
                template.start,
                args=template.args + message.args,
                restart=template.restart,
                shutdown=template.shutdown,
                significant=template.significant,
                kind=template.kind,
            )
        elif message.spec is None:
            raise InvalidChildSpec("start_child needs a ChildSpec for this supervisor")
        else:
            spec = message.spec
            _check_significance([spec], self._auto_shutdown)
        if spec.id in self._children:
            raise DuplicateChild(self.name, spec.id)
        child = _Child(spec)
        self._children[spec.id] = child
        try:
            await self._start(child)
        except StartFailed:
            del self._children[spec.id]
            raise
        return _info(child)

    def _snapshot(self, max_children: int) -> SupervisorSnapshot:
        """What ``describe_supervisor`` answers: read here, in the supervisor's own task."""
        threshold = trio.current_time() - self._period
        listed = itertools.islice(self._children.values(), max_children)
        return SupervisorSnapshot(
            name=self.name,
            strategy=self._strategy,
            intensity=self._intensity,
            period=float(self._period),
            restarts=sum(1 for t in self._restarts if t >= threshold),
            children=tuple(_child_snapshot(child) for child in listed),
            children_total=len(self._children),
        )

    def _find(self, child_id: str) -> _Child:
        child = self._children.get(child_id)
        if child is None:
            raise ChildNotFound(self.name, child_id)
        return child


def _child_run(spec: ChildSpec, flag: StartedFlag) -> Awaitable[object]:
    """Return the awaitable that runs one child; ``flag`` learns when it started."""
    if spec.start is _run_actor:
        # ``ChildSpec.for_actor``'s start function, inlined: the child's task then holds one
        # frame fewer for its whole life (a supervisor of idle sessions holds many).
        factory = typing.cast("Callable[..., Actor]", spec.args[0])
        name = typing.cast("str | None", spec.args[1])
        return factory(*spec.args[2:]).run(name=name, task_status=flag)
    if spec.takes_task_status:
        return spec.start(*spec.args, task_status=flag)
    flag.started(None)
    return spec.start(*spec.args)


@final
class _LetGo(trio.TaskStatus[object]):
    """Forwards ``started`` to trio's task status once, then drops it.

    trio's task status holds the temporary nursery ``nursery.start`` ran the child in, with
    its cancel scope and sets; the child's frames hold their task status (a ``StartedFlag``
    wrapping this) for the child's whole life, so without letting go every idle child (a
    session) would keep ~1 KB of a nursery that finished long ago.
    """

    __slots__ = ("_inner",)

    def __init__(self, inner: trio.TaskStatus[object]) -> None:
        self._inner: trio.TaskStatus[object] | None = inner

    def started(self, value: object = None) -> None:
        inner, self._inner = self._inner, None
        if inner is None:
            raise RuntimeError("called 'started' twice on the same task status")
        inner.started(value)


def _kill(child: _Child) -> None:
    # The supervisor causes this exit, so the child neither reports it nor sends a notice.
    child.stopping = True
    if isinstance(child.value, ActorRef):
        child.value.kill()
    _cancel(child)


def _cancel(child: _Child) -> None:
    if child.scope is not None:
        child.scope.cancel()


async def _wait_exited(child: _Child) -> None:
    """Wait until the child's current run has ended (at once if it is not running)."""
    if not child.running:
        await trio.lowlevel.checkpoint()
        return
    if child.exited is None:
        child.exited = trio.Event()
    await child.exited.wait()


def _info(child: _Child) -> ChildInfo:
    spec = child.spec
    return ChildInfo(spec.id, child.value, child.running, spec.restart, spec.kind)


def _child_snapshot(child: _Child) -> ChildSnapshot:
    spec = child.spec
    state: ChildState
    if child.running:
        state = "running"
    elif child.stopping or not restart_wanted(spec.restart, (child.reason or NORMAL).abnormal):
        state = "stopped"
    else:
        # Exited, and its supervisor has yet to act on the exit (or is doing so now).
        state = "restarting"
    value = child.value
    return ChildSnapshot(
        id=spec.id,
        kind=spec.kind,
        restart=spec.restart,
        state=state,
        restarts=child.restarts,
        last_exit=child.last_exit,
        ref=value if isinstance(value, ActorRef) else None,
    )


def _counts(children: Iterable[_Child]) -> ChildCounts:
    listed = list(children)
    return ChildCounts(
        specs=len(listed),
        active=sum(1 for c in listed if c.running),
        supervisors=sum(1 for c in listed if c.spec.kind == "supervisor"),
        workers=sum(1 for c in listed if c.spec.kind == "worker"),
    )


def _check_flags(
    children: Sequence[ChildSpec],
    strategy: object,
    intensity: object,
    period: object,
    auto_shutdown: object,
) -> None:
    if strategy not in STRATEGIES:
        raise InvalidChildSpec(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if auto_shutdown not in AUTO_SHUTDOWNS:
        raise InvalidChildSpec(
            f"auto_shutdown must be one of {', '.join(AUTO_SHUTDOWNS)}, not {auto_shutdown!r}"
        )
    if isinstance(intensity, bool) or not isinstance(intensity, int) or intensity < 0:
        raise InvalidChildSpec(f"intensity must be an integer >= 0, not {intensity!r}")
    if isinstance(period, bool) or not isinstance(period, int | float) or period <= 0:
        raise InvalidChildSpec(f"period must be seconds > 0, not {period!r}")
    if strategy == "simple_one_for_one" and len(children) != 1:
        raise InvalidChildSpec(
            "a simple_one_for_one supervisor takes exactly one child spec, its template "
            f"(got {len(children)})"
        )
    ids = [spec.id for spec in children]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InvalidChildSpec(f"duplicate child ids: {', '.join(duplicates)}")
    _check_significance(children, auto_shutdown)


def _check_significance(children: Sequence[ChildSpec], auto_shutdown: AutoShutdown) -> None:
    if auto_shutdown == "never":
        for spec in children:
            if spec.significant:
                raise InvalidChildSpec(
                    f"child {spec.id!r} is significant but the supervisor's auto_shutdown is "
                    "'never'; set auto_shutdown='any_significant' or 'all_significant'"
                )
