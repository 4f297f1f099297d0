"""The Tasks extension (SEP-2663) on 2026-07-28 requests: calls that become tasks.

Requests are served as a transport serves them (a ``ModernRequest`` over a checked
``_meta``: ``tests.modern_requests``), with no transport around them; the task runner
runs inside ``server.open_notifications()``, as every server runner starts it. Time is
``MockClock``'s (autojump), so a task's TTL, its polling and ``detach_after`` cost no wall
time and are asserted exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest
import trio
import trio.testing

from tests.modern_requests import ModernClient, accept, identity
from trimcp.errors import MissingClientCapability, ToolError
from trimcp.server import Context, MCPServer, TaskCounts, TasksExtensionPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trio.testing import MockClock

    from trimcp.protocol import JsonObject

EXTENSION = "io.modelcontextprotocol/tasks"
TASKS: JsonObject = {"elicitation": {}, "extensions": {EXTENSION: {}}}
NAME: JsonObject = {"type": "object", "properties": {"name": {"type": "string"}}}


class Client(ModernClient):
    """Sends modern requests to ``server`` in process, and polls its tasks."""

    def __init__(self, server: MCPServer, capabilities: JsonObject | None = None) -> None:
        super().__init__(server, TASKS if capabilities is None else capabilities)

    async def get(self, task_id: str) -> Any:
        return await self.send("tasks/get", {"taskId": task_id})

    async def until(self, task_id: str, *statuses: str) -> JsonObject:
        """Poll ``tasks/get`` at the suggested interval until the task is in ``statuses``."""
        while True:
            task = (await self.get(task_id))["result"]
            if task["status"] in statuses:
                return dict(task)
            await trio.sleep(task["pollIntervalMs"] / 1000)


def text(result: JsonObject) -> str:
    (block,) = result["content"]  # type: ignore[misc]  # a CallToolResult's content list
    return str(block["text"])


class Runs:
    """How often each step of a tool ran."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def __call__(self, step: str) -> None:
        self.counts[step] = self.counts.get(step, 0) + 1


def build(runs: Runs | None = None, **policy: Any) -> MCPServer:
    server = MCPServer("tasks", tasks_extension=TasksExtensionPolicy(**policy))
    seen = runs or Runs()

    @server.tool()
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def compute(seconds: float, ctx: Context) -> str:
        seen("compute")
        try:
            await trio.sleep(seconds)
        finally:
            if ctx.is_cancelled:
                seen("cancelled")
        return f"computed in {seconds}"

    @server.tool(task_support="required")
    async def job() -> str:
        await trio.sleep(1)
        raise ToolError("the job failed")

    @server.tool(task_support="optional")
    async def confirm(ctx: Context) -> str:
        seen("confirm")
        assert ctx.continue_as_task()
        assert ctx.task_id is not None
        assert not await ctx.info("not sent: a task has no request stream")
        assert not await ctx.report_progress(1, 2)
        answer = await ctx.elicit("Sure?", NAME)
        seen("confirm-answered")
        return f"confirmed by {answer.content['name']}"  # type: ignore[index]

    @server.tool(task_support="optional")
    async def two(ctx: Context) -> str:
        ctx.continue_as_task()
        names: list[str] = []

        async def ask(key: str) -> None:
            answer = await ctx.elicit(f"{key}?", NAME, key=key)
            names.append(answer.content["name"])  # type: ignore[index]

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "first")
            nursery.start_soon(ask, "second")
        return " and ".join(sorted(names))

    @server.tool(task_support="required")
    async def compose(ctx: Context) -> str:
        seen("compose")
        answer = await ctx.elicit("Your name?", NAME, key="user_name")
        assert ctx.continue_as_task()
        seen("compose-task")
        await trio.sleep(1)
        return f"Hello, {answer.content['name']}!"  # type: ignore[index]

    @server.tool(task_support="optional")
    async def breaks(ctx: Context) -> str:
        ctx.continue_as_task()
        raise MissingClientCapability({"sampling": {}}, "needs sampling after all")

    return server


@pytest.fixture
async def served() -> AsyncIterator[tuple[Client, Runs]]:
    runs = Runs()
    server = build(runs)
    async with server.open_notifications():
        yield Client(server), runs


# --- offering the extension -------------------------------------------------------------------


async def test_discover_offers_the_extension_not_the_core_capability(
    autojump_clock: MockClock,
) -> None:
    discovered = (await Client(build()).send("server/discover"))["result"]
    capabilities = discovered["capabilities"]
    assert capabilities["extensions"] == {EXTENSION: {}}
    assert "tasks" not in capabilities


async def test_a_server_with_no_task_supporting_tool_does_not_offer_it(
    autojump_clock: MockClock,
) -> None:
    server = MCPServer("plain")
    server.add_tool(lambda: "x", "x")
    capabilities = (await Client(server).send("server/discover"))["result"]["capabilities"]
    assert "extensions" not in capabilities


# --- when a call becomes a task ---------------------------------------------------------------


