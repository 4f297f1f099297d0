"""The tools both trimcp upstreams of ``tests/gateway/test_interop.py`` offer.

``build(name)`` returns an ``MCPServer`` with the same tools whatever its transport, so the
test can drive each upstream through the gateway the same way. Markers are files whose path
the test passes as an argument: an upstream launched by the gateway sees only a few
environment variables, and a file is how a test knows, without guessing at timings, that a
call has started upstream or that its cancel scope fired there.
"""

from __future__ import annotations

import os
from pathlib import Path

import trio

from trimcp.errors import ClientCapabilityMissing
from trimcp.server import Context, MCPServer


def touch(path: str) -> None:
    """Create the marker file ``path`` (tiny and local: fine to do synchronously)."""
    Path(path).touch()


def build(name: str) -> MCPServer:
    """An ``MCPServer`` called ``name`` with the test's tools."""
    server = MCPServer(name)

    @server.tool()
    async def pid() -> int:
        """This process's id (the test kills it, or checks that it is gone)."""
        return os.getpid()

    @server.tool()
    async def echo(text: str) -> str:
        """``text`` back, prefixed with this server's name."""
        return f"{name}: {text}"

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
            await trio.sleep_forever()
        except trio.Cancelled:
            touch(f"{marker}.cancelled")
            raise
        return "never"

    @server.tool()
    async def nap(seconds: float, marker: str) -> str:
        """Touch ``marker.started``, sleep ``seconds``, then say so."""
        touch(f"{marker}.started")
        await trio.sleep(seconds)
        return f"slept {seconds:g} s"

    _add_asking_tools(server)
    return server


def _add_asking_tools(server: MCPServer) -> None:
    """The tools that ask the client: sampling and elicitation, relayed by the gateway."""

    @server.tool()
    async def ask(prompt: str, ctx: Context) -> str:
        """Ask the client's model (``sampling/createMessage``) and return its answer.

        Without the ``sampling`` capability (the gateway does not relay it) the answer says
        ``NO_SAMPLING`` so the test can tell that apart from a broken relay.
        """
        try:
            result = await ctx.sample(prompt, max_tokens=50)
        except ClientCapabilityMissing as exc:
            return f"NO_SAMPLING: {exc}"
        return f"model said: {result.text}"

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name (``elicitation/create``, form mode) and greet them."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("What is your name?", schema, key="name")
        if answer.action != "accept":
            return f"no name ({answer.action})"
        return f"hello {(answer.content or {}).get('name')}"
