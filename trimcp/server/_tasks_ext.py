"""The Tasks extension (``io.modelcontextprotocol/tasks``) on the 2026-07-28 request path.

SEP-2663 (https://modelcontextprotocol.io/seps/2663-tasks-extension) lets a server answer a
``tools/call`` with a task handle (``resultType: "task"``, a ``CreateTaskResult``) that the
client polls with ``tasks/get``, feeds with ``tasks/update`` and stops with
``tasks/cancel``; ``subscriptions/listen`` may follow tasks (``notifications/tasks``). The
2025-11-25 experimental tasks (``_tasks.py``) stay as they were in sessions; this module is
used only by per-request 2026-07-28 requests (``_modern.py``).

How trimcp applies it:

* **Offer.** ``server/discover`` declares the extension when some tool allows tasks
  (``@server.tool(task_support="optional" | "required")``). A client opts in per request,
  with the extension in its ``_meta`` client capabilities; the server alone decides whether
  a call becomes a task, and never for a client that did not opt in (SEP: MUST NOT).
* **When a call becomes a task.** A task-supporting tool called by a client that opted in
  runs in the server's task runner (``_tasks_ext_runner.py``). It becomes a task when the
  tool calls ``Context.continue_as_task()``, or when it is still running after
  ``TasksExtensionPolicy.detach_after`` seconds; one that finishes sooner is answered with its
  result. Input asked before that point is a multi round-trip exchange on the call itself
  (the SEP's composition rule: MRTR first, then the task); input asked in the task parks it
  in ``input_required`` until ``tasks/update`` answers, and the same handler goes on (no
  run from the top, unlike a round).
* **``task_support="required"``** means the tool cannot be served without a task. A client
  that did not declare the extension gets -32021 with ``data.requiredCapabilities.
  extensions["io.modelcontextprotocol/tasks"]`` (SEP: MUST), before the tool runs. A client
  that did is served as for ``"optional"``, since it handles both result shapes.
* **No runner** (a server not started by a runner: an in-memory one), **a store at a bound**
  (``TasksExtensionPolicy``), or a ``"forbidden"`` tool: the call runs in its request and
  is answered with its result; ``continue_as_task()`` returns False.
* **The task methods** answer -32021 to a client that did not declare the extension (SEP:
  MUST), -32602 for an unknown task or another principal's, and acks without task members
  for ``tasks/update`` and ``tasks/cancel``. ``tasks/result`` and ``tasks/list`` do not exist
  here (-32601, ``_modern.REMOVED_METHODS``).
* **Outcomes.** ``completed`` carries the ``CallToolResult`` exactly as ``tools/call`` would
  have returned it (``isError: true`` included); ``failed`` carries the JSON-RPC error the
  call ended with; a cancelled task's work is cancelled. Progress and log messages of a task
  are not sent (SEP: not supported on tasks); ``Context.log`` returns False there.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Final

import trio

from trimcp.errors import InvalidParams, MissingClientCapability
from trimcp.server._mrtr import principal_of
from trimcp.server._tasks_ext_runner import CallJob, TaskRunner
from trimcp.server._tasks_ext_store import (
    EXTENSION_ID,
    ExtensionTaskStore,
    TasksExtensionPolicy,
    TaskStoreStatistics,
)
from trimcp.supervision import ChildSpec

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import ClientCapabilities, JsonObject
    from trimcp.server._catalog import Catalog
    from trimcp.server._mrtr import Round
    from trimcp.server._tasks_ext_store import ExtensionTask
    from trimcp.sessions import RequestContext

    Notify = Callable[[str, JsonObject], Awaitable[None]]

__all__ = ["EXTENSION_ID", "TASK_METHODS", "TasksExtension", "extension_declared"]

#: The extension's methods (SEP-2663, Reservations: the ``tasks/`` prefix is its own).
TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def extension_declared(capabilities: ClientCapabilities) -> bool:
    """Tell whether a request's client capabilities declare the extension (any object)."""
    extensions = capabilities.extra.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION_ID), dict)


def _missing(what: str) -> MissingClientCapability:
    return MissingClientCapability(
        {"extensions": {EXTENSION_ID: {}}},
        f"Missing required client capability: {what} needs the {EXTENSION_ID} extension; "
        f'declare it in _meta clientCapabilities ("extensions": {{"{EXTENSION_ID}": {{}}}})',
    )


