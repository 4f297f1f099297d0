"""The official MCP Python SDK's low-level ``Server`` (mcp 2.3.0) with an ``echo`` tool, on stdio.

Written the way the SDK's own docs show it: ``Server(name, on_list_tools=..., on_call_tool=...)``
run over ``mcp.server.stdio.stdio_server()`` with ``create_initialization_options()``, under
``anyio.run`` (asyncio backend, the SDK's default).
"""

from __future__ import annotations

import logging
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO_TOOL = types.Tool(
    name="echo",
    description="Return the text it is given.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


async def list_tools(
    ctx: object, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "echo":
        raise ValueError(f"unknown tool {params.name!r}")
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server(
    "sdk-lowlevel-echo", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    anyio.run(main)
