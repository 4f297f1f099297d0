"""The ``Actor`` base class: gen_server's callback contract on a trio task.

An actor is one trio task that owns its state, a bounded mailbox (``_mailbox.py``), a nursery
for helper tasks, and a lifecycle phase (``_phase.py``). Others reach it only through its
``ActorRef``. This module holds the class and ``spawn``; the handle, cell, registry and
monitors live in their own modules.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVarTuple, Unpack

import trio

from trimcp.errors import ActorError, ActorGone, MessageRefused

from ._cell import ActorCell, current_cell
from ._envelope import DEFER, CallEnvelope, CastEnvelope, InfoEnvelope, ReplyTo
from ._exit import KILLED, NORMAL, SHUTDOWN, ExitReason, crashed
from ._monitor import Down, MonitorRef, demonitor, monitor
from ._phase import ACTOR_PHASES, STARTED, Phase, PhaseTable
from ._ref import ActorRef
from ._registry import Registry, current_registry
from ._started import StartedFlag

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

Ts = TypeVarTuple("Ts")


class StartableTask(Protocol):
    """An async function that ``nursery.start`` could run: it takes ``task_status``."""

    def __call__(self, *, task_status: trio.TaskStatus[object]) -> Awaitable[object]: ...


class Actor:
    """Base class for actors; override the callbacks you need.

    Callbacks (all run in the actor's own task, one message at a time):

    ``async init()``
        Runs before anyone gets the handle. Raise to fail the start: the exception reaches the
        starter (``spawn`` / ``nursery.start`` / the supervisor) and ``terminate`` is not called.
    ``async handle_call(message, reply_to) -> reply``
        Answer a ``call``. Return the reply, or return ``DEFER`` and later call
        ``reply_to.reply(value)`` / ``reply_to.fail(error)`` from anywhere (a helper task, a
        later message). Default: crash, naming the message.
    ``async handle_cast(message)``
        Handle a ``cast``. Default: crash, naming the message.
    ``async handle_info(message)``
        Handle runtime notices: ``Down`` from monitors, ``send_after`` timers, ``send_info``.
        Default: log at WARNING and carry on (an unexpected notice is not a bug in the sender).
    ``async terminate(reason)``
        Runs once after the loop ends for any reason except a failed ``init`` or ``kill``:
        ``self.stop()``, a crash, a stop request, or cancellation from outside. It runs shielded
        from outside cancellation, within the stop deadline (``terminate_timeout`` seconds
        unless the stopper gave another); past it, it is cancelled and the exit reason becomes
        ``killed`` (after a crash the crash stays the reason).

    An exception from ``handle_*`` crashes the actor: ``terminate`` runs, callers still waiting
    get ``ActorGone`` with the reason, monitors get ``Down``, and ``run`` re-raises the original
    exception (outside any nursery, so not as an exception group) for the supervisor to see.

    Class attributes to override: ``mailbox_size`` (64), ``phase_table`` (``ACTOR_PHASES``),
    ``terminate_timeout`` (5.0 s).
    """

    mailbox_size: ClassVar[int] = 64
    phase_table: ClassVar[PhaseTable] = ACTOR_PHASES
    terminate_timeout: ClassVar[float] = 5.0

    _cell: ActorCell | None = None
    _nursery: trio.Nursery | None = None

    # --- callbacks --------------------------------------------------------------------------

    async def init(self) -> None:
        """Prepare the actor's state; raise to fail the start."""

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        """Answer a call (see the class docstring)."""
        raise ActorError(f"{type(self).__name__} has no handle_call for {message!r}")

    async def handle_cast(self, message: object) -> None:
        """Handle a cast (see the class docstring)."""
        raise ActorError(f"{type(self).__name__} has no handle_cast for {message!r}")

    async def handle_info(self, message: object) -> None:
        """Handle a runtime notice (see the class docstring)."""
        logger.warning(
            "actor %s ignored unexpected info %r",
            self.name,
            message,
            extra={"actor": self.name},
        )

    async def terminate(self, reason: ExitReason) -> None:
        """Clean up before exiting (see the class docstring)."""

    # --- what handlers may use --------------------------------------------------------------

    @property
    def ref(self) -> ActorRef:
        """This actor's handle."""
        return ActorRef(self._running_cell())

    @property
    def name(self) -> str:
        """This actor's name."""
        return self._running_cell().name

    @property
    def phase(self) -> Phase:
        """The current lifecycle phase."""
        return self._running_cell().phase

    @property
    def stopping(self) -> bool:
        """True once the actor was asked to stop or has exited (or before it ran)."""
        cell = self._cell
        return cell is None or cell.stop_reason is not None or not cell.alive

    def transition(self, event: str) -> Phase:
        """Fire ``event`` in the phase table and return the new phase.

        Raises:
            InvalidTransition: the table has no entry for (current phase, event).
        """
        cell = self._running_cell()
        cell.phase = cell.phase_table.next_phase(cell.phase, event)
        return cell.phase

    def stop(self, reason: ExitReason = NORMAL) -> None:
        """Exit after the current handler returns, with ``reason``.

        Called from a helper task while the actor waits for a message, it exits at once.
        """
        cell = self._running_cell()
        if cell.stop_reason is None:
            cell.stop_reason = reason
            if cell.mailbox.consumer_waiting:
                # The loop checks stop_reason between messages; an idle loop must be woken.
                cell.kill_scopes[0].cancel()

    def start_soon(self, fn: Callable[[Unpack[Ts]], Awaitable[object]], *args: *Ts) -> None:
        """Run ``fn(*args)`` as a helper task; if it raises, the actor crashes with that error.

        Helper tasks are cancelled when the actor exits (after ``terminate``).
        """
        self._running_nursery().start_soon(self._guarded, fn, args)

    async def start_task(self, fn: StartableTask) -> object:
        """Start ``fn(task_status=...)`` as a helper task, like ``nursery.start``.

        Bind other arguments with ``functools.partial``.

        Returns the value ``fn`` passes to ``task_status.started``. An exception before that
        is raised here; after it, it crashes the actor.
        """
        return await self._running_nursery().start(self._guarded_start, fn)

    def send_after(self, delay: float, message: object) -> trio.CancelScope:
        """Deliver ``message`` to ``handle_info`` after ``delay`` seconds (trio's clock).

        Cancel the returned scope to disarm the timer.
        """
        # One scope, whose deadline is the timer: a disarmed timer leaves behind only what
        # trio keeps of a deadline until it prunes them (many sessions arm one each).
        scope = trio.CancelScope(deadline=trio.current_time() + delay)
        cell = self._running_cell()

        async def fire() -> None:
            with scope:
                await trio.sleep_forever()
            # Reached by the deadline, or by a disarming cancel() or the actor's exit before it.
            if trio.current_time() >= scope.deadline and not cell.mailbox.closed:
                cell.mailbox.put_system(InfoEnvelope(message))

        self._running_nursery().start_soon(fire)
        return scope

    def monitor(self, target: ActorRef) -> MonitorRef:
        """Receive ``Down`` in ``handle_info`` when ``target`` exits (see ``monitor``)."""
        return monitor(target, watcher=self.ref)

    def demonitor(self, mref: MonitorRef) -> None:
        """Remove a monitor set with ``monitor``."""
        demonitor(mref)

    # --- running ----------------------------------------------------------------------------

    async def run(
        self,
        *,
        name: str | None = None,
        registry: Registry | None = None,
        mailbox_size: int | None = None,
        task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run the actor until it exits; report its handle through ``task_status``.

        Start it with ``await nursery.start(actor.run)`` (or ``spawn``): the handle arrives
        only after ``init`` succeeded. With ``name`` the actor is registered (in ``registry``,
        default: this run's) before ``init`` runs and unregistered when it exits.

        Raises:
            AlreadyRegistered: ``name`` is taken (before ``init`` runs).
            Exception: whatever crashed ``init`` or a handler, re-raised after ``terminate``.
        """
        if self._cell is not None:
            raise ActorError("an Actor instance runs once; create a new instance to restart it")
        cell = ActorCell(
            name,
            type(self).__name__,
            mailbox_size or self.mailbox_size,
            self.phase_table,
        )
        self._cell = cell
        cell.task = trio.lowlevel.current_task()
        current_cell.set(cell)
        if name is not None:
            (registry or current_registry()).register(name, ActorRef(cell))
        started = (
            task_status
            if isinstance(task_status, StartedFlag)  # a supervisor's: one flag does for both
            else StartedFlag(task_status)  # type: ignore[arg-type]  # same protocol, wider value
        )
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await self._lifecycle(cell, started)
                nursery.cancel_scope.cancel()
        finally:
            cell.finish(cell.stop_reason or SHUTDOWN)
        reason = cell.exit_reason
        if reason is not None and reason.error is not None:
            raise reason.error
        if not started.done:
            raise ActorGone(cell.name, reason)

    async def _lifecycle(self, cell: ActorCell, task_status: StartedFlag) -> None:
        """Init, serve, shut down; leaves the final exit reason in ``cell.stop_reason``."""
        loop_scope = trio.CancelScope()
        cell.kill_scopes.append(loop_scope)
        reason: ExitReason | None = None
        try:
            with loop_scope:
                try:
                    await self.init()
                except Exception as exc:  # noqa: BLE001  (init failure goes to the starter)
                    reason = crashed(exc)
                else:
                    cell.phase = cell.phase_table.next_phase(cell.phase, STARTED)
                    task_status.started(ActorRef(cell))
                    reason = await self._serve(cell)
        finally:
            # Outside cancellation leaves ``reason`` unset: that is an orderly shutdown.
            reason = reason or cell.stop_reason or SHUTDOWN
            cell.stop_reason = reason
            cell.enter_shutdown(reason)
            if task_status.done and reason is not KILLED:
                cell.stop_reason = await self._terminate(cell, reason)

    async def _terminate(self, cell: ActorCell, reason: ExitReason) -> ExitReason:
        if type(self).terminate is Actor.terminate:
            return reason  # nothing to run: skip the shielded scope and its deadline
        deadline = cell.stop_deadline
        if deadline is None:
            deadline = trio.current_time() + self.terminate_timeout
        with trio.CancelScope(shield=True, deadline=deadline) as scope:
            cell.kill_scopes.append(scope)
            try:
                await self.terminate(reason)
            except Exception as exc:  # noqa: BLE001  (becomes the exit reason)
                if reason.error is None:
                    return crashed(exc)
                reason.error.add_note(f"terminate() then also failed: {exc!r}")
        if scope.cancelled_caught and reason.error is None:
            return KILLED
        return reason

    async def _serve(self, cell: ActorCell) -> ExitReason:
        mailbox = cell.mailbox
        table = cell.phase_table
        try:
            while cell.stop_reason is None:
                envelope = await mailbox.get()
                kind = type(envelope)
                if kind is CallEnvelope:
                    assert isinstance(envelope, CallEnvelope)
                    await self._dispatch_call(cell, table, envelope)
                elif kind is CastEnvelope:
                    if table.accepts_message(cell.phase, envelope.message):
                        cell.casts_handled += 1
                        await self.handle_cast(envelope.message)
                    else:
                        cell.dropped += 1
                else:
                    message = envelope.message
                    if isinstance(message, Down) and not message.monitor.active:
                        cell.dropped += 1
                        continue
                    cell.infos_handled += 1
                    await self.handle_info(message)
        except Exception as exc:  # noqa: BLE001  (a handler crash is the actor's exit reason)
            return crashed(exc)
        return cell.stop_reason

    async def _dispatch_call(
        self, cell: ActorCell, table: PhaseTable, envelope: CallEnvelope
    ) -> None:
        message = envelope.message
        reply_to = envelope.reply_to
        if not table.accepts_message(cell.phase, message):
            cell.dropped += 1
            reply_to.fail(MessageRefused(cell.name, cell.phase.name, message))
            return
        cell.calls_served += 1
        finished = False
        try:
            reply = await self.handle_call(message, reply_to)
            finished = True
        finally:
            if not finished:
                # Crashed or cancelled mid-call: the exit will fail this caller with the reason.
                cell.defer(reply_to)
        if reply is DEFER:
            cell.defer(reply_to)
        elif not reply_to.answered:
            reply_to.reply(reply)

    async def _guarded(
        self, fn: Callable[[Unpack[Ts]], Awaitable[object]], args: tuple[*Ts]
    ) -> None:
        cell = self._cell
        if current_cell.get() is not cell:
            # Started from a task outside the actor (a transport pushing input): its
            # context came along, but the task is this actor's helper.
            current_cell.set(cell)
        try:
            await fn(*args)
        except Exception as exc:  # noqa: BLE001  (a helper crash crashes its actor)
            self._running_cell().request_stop(crashed(exc), None)

    async def _guarded_start(
        self,
        fn: StartableTask,
        task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        proxy = StartedFlag(task_status)
        try:
            await fn(task_status=proxy)
        except Exception as exc:
            if not proxy.done:
                raise
            self._running_cell().request_stop(crashed(exc), None)

    def _running_cell(self) -> ActorCell:
        if self._cell is None:
            raise ActorError(f"{type(self).__name__} is not running; start it with spawn()")
        return self._cell

    def _running_nursery(self) -> trio.Nursery:
        if self._nursery is None:
            raise ActorError(f"{type(self).__name__} is not running; start it with spawn()")
        return self._nursery


async def spawn(
    nursery: trio.Nursery,
    actor: Actor,
    *,
    name: str | None = None,
    registry: Registry | None = None,
    mailbox_size: int | None = None,
) -> ActorRef:
    """Start ``actor`` in ``nursery`` and return its handle once ``init`` succeeded.

    An ``init`` failure is raised here. The actor runs until it stops, crashes, or the
    nursery is cancelled; a crash propagates into ``nursery`` like any task's.
    """
    # A partial, not a wrapper coroutine: a wrapper frame would be resumed on every step of
    # the actor's whole life.
    start = functools.partial(actor.run, name=name, registry=registry, mailbox_size=mailbox_size)
    ref: ActorRef = await nursery.start(start)
    return ref
