"""A tiny trimcp stdio server the gateway's real-process tests run as an upstream."""

from __future__ import annotations

import os

import trio

from trimcp.server import MCPServer

server = MCPServer("tiny")


@server.tool()
async def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool()
async def hang() -> str:
    """Never answers (until the process is killed)."""
    await trio.sleep_forever()
    return "never"


if __name__ == "__main__":
    server.run_stdio()
