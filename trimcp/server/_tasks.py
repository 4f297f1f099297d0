"""Tasks (MCP 2025-11-25, experimental): tool calls that answer at once and finish later.

A client that sends ``tools/call`` with ``params.task = {"ttl": ms}`` gets a
``CreateTaskResult`` right away; the tool then runs as background work of the session and
the client follows it with ``tasks/get`` (status), ``tasks/result`` (blocks until the task is
terminal, then returns exactly what ``tools/call`` would have), ``tasks/list`` and
``tasks/cancel``. Each tool says whether it may be run this way (``task_support``:
``"forbidden"``, the default, ``"optional"`` or ``"required"``).

Tasks are bound to the session that created them: another session cannot see, list or
cancel them, and ids are 128-bit random values (Tasks > Security). A session keeps a
bounded number of tasks (``TaskPolicy``); each lives for its ``ttl`` from creation (the
requested one, capped by the policy, or the default), after which it is cancelled if still
running and forgotten; a later lookup is -32602. Status changes are also sent as
``notifications/tasks/status`` (a MAY; clients must not depend on them).

While a task waits for the client (sampling, elicitation) it is ``input_required`` and the
request carries ``_meta["io.modelcontextprotocol/related-task"]``, as do its log messages
and its result from ``tasks/result``.
"""

from __future__ import annotations

import datetime
import logging
import secrets
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import trio

from trimcp.errors import InternalError, InvalidParams, InvalidRequest, JsonRpcError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import JsonObject, JsonValue, ProgressToken, RequestId
    from trimcp.sessions import ProgressReporter, SessionHandle

__all__ = [
    "RELATED_TASK",
    "TERMINAL_STATUSES",
    "TaskCounts",
    "TaskPolicy",
    "TaskRecord",
    "TaskRequest",
    "TaskStore",
    "TaskSupport",
    "related_meta",
]

logger = logging.getLogger(__name__)

#: The ``_meta`` key that ties a message to a task (Tasks > Related task metadata).
RELATED_TASK = "io.modelcontextprotocol/related-task"

TaskSupport = Literal["forbidden", "optional", "required"]
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]

#: Statuses that never change again (Tasks > Status lifecycle: MUST NOT).
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


def related_meta(task_id: str) -> JsonObject:
    """Return the ``_meta`` object that marks a message as belonging to ``task_id``."""
    return {RELATED_TASK: {"taskId": task_id}}


def _now_iso() -> str:
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class TaskPolicy:
    """Limits of the tasks one session may hold.

    Attributes:
        default_ttl_ms: lifetime of a task whose creator asked for none.
        max_ttl_ms: the most a creator may ask for; longer requests are capped (the
            actual ``ttl`` is reported, as the spec requires).
        poll_interval_ms: the ``pollInterval`` suggested to clients.
        max_running: tasks not yet terminal per session; one more is refused (-32600).
        max_kept: tasks kept per session, terminal ones included; the oldest terminal
            ones are forgotten first.
    """

    default_ttl_ms: int = 300_000
    max_ttl_ms: int = 3_600_000
    poll_interval_ms: int = 500
    max_running: int = 64
    max_kept: int = 256

    def __post_init__(self) -> None:
        for name in ("default_ttl_ms", "max_ttl_ms", "poll_interval_ms", "max_running", "max_kept"):
            if getattr(self, name) <= 0:
                raise ValueError(f"TaskPolicy.{name} must be positive")


