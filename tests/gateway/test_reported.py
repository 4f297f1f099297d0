"""What the gateway's work found in packages it does not own, kept as regression tests.

Both were reported as ``xfail(strict=True)`` tests and fixed where they belong: the sealer's
binding is exported (the gateway's parked calls bind their states with it), and a Context
kept past its 2026-07-28 request fails at once instead of hanging.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import trio

from trimcp.client import ClientHandlers, SamplingRequest, SamplingResult
from trimcp.errors import TrimcpError
from trimcp.server import Context, MCPServer
from trimcp.testing import open_client_pair

if TYPE_CHECKING:
    from trio.testing import MockClock


def test_trimcp_server_exports_what_a_sealer_needs() -> None:
    server = importlib.import_module("trimcp.server")
    assert hasattr(server, "StateBinding")
    assert hasattr(server, "params_digest")


async def test_a_context_kept_past_its_modern_request_fails_instead_of_hanging(
    autojump_clock: MockClock,
) -> None:
    server = MCPServer("keeper")
    kept: list[Context] = []

    @server.tool()
    async def keep(ctx: Context) -> str:
        """Keep the context for after the call."""
        kept.append(ctx)
        return "kept"

    async def sample(request: SamplingRequest) -> SamplingResult:
        return SamplingResult(content={"type": "text", "text": "x"}, model="m")

    async with open_client_pair(server, handlers=ClientHandlers(sampling=sample)) as client:
        assert (await client.call_tool("keep", {})).text == "kept"  # a 2026-07-28 call
        failed = False
        with trio.move_on_after(60) as waiting:
            try:
                await kept[0].sample("late", max_tokens=5)
            except TrimcpError:
                failed = True
    assert not waiting.cancelled_caught, "ctx.sample hung past its request"
    assert failed
