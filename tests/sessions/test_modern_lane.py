"""MCP 2026-07-28 on a session's stream (stdio, WebSocket): the ModernLane beside the handshake.

The server runs as ``serve_stdio`` runs it, over an in-memory stream whose input the test
can end on its own (as a client closes stdin), and once as a real subprocess. Everything is
in one trio run and nothing waits on the wall clock: "nothing more was written" is checked
once every task is blocked (``wait_all_tasks_blocked``), with nothing left unread.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from tests.modern_requests import Probe
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE
from trimcp.server import Context, MCPServer
from trimcp.sessions import serve_stdio
from trimcp.sessions._context import MAX_DROPPED_NOTICES, MAX_QUEUED_NOTICES
from trimcp.transports import MemoryMessageStream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
ROOT = Path(__file__).resolve().parents[2]


def build_server(probe: Probe | None = None) -> MCPServer:
    server = MCPServer("lane-test", "1.0")
    held = probe or Probe()

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    async def hold(ctx: Context) -> str:
        """Report progress, then wait until released or cancelled."""
        await ctx.report_progress(1, None, "holding")
        held.started.set()
        try:
            await held.release.wait()
        finally:
            held.ended.set()
        return "released"

    @server.resource("file:///notes/{name}")
    def note(name: str) -> str:
        return f"note {name}"

    return server


def request(
    request_id: int | str, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    """A 2026-07-28 request: ``params`` plus ``_meta`` (the version, no capabilities)."""
    wire_meta = {VERSION_KEY: MODERN, CAPABILITIES_KEY: {}, **meta}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": wire_meta},
    }


def call(
    request_id: int | str, name: str, arguments: dict[str, Any], **meta: Any
) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments}, **meta)


def cancel(request_id: int | str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "the user gave up"},
    }


def listen(request_id: int | str, **notifications: Any) -> dict[str, Any]:
    return request(request_id, "subscriptions/listen", {"notifications": notifications})


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "lane-test-client", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@dataclass
class Stdio:
    """The client's end of a stdio-like stream whose input it can end on its own."""

    to_server: trio.MemorySendChannel[bytes]
    from_server: trio.MemoryReceiveChannel[bytes]
    ended: trio.Event

    async def send(self, message: object) -> None:
        await self.to_server.send(orjson.dumps(message))

    async def receive(self) -> dict[str, Any]:
        with trio.fail_after(5):
            message = orjson.loads(await self.from_server.receive())
        assert isinstance(message, dict)
        return message

    async def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request; return its response (no other message may come first)."""
        await self.send(message)
        got = await self.receive()
        assert got.get("id") == message["id"], got
        return got

    async def nothing_more(self) -> None:
        """Once every task waits, nothing is left unread."""
        await wait_all_tasks_blocked()
        with pytest.raises(trio.WouldBlock):
            self.from_server.receive_nowait()

    def close_input(self) -> None:
        """End the server's input (a client closing stdin); its output stays readable."""
        self.to_server.close()


@contextlib.asynccontextmanager
async def serving(server: MCPServer, *, capacity: float = math.inf) -> AsyncIterator[Stdio]:
    """Run ``serve_stdio(server)`` over an in-memory stream for the block."""
    to_server, server_input = trio.open_memory_channel[bytes](capacity)
    server_output, from_server = trio.open_memory_channel[bytes](capacity)
    stream = MemoryMessageStream(server_output, server_input, DEFAULT_MAX_MESSAGE_SIZE)
    ended = trio.Event()

    async def serve() -> None:
        await serve_stdio(server, options=server.session_options, stream=stream)
        ended.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve)
        yield Stdio(to_server, from_server, ended)
        nursery.cancel_scope.cancel()


def _members(server: MCPServer) -> int:
    # The broadcast set: the stdio session itself and its listen streams.
    return len(server._sessions)


def text_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


# --- the era of each message ---------------------------------------------------------------


async def test_discover_comes_before_any_initialize() -> None:
    async with serving(build_server()) as stdio:
        answer = await stdio.answer(request(1, "server/discover"))
        result = answer["result"]
        assert result["supportedVersions"][0] == MODERN
        assert result["resultType"] == "complete"
        assert result["cacheScope"] == "public"
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "lane-test"
        listed = await stdio.answer(request(2, "tools/list"))
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["echo", "hold"]
        await stdio.nothing_more()