@typing.final
class TaskRecord:
    """One task: its status, its deadline, and its outcome once terminal."""

    __slots__ = (
        "created_at",
        "done",
        "error",
        "expires_at",
        "poll_interval_ms",
        "result",
        "scope",
        "status",
        "status_message",
        "task_id",
        "ttl_ms",
        "updated_at",
    )

    def __init__(self, ttl_ms: int, poll_interval_ms: int) -> None:
        self.task_id = secrets.token_urlsafe(16)
        self.status: TaskStatus = "working"
        self.status_message: str | None = None
        self.created_at = self.updated_at = _now_iso()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.expires_at = trio.current_time() + ttl_ms / 1000
        self.result: JsonObject | None = None
        self.error: JsonRpcError | None = None
        self.done = trio.Event()
        # Bounded by the ttl: a task still running when it expires is cancelled.
        self.scope = trio.CancelScope(deadline=self.expires_at)

    @property
    def terminal(self) -> bool:
        """True once completed, failed or cancelled."""
        return self.status in TERMINAL_STATUSES

    def to_wire(self) -> JsonObject:
        """Return the wire ``Task`` object."""
        task: JsonObject = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": self.poll_interval_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task

    def move(self, status: TaskStatus, message: str | None = None) -> bool:
        """Change the status; False (and no change) if the task is already terminal."""
        if self.terminal:
            return False
        self.status = status
        self.status_message = message
        self.updated_at = _now_iso()
        if status in TERMINAL_STATUSES:
            self.done.set()
        return True


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class TaskCounts:
    """How many tasks a server holds now (``MCPServer.task_counts``), for status pages.

    Attributes:
        kept: tasks kept, finished ones included (until their TTL or the bounds drop them).
        running: tasks whose work has not ended.
        limit: the bound on ``kept`` across the server, where there is one (the Tasks
            extension's ``max_tasks``; 2025-11-25 tasks are bounded per session).
    """

    kept: int = 0
    running: int = 0
    limit: int | None = None

    def __add__(self, other: TaskCounts) -> TaskCounts:
        limits = [limit for limit in (self.limit, other.limit) if limit is not None]
        return TaskCounts(
            kept=self.kept + other.kept,
            running=self.running + other.running,
            limit=sum(limits) if limits else None,
        )


@typing.final
class TaskStore:
    """The tasks of every session of one server, each session's apart."""

    __slots__ = ("_by_session", "policy")

    def __init__(self, policy: TaskPolicy | None = None) -> None:
        self.policy = policy or TaskPolicy()
        self._by_session: dict[SessionHandle, dict[str, TaskRecord]] = {}

    def create(self, session: SessionHandle, task_params: object) -> TaskRecord:
        """Make a task for ``session`` from the request's ``params.task``.

        Raises:
            InvalidParams: ``task`` is not an object or its ``ttl`` is not a non-negative
                number.
            InvalidRequest: the session already runs ``policy.max_running`` tasks.
        """
        ttl = self._ttl(task_params)
        tasks = self._tasks(session)
        running = sum(not record.terminal for record in tasks.values())
        if running >= self.policy.max_running:
            raise InvalidRequest(
                f"Too many tasks running in this session ({running}, the limit); wait for "
                "some to finish or cancel them with tasks/cancel",
                {"limit": self.policy.max_running},
            )
        record = TaskRecord(ttl, self.policy.poll_interval_ms)
        tasks[record.task_id] = record
        self._trim(tasks)
        return record

    def _ttl(self, task_params: object) -> int:
        if not isinstance(task_params, dict):
            raise InvalidParams('params.task must be an object such as {"ttl": 60000}')
        requested = task_params.get("ttl")
        if requested is None:
            return self.policy.default_ttl_ms
        if isinstance(requested, bool) or not isinstance(requested, int | float):
            raise InvalidParams("params.task.ttl must be a number of milliseconds")
        if requested < 0:
            raise InvalidParams("params.task.ttl must not be negative")
        return min(int(requested), self.policy.max_ttl_ms)

    def _tasks(self, session: SessionHandle) -> dict[str, TaskRecord]:
        tasks = self._by_session.setdefault(session, {})
        now = trio.current_time()
        for task_id in [t for t, record in tasks.items() if record.expires_at <= now]:
            expired = tasks.pop(task_id)
            expired.scope.cancel()
        return tasks

    def _trim(self, tasks: dict[str, TaskRecord]) -> None:
        excess = len(tasks) - self.policy.max_kept
        if excess <= 0:
            return
        for task_id in [t for t, record in tasks.items() if record.terminal][:excess]:
            del tasks[task_id]

    def get(self, session: SessionHandle, params: JsonObject) -> TaskRecord:
        """Return the task ``params.taskId`` of ``session``.

        Raises:
            InvalidParams: no ``taskId``, or no such task in this session (never created
                here, expired, or forgotten).
        """
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise InvalidParams("params.taskId must be a string", {"param": "taskId"})
        record = self._tasks(session).get(task_id)
        if record is None:
            raise InvalidParams(
                f"Unknown task: {task_id} (never created in this session, or expired)",
                {"taskId": task_id},
            )
        return record

    def listed(self, session: SessionHandle) -> dict[str, JsonObject]:
        """Return the session's tasks as wire objects, oldest first."""
        return {task_id: record.to_wire() for task_id, record in self._tasks(session).items()}

    def session_closed(self, session: SessionHandle) -> None:
        """Forget a session's tasks (their work is cancelled with the session)."""
        for record in self._by_session.pop(session, {}).values():
            record.scope.cancel()

    def __len__(self) -> int:
        return sum(len(tasks) for tasks in self._by_session.values())

    def counts(self) -> tuple[int, int]:
        """Return the tasks kept and those still working, over every session (a read only:
        expired tasks not yet swept are left out, not removed)."""
        now = trio.current_time()
        live = [
            record
            for tasks in self._by_session.values()
            for record in tasks.values()
            if record.expires_at > now
        ]
        return len(live), sum(not record.terminal for record in live)


