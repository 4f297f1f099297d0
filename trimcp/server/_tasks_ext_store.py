"""The Tasks extension's tasks: one record per task, and the bounded store that holds them.

MCP 2026-07-28 moved tasks out of the core into the extension ``io.modelcontextprotocol/tasks``
(SEP-2663, https://modelcontextprotocol.io/seps/2663-tasks-extension). A task is what a
``tools/call`` answers instead of its result when it goes on running: the client polls it with
``tasks/get``, answers its questions with ``tasks/update`` and may stop it with
``tasks/cancel`` (``_tasks_ext.py`` serves those; ``_tasks_ext_runner.py`` runs the work).

What this module decides, and why:

* **Ids** are 128 random bits (``secrets.token_urlsafe(16)``): "servers MUST generate them with
  sufficient entropy that a third party cannot enumerate or guess them" (Security
  Implications). Without authorization the id is the only thing that guards a task.
* **Binding.** A task belongs to the principal of the request that created it
  (``_mrtr.principal_of``: issuer, subject and client of the access token; None without
  authorization). Another principal gets the same -32602 as for an id never issued, so a
  task's existence does not leak ("Auth binding": MUST check on each task request).
* **TTL.** Every task lives ``ttl_ms`` from its creation on trio's clock (so tests run it
  under ``MockClock``); then its work, if still running, is cancelled and the task is
  forgotten: a later lookup is -32602, as the SEP allows ("Servers are not required to
  retain tasks indefinitely"). Never earlier: the ``ttlMs`` a client was told is a promise.
* **Bounds** (``TasksExtensionPolicy``): at most ``max_tasks`` kept and ``max_running`` whose
  work has not ended. A store at a bound makes no new task; the call then simply goes on as
  an ordinary request (the server decides per request whether to create a task). Evicting
  a task before its TTL instead would break the promise above.

A record's status moves as the SEP's lifecycle says: ``working`` and ``input_required`` back
and forth, then one of ``completed``, ``failed``, ``cancelled``, which never change again.
Every change wakes those following the task (``changed``; ``notifications/tasks`` on a
``subscriptions/listen`` stream).
"""

from __future__ import annotations

import datetime
import secrets
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

import trio

from trimcp.errors import InvalidParams, LocalProtocolError
from trimcp.server._tasks import TERMINAL_STATUSES

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject

__all__ = [
    "EXTENSION_ID",
    "ExtensionTask",
    "ExtensionTaskStore",
    "TaskStoreStatistics",
    "TasksExtensionPolicy",
]

#: The extension's identifier (SEP-2663, Extension Identifier).
EXTENSION_ID: Final = "io.modelcontextprotocol/tasks"

ExtensionTaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