async def test_server_discover_needs_no_meta_to_be_modern_but_is_refused_without_it() -> None:
    bare = {"jsonrpc": "2.0", "id": 3, "method": "server/discover"}
    async with serving(build_server()) as stdio:
        answer = await stdio.answer(bare)
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"] == {"missing": "_meta"}


async def test_modern_requests_and_a_handshake_session_share_one_stream() -> None:
    probe = Probe()
    async with serving(build_server(probe)) as stdio:
        # A modern call in flight across the handshake.
        await stdio.send(call("m1", "hold", {}, progressToken="p"))
        progress = await stdio.receive()
        assert progress["params"]["progressToken"] == "p"
        initialized = await stdio.answer(INITIALIZE)
        assert initialized["result"]["protocolVersion"] == "2025-11-25"
        await stdio.send(INITIALIZED)
        legacy_call = {
            "jsonrpc": "2.0",
            "id": "l1",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "old"}},
        }
        legacy = await stdio.answer(legacy_call)
        assert text_of(legacy) == "old"
        assert "resultType" not in legacy["result"]  # the handshake era's shape
        modern = await stdio.answer(call("m2", "echo", {"text": "new"}))
        assert text_of(modern) == "new"
        assert modern["result"]["resultType"] == "complete"
        pong = await stdio.answer({"jsonrpc": "2.0", "id": "l2", "method": "ping"})
        assert pong["result"] == {}
        # ping with a modern _meta is the modern era's: removed there.
        removed = await stdio.answer(request("m3", "ping"))
        assert removed["error"]["code"] == -32601
        probe.release.set()
        held = await stdio.receive()
        assert held["id"] == "m1"
        assert text_of(held) == "released"
        await stdio.nothing_more()


# --- refusals --------------------------------------------------------------------------------


def _without(member: str) -> dict[str, Any]:
    body = request(7, "tools/list")
    del body["params"]["_meta"][member]
    return body


@pytest.mark.parametrize(
    ("body", "code", "data"),
    [
        (_without(CAPABILITIES_KEY), -32602, {"missing": CAPABILITIES_KEY}),
        (
            request(7, "tools/list", **{VERSION_KEY: "2099-01-01"}),
            -32022,
            {
                "supported": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                "requested": "2099-01-01",
            },
        ),
        (
            request(7, "tools/list", **{VERSION_KEY: 20260728}),
            -32602,
            {"missing": VERSION_KEY},
        ),
        (
            {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": [1]},
            -32602,
            {"param": "params"},
        ),
        (
            request(7, "tools/list", **{"io.modelcontextprotocol/logLevel": ["info"]}),
            -32602,
            {"invalid": "io.modelcontextprotocol/logLevel"},
        ),
    ],
    ids=["no capabilities", "unsupported version", "version not a string", "params", "level"],
)
async def test_a_refusal_is_written_with_the_requests_id(
    body: dict[str, Any], code: int, data: object
) -> None:
    async with serving(build_server()) as stdio:
        answer = await stdio.answer(body)
        assert answer["error"]["code"] == code
        assert answer["error"]["data"] == data
        # The stream goes on.
        assert text_of(await stdio.answer(call(8, "echo", {"text": "on"}))) == "on"


async def test_a_duplicate_id_in_flight_is_refused_and_the_first_goes_on() -> None:
    probe = Probe()
    async with serving(build_server(probe)) as stdio:
        await stdio.send(call(5, "hold", {}, progressToken="p"))
        await stdio.receive()  # its progress
        duplicate = await stdio.answer(call(5, "echo", {"text": "again"}))
        assert duplicate["error"]["code"] == -32600
        assert "already in use" in duplicate["error"]["message"]
        assert not probe.ended.is_set()
        probe.release.set()
        first = await stdio.receive()
        assert first["id"] == 5
        assert text_of(first) == "released"
        # Its id is free again.
        assert text_of(await stdio.answer(call(5, "echo", {"text": "reused"}))) == "reused"


# --- cancellation ----------------------------------------------------------------------------


async def test_notifications_cancelled_cancels_a_modern_request() -> None:
    probe = Probe()
    async with serving(build_server(probe)) as stdio:
        await stdio.send(call(1, "hold", {}, progressToken="p"))
        assert (await stdio.receive())["method"] == "notifications/progress"
        await stdio.send(cancel(1))
        with trio.fail_after(5):
            await probe.ended.wait()  # the handler's finally ran
        assert not probe.release.is_set()
        await stdio.nothing_more()  # no answer for a cancelled request
        # The id may be used again, and the stream goes on.
        assert text_of(await stdio.answer(call(1, "echo", {"text": "next"}))) == "next"


async def test_a_cancellation_of_nothing_in_flight_changes_nothing() -> None:
    probe = Probe()
    async with serving(build_server(probe)) as stdio:
        await stdio.send(call(1, "hold", {}, progressToken="p"))
        await stdio.receive()
        for stray in (
            cancel(2),  # not in flight
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": True}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1.0}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled"},
        ):
            await stdio.send(stray)
        await stdio.nothing_more()
        assert not probe.ended.is_set()
        probe.release.set()
        assert text_of(await stdio.receive()) == "released"