def outcome(record: TaskRecord) -> JsonObject:
    """Return what ``tasks/result`` answers for a terminal task.

    Raises:
        JsonRpcError: the original request's error, or -32602 for a cancelled task (it
            has no result).
    """
    if record.error is not None:
        raise record.error
    if record.result is None:
        raise InvalidParams(
            f"Task {record.task_id} was {record.status} and has no result",
            {"taskId": record.task_id, "status": record.status},
        )
    meta = record.result.get("_meta")
    merged: JsonObject = dict(meta) if isinstance(meta, dict) else {}
    merged.update(related_meta(record.task_id))
    return {**record.result, "_meta": merged}


@typing.final
class TaskRequest:
    """The request view a task's tool sees through its ``Context``.

    Mirrors ``trimcp.sessions.RequestContext``: ``request_id`` is the id of the
    ``tools/call`` that created the task (long answered), progress goes out with the kept
    token, and "cancelled" means ``tasks/cancel``.
    """

    __slots__ = ("_progress", "record", "request_id", "session")

    def __init__(
        self,
        record: TaskRecord,
        session: SessionHandle,
        request_id: RequestId,
        progress: ProgressReporter | None,
    ) -> None:
        self.record = record
        self.session = session
        self.request_id = request_id
        self._progress = progress

    @property
    def progress_token(self) -> ProgressToken | None:
        """The creating request's progress token, kept until the task is terminal."""
        return None if self._progress is None else self._progress.token

    @property
    def cancelled(self) -> bool:
        """True once the task was cancelled (``tasks/cancel`` or expiry)."""
        return self.record.status == "cancelled" or self.record.scope.cancel_called

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send ``notifications/progress`` with the kept token, if the client asked."""
        if self._progress is None or self.record.terminal:
            return False
        return await self._progress.report(progress, total, message)

    def finish(self) -> None:
        """The task is terminal: its progress token is no longer valid."""
        if self._progress is not None:
            self._progress.finish()


def announce(session: SessionHandle, record: TaskRecord) -> None:
    """Send ``notifications/tasks/status`` (full Task, no related-task meta) without waiting."""
    session.notify_nowait("notifications/tasks/status", record.to_wire())


async def run_task(
    record: TaskRequest,
    work: Callable[[], Awaitable[JsonObject]],
    describe: str,
) -> None:
    """Run a task's work to its end and record the outcome; never raises.

    A ``CallToolResult`` with ``isError: true`` and a JSON-RPC error both make the task
    ``failed`` (Tasks > Failure), with a ``statusMessage``; ``tasks/result`` returns them as
    the original request would have.
    """
    task = record.record
    session = record.session
    ended_here = False
    try:
        with task.scope:
            try:
                result = await work()
            except JsonRpcError as exc:
                task.error = exc
                ended_here = task.move("failed", exc.message)
            except Exception as exc:
                logger.error("task %s (%s) failed", task.task_id, describe, exc_info=exc)
                task.error = InternalError(f"{describe} failed")
                ended_here = task.move("failed", task.error.message)
            else:
                task.result = result
                if result.get("isError") is True:
                    ended_here = task.move("failed", _failure_text(result))
                else:
                    ended_here = task.move("completed")
        if not task.terminal:
            # Not by tasks/cancel (that moved it already): the ttl ran out.
            ended_here = task.move("cancelled", "the task's ttl expired")
    finally:
        record.finish()
        if ended_here and session.open:
            announce(session, task)


def _failure_text(result: JsonObject) -> str:
    content = result.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text: JsonValue = block.get("text")
                if isinstance(text, str):
                    return text
    return "the tool reported an error"
