"""The official MCP Python SDK (mcp 2.3.0) over Streamable HTTP, with the bench's tools.

The low-level ``Server`` (as in ``sdk_lowlevel.py``) and its own
``server.streamable_http_app()`` (a Starlette app around ``StreamableHTTPSessionManager``,
stateful sessions, SSE answers unless ``--json-response``), run under uvicorn the way the
SDK's ``run_streamable_http_async`` runs it (uvicorn's defaults: the asyncio loop and h11
here, as neither uvloop nor httptools is installed), except that the access log is off and
the log level is ``warning``, so logging to the terminal is not what gets measured.

Tools, the same as in ``trimcp_http_server.py``: ``echo`` ``{"text": str}``;
``progress_flood`` ``{"count": int}`` (that many ``notifications/progress`` as fast as it
can, when the call carries a progress token); ``bench_memory`` (JSON text ``{"traced",
"peak", "rss", "sessions"}`` after a ``gc.collect()``; ``traced`` is 0 unless tracemalloc
runs, e.g. under ``PYTHONTRACEMALLOC=1``).

``--port 0`` (the default) binds a free port on 127.0.0.1; the bound port is printed as
``PORT <n>`` on stdout once uvicorn has started. The server exits when its stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

# Appended, not prepended: the benches run servers with -P (no script folder on sys.path).
sys.path.append(str(Path(__file__).resolve().parent))
from _uvicorn import serve_until_stdin_closes

TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
COUNT_SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
}
TOOLS = [
    types.Tool(name="echo", description="Return the text it is given.", input_schema=TEXT_SCHEMA),
    types.Tool(
        name="progress_flood",
        description="Send count progress notifications as fast as possible, then answer.",
        input_schema=COUNT_SCHEMA,
    ),
    types.Tool(
        name="bench_memory",
        description="Report traced and resident memory and the number of live sessions.",
        input_schema={"type": "object", "properties": {}},
    ),
]


def rss_bytes() -> int:
    """Return this process's resident set size (VmRSS) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def list_tools(
    ctx: object, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:  # noqa: ANN401 - the SDK's generic request context
    arguments = params.arguments or {}
    if params.name == "echo":
        return text_result(str(arguments.get("text", "")))
    if params.name == "progress_flood":
        count = int(arguments.get("count", 0))
        for done in range(1, count + 1):
            await ctx.session.report_progress(done, count)
        return text_result(f"sent {count}")
    if params.name == "bench_memory":
        gc.collect()
        traced, peak = tracemalloc.get_traced_memory() if tracemalloc.is_tracing() else (0, 0)
        # The SDK has no public session count; its manager's table is private.
        sessions = len(server._session_manager._server_instances)
        report = {"traced": traced, "peak": peak, "rss": rss_bytes(), "sessions": sessions}
        return text_result(json.dumps(report))
    raise ValueError(f"unknown tool {params.name!r}")


server = Server("sdk-http-bench", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(port: int, json_response: bool) -> None:
    app = server.streamable_http_app(json_response=json_response, host="127.0.0.1")
    await serve_until_stdin_closes(app, port)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(main(args.port, args.json_response))