@typing.final
class TasksExtension:
    """A server's tasks of the extension: its store, its runner and its policy."""

    __slots__ = ("policy", "runner", "store")

    def __init__(self, policy: TasksExtensionPolicy | None = None) -> None:
        self.policy = policy or TasksExtensionPolicy()
        self.store = ExtensionTaskStore(self.policy)
        self.runner = TaskRunner()

    def spec(self) -> ChildSpec:
        """Return the runner's child spec (id ``"tasks"``; ``MCPServer.notification_spec``)."""
        return ChildSpec("tasks", self.runner.serve)

    def statistics(self) -> TaskStoreStatistics:
        """Return how many tasks are kept and how many still run."""
        return self.store.statistics()

    # --- tools/call ------------------------------------------------------------------------

    def may_become_task(
        self, catalog: Catalog, method: str, params: JsonObject, context: RequestContext
    ) -> bool:
        """Tell whether this call runs in the runner, so that it may become a task.

        Raises:
            MissingClientCapability: a ``"required"`` tool, and the client did not declare
                the extension (-32021).
        """
        name = params.get("name") if method == "tools/call" else None
        tool = catalog.tools.get(name) if isinstance(name, str) else None
        if tool is None or tool.task_support == "forbidden":
            return False
        if not extension_declared(context.session.client_capabilities):
            if tool.task_support == "required":
                raise _missing(f"the tool {tool.name} runs only as a task, so calling it")
            return False
        return self.runner.running

    async def serve_call(
        self,
        round_: Round,
        context: RequestContext,
        params: JsonObject,
        body: Callable[[], Awaitable[JsonObject]],
    ) -> tuple[JsonObject | None, bool]:
        """Run a call that may become a task; return its answer and whether it is a task.

        The answer is None when an ask ended the pass (``_mrtr.end_round`` builds it).

        Raises:
            JsonRpcError: the call failed before it became a task.
        """
        job = CallJob(
            self.store, round_, principal_of(context.identity), f"tools/call {params.get('name')}"
        )
        result = await job.serve(self.runner, body, self.policy.detach_after)
        return result, job.task_id is not None

    # --- tasks/get, tasks/update, tasks/cancel ---------------------------------------------

    async def serve_method(
        self, method: str, params: JsonObject, context: RequestContext
    ) -> JsonObject:
        """Answer ``tasks/get``, ``tasks/update`` or ``tasks/cancel``.

        Raises:
            MissingClientCapability: the client did not declare the extension (-32021).
            InvalidParams: no such task for this caller, or malformed params (-32602).
        """
        if not extension_declared(context.session.client_capabilities):
            raise _missing(method)
        task = self.store.find(params.get("taskId"), principal_of(context.identity))
        if method == "tasks/get":
            return task.to_wire()
        if method == "tasks/update":
            responses = params.get("inputResponses")
            if not isinstance(responses, dict):
                raise InvalidParams(
                    "params.inputResponses must be an object of answers keyed as the task's "
                    "inputRequests",
                    {"param": "inputResponses"},
                )
            task.answer(responses)
            return {}
        # Ack-only and idempotent: a terminal task stays as it is (SEP: Task Cancellation).
        task.cancel("cancelled by the client")
        return {}

    # --- subscriptions/listen --------------------------------------------------------------

    def followed(self, wanted: JsonObject, context: RequestContext) -> list[ExtensionTask] | None:
        """Return the tasks a listen's ``notifications.taskIds`` may follow; None if unasked.

        Ids of unknown tasks (or another caller's) are left out, as are those past
        ``max_followed``: the acknowledgement names only the tasks followed.

        Raises:
            InvalidParams: ``taskIds`` is not an array of strings.
            MissingClientCapability: the client did not declare the extension (-32021).
        """
        ids = wanted.get("taskIds")
        if ids is None:
            return None
        if not isinstance(ids, list) or not all(isinstance(task_id, str) for task_id in ids):
            raise InvalidParams(
                "params.notifications.taskIds must be an array of task ids",
                {"param": "taskIds"},
            )
        if not extension_declared(context.session.client_capabilities):
            raise _missing("following tasks on subscriptions/listen")
        principal = principal_of(context.identity)
        found: list[ExtensionTask] = []
        for task_id in dict.fromkeys(ids):
            if len(found) >= self.policy.max_followed:
                break
            try:
                found.append(self.store.find(task_id, principal))
            except InvalidParams:
                continue
        return found

    async def follow(self, tasks: list[ExtensionTask], notify: Notify) -> None:
        """Send each task's ``notifications/tasks``: its state now, then at every change.

        The first one spares the client a race between its last ``tasks/get`` and the
        subscription. Changes that come faster than ``notify`` sends merge into the next
        notification (each carries the whole task, SEP: Task Status Notifications). Returns
        once every task is terminal.
        """
        async with trio.open_nursery() as nursery:
            for task in tasks:
                nursery.start_soon(_follow_one, task, notify)


async def _follow_one(task: ExtensionTask, notify: Notify) -> None:
    while True:
        changed = task.changed
        await notify("notifications/tasks", task.to_wire())
        if task.terminal:
            return
        await changed.wait()