async def test_a_batch_naming_notifications_cancelled_does_not_break_the_session() -> None:
    probe = Probe()
    async with serving(build_server(probe)) as stdio:
        await stdio.send(call(1, "hold", {}, progressToken="p"))
        await stdio.receive()
        # Valid JSON, not an object, containing the marker the lane looks for.
        await stdio.send(["notifications/cancelled", cancel(1)])
        refused = await stdio.receive()
        assert "error" in refused
        assert not probe.ended.is_set()
        assert text_of(await stdio.answer(call(2, "echo", {"text": "alive"}))) == "alive"
        probe.release.set()
        assert text_of(await stdio.receive()) == "released"


async def test_notifications_cancelled_ends_a_listen_stream() -> None:
    server = build_server()
    async with serving(server) as stdio:
        await stdio.send(listen("sub", toolsListChanged=True))
        ack = await stdio.receive()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        assert ack["params"]["_meta"] == {SUBSCRIPTION_KEY: "sub"}
        await wait_all_tasks_blocked()
        assert _members(server) == 2  # the stdio session and the listener
        server.add_tool(lambda: "x", "added")
        changed = await stdio.receive()
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"] == {SUBSCRIPTION_KEY: "sub"}
        await stdio.send(cancel("sub"))
        await stdio.nothing_more()  # no answer to a cancelled listen
        assert _members(server) == 1
        server.add_tool(lambda: "y", "ignored")  # reaches nobody on this stream
        await stdio.nothing_more()
        assert text_of(await stdio.answer(call(3, "echo", {"text": "still"}))) == "still"


# --- the end of input ------------------------------------------------------------------------


async def test_closing_input_finishes_requests_in_flight_and_ends_listen_streams() -> None:
    probe = Probe()
    server = build_server(probe)
    async with serving(server) as stdio:
        await stdio.send(listen("sub", toolsListChanged=True))
        assert (await stdio.receive())["method"] == "notifications/subscriptions/acknowledged"
        await stdio.send(call("work", "hold", {}, progressToken="p"))
        assert (await stdio.receive())["method"] == "notifications/progress"
        stdio.close_input()
        await wait_all_tasks_blocked()
        assert _members(server) == 1  # the listen stream ended at once
        assert not stdio.ended.is_set()  # the call in flight holds the session open
        assert not probe.ended.is_set()
        probe.release.set()
        answer = await stdio.receive()
        assert answer["id"] == "work"
        assert text_of(answer) == "released"
        with trio.fail_after(5):
            await stdio.ended.wait()
        assert _members(server) == 0
        with pytest.raises(trio.EndOfChannel):  # nothing else, not even for the listen
            await stdio.from_server.receive()


