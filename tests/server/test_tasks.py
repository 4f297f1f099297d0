"""Tasks (2025-11-25, experimental): task-augmented tools/call and the tasks/* methods."""

from __future__ import annotations

import pytest
import trio

from trimcp.errors import JsonRpcError
from trimcp.protocol import ClientCapabilities, JsonObject
from trimcp.server import Context, MCPServer, TaskCounts, TaskPolicy
from trimcp.testing import open_in_memory_client

from .conftest import assert_valid

RELATED = "io.modelcontextprotocol/related-task"
ELICIT = ClientCapabilities(elicitation_form=True)


def build(policy: TaskPolicy | None = None) -> MCPServer:
    server = MCPServer("tasker", task_policy=policy or TaskPolicy())
    gate = {"open": trio.Event()}

    @server.tool(task_support="optional")
    async def slow(text: str, ctx: Context) -> str:
        """Wait for the gate, reporting progress, then echo."""
        await ctx.report_progress(1, 2)
        await ctx.info(f"working on {text}")
        await gate["open"].wait()
        await ctx.report_progress(2, 2)
        return text.upper()

    @server.tool(task_support="required")
    async def must_be_task(n: int) -> int:
        return n * 2

    @server.tool()
    async def plain() -> str:
        return "plain"

    @server.tool(task_support="optional")
    async def broken() -> str:
        raise RuntimeError("disk on fire")

    @server.tool(task_support="optional")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"n": {"type": "string"}}}
        )
        return str(answer.content)

    @server.tool(task_support="optional")
    async def forever(ctx: Context) -> str:
        await trio.sleep_forever()
        return "never"

    server.gate = gate  # type: ignore[attr-defined]
    return server


async def _create(client: object, name: str, arguments: JsonObject, **task: object) -> JsonObject:
    result: JsonObject = await client.request(  # type: ignore[attr-defined]
        "tools/call", {"name": name, "arguments": arguments, "task": dict(task)}
    )
    return result


