"""Tasks (MCP 2025-11-25, experimental): ``session.tasks``, tool calls that finish later.

``await session.tasks.call_tool("sleep", {...})`` returns the ``Task`` the server created at
once; follow it with ``get`` (status), ``result`` (waits until it is terminal, then returns
what ``tools/call`` would have), ``list`` and ``cancel``. ``notifications/tasks/status`` reach
``ClientHandlers.on_task_status`` (the spec says not to depend on them: poll with ``get``).
Progress for a task (``on_progress``) keeps arriving after its ``CreateTaskResult`` until it
is terminal (Tasks > Progress).

A tool is run as a task only if the server declared ``tasks.requests.tools.call``
(otherwise ``MethodNotFound`` is raised before anything is sent; Tasks > Capabilities: the
client MUST NOT augment then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from trimcp.protocol import Fields

from ._errors import require
from ._handlers import call_back
from ._pages import every_page
from ._results import TERMINAL_STATUSES, CallToolResult, Progress, Task

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from trimcp.protocol import JsonObject, JsonValue, ServerCapabilities

    from ._core import ProgressCallback, SessionCore


@final
class TaskMethods:
    """The task methods of one ``ClientSession`` (its ``tasks`` attribute).

    Built by the session from its ``SessionCore`` and its source of progress tokens, so
    that this module needs nothing else of the session.
    """

    def __init__(self, core: SessionCore, new_progress_token: Callable[[], int]) -> None:
        self._core = core
        self._new_token = new_progress_token
        self._tokens: dict[str, int] = {}  # task id -> its progress token, until terminal
        # progress token -> the callback for a task's progress after its CreateTaskResult
        self._progress: dict[int | str, ProgressCallback] = {}

    @property
    def _capabilities(self) -> ServerCapabilities:
        # Read each time: a renewed session may have answered initialize differently.
        return self._core.initialize_result.capabilities

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, JsonValue] | None = None,
        *,
        ttl: int | None = None,
        on_progress: ProgressCallback | None = None,
        meta: JsonObject | None = None,
    ) -> Task:
        """Start tool ``name`` as a task and return it (``ttl``: milliseconds to keep it)."""
        require(self._capabilities.tasks_tools_call, "tools/call (as a task)")
        params = tool_call_params(name, arguments, meta)
        params["task"] = {} if ttl is None else {"ttl": ttl}
        if on_progress is not None:
            token = self._new_token()
            params["_meta"] = {**(meta or {}), "progressToken": token}
        result = await self._core.request("tools/call", params, on_progress=on_progress)
        task = Task.from_wire(
            Fields(Fields(result, "tools/call").opt_obj("task"), "tools/call: task")
        )
        if on_progress is not None and not task.is_terminal:
            self._progress[token] = on_progress
            self._tokens[task.task_id] = token
        return task

    async def get(self, task_id: str) -> Task:
        """Return the task's current state."""
        require(self._capabilities.tasks, "tasks/get")
        result = await self._core.request("tasks/get", {"taskId": task_id})
        return self._seen(Task.from_wire(Fields(result, "tasks/get")))

    async def result(self, task_id: str, *, timeout: float | None = None) -> CallToolResult:
        """Wait until the task is terminal; return the tool's result (or raise its error)."""
        require(self._capabilities.tasks, "tasks/result")
        result = await self._core.request("tasks/result", {"taskId": task_id}, timeout=timeout)
        self._forget(task_id)
        return CallToolResult.from_wire(Fields(result, "tasks/result"))

    async def list(self) -> list[Task]:
        """Return every task of this session ([] unless the server declared ``tasks.list``)."""
        if not self._capabilities.tasks_list:
            return []
        tasks = await every_page(self._core, "tasks/list", "tasks", Task.from_wire)
        return [self._seen(task) for task in tasks]

    async def cancel(self, task_id: str) -> Task:
        """Cancel the task; return it (status ``cancelled``)."""
        require(self._capabilities.tasks_cancel, "tasks/cancel")
        result = await self._core.request("tasks/cancel", {"taskId": task_id})
        return self._seen(Task.from_wire(Fields(result, "tasks/cancel")))

    def _seen(self, task: Task) -> Task:
        if task.is_terminal:
            self._forget(task.task_id)
        return task

    def _forget(self, task_id: str) -> None:
        """Drop the task's progress callback (it is terminal, or its result was read)."""
        token = self._tokens.pop(task_id, None)
        if token is not None:
            self._progress.pop(token, None)

    def status_changed(self, params: JsonObject | None) -> None:
        """Note ``notifications/tasks/status``: a terminal task's progress is over."""
        params = params or {}
        task_id = params.get("taskId")
        if isinstance(task_id, str) and params.get("status") in TERMINAL_STATUSES:
            self._forget(task_id)

    async def progress_arrived(self, params: JsonObject | None) -> None:
        """Hand ``notifications/progress`` for a running task to its ``on_progress``.

        Progress for a request still waiting for its answer never gets here (the session
        core hands it to the waiting caller); other tokens are ignored.
        """
        params = params or {}
        token = params.get("progressToken")
        callback = self._progress.get(token) if isinstance(token, int | str) else None
        if callback is not None:
            await call_back(callback, Progress.from_wire(Fields(params, "notifications/progress")))


def tool_call_params(
    name: str, arguments: Mapping[str, JsonValue] | None, meta: JsonObject | None
) -> JsonObject:
    """Return the params of ``tools/call``."""
    params: JsonObject = {"name": name, "arguments": dict(arguments or {})}
    if meta is not None:
        params["_meta"] = dict(meta)
    return params