async def test_a_modern_only_client_is_not_timed_out_for_skipping_initialize(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # 2026-07-28 has no initialize: the handshake's initialization timeout must not close
    # a session that is served per request.
    async with serving(build_server()) as stdio:
        await stdio.answer(request(1, "server/discover"))
        await trio.sleep(120)
        assert not stdio.ended.is_set()
        assert text_of(await stdio.answer(call(2, "echo", {"text": "later"}))) == "later"


# --- subscriptions ---------------------------------------------------------------------------


class _Tapped:
    """A server-side stream that runs ``on_write`` as each message leaves (synchronously)."""

    def __init__(self, stream: MemoryMessageStream, on_write: Any) -> None:
        self._stream = stream
        self._on_write = on_write

    async def receive_message(self) -> bytes:
        return await self._stream.receive_message()

    def receive_ready(self) -> list[Any]:
        return self._stream.receive_ready()

    async def send_message(self, data: bytes) -> None:
        self._on_write(data)
        await self._stream.send_message(data)

    async def send_messages(self, messages: list[bytes]) -> None:
        for message in messages:
            await self.send_message(message)

    async def aclose(self) -> None:
        await self._stream.aclose()


async def test_a_change_right_after_the_acknowledgement_is_delivered() -> None:
    # Once acknowledged, a subscription is established (Subscriptions > Acknowledgment):
    # a change made the moment the acknowledgement leaves must still reach it.
    server = build_server()
    to_server, server_input = trio.open_memory_channel[bytes](math.inf)
    server_output, from_server = trio.open_memory_channel[bytes](math.inf)
    stream = MemoryMessageStream(server_output, server_input, DEFAULT_MAX_MESSAGE_SIZE)

    def on_write(data: bytes) -> None:
        if b"notifications/subscriptions/acknowledged" in data:
            server.add_tool(lambda: "x", "added")

    stdio = Stdio(to_server, from_server, trio.Event())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            functools.partial(
                serve_stdio,
                server,
                options=server.session_options,
                stream=_Tapped(stream, on_write),
            )
        )
        await stdio.send(listen(1, toolsListChanged=True))
        assert (await stdio.receive())["method"] == "notifications/subscriptions/acknowledged"
        await wait_all_tasks_blocked()
        changed = from_server.receive_nowait()  # WouldBlock: the change was lost
        assert orjson.loads(changed)["method"] == "notifications/tools/list_changed"
        nursery.cancel_scope.cancel()


async def test_resource_subscriptions_get_updates_for_their_uris_only() -> None:
    server = build_server()
    async with serving(server) as stdio:
        await stdio.send(listen(1, resourceSubscriptions=["file:///notes/a"]))
        ack = await stdio.receive()
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["file:///notes/a"]}
        await wait_all_tasks_blocked()
        assert set(server.subscribed_uris()) == {"file:///notes/a"}
        await server.notify_resource_updated("file:///notes/b")
        await server.notify_resource_updated("file:///notes/a")
        updated = await stdio.receive()
        assert updated["params"] == {"uri": "file:///notes/a", "_meta": {SUBSCRIPTION_KEY: 1}}
        await stdio.nothing_more()
        await stdio.send(cancel(1))
        await wait_all_tasks_blocked()
        assert not server.subscribed_uris()


async def test_a_listen_stream_that_falls_behind_is_torn_down_with_notifications_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The client stops reading: the session's output fills, the listen stream's queue
    # fills, and past the slow-consumer bound the server gives the subscription up. On
    # stdio its teardown is a notifications/cancelled naming it (Cancellation: MUST), sent
    # once the output moves again (a write in progress is never cut in half).
    server = build_server()
    uri = "file:///notes/n"

    def abandoned() -> bool:
        return any("does not read its notifications" in r.getMessage() for r in caplog.records)

    async with serving(server, capacity=8) as stdio:
        await stdio.send(listen("sub", resourceSubscriptions=[uri]))
        await wait_all_tasks_blocked()
        assert _members(server) == 2
        sent = 0
        bound = MAX_QUEUED_NOTICES + MAX_DROPPED_NOTICES
        while not abandoned():
            assert sent < 10 * bound, "the listen stream was never given up"
            await server.notify_resource_updated(uri)
            await trio.lowlevel.checkpoint()
            sent += 1
        assert sent >= bound
        # Now read: the updates that got through, then the teardown, and no listen result.
        seen: list[dict[str, Any]] = []
        while not (seen and seen[-1].get("method") == "notifications/cancelled"):
            seen.append(await stdio.receive())
        assert seen[0]["method"] == "notifications/subscriptions/acknowledged"
        assert all(m["method"] == "notifications/resources/updated" for m in seen[1:-1])
        assert len(seen) - 2 < sent  # some were dropped
        assert seen[-1]["params"]["requestId"] == "sub"
        await stdio.nothing_more()
        assert _members(server) == 1
        # The session itself goes on.
        assert text_of(await stdio.answer(call(2, "echo", {"text": "fine"}))) == "fine"


