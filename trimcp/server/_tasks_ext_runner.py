"""Where a 2026-07-28 ``tools/call`` that may become a task runs: the server's task runner.

Nothing outlives a modern request (``trimcp.sessions.ModernRequest`` refuses background
work), yet a task's work must outlive the request that created it. A call of a
task-supporting tool therefore runs, from its first line, in the ``TaskRunner``'s nursery,
and its request waits for one of three things (``CallJob.serve``):

* the call finished: its result (or JSON-RPC error) answers the request, as if nothing
  happened; a call asking for input before it became a task ends its pass as any
  2026-07-28 call does, with an ``InputRequiredResult`` (``_mrtr.py``);
* the call became a task: the tool called ``Context.continue_as_task()``, or it was still
  running ``detach_after`` seconds after it started. The request is answered with a
  ``CreateTaskResult`` (``resultType: "task"``) and the same running handler goes on; its
  later asks wait for ``tasks/update`` (``_mrtr.TaskHost``), and its end is recorded in the
  task (``completed`` with the result, ``failed`` with the JSON-RPC error);
* the request went away first (the client closed its stream): the call is cancelled.

The runner is a child of the server's ``notifications`` supervisor (``MCPServer.
notification_spec``), so every runner of the server (``serve_http``, ``serve_stdio``, the
daemon) starts it and nothing it runs outlives the server. When it stops, the calls in it
are cancelled: their requests get -32603, their tasks end ``cancelled``. A server with no
runner (a bare in-memory one) runs every call in its request instead.
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING

import trio

from trimcp.errors import InternalError, JsonRpcError, LocalProtocolError
from trimcp.protocol import error_object_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import JsonObject
    from trimcp.server._mrtr import Round
    from trimcp.server._tasks_ext_store import ExtensionTask, ExtensionTaskStore

__all__ = ["CallJob", "TaskRunner"]

logger = logging.getLogger(__name__)


@typing.final
class TaskRunner:
    """A nursery, under the server's supervision, for calls that may outlive their request."""

    __slots__ = ("_nurseries",)

    def __init__(self) -> None:
        # One per running ``serve`` (a server may be served over stdio and HTTP at once);
        # calls go to the newest.
        self._nurseries: list[trio.Nursery] = []

    @property
    def running(self) -> bool:
        """True while some ``serve`` runs, so calls handed over now can run."""
        return bool(self._nurseries)

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the calls handed over until cancelled, then cancel them."""
        async with trio.open_nursery() as nursery:
            self._nurseries.append(nursery)
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._nurseries.remove(nursery)

    def start_soon(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Start ``fn`` in the runner.

        Raises:
            LocalProtocolError: no ``serve`` is running (check ``running`` first).
        """
        if not self._nurseries:
            raise LocalProtocolError("the task runner is not running")
        self._nurseries[-1].start_soon(fn)


