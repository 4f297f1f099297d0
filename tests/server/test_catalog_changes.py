"""Pagination of the list methods, and list_changed notifications on runtime changes."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.errors import JsonRpcError
from trimcp.server import MCPServer
from trimcp.testing import open_in_memory_client


def many_tools(n: int) -> MCPServer:
    server = MCPServer("many", page_size=3)
    for i in range(n):

        async def tool() -> str:
            return "x"

        server.add_tool(tool, f"t{i}")
    return server


async def test_pages_until_the_end_and_refuses_bad_cursors() -> None:
    async with open_in_memory_client(many_tools(7)) as client:
        names: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            params = {} if cursor is None else {"cursor": cursor}
            page = await client.request("tools/list", params)  # type: ignore[arg-type]
            names += [str(tool["name"]) for tool in page["tools"]]  # type: ignore[index,union-attr]
            pages += 1
            if "nextCursor" not in page:
                break
            cursor = str(page["nextCursor"])
        for bad in ("garbage", 12, (cursor or "x")[:-2] + "AA"):
            with pytest.raises(JsonRpcError) as invalid:
                await client.request("tools/list", {"cursor": bad})
            assert invalid.value.code == -32602
    assert names == [f"t{i}" for i in range(7)]
    assert pages == 3


async def test_a_cursor_from_before_a_change_is_refused() -> None:
    server = many_tools(4)
    async with open_in_memory_client(server) as client:
        first = await client.request("tools/list")
        server.remove_tool("t0")
        with pytest.raises(JsonRpcError) as stale:
            await client.request("tools/list", {"cursor": first["nextCursor"]})
    assert stale.value.code == -32602
    assert "changed" in stale.value.message


async def test_changes_notify_every_initialized_session() -> None:
    server = MCPServer("dyn")

    @server.prompt()
    def greet() -> str:
        return "hi"

    @server.resource("x://one")
    def one() -> str:
        return "1"

    async with open_in_memory_client(server) as a, open_in_memory_client(server) as b:

        async def extra() -> str:
            return "e"

        server.add_tool(extra)
        for client in (a, b):
            await client.wait_notification("notifications/tools/list_changed")
        assert [t["name"] for t in (await a.request("tools/list"))["tools"]] == ["extra"]  # type: ignore[index,union-attr]
        server.remove_tool("extra")
        server.add_resource(one, "x://two")
        server.remove_resource("x://one")
        server.add_prompt(greet, "hello")
        server.remove_prompt("greet")
        await a.wait_notification("notifications/tools/list_changed", 2)
        await a.wait_notification("notifications/resources/list_changed", 2)
        await b.wait_notification("notifications/prompts/list_changed", 2)
        listed = await a.request("resources/list")
        assert [r["uri"] for r in listed["resources"]] == ["x://two"]  # type: ignore[index,union-attr]


async def test_sessions_are_forgotten_when_closed(autojump_clock: trio.testing.MockClock) -> None:
    server = MCPServer("s")
    async with open_in_memory_client(server):
        assert len(server._sessions) == 1
    await trio.testing.wait_all_tasks_blocked()
    assert len(server._sessions) == 0

    async def late() -> None: ...

    server.add_tool(late)  # nobody to tell, nothing fails