# --- a real process --------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_everything_server_speaks_both_eras_over_real_stdio() -> None:
    command = [
        sys.executable,
        str(ROOT / "examples" / "everything_server.py"),
        "--transport",
        "stdio",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with trio.open_nursery() as nursery:
        process: trio.Process = await nursery.start(
            functools.partial(
                trio.run_process,
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                check=False,
            )
        )
        assert process.stdin is not None
        assert process.stdout is not None
        lines = _Lines(process.stdout)

        async def ask(message: dict[str, Any]) -> dict[str, Any]:
            assert process.stdin is not None
            await process.stdin.send_all(orjson.dumps(message) + b"\n")
            while True:
                got = await lines.next()
                if got.get("id") == message["id"]:
                    return got

        with trio.fail_after(30):
            discovered = await ask(request(1, "server/discover"))
            assert MODERN in discovered["result"]["supportedVersions"]
            echoed = await ask(call(2, "echo", {"text": "modern"}))
            assert text_of(echoed) == "modern"
            assert echoed["result"]["resultType"] == "complete"
            initialized = await ask(INITIALIZE)
            assert initialized["result"]["protocolVersion"] == "2025-11-25"
            await process.stdin.send_all(orjson.dumps(INITIALIZED) + b"\n")
            legacy = await ask(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "legacy"}},
                }
            )
            assert "legacy" in text_of(legacy)
            refused = await ask(request(4, "tools/list", **{VERSION_KEY: "2099-01-01"}))
            assert refused["error"]["code"] == -32022
            await process.stdin.aclose()  # end of input: the server exits
            assert await process.wait() == 0


@dataclass
class _Lines:
    """JSON-RPC messages read line by line from a byte stream."""

    stream: trio.abc.ReceiveStream
    buffer: bytearray = field(default_factory=bytearray)

    async def next(self) -> dict[str, Any]:
        while b"\n" not in self.buffer:
            chunk = await self.stream.receive_some(65536)
            assert chunk, "the server closed its output"
            self.buffer += chunk
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        message = orjson.loads(line)
        assert isinstance(message, dict)
        return message


async def test_a_modern_request_that_mentions_notifications_cancelled_is_still_modern() -> None:
    probe = Probe()
    async with serving(build_server(probe)) as stdio:
        await stdio.send(call(1, "hold", {}, progressToken="p"))
        await stdio.receive()
        # With a modern request in flight, a body naming the cancellation method is looked
        # at as a cancellation first; it is a request, and stays one.
        echoed = await stdio.answer(call(2, "echo", {"text": "notifications/cancelled"}))
        assert text_of(echoed) == "notifications/cancelled"
        assert echoed["result"]["resultType"] == "complete"
        probe.release.set()
        assert text_of(await stdio.receive()) == "released"


async def test_a_subscription_to_a_uri_no_template_accepts_is_not_honoured() -> None:
    server = build_server()

    @server.resource("file:///numbered/{n}")
    def numbered(n: int) -> str:
        return str(n)

    async with serving(server) as stdio:
        subscribe = ["file:///numbered/abc", "file:///numbered/1"]
        await stdio.send(listen("sub", resourceSubscriptions=subscribe))
        first = await stdio.receive()
        assert first.get("error", {}).get("code") != -32002  # never in 2026-07-28
        # Like a URI the server does not serve: left out of what it honours.
        assert first["method"] == "notifications/subscriptions/acknowledged"
        assert first["params"]["notifications"] == {"resourceSubscriptions": ["file:///numbered/1"]}
        await stdio.send(cancel("sub"))