async def test_a_slow_call_becomes_a_task_after_detach_after(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    start = trio.current_time()
    created = (await client.call("compute", {"seconds": 5}))["result"]
    assert trio.current_time() - start == pytest.approx(0.1)  # the default detach_after
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert created["ttlMs"] == 3_600_000
    assert created["pollIntervalMs"] == 500
    assert {"createdAt", "lastUpdatedAt", "taskId"} <= created.keys()
    assert not {"result", "error", "inputRequests", "requestState", "task"} & created.keys()
    working = (await client.get(created["taskId"]))["result"]
    assert working["status"] == "working"
    assert working["resultType"] == "complete"
    server = cast("MCPServer", client.server)
    assert server.task_counts() == TaskCounts(kept=1, running=1, limit=1000)
    done = await client.until(created["taskId"], "completed")
    assert trio.current_time() - start == pytest.approx(5.1)  # polled every 0.5 s from 0.1
    assert text(done["result"]) == "computed in 5.0"
    assert done["result"]["isError"] is False
    assert server.task_counts() == TaskCounts(kept=1, running=0, limit=1000)


async def test_a_quick_call_is_answered_with_its_result(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    result = (await client.call("compute", {"seconds": 0.05}))["result"]
    assert result["resultType"] == "complete"
    assert text(result) == "computed in 0.05"
    assert "taskId" not in result


async def test_detach_after_zero_makes_every_call_a_task(autojump_clock: MockClock) -> None:
    server = build(detach_after=0)
    async with server.open_notifications():
        result = (await Client(server).call("compute", {"seconds": 0}))["result"]
    assert result["resultType"] == "task"


async def test_a_forbidden_tool_never_becomes_a_task(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    result = (await client.call("greet", {"name": "Ada"}, task={"ttl": 1000}))["result"]
    assert result["resultType"] == "complete"
    assert text(result) == "Hello, Ada!"


async def test_a_client_without_the_extension_gets_results_and_minus_32021_for_required(
    autojump_clock: MockClock,
) -> None:
    server = build()
    async with server.open_notifications():
        client = Client(server, {"elicitation": {}})
        start = trio.current_time()
        result = (await client.call("compute", {"seconds": 3}))["result"]
        assert result["resultType"] == "complete"
        assert trio.current_time() - start == pytest.approx(3)
        error = (await client.call("job"))["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


async def test_without_a_runner_calls_run_in_their_request(autojump_clock: MockClock) -> None:
    client = Client(build())  # no open_notifications: nothing runs the tasks
    result = (await client.call("compute", {"seconds": 2}))["result"]
    assert text(result) == "computed in 2.0"
    # continue_as_task() is False: the ask is a multi round-trip exchange of the call.
    asked = (await client.call("two"))["result"]
    assert asked["resultType"] == "input_required"
    assert set(asked["inputRequests"]) == {"first", "second"}


async def test_a_tool_error_completes_the_task_with_is_error(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    created = (await client.call("job"))["result"]
    done = await client.until(created["taskId"], "completed", "failed")
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True
    assert "error" not in done


async def test_a_json_rpc_error_fails_the_task(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    created = (await client.call("breaks"))["result"]
    failed = await client.until(created["taskId"], "completed", "failed")
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32021
    assert failed["statusMessage"] == "needs sampling after all"
    assert "result" not in failed


# --- input during a task ----------------------------------------------------------------------


async def test_an_ask_parks_the_task_and_tasks_update_resumes_the_same_handler(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, runs = served
    start = trio.current_time()
    created = (await client.call("confirm"))["result"]
    assert created["resultType"] == "task"
    assert trio.current_time() == start  # continue_as_task() answered at once
    parked = await client.until(created["taskId"], "input_required")
    assert parked["inputRequests"] == {
        "elicitation": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Sure?", "requestedSchema": NAME},
        }
    }
    ack = (
        await client.send(
            "tasks/update",
            {"taskId": created["taskId"], "inputResponses": {"elicitation": accept(name="Ada")}},
        )
    )["result"]
    assert ack == {"resultType": "complete"}
    done = await client.until(created["taskId"], "completed")
    assert text(done["result"]) == "confirmed by Ada"
    assert runs.counts == {"confirm": 1, "confirm-answered": 1}  # never run again


async def test_answers_may_come_one_at_a_time_and_strays_are_ignored(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    task_id = (await client.call("two"))["result"]["taskId"]
    parked = await client.until(task_id, "input_required")
    await trio.testing.wait_all_tasks_blocked()
    parked = (await client.get(task_id))["result"]
    assert set(parked["inputRequests"]) == {"first", "second"}
    update = {"first": accept(name="Ada"), "never-asked": {"ignored": True}}
    await client.send("tasks/update", {"taskId": task_id, "inputResponses": update})
    after = (await client.get(task_id))["result"]
    assert after["status"] == "input_required"
    assert set(after["inputRequests"]) == {"second"}
    # An answer already given is ignored; a malformed one for an open key is refused.
    bad = await client.send("tasks/update", {"taskId": task_id, "inputResponses": {"second": 1}})
    assert bad["error"]["code"] == -32602
    update = {"first": accept(name="Eve"), "second": accept(name="Bo")}
    await client.send("tasks/update", {"taskId": task_id, "inputResponses": update})
    done = await client.until(task_id, "completed")
    assert text(done["result"]) == "Ada and Bo"


async def test_input_gathered_before_the_task_is_a_round_of_the_call(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, runs = served
    first = (await client.call("compose"))["result"]
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    second = (
        await client.call(
            "compose",
            inputResponses={"user_name": accept(name="Alice")},
            requestState=first["requestState"],
        )
    )["result"]
    assert second["resultType"] == "task"
    assert "requestState" not in second
    done = await client.until(second["taskId"], "completed")
    assert text(done["result"]) == "Hello, Alice!"
    assert runs.counts == {"compose": 2, "compose-task": 1}


# --- cancellation, errors, binding ------------------------------------------------------------


async def test_tasks_cancel_acks_and_cancels_the_work(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, runs = served
    task_id = (await client.call("compute", {"seconds": 60}))["result"]["taskId"]
    ack = (await client.send("tasks/cancel", {"taskId": task_id}))["result"]
    assert ack == {"resultType": "complete"}
    cancelled = (await client.get(task_id))["result"]
    assert cancelled["status"] == "cancelled"
    await trio.testing.wait_all_tasks_blocked()
    assert runs.counts["cancelled"] == 1
    # Idempotent on a terminal task.
    assert (await client.send("tasks/cancel", {"taskId": task_id}))["result"] == ack


async def test_task_methods_need_the_extension_and_a_known_task(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        params = {"taskId": "nope", "inputResponses": {}}
        error = (await Client(client.server, {}).send(method, params))["error"]
        assert error["code"] == -32021, method
        error = (await client.send(method, params))["error"]
        assert error["code"] == -32602, method
    for method in ("tasks/result", "tasks/list"):
        assert (await client.send(method, {"taskId": "nope"}))["error"]["code"] == -32601


async def test_another_principal_cannot_see_or_cancel_a_task(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    client.identity = identity("alice")
    task_id = (await client.call("compute", {"seconds": 60}))["result"]["taskId"]
    mallory = Client(client.server)
    mallory.identity = identity("mallory")
    anonymous = Client(client.server)
    for other in (mallory, anonymous):
        unknown = (await other.get(task_id))["error"]
        assert unknown["code"] == -32602
        assert (await other.send("tasks/cancel", {"taskId": task_id}))["error"]["code"] == -32602
    assert (await client.get(task_id))["result"]["status"] == "working"


async def test_task_ids_are_unguessable(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    ids = {(await client.call("compute", {"seconds": 9}))["result"]["taskId"] for _ in range(20)}
    assert len(ids) == 20
    assert all(len(task_id) >= 22 for task_id in ids)  # 128 random bits, base64url


async def test_the_request_going_away_before_the_task_cancels_the_call(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, runs = served
    with trio.move_on_after(0.05):
        await client.call("compute", {"seconds": 60})
    await trio.testing.wait_all_tasks_blocked()
    assert client.server._tasks_ext.statistics().kept == 0
    assert runs.counts == {"compute": 1}


async def test_stopping_the_runner_cancels_its_tasks(autojump_clock: MockClock) -> None:
    server = build()
    client = Client(server)
    async with server.open_notifications():
        task_id = (await client.call("compute", {"seconds": 60}))["result"]["taskId"]
    stopped = (await client.get(task_id))["result"]
    assert stopped["status"] == "cancelled"
    assert stopped["statusMessage"] == "the server stopped before the task finished"


async def test_a_call_not_yet_a_task_fails_when_the_runner_stops(
    autojump_clock: MockClock,
) -> None:
    server = build(detach_after=10)
    answers: list[Any] = []
    async with trio.open_nursery() as nursery, server.open_notifications():

        async def call() -> None:
            answers.append(await Client(server).call("compute", {"seconds": 60}))

        nursery.start_soon(call)
        await trio.sleep(1)
    assert [answer["error"] for answer in answers] == [
        {"code": -32603, "message": "the server stopped before the call finished"}
    ]
    assert server._tasks_ext.statistics().kept == 0


# --- subscriptions/listen ---------------------------------------------------------------------


async def test_listen_follows_tasks_with_notifications(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    task_id = (await client.call("compute", {"seconds": 2}))["result"]["taskId"]
    listener = Client(client.server)
    notifications = {"taskIds": [task_id, "unknown"]}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(listener.send, "subscriptions/listen", {"notifications": notifications})
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    ack, *updates = listener.sink.messages
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    statuses = [update["params"]["status"] for update in updates]
    assert statuses == ["working", "completed"]
    assert {update["method"] for update in updates} == {"notifications/tasks"}
    assert text(updates[-1]["params"]["result"]) == "computed in 2.0"


async def test_listen_for_tasks_needs_the_extension(
    served: tuple[Client, Runs], autojump_clock: MockClock
) -> None:
    client, _ = served
    listener = Client(client.server, {})
    answer = await listener.send("subscriptions/listen", {"notifications": {"taskIds": []}})
    assert answer["error"]["code"] == -32021
