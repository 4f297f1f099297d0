"""An answer reaches its caller only after the notifications that came before it were handled.

The session hands notifications to its hooks in a task of its own and answers to callers at
once; without an order between the two, a tool's last log line could be shown after its
result (or lost when the host disconnects right after). In memory, with hooks that take
their time (they yield to the scheduler many times before recording).
"""

from __future__ import annotations

import trio

from trimcp.client import ClientHandlers, LogMessage
from trimcp.server import Context, MCPServer
from trimcp.testing import open_client_pair


def _server() -> MCPServer:
    server = MCPServer("chatty")

    @server.tool()
    async def chatty(count: int, ctx: Context) -> str:
        """Log ``count`` lines, then answer."""
        for index in range(count):
            await ctx.log("info", f"line {index}")
        return "done"

    @server.tool()
    def quiet() -> str:
        """Answer at once."""
        return "quiet"

    return server


async def _slowly() -> None:
    for _ in range(20):
        await trio.lowlevel.checkpoint()


async def test_every_log_line_is_handled_before_the_result() -> None:
    seen: list[str] = []

    async def on_log(message: LogMessage) -> None:
        await _slowly()
        seen.append(str(message.data))

    async with open_client_pair(_server(), handlers=ClientHandlers(on_log=on_log)) as client:
        await client.set_logging_level("debug")
        for count in (1, 5, 30):
            seen.clear()
            result = await client.call_tool("chatty", {"count": count})
            assert result.text == "done"
            assert seen == [f"line {index}" for index in range(count)]
        seen.clear()
        assert (await client.call_tool("quiet", {})).text == "quiet"
        assert seen == []


async def test_a_hook_that_makes_a_request_does_not_wait_for_itself() -> None:
    answers: list[str] = []
    holder: list[object] = []

    async def on_log(message: LogMessage) -> None:
        client = holder[0]
        result = await client.call_tool("quiet", {})  # type: ignore[attr-defined]
        answers.append(f"{message.data}:{result.text}")

    async with open_client_pair(_server(), handlers=ClientHandlers(on_log=on_log)) as client:
        holder.append(client)
        await client.set_logging_level("debug")
        with trio.fail_after(5):
            assert (await client.call_tool("chatty", {"count": 2})).text == "done"
        assert answers == ["line 0:quiet", "line 1:quiet"]
