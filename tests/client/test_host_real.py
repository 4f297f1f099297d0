"""The connection manager with the real connector: servers as processes and over WebSocket.

Real subprocesses (trimcp's everything server, a server that crashes mid-call, a server
written with the official ``mcp`` SDK) and a real WebSocket listener on 127.0.0.1.
"""

from __future__ import annotations

import functools
import sys
import textwrap
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.client._backoff import BackoffPolicy
from trimcp.client._manager import ConnectionManager
from trimcp.client._upstream import connect_upstream
from trimcp.config.mcp_servers._model import ServerConfig
from trimcp.errors import ConnectionLost, ServerExited
from trimcp.supervision import open_supervisor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ROOT = Path(__file__).resolve().parent.parent.parent
EVERYTHING = str(ROOT / "examples" / "everything_server.py")

pytestmark = pytest.mark.slow

CRASHY = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {root!r})
    from trimcp.server import MCPServer

    server = MCPServer("crashy", "1.0")

    @server.tool()
    async def crash() -> str:
        '''Exit the whole process in the middle of a call.'''
        sys.stderr.write("about to fail on purpose\\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    def ok() -> str:
        '''Answer normally.'''
        return "fine"

    server.run_stdio()
    """
)

SDK_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("sdk-server")

    @app.tool()
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

    app.run()
    """
)


def stdio(name: str, *args: str) -> ServerConfig:
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=args)


@pytest.fixture
def crashy(tmp_path: Path) -> str:
    path = tmp_path / "crashy.py"
    path.write_text(CRASHY.format(root=str(ROOT)))
    return str(path)


@asynccontextmanager
async def open_host(
    servers: dict[str, ServerConfig], backoff: BackoffPolicy | None = None
) -> AsyncIterator[ConnectionManager]:
    manager = ConnectionManager(
        connector=connect_upstream,
        name="test-host",
        backoff=backoff or BackoffPolicy(initial=0.05, maximum=0.2, intensity=5),
    )
    async with open_supervisor([manager.spec(servers)]):
        try:
            yield manager
        finally:
            with trio.CancelScope(shield=True):
                await manager.disconnect_all()


async def test_processes_and_websocket_side_by_side(tmp_path: Path) -> None:
    from examples.everything_server import build_server

    sdk = tmp_path / "sdk_server.py"
    sdk.write_text(SDK_SERVER)
    async with trio.open_nursery() as nursery:
        info = await nursery.start(functools.partial(build_server().serve_websocket, port=0))
        servers = {
            "everything": stdio("everything", EVERYTHING, "--transport", "stdio"),
            "sdk": stdio("sdk", str(sdk)),
            "ws": ServerConfig(name="ws", transport="websocket", url=info.url),
        }
        async with open_host(servers) as manager:
            with trio.fail_after(30):
                statuses = await manager.connect_all()
            assert [(s.name, s.state) for s in statuses] == [
                ("everything", "connected"),
                ("sdk", "connected"),
                ("ws", "connected"),
            ]
            names = {tool.qualified_name for tool in await manager.all_tools()}
            assert {"mcp__sdk__add", "mcp__everything__echo", "mcp__ws__echo"} <= names
            added = await manager.call_tool("mcp__sdk__add", {"a": 2, "b": 3})
            assert added["content"][0]["text"] == "5"
            echoed = await manager.call_tool("mcp__ws__echo", {"text": "over ws"})
            assert echoed["content"][0]["text"] == "over ws"
            assert await manager.all_resources()
            assert await manager.all_prompts()
        nursery.cancel_scope.cancel()


async def test_a_server_that_crashes_mid_call(crashy: str) -> None:
    servers = {
        "crashy": stdio("crashy", crashy),
        "steady": stdio("steady", EVERYTHING, "--transport", "stdio"),
    }
    async with open_host(servers) as manager:
        with trio.fail_after(30):
            await manager.connect_all()
        began = trio.current_time()
        with pytest.raises(ConnectionLost) as lost:
            await manager.call_tool("mcp__crashy__crash", {})
        assert trio.current_time() - began < 1.5
        cause = lost.value.__cause__
        assert isinstance(cause, ServerExited)
        assert cause.returncode == 3
        assert "about to fail on purpose" in str(lost.value)
        # The other server never noticed.
        steady = await manager.call_tool("mcp__steady__echo", {"text": "still here"})
        assert steady["content"][0]["text"] == "still here"
        # The crashed one comes back, with its tools.
        status = await manager.wait_connected("crashy", timeout=20)
        assert status.connected
        assert status.restarts >= 1
        assert status.tools == 2
        assert (await manager.call_tool("mcp__crashy__ok", {}))["content"][0]["text"] == "fine"


async def test_a_missing_command_is_explained(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\nexit 0\n")  # not marked executable
    servers = {
        "ghost": ServerConfig(name="ghost", transport="stdio", command="no-such-mcp-server"),
        "noexec": ServerConfig(name="noexec", transport="stdio", command=str(script)),
    }
    # Retries are allowed, but a launch error no retry can cure is final on the first attempt.
    async with open_host(servers, BackoffPolicy(initial=0.05, intensity=5)) as manager:
        ghost, noexec = await manager.connect_all()
        assert (ghost.state, ghost.restarts) == ("failed", 0)
        assert 'command "no-such-mcp-server" was not found' in (ghost.last_error or "")
        assert "how to fix" in (ghost.last_error or "")
        assert (noexec.state, noexec.restarts) == ("failed", 0)
        assert f"permission denied running {script}" in (noexec.last_error or "")


async def test_streamable_http_and_the_legacy_fallback() -> None:
    from examples.everything_server import build_server
    from trimcp.http import HttpOptions

    async with trio.open_nursery() as nursery:
        listener = await nursery.start(
            functools.partial(build_server().serve_http, options=HttpOptions(legacy_sse=True))
        )
        base = listener.url.rsplit("/", 1)[0]
        servers = {
            "http": ServerConfig(name="http", transport="http", url=listener.url),
            # /sse answers a POST with 405: the connector falls back to HTTP+SSE (2024-11-05).
            "old": ServerConfig(name="old", transport="http", url=f"{base}/sse"),
        }
        async with open_host(servers) as manager:
            with trio.fail_after(30):
                statuses = await manager.connect_all()
            assert [(s.name, s.state) for s in statuses] == [
                ("http", "connected"),
                ("old", "connected"),
            ], [s.last_error for s in statuses]
            for server in ("http", "old"):
                answer = await manager.call_tool(f"mcp__{server}__echo", {"text": server})
                assert answer["content"][0]["text"] == server
        nursery.cancel_scope.cancel()


async def test_a_server_that_never_answers_initialize_is_explained() -> None:
    silent = ServerConfig(
        name="silent",
        transport="stdio",
        command=sys.executable,
        args=("-c", "import time; time.sleep(60)"),
        startup_timeout=0.5,
    )
    async with open_host({"silent": silent}, BackoffPolicy(initial=0.05, intensity=0)) as manager:
        status = await manager.connect("silent")
        assert status.state == "failed"
        problem = status.last_error or ""
        assert "did not finish opening the MCP session" in problem
        assert "(server/discover, or the initialize handshake) within 0.5 s" in problem
        assert "raise startup_timeout" in problem
