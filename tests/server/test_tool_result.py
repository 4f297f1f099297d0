"""``ToolResult``: a tool's own text beside its structured content."""

from __future__ import annotations

from typing import TypedDict

from trimcp.server import MCPServer, ToolResult
from trimcp.testing import open_in_memory_client


class Count(TypedDict):
    files: int


async def test_tool_result_sends_its_text_and_the_structured_value() -> None:
    server = MCPServer("t")

    @server.tool()
    def count() -> ToolResult[Count]:
        """Count."""
        return ToolResult("3 files", Count(files=3))

    @server.tool()
    def plain() -> ToolResult[None]:
        """No shape."""
        return ToolResult(["a", "b"], None)

    async with open_in_memory_client(server) as client:
        listed = await client.request("tools/list")
        tools = {tool["name"]: tool for tool in listed["tools"]}
        assert tools["count"]["outputSchema"]["properties"] == {"files": {"type": "integer"}}
        assert "outputSchema" not in tools["plain"]
        result = await client.request("tools/call", {"name": "count", "arguments": {}})
        assert result["content"] == [{"type": "text", "text": "3 files"}]
        assert result["structuredContent"] == {"files": 3}
        result = await client.request("tools/call", {"name": "plain", "arguments": {}})
        assert [block["text"] for block in result["content"]] == ["a", "b"]
        assert "structuredContent" not in result


async def test_tool_result_with_a_value_not_of_its_shape_is_an_error() -> None:
    server = MCPServer("t")

    @server.tool()
    def bad() -> ToolResult[Count]:
        """Wrong shape."""
        return ToolResult("x", {"files": "many"})  # type: ignore[typeddict-item]

    async with open_in_memory_client(server) as client:
        result = await client.request("tools/call", {"name": "bad", "arguments": {}})
        assert result["isError"] is True