async def test_capabilities_and_tool_execution_field() -> None:
    async with open_in_memory_client(build()) as client:
        caps = client.initialize_result.capabilities
        assert caps.tasks
        assert caps.tasks_list
        assert caps.tasks_cancel
        assert caps.tasks_tools_call
        tools = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
    assert tools["slow"]["execution"] == {"taskSupport": "optional"}
    assert tools["must_be_task"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["plain"]
    for tool in tools.values():
        assert_valid("Tool", tool)


async def test_no_tasks_capability_without_task_tools() -> None:
    server = MCPServer("plain")

    @server.tool()
    def echo(text: str) -> str:
        return text

    async with open_in_memory_client(server) as client:
        assert not client.initialize_result.capabilities.tasks


async def test_task_lifecycle_get_result_list_and_status() -> None:
    server = build()
    async with open_in_memory_client(server) as client:
        created = await _create(client, "slow", {"text": "hi"}, ttl=60_000)
        assert_valid("CreateTaskResult", created)
        task = created["task"]
        assert isinstance(task, dict)
        task_id = task["taskId"]
        assert task["status"] == "working"
        assert task["ttl"] == 60_000
        got = await client.request("tasks/get", {"taskId": task_id})
        assert_valid("GetTaskResult", got)
        assert got["status"] == "working"
        listed = await client.request("tasks/list")
        assert_valid("ListTasksResult", listed)
        assert [item["taskId"] for item in listed["tasks"]] == [task_id]  # type: ignore[index, union-attr]

        waiting = await client.start_request("tasks/result", {"taskId": task_id})
        await trio.testing.wait_all_tasks_blocked()
        assert not client.has_response(waiting)  # blocks until terminal
        server.gate["open"].set()  # type: ignore[attr-defined]
        result = await client.wait_response(waiting)
        assert result["content"] == [{"type": "text", "text": "HI"}]
        assert result["_meta"] == {RELATED: {"taskId": task_id}}
        status = await client.wait_notification("notifications/tasks/status")
        assert status.params is not None
        assert status.params["status"] == "completed"
        assert_valid("TaskStatusNotificationParams", status.params)
        done = await client.request("tasks/get", {"taskId": task_id})
        assert done["status"] == "completed"
        # The task's log message carries its related-task metadata.
        (log,) = client.received("notifications/message")
        assert log.params is not None
        assert log.params["_meta"] == {RELATED: {"taskId": task_id}}


async def test_progress_keeps_the_token_after_create_task_result() -> None:
    server = build()
    async with open_in_memory_client(server) as client:
        request_id = await client.start_request(
            "tools/call",
            {"name": "slow", "arguments": {"text": "x"}, "task": {}},
            progress_token="p-1",
        )
        created = await client.wait_response(request_id)
        task_id = created["task"]["taskId"]  # type: ignore[index, call-overload]
        server.gate["open"].set()  # type: ignore[attr-defined]
        await client.request("tasks/result", {"taskId": task_id})
        progress = await client.wait_notification("notifications/progress", 2)
    assert progress.params == {"progressToken": "p-1", "progress": 2, "total": 2}


async def test_task_support_gates() -> None:
    async with open_in_memory_client(build()) as client:
        with pytest.raises(JsonRpcError) as forbidden:
            await _create(client, "plain", {})
        assert forbidden.value.code == -32601
        assert "does not support task-augmented calls" in forbidden.value.message
        with pytest.raises(JsonRpcError) as required:
            await client.request("tools/call", {"name": "must_be_task", "arguments": {"n": 2}})
        assert required.value.code == -32601
        assert "must be called as a task" in required.value.message
        created = await _create(client, "must_be_task", {"n": 21})
        task_id = created["task"]["taskId"]  # type: ignore[index, call-overload]
        result = await client.request("tasks/result", {"taskId": task_id})
        assert result["content"] == [{"type": "text", "text": "42"}]
        with pytest.raises(JsonRpcError) as bad_ttl:
            await _create(client, "slow", {"text": "x"}, ttl="soon")
        assert bad_ttl.value.code == -32602


async def test_older_versions_never_see_tasks() -> None:
    async with open_in_memory_client(build(), protocol_version="2025-06-18") as client:
        assert not client.initialize_result.capabilities.tasks
        # A required tool runs as a plain call: the client cannot know about tasks.
        result = await client.request("tools/call", {"name": "must_be_task", "arguments": {"n": 1}})
        assert result["content"] == [{"type": "text", "text": "2"}]
        # The client core would refuse to send it; write it raw.
        await client.stream.send_message(b'{"jsonrpc":"2.0","id":"raw","method":"tasks/list"}')
        with pytest.raises(JsonRpcError) as refused:
            await client.wait_response("raw")
        assert refused.value.code == -32601


async def test_cancel_moves_to_cancelled_and_stops_the_work() -> None:
    async with open_in_memory_client(build()) as client:
        created = await _create(client, "forever", {})
        task_id = created["task"]["taskId"]  # type: ignore[index, call-overload]
        waiting = await client.start_request("tasks/result", {"taskId": task_id})
        cancelled = await client.request("tasks/cancel", {"taskId": task_id})
        assert_valid("CancelTaskResult", cancelled)
        assert cancelled["status"] == "cancelled"
        with pytest.raises(JsonRpcError) as no_result:
            await client.wait_response(waiting)
        assert no_result.value.code == -32602
        assert "cancelled" in no_result.value.message
        with pytest.raises(JsonRpcError) as again:
            await client.request("tasks/cancel", {"taskId": task_id})
        assert again.value.code == -32602
        assert (await client.request("tasks/get", {"taskId": task_id}))["status"] == "cancelled"


async def test_failing_tool_fails_the_task_with_its_result() -> None:
    async with open_in_memory_client(build()) as client:
        created = await _create(client, "broken", {})
        task_id = created["task"]["taskId"]  # type: ignore[index, call-overload]
        result = await client.request("tasks/result", {"taskId": task_id})
        assert result["isError"] is True
        task = await client.request("tasks/get", {"taskId": task_id})
    assert task["status"] == "failed"
    assert "disk on fire" in str(task["statusMessage"])


async def test_unknown_ids_and_other_sessions_tasks_are_invisible() -> None:
    server = build()
    async with (
        open_in_memory_client(server) as first,
        open_in_memory_client(server) as second,
    ):
        created = await _create(first, "forever", {})
        task_id = created["task"]["taskId"]  # type: ignore[index, call-overload]
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(JsonRpcError) as error:
                await second.request(method, {"taskId": task_id})
            assert error.value.code == -32602
        assert (await second.request("tasks/list"))["tasks"] == []
        with pytest.raises(JsonRpcError) as missing:
            await first.request("tasks/get", {})
        assert missing.value.code == -32602
        with pytest.raises(JsonRpcError) as cursor:
            await first.request("tasks/list", {"cursor": "nonsense"})
        assert cursor.value.code == -32602


async def test_ttl_is_capped_and_expiry_cancels_and_forgets(autojump_clock: object) -> None:
    policy = TaskPolicy(max_ttl_ms=10_000, default_ttl_ms=5_000)
    async with open_in_memory_client(build(policy)) as client:
        created = await _create(client, "forever", {}, ttl=999_999)
        task = created["task"]
        assert task["ttl"] == 10_000  # type: ignore[index, call-overload]
        default = await _create(client, "forever", {})
        assert default["task"]["ttl"] == 5_000  # type: ignore[index, call-overload]
        await trio.sleep(11)
        with pytest.raises(JsonRpcError) as expired:
            await client.request("tasks/get", {"taskId": task["taskId"]})  # type: ignore[index, call-overload]
        assert expired.value.code == -32602
        assert (await client.request("tasks/list"))["tasks"] == []


async def test_running_limit() -> None:
    async with open_in_memory_client(build(TaskPolicy(max_running=2))) as client:
        await _create(client, "forever", {})
        await _create(client, "forever", {})
        with pytest.raises(JsonRpcError) as refused:
            await _create(client, "forever", {})
    assert refused.value.code == -32600
    assert "Too many tasks" in refused.value.message


async def test_elicitation_from_a_task_is_related_and_input_required() -> None:
    seen: list[JsonObject] = []
    statuses: list[str] = []

    async def elicit(params: JsonObject) -> JsonObject:
        seen.append(params)
        statuses.append("asked")
        return {"action": "accept", "content": {"n": "Ada"}}

    handlers = {"elicitation/create": elicit}
    async with open_in_memory_client(build(), capabilities=ELICIT, handlers=handlers) as client:
        created = await _create(client, "ask", {})
        task_id = created["task"]["taskId"]  # type: ignore[index, call-overload]
        result = await client.request("tasks/result", {"taskId": task_id})
        await client.wait_notification("notifications/tasks/status", 3)
        moves = [n.params["status"] for n in client.received("notifications/tasks/status")]  # type: ignore[index]
    assert result["content"] == [{"type": "text", "text": "{'n': 'Ada'}"}]
    assert seen[0]["_meta"] == {RELATED: {"taskId": task_id}}
    assert moves == ["input_required", "working", "completed"]


async def test_task_counts_cover_both_kinds_and_skip_expired(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build()
    assert server.task_counts() == TaskCounts(kept=0, running=0, limit=1000)
    async with open_in_memory_client(server) as client:
        slow = await _create(client, "slow", {"text": "a"}, ttl=60_000)
        short = await _create(client, "must_be_task", {"n": 2}, ttl=1_000)
        await client.request("tasks/result", {"taskId": short["task"]["taskId"]})  # type: ignore[index, call-overload]
        assert server.task_counts() == TaskCounts(kept=2, running=1, limit=1000)
        await trio.sleep(2)  # the finished task's TTL passes: it is no longer counted
        assert server.task_counts() == TaskCounts(kept=1, running=1, limit=1000)
        server.gate["open"].set()  # type: ignore[attr-defined]
        await client.request("tasks/result", {"taskId": slow["task"]["taskId"]})  # type: ignore[index, call-overload]
        assert server.task_counts() == TaskCounts(kept=1, running=0, limit=1000)
    assert TaskCounts(kept=1, running=1, limit=None) + TaskCounts(kept=2, limit=5) == (
        TaskCounts(kept=3, running=1, limit=5)
    )
