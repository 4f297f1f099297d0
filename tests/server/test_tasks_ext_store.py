"""The Tasks extension's store: its bounds, its TTL, and the policy that sets them.

Driven through requests (``test_tasks_ext.Client``) under ``MockClock`` (autojump): a store
at a bound makes no task and the call is answered in its request; a task is kept exactly
its ``ttlMs`` and then forgotten, its work cancelled if still running.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from trimcp.server import Context, MCPServer, TasksExtensionPolicy

from .test_tasks_ext import NAME, Client, Runs, accept, build, text

if TYPE_CHECKING:
    from trio.testing import MockClock


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"ttl_ms": 0}, "ttl_ms must be a positive integer"),
        ({"poll_interval_ms": 1.5}, "poll_interval_ms must be a positive integer"),
        ({"max_tasks": True}, "max_tasks must be a positive integer"),
        ({"detach_after": -1}, "detach_after must not be negative"),
        ({"max_tasks": 2, "max_running": 3}, "max_running must not exceed max_tasks"),
    ],
)
def test_the_policy_refuses_nonsense(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        TasksExtensionPolicy(**options)


async def test_the_runner_runs_with_the_notifications_as_the_child_tasks() -> None:
    server = MCPServer("ids")
    runner = server._tasks_ext.runner
    assert not runner.running
    async with server.open_notifications():
        assert runner.running
    assert not runner.running
    with pytest.raises(ValueError, match="'tasks' is already there"):
        server.add_background("tasks", trio.sleep_forever)


async def test_past_max_running_a_call_is_answered_in_its_request(
    autojump_clock: MockClock,
) -> None:
    server = build(max_running=2)
    client = Client(server)
    async with server.open_notifications():
        first = (await client.call("compute", {"seconds": 10}))["result"]
        second = (await client.call("compute", {"seconds": 100}))["result"]
        assert first["resultType"] == second["resultType"] == "task"
        stats = server._tasks_ext.statistics()
        assert (stats.kept, stats.running) == (2, 2)
        start = trio.current_time()
        third = (await client.call("compute", {"seconds": 3}))["result"]
        assert third["resultType"] == "complete"  # no room: served as an ordinary call
        assert trio.current_time() - start == pytest.approx(3)
        await client.until(first["taskId"], "completed")
        fourth = (await client.call("compute", {"seconds": 3}))["result"]
        assert fourth["resultType"] == "task"  # room again
        stats = server._tasks_ext.statistics()
        assert (stats.kept, stats.running) == (3, 2)


async def test_past_max_tasks_no_task_is_made_until_one_expires(
    autojump_clock: MockClock,
) -> None:
    server = build(max_tasks=2, max_running=2, ttl_ms=10_000)
    client = Client(server)
    async with server.open_notifications():
        for _ in range(2):
            task_id = (await client.call("compute", {"seconds": 1}))["result"]["taskId"]
            await client.until(task_id, "completed")
        assert server._tasks_ext.statistics().running == 0
        full = (await client.call("compute", {"seconds": 1}))["result"]
        assert full["resultType"] == "complete"  # finished tasks are kept their whole TTL
        await trio.sleep(10)
        again = (await client.call("compute", {"seconds": 1}))["result"]
        assert again["resultType"] == "task"
        assert server._tasks_ext.statistics().kept == 1


async def test_a_task_is_kept_exactly_its_ttl(autojump_clock: MockClock) -> None:
    server = build(ttl_ms=2_000, detach_after=0)
    client = Client(server)
    async with server.open_notifications():
        start = trio.current_time()
        task_id = (await client.call("compute", {"seconds": 0.5}))["result"]["taskId"]
        await trio.sleep(1.999 - (trio.current_time() - start))
        assert (await client.get(task_id))["result"]["status"] == "completed"
        await trio.sleep(0.001)
        gone = (await client.get(task_id))["error"]
        assert gone["code"] == -32602
        assert "Task not found" in gone["message"]


async def test_a_task_still_running_at_its_ttl_is_cancelled(autojump_clock: MockClock) -> None:
    runs = Runs()
    server = build(runs, ttl_ms=1_000, detach_after=0)
    client = Client(server)
    listener = Client(server)
    async with server.open_notifications(), trio.open_nursery() as nursery:
        task_id = (await client.call("compute", {"seconds": 60}))["result"]["taskId"]
        notifications = {"notifications": {"taskIds": [task_id]}}
        nursery.start_soon(listener.send, "subscriptions/listen", notifications)
        await trio.sleep(1)
        await trio.testing.wait_all_tasks_blocked()
        assert runs.counts == {"compute": 1, "cancelled": 1}
        assert (await client.get(task_id))["error"]["code"] == -32602
        nursery.cancel_scope.cancel()
    last = listener.sink.messages[-1]["params"]
    assert (last["status"], last["statusMessage"]) == ("cancelled", "the task's TTL expired")


async def test_two_asks_under_one_key_fail_the_task(autojump_clock: MockClock) -> None:
    server = MCPServer("keys")

    @server.tool(task_support="optional")
    async def twice(ctx: Context) -> str:
        ctx.continue_as_task()
        async with trio.open_nursery() as nursery:
            for _ in range(2):
                nursery.start_soon(functools.partial(ctx.elicit, "Same?", NAME, key="same"))
        return "unreachable"

    client = Client(server)
    async with server.open_notifications():
        task_id = (await client.call("twice"))["result"]["taskId"]
        failed = await client.until(task_id, "failed")
    assert failed["error"] == {"code": -32603, "message": "Internal error"}


async def test_a_key_answered_in_the_task_keeps_its_answer(autojump_clock: MockClock) -> None:
    server = MCPServer("again")

    @server.tool(task_support="optional")
    async def ask_twice(ctx: Context) -> str:
        ctx.continue_as_task()
        first = await ctx.elicit("Name?", NAME, key="name")
        second = await ctx.elicit("Name?", NAME, key="name")
        return f"{first.content} {second.content}"

    client = Client(server)
    async with server.open_notifications():
        task_id = (await client.call("ask_twice"))["result"]["taskId"]
        await client.until(task_id, "input_required")
        answer = {"taskId": task_id, "inputResponses": {"name": accept(name="Ada")}}
        await client.send("tasks/update", answer)
        done = await client.until(task_id, "completed")
    assert text(done["result"]) == "{'name': 'Ada'} {'name': 'Ada'}"
