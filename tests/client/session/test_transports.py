"""``ClientSession`` over real transports: stdio processes and WebSocket on 127.0.0.1:0.

Servers: trimcp's everything server (stdio and WebSocket), a server written with the
official ``mcp`` SDK (stdio, interop), and a server that crashes in the middle of a call.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.client.process._launch import ProcessSpec
from trimcp.client.process._process import open_server_process
from trimcp.client.session import open_client_session
from trimcp.errors import ConnectionLost, ServerExited
from trimcp.transports import open_websocket_stream

from .test_everything import EVERYTHING as EVERYTHING_MODULE

if TYPE_CHECKING:
    from trimcp.client.session._session import ClientSession

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
EVERYTHING = str(ROOT / "examples" / "everything_server.py")


def spec(*args: str, name: str = "test") -> ProcessSpec:
    return ProcessSpec(name=name, command=sys.executable, args=args, cwd=str(ROOT))


async def exercise(session: ClientSession) -> None:
    tools = {tool.name for tool in await session.list_tools()}
    assert {"echo", "add", "sleep"} <= tools
    assert (await session.call_tool("echo", {"text": "over the wire"})).text == "over the wire"
    assert (await session.call_tool("add", {"a": 40, "b": 2})).structured_content == {"sum": 42}
    assert await session.list_prompts()
    await session.ping()


async def test_everything_server_over_stdio() -> None:
    with trio.fail_after(20):
        async with (
            open_server_process(spec(EVERYTHING, "--transport", "stdio")) as process,
            open_client_session(process) as session,
        ):
            await exercise(session)


async def test_everything_server_over_websocket() -> None:
    server = EVERYTHING_MODULE.build_server()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            info = await nursery.start(server.serve_websocket)
            async with (
                open_websocket_stream(info.url) as stream,
                open_client_session(stream) as session,
            ):
                await exercise(session)
            nursery.cancel_scope.cancel()


OFFICIAL_SERVER = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("official-sdk-server")


@app.tool()
def multiply(a: int, b: int) -> int:
    \"\"\"Multiply two integers.\"\"\"
    return a * b


@app.prompt()
def greet(name: str) -> str:
    \"\"\"Greet someone.\"\"\"
    return f"Hello, {name}!"


app.run()
"""


async def test_official_sdk_server_over_stdio(tmp_path: Path) -> None:
    script = tmp_path / "official_server.py"
    script.write_text(OFFICIAL_SERVER)
    with trio.fail_after(30):
        async with (
            open_server_process(spec(str(script), name="official")) as process,
            open_client_session(process) as session,
        ):
            assert session.server_info.name == "official-sdk-server"
            tools = await session.list_tools()
            assert [tool.name for tool in tools] == ["multiply"]
            result = await session.call_tool("multiply", {"a": 6, "b": 7})
            assert not result.is_error
            assert "42" in result.text
            prompt = await session.get_prompt("greet", {"name": "trimcp"})
            assert "Hello, trimcp!" in str(prompt.messages[0].content)
            assert await session.list_resources() == []


CRASHING_SERVER = """
import json, sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "crasher", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif message.get("method") == "tools/call":
        print("about to crash in the middle of a call", file=sys.stderr, flush=True)
        sys.exit(3)
"""


async def test_server_crashing_mid_call_fails_the_call_fast(tmp_path: Path) -> None:
    script = tmp_path / "crasher.py"
    script.write_text(textwrap.dedent(CRASHING_SERVER))
    with trio.fail_after(20):
        async with (
            open_server_process(spec(str(script), name="crasher")) as process,
            open_client_session(process) as session,
        ):
            start = trio.current_time()
            with pytest.raises(ConnectionLost) as info:
                await session.call_tool("anything", {})
            assert trio.current_time() - start < 1.5
            cause = info.value.__cause__
            assert isinstance(cause, ServerExited)
            assert cause.returncode == 3
            assert "about to crash" in str(info.value)
            assert isinstance(await session.wait_closed(), ServerExited)
