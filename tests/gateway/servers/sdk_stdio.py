"""An upstream written with the official MCP Python SDK (``mcp`` 2.3.0's ``MCPServer``), stdio.

For ``tests/gateway/test_interop.py``: the same tools as ``_trimcp_tools`` but on the SDK's
server runtime (anyio), so the gateway is checked against a server it did not write.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-stdio")


def touch(path: str) -> None:
    """Create the marker file ``path`` (tiny and local: fine to do synchronously)."""
    Path(path).touch()


@server.tool()
async def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool()
async def echo(text: str) -> str:
    """``text`` back, prefixed with this server's name."""
    return f"sdk-stdio: {text}"


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress ``1..steps`` of ``steps``, then say so."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.tool()
async def wait(marker: str) -> str:
    """Touch ``marker.started``, wait forever; touch ``marker.cancelled`` if cancelled."""
    touch(f"{marker}.started")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        touch(f"{marker}.cancelled")
        raise
    return "never"


@server.tool()
async def nap(seconds: float, marker: str) -> str:
    """Touch ``marker.started``, sleep ``seconds``, then say so."""
    touch(f"{marker}.started")
    await anyio.sleep(seconds)
    return f"slept {seconds:g} s"


if __name__ == "__main__":
    server.run("stdio")
