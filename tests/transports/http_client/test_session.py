"""A ``ClientSession`` over ``open_http_client_stream``: trimcp's server and the official SDK's."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from tests.http._client import running
from trimcp.client.session import ClientSessionOptions, open_client_session
from trimcp.protocol import Era
from trimcp.transports.http_client._client import open_http_client_stream

from .test_helpers import streaming_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SDK_SERVER = ROOT / "bench" / "servers" / "sdk_http_server.py"


async def test_a_session_survives_the_server_forgetting_it() -> None:
    handshake = ClientSessionOptions(protocol_version="2025-11-25")  # sessions are its own
    async with (
        running(streaming_server()) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(stream, options=handshake) as session,
    ):
        first = stream.session_id
        assert first is not None
        result = await session.call_tool("echo", {"text": "one"})
        assert result.raw["content"][0]["text"] == "one"
        assert await listener.manager.end_session(first, "expired for the test")
        with trio.fail_after(10):
            result = await session.call_tool("echo", {"text": "two"})
        assert result.raw["content"][0]["text"] == "two"
        assert stream.session_id not in (None, first)


async def test_progress_reaches_the_callback() -> None:
    seen: list[float] = []

    async def on_progress(progress: object) -> None:
        seen.append(progress.progress)  # type: ignore[attr-defined]

    async with (
        running(streaming_server()) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(stream) as session,
    ):
        result = await session.call_tool("progress", {"steps": 3}, on_progress=on_progress)
    assert result.raw["content"][0]["text"] == "3 steps"
    assert seen == [1, 2, 3]


@contextlib.asynccontextmanager
async def sdk_server(*flags: str) -> AsyncIterator[str]:
    """Run the official SDK's Streamable HTTP server in a subprocess; yield its URL."""
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SDK_SERVER), "--port", "0", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        with trio.fail_after(30):
            line = b""
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive_some(1)
                assert chunk, "the SDK server exited before printing its port"
                line += chunk
        port = int(line.split()[1])
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        await process.stdin.aclose()  # it exits when its stdin closes
        with trio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.stdout.aclose()


@pytest.mark.parametrize("flags", [(), ("--json-response",)])
@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_the_official_sdk_server(flags: tuple[str, ...], version: str | None) -> None:
    seen: list[object] = []

    async def on_progress(progress: object) -> None:
        seen.append(progress)

    options = ClientSessionOptions(protocol_version=version)
    async with (
        sdk_server(*flags) as url,
        open_http_client_stream(url) as stream,
        open_client_session(stream, options=options) as session,
    ):
        # Dual-era: the SDK's server speaks 2026-07-28 too, and has no session then.
        assert (stream.session_id is None) == (session.era is Era.MODERN)
        assert session.era is (Era.MODERN if version is None else Era.HANDSHAKE)
        tools = await session.list_tools()
        assert "echo" in [tool.name for tool in tools]
        result = await session.call_tool("echo", {"text": "interop"})
        assert result.raw["content"][0]["text"] == "interop"
        result = await session.call_tool("progress_flood", {"count": 5}, on_progress=on_progress)
        assert result.raw["content"][0]["text"] == "sent 5"
    assert len(seen) == (0 if flags else 5)
