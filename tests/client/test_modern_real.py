"""The dual-era client against trimcp's real everything server, over HTTP and stdio.

HTTP: ``examples/everything_server.py``'s server on 127.0.0.1 (in this process, a real
socket) spoken to in 2026-07-28 (``server/discover``, ``_meta``, multi round-trip tools,
``subscriptions/listen``, ``x-mcp-header`` mirrored, a cancelled call's stream closed),
and forced back to 2025-11-25's handshake. stdio: ``python examples/everything_server.py
--transport stdio`` launched as a process; dual-era opens it in whichever era it serves.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from tests.http._client import running
from trimcp.client import (
    ClientHandlers,
    ClientSessionOptions,
    ElicitRequest,
    ElicitResult,
    LogMessage,
    SamplingRequest,
    SamplingResult,
    open_client_session,
    open_http_client_stream,
)
from trimcp.client.process import ProcessSpec, open_server_process
from trimcp.client.session import EraCache
from trimcp.errors import RequestTimeout
from trimcp.protocol import Era, Root

if TYPE_CHECKING:
    from types import ModuleType

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "everything_server.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("everything_server_for_modern", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


EVERYTHING = load_example()


async def elicit(request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada", "color": "green", "ok": True})


async def sample(request: SamplingRequest) -> SamplingResult:
    return SamplingResult(content={"type": "text", "text": "Paris"}, model="test-model")


def handlers(**callbacks: Any) -> ClientHandlers:
    return ClientHandlers(
        elicitation=elicit, sampling=sample, roots=[Root(uri="file:///work")], **callbacks
    )


async def test_http_speaks_2026_07_28_end_to_end() -> None:
    logs: list[LogMessage] = []
    updated: list[str] = []
    got_update = trio.Event()

    def on_updated(uri: str) -> None:
        updated.append(uri)
        got_update.set()

    callbacks = handlers(on_log=logs.append, on_resource_updated=on_updated)
    options = ClientSessionOptions(era_cache=EraCache())
    async with (
        running(EVERYTHING.build_server()) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(stream, handlers=callbacks, options=options) as session,
    ):
        assert session.era is Era.MODERN
        assert stream.session_id is None  # no session in this era
        assert session.server_info.name == "trimcp-everything"
        tools = {tool.name for tool in await session.list_tools()}
        assert {"echo", "test_region_lookup", "test_input_required_result_multi_round"} <= tools
        assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"
        region = await session.call_tool("test_region_lookup", {"region": "Zürich"})
        assert region.text == "everything in Zürich"  # Mcp-Param-Region matched the body
        multi = await session.call_tool("test_input_required_result_multi_round")
        assert "Ada" in multi.text
        assert "green" in multi.text
        batched = await session.call_tool("test_input_required_result_multiple_inputs")
        assert "Paris" in batched.text
        prompt = await session.get_prompt("test_input_required_result_prompt")
        assert "Ada" in str(prompt.messages)
        await session.call_tool("test_logging_tool")
        assert any("Diagnostic" in str(log.data) for log in logs)
        await session.subscribe_resource("test://watched-resource")
        await session.call_tool("update_watched_resource")
        with trio.fail_after(10):
            await got_update.wait()
        assert updated == ["test://watched-resource"]


async def test_http_list_changes_reach_the_callback() -> None:
    changed = trio.Event()
    options = ClientSessionOptions(era_cache=EraCache())
    async with (
        running(EVERYTHING.build_server()) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(
            stream, handlers=ClientHandlers(on_tools_changed=changed.set), options=options
        ) as session,
    ):
        await session.list_tools()
        assert session.listener is not None
        with trio.fail_after(10):
            await session.listener.wait_listening()
        assert session.listener.current_id is not None
        await session.call_tool("test_trigger_tool_change")
        with trio.fail_after(10):
            await changed.wait()


async def test_http_a_timed_out_call_is_cancelled_and_the_session_goes_on() -> None:
    options = ClientSessionOptions(era_cache=EraCache(), listen=False)
    async with (
        running(EVERYTHING.build_server()) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(stream, options=options) as session,
    ):
        with pytest.raises(RequestTimeout):
            await session.call_tool("sleep", {"seconds": 30}, timeout=0.3)
        assert (await session.call_tool("echo", {"text": "after"})).text == "after"
        assert stream.statistics().in_flight == 0


async def test_http_forced_back_to_the_handshake() -> None:
    options = ClientSessionOptions(protocol_version="2025-11-25", era_cache=EraCache())
    async with (
        running(EVERYTHING.build_server()) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(stream, handlers=handlers(), options=options) as session,
    ):
        assert session.era is Era.HANDSHAKE
        assert stream.session_id is not None
        multi = await session.call_tool("test_input_required_result_multi_round")
        assert "Ada" in multi.text  # asked by server requests this time


def stdio_spec() -> ProcessSpec:
    return ProcessSpec(
        name="everything",
        command=sys.executable,
        args=(str(EXAMPLE), "--transport", "stdio"),
        source="tests/client/test_modern_real.py",
    )


async def test_stdio_opens_in_whichever_era_the_server_serves() -> None:
    options = ClientSessionOptions(era_cache=EraCache(), discover_timeout=10.0)
    with trio.fail_after(60):
        async with (
            open_server_process(stdio_spec()) as process,
            open_client_session(process, handlers=handlers(), options=options) as session,
        ):
            assert session.server_info.name == "trimcp-everything"
            assert (await session.call_tool("echo", {"text": "piped"})).text == "piped"
            multi = await session.call_tool("test_input_required_result_multi_round")
            assert "Ada" in multi.text


async def test_stdio_speaks_2026_07_28() -> None:
    options = ClientSessionOptions(protocol_version="2026-07-28", era_cache=EraCache())
    with trio.fail_after(60):
        async with (
            open_server_process(stdio_spec()) as process,
            open_client_session(process, handlers=handlers(), options=options) as session,
        ):
            assert session.era is Era.MODERN
            multi = await session.call_tool("test_input_required_result_multi_round")
            assert "Ada" in multi.text
            with pytest.raises(RequestTimeout):
                await session.call_tool("sleep", {"seconds": 30}, timeout=0.3)
            assert (await session.call_tool("echo", {"text": "after"})).text == "after"
            assert math.isfinite(session.options.request_timeout)


# A 2025-11-25 server that ignores anything before initialize (as some do): the probe gets
# no answer at all, and the client falls back once its timeout has passed.
SILENT_LEGACY = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "silent-legacy", "version": "1"}}
    elif message.get("method") == "tools/list":
        result = {"tools": []}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


async def test_stdio_falls_back_from_a_silent_legacy_server() -> None:
    spec = ProcessSpec(
        name="silent-legacy",
        command=sys.executable,
        args=("-c", SILENT_LEGACY),
        source="tests/client/test_modern_real.py",
    )
    options = ClientSessionOptions(era_cache=EraCache(), discover_timeout=0.5)
    with trio.fail_after(30):
        async with (
            open_server_process(spec) as process,
            open_client_session(process, options=options) as session,
        ):
            assert session.era is Era.HANDSHAKE
            assert session.server_info.name == "silent-legacy"
            assert await session.list_tools() == []


async def test_http_slots_ignore_the_listen_stream_and_a_cancel_closes_the_response() -> None:
    from tests.transports.http_client.test_ordering import Log, holding_server

    log = Log()
    release = trio.Event()
    server = holding_server(log, release)

    options = ClientSessionOptions(era_cache=EraCache())
    async with (
        running(server) as listener,
        open_http_client_stream(listener.url, max_requests_in_flight=2) as stream,
        open_client_session(stream, options=options) as session,
        trio.open_nursery() as nursery,
    ):
        assert session.era is Era.MODERN
        assert session.listener is not None
        with trio.fail_after(5):
            await session.listener.wait_listening()  # a listen stream, open for good
        assert session.listener.current_id is not None
        scopes = {n: trio.CancelScope() for n in (1, 2, 3)}

        async def call(n: int) -> None:
            with scopes[n]:
                await session.call_tool("hold", {"n": n})

        nursery.start_soon(call, 1)
        nursery.start_soon(call, 2)
        await log.wait_for("start 1")
        await log.wait_for("start 2")  # both slots: the listen stream holds none
        nursery.start_soon(call, 3)
        await trio.testing.wait_all_tasks_blocked()
        assert stream.statistics().waiting == 1
        scopes[1].cancel()  # its response is closed: the server ends the call
        await log.wait_for("end 1")
        await log.wait_for("start 3")
        release.set()
        await log.wait_for("end 3")
        with trio.fail_after(5):
            assert (await session.call_tool("echo", {"text": "after"})).text == "after"


async def test_the_2024_11_05_sse_transport_goes_straight_to_initialize() -> None:
    from trimcp.client import open_legacy_sse_client_stream
    from trimcp.http import HttpOptions

    options = ClientSessionOptions(era_cache=EraCache(), discover_timeout=30.0)
    async with running(EVERYTHING.build_server(), HttpOptions(legacy_sse=True)) as listener:
        sse = listener.url.removesuffix("/mcp") + "/sse"
        with trio.fail_after(10):  # a probe would have waited discover_timeout
            async with (
                open_legacy_sse_client_stream(sse) as stream,
                open_client_session(stream, options=options) as session,
            ):
                assert session.era is Era.HANDSHAKE
                assert (await session.call_tool("echo", {"text": "old"})).text == "old"