def _now_iso() -> str:
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class TasksExtensionPolicy:
    """How a server runs the tasks of the Tasks extension (2026-07-28 requests).

    Attributes:
        ttl_ms: how long a task is kept from its creation, then forgotten (its work
            cancelled if still running). Sent as ``ttlMs``. Default one hour.
        poll_interval_ms: the ``pollIntervalMs`` suggested to clients. Default 500.
        detach_after: seconds a call of a task-supporting tool may run before the server
            answers it with a task instead of waiting for its result (unless the tool
            calls ``Context.continue_as_task`` earlier). A call that finishes sooner is
            answered with its result, as the SEP allows. Default 0.1; 0 makes every such
            call a task at once, so that all its asks are the task's (none is a multi
            round-trip exchange before the task).
        max_tasks: tasks kept at once, finished ones included. Default 1000.
        max_running: tasks whose work has not ended. Default 100; at most ``max_tasks``.
        max_followed: task ids one ``subscriptions/listen`` may follow. Default 100.
    """

    ttl_ms: int = 3_600_000
    poll_interval_ms: int = 500
    detach_after: float = 0.1
    max_tasks: int = 1000
    max_running: int = 100
    max_followed: int = 100

    def __post_init__(self) -> None:
        for name in ("ttl_ms", "poll_interval_ms", "max_tasks", "max_running", "max_followed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"TasksExtensionPolicy.{name} must be a positive integer")
        if self.detach_after < 0:
            raise ValueError("TasksExtensionPolicy.detach_after must not be negative")
        if self.max_running > self.max_tasks:
            raise ValueError("TasksExtensionPolicy.max_running must not exceed max_tasks")


@typing.final
@dataclass(frozen=True, slots=True)
class TaskStoreStatistics:
    """A snapshot of a store: tasks kept, and those whose work has not ended."""

    kept: int
    running: int


@typing.final
class _Ask:
    """One outstanding input request of a task and, once given, its answer."""

    __slots__ = ("answer", "answered", "request")

    def __init__(self, request: JsonObject) -> None:
        self.request = request
        self.answer: JsonObject = {}
        self.answered = trio.Event()


@typing.final
class ExtensionTask:
    """One task: status, deadline, outstanding input requests, and the outcome once ended."""

    __slots__ = (
        "_asks",
        "_changed",
        "created_at",
        "error",
        "expires_at",
        "poll_interval_ms",
        "principal",
        "result",
        "running",
        "scope",
        "status",
        "status_message",
        "task_id",
        "ttl_ms",
        "updated_at",
    )

    def __init__(
        self, principal: str | None, policy: TasksExtensionPolicy, scope: trio.CancelScope
    ) -> None:
        self.task_id = secrets.token_urlsafe(16)
        self.principal = principal
        self.status: ExtensionTaskStatus = "working"
        self.status_message: str | None = None
        self.created_at = self.updated_at = _now_iso()
        self.ttl_ms = policy.ttl_ms
        self.poll_interval_ms = policy.poll_interval_ms
        self.expires_at = trio.current_time() + policy.ttl_ms / 1000
        #: The CallToolResult, once completed.
        self.result: JsonObject | None = None
        #: The JSON-RPC error object, once failed.
        self.error: JsonObject | None = None
        #: True until the work has ended (a cancelled task's work may still be unwinding).
        self.running = True
        #: Encloses the work; its deadline is the TTL.
        self.scope = scope
        scope.deadline = min(scope.deadline, self.expires_at)
        self._asks: dict[str, _Ask] = {}
        self._changed = trio.Event()

    @property
    def terminal(self) -> bool:
        """True once completed, failed or cancelled."""
        return self.status in TERMINAL_STATUSES

    @property
    def changed(self) -> trio.Event:
        """An event set at the next change of the task (take it, then wait on it)."""
        return self._changed

    def to_wire(self, *, detailed: bool = True) -> JsonObject:
        """Return the wire ``Task``; ``detailed`` adds the status's own member.

        A ``CreateTaskResult`` is the bare ``Task``; ``tasks/get`` and ``notifications/tasks``
        carry the ``DetailedTask``: ``inputRequests``, ``result`` or ``error`` (SEP-2663,
        Task Status). Never ``requestState``: that belongs to multi round-trip results.
        """
        task: JsonObject = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        if not detailed:
            return task
        if self.status == "input_required":
            task["inputRequests"] = {key: ask.request for key, ask in self._asks.items()}
        elif self.status == "completed" and self.result is not None:
            task["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            task["error"] = self.error
        return task

    def _move(self, status: ExtensionTaskStatus, message: str | None = None) -> bool:
        if self.terminal:
            return False
        self.status = status
        self.status_message = message
        self.updated_at = _now_iso()
        self._changed.set()
        self._changed = trio.Event()
        return True

    def complete(self, result: JsonObject) -> bool:
        """Record the call's result: ``completed``, even for ``isError: true`` (SEP: MUST)."""
        if self.terminal:
            return False
        self.result = result
        return self._move("completed")

    def fail(self, error: JsonObject) -> bool:
        """Record the JSON-RPC error the call ended with: ``failed``."""
        if self.terminal:
            return False
        self.error = error
        message = error.get("message")
        return self._move("failed", message if isinstance(message, str) else None)

    def cancel(self, message: str) -> bool:
        """Move to ``cancelled`` and cancel the work; False if already terminal."""
        moved = self._move("cancelled", message)
        self.scope.cancel()
        return moved

    async def ask(self, key: str, request: JsonObject) -> JsonObject:
        """Put ``request`` in ``inputRequests`` under ``key`` and wait for its answer.

        The task is ``input_required`` while any ask is outstanding. Cancelling the wait (the
        task was cancelled or expired) withdraws the request.

        Raises:
            LocalProtocolError: ``key`` is outstanding already (two asks share it).
        """
        if key in self._asks:
            raise LocalProtocolError(
                f"two requests for the client's input share the key {key!r}; "
                "give each its own key= (the client answers each key once)"
            )
        ask = self._asks[key] = _Ask(request)
        self._move("input_required", "waiting for the client's input")
        try:
            await ask.answered.wait()
        finally:
            self._asks.pop(key, None)
            if not self._asks and self.status == "input_required":
                self._move("working")
        return ask.answer

    def answer(self, responses: JsonObject) -> None:
        """Deliver ``tasks/update`` answers to the outstanding asks they name.

        Answers under keys not outstanding (never asked, answered already, or withdrawn)
        are ignored, as the SEP says servers SHOULD. A partial set is fine: the task stays
        ``input_required`` until every ask has its answer.

        Raises:
            InvalidParams: an answer to an outstanding key is not an object (-32602);
                nothing is delivered then.
        """
        delivered: list[tuple[_Ask, JsonObject]] = []
        for key, value in responses.items():
            ask = self._asks.get(key)
            if ask is None:
                continue
            if not isinstance(value, dict):
                raise InvalidParams(
                    f"params.inputResponses[{key!r}] must be an object: the result of the "
                    f"input request sent under {key!r}",
                    {"param": f"inputResponses.{key}"},
                )
            delivered.append((ask, value))
        for ask, value in delivered:
            ask.answer = value
            ask.answered.set()
        for key in [key for key, ask in self._asks.items() if ask.answered.is_set()]:
            del self._asks[key]
        if delivered and not self._asks:
            self._move("working")


@typing.final
class ExtensionTaskStore:
    """Every task of one server, bounded and expiring (see the module docstring)."""

    __slots__ = ("_tasks", "policy")

    def __init__(self, policy: TasksExtensionPolicy | None = None) -> None:
        self.policy = policy or TasksExtensionPolicy()
        # In creation order; every task has the same TTL, so also in expiry order.
        self._tasks: dict[str, ExtensionTask] = {}

    def create(self, principal: str | None, scope: trio.CancelScope) -> ExtensionTask | None:
        """Make a task for ``principal`` whose work runs in ``scope``; None at a bound.

        The task is findable as soon as this returns (SEP-2663: a server MUST NOT return
        ``CreateTaskResult`` before a ``tasks/get`` for it would resolve).
        """
        self._sweep()
        if len(self._tasks) >= self.policy.max_tasks:
            return None
        if sum(task.running for task in self._tasks.values()) >= self.policy.max_running:
            return None
        task = ExtensionTask(principal, self.policy, scope)
        self._tasks[task.task_id] = task
        return task

    def find(self, task_id: object, principal: str | None) -> ExtensionTask:
        """Return the task ``task_id`` of ``principal``.

        Raises:
            InvalidParams: ``task_id`` is not a string, or no such task for this principal
                (never issued, expired, or another principal's: one answer for all three).
        """
        if not isinstance(task_id, str):
            raise InvalidParams("params.taskId must be a string", {"param": "taskId"})
        self._sweep()
        task = self._tasks.get(task_id)
        if task is None or task.principal != principal:
            raise InvalidParams(
                f"Failed to retrieve task: Task not found ({task_id!r} was never created "
                "here, has expired, or belongs to another caller)",
                {"taskId": task_id},
            )
        return task

    def _sweep(self) -> None:
        now = trio.current_time()
        expired: list[str] = []
        for task_id, task in self._tasks.items():
            if task.expires_at > now:
                break
            expired.append(task_id)
        for task_id in expired:
            self._tasks.pop(task_id).cancel("the task's TTL expired")

    def statistics(self) -> TaskStoreStatistics:
        """Return how many tasks are kept and how many of them still run."""
        self._sweep()
        running = sum(task.running for task in self._tasks.values())
        return TaskStoreStatistics(kept=len(self._tasks), running=running)