@typing.final
class CallJob:
    """One ``tools/call`` run by the runner: its request's work, then maybe a task.

    The ``_mrtr.TaskHost`` of the call's ``Round``. The request side calls ``serve``; the
    handler side reaches it through ``Context`` (``continue_as_task``, asks, ``is_cancelled``).
    """

    __slots__ = ("_principal", "_round", "_store", "describe", "error", "result", "settled", "task")

    def __init__(
        self, store: ExtensionTaskStore, round_: Round, principal: str | None, describe: str
    ) -> None:
        self._store = store
        self._round = round_
        self._principal = principal
        #: How logs name the call (``tools/call NAME``).
        self.describe = describe
        #: Set once the request can be answered: the call ended, or it became a task.
        self.settled = trio.Event()
        self.result: JsonObject | None = None
        self.error: JsonRpcError | None = None
        self.task: ExtensionTask | None = None
        round_.host = self

    # --- TaskHost ------------------------------------------------------------------------

    @property
    def task_id(self) -> str | None:
        """The task the call runs as; None while it is its request's work."""
        return None if self.task is None else self.task.task_id

    @property
    def cancelled(self) -> bool:
        """True once the task was cancelled (``tasks/cancel``, its TTL, the server stopping)."""
        return self.task is not None and self.task.scope.cancel_called

    def continue_as_task(self) -> bool:
        """Make the call a task now and let its request answer with it.

        False, and nothing changes, when the call has ended or is being cancelled with its
        request, when an ask of this pass is ending it (a multi round-trip answer is on its
        way), or when the store is at a bound (``TasksExtensionPolicy``): the call then goes
        on as its request's work.
        """
        if self.task is not None:
            return True
        round_ = self._round
        # Ended, ending with a round's ask, or cancelled with its request: no task then.
        if self.settled.is_set() or round_.pending or round_.scope.cancel_called:
            return False
        task = self._store.create(self._principal, round_.scope)
        if task is None:
            return False
        self.task = task
        self.settled.set()
        return True

    async def ask(self, key: str, request: JsonObject) -> JsonObject:
        """Wait for the client's answer to ``request`` through the task (``tasks/update``).

        Raises:
            LocalProtocolError: ``key`` is outstanding already, or the call is no task.
        """
        if self.task is None:
            raise LocalProtocolError("only a task waits for its input; this call is none")
        return await self.task.ask(key, request)

    # --- both sides ----------------------------------------------------------------------

    async def run(self, body: Callable[[], Awaitable[JsonObject]]) -> None:
        """Run the call in the runner, then record how it ended (never raises but Cancelled).

        ``except Exception`` here is the request-dispatch boundary (STYLE, section 6) of a
        call that may outlive its request: nobody else is left to map the error.
        """
        result: JsonObject | None = None
        try:
            with self._round.scope:
                try:
                    result = await body()
                except JsonRpcError as exc:
                    self.error = exc
                except Exception as exc:
                    logger.error("%s failed", self.describe, exc_info=exc)
                    self.error = InternalError(f"{self.describe} failed")
        finally:
            self._end(result)

    def _end(self, result: JsonObject | None) -> None:
        task = self.task
        round_ = self._round
        if task is None:
            self.result = result
            ended_unanswered = result is None and self.error is None
            if ended_unanswered and not round_.pending and round_.failure is None:
                # Neither an answer nor an ask: the runner stopped under the call.
                self.error = InternalError("the server stopped before the call finished")
            self.settled.set()
            return
        task.running = False
        if round_.failure is not None:
            failure = round_.failure
            logger.error("%s (task %s) failed", self.describe, task.task_id, exc_info=failure)
            task.fail(error_object_for(round_.failure).to_wire())
        elif self.error is not None:
            task.fail(error_object_for(self.error).to_wire())
        elif result is not None:
            task.complete(result)
        elif trio.current_time() >= task.expires_at:
            task.cancel("the task's TTL expired")
        else:
            task.cancel("the server stopped before the task finished")

    async def serve(
        self, runner: TaskRunner, body: Callable[[], Awaitable[JsonObject]], detach_after: float
    ) -> JsonObject | None:
        """Run the call in ``runner``; return its answer once it has one (request side).

        Returns the ``CreateTaskResult`` if the call became a task (``task_id`` is set
        then), else the call's result, or None when an ask ended the pass (build the
        ``InputRequiredResult`` with ``_mrtr.end_round``). Cancelling this (the request
        went away) cancels the call unless it is a task by then.

        Raises:
            JsonRpcError: the call failed before it became a task.
        """
        runner.start_soon(lambda: self.run(body))
        try:
            with trio.move_on_after(detach_after):
                await self.settled.wait()
            if not self.settled.is_set():
                self.continue_as_task()  # long enough: a task, if it may be one
            await self.settled.wait()
        finally:
            if self.task is None:
                self._round.scope.cancel()  # what runs for a request ends with it
        task = self.task
        if task is not None:
            return {"resultType": "task", **task.to_wire(detailed=False)}
        if self.error is not None:
            raise self.error
        return self.result
