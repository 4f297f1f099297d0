"""The order in which the HTTP client stream's messages leave, on real sockets on 127.0.0.1.

The GET stream is open before the first request leaves, and an answer stream the server
closes is resumed with ``Last-Event-ID`` after its ``retry:`` (the conformance suite's
``sse-retry`` scenario, made deterministic). A slow ``application/json`` answer holds back
no other message; requests in flight are bounded, without holding back a cancel.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import TYPE_CHECKING, Any

import orjson
import pytest
import trio
import trio.testing

from tests.http._client import build_server, running
from trimcp.client.session import ClientSessionOptions, open_client_session
from trimcp.http import HttpOptions
from trimcp.transports.http_client._client import open_http_client_stream

from .test_helpers import (
    answer_to,
    init_result,
    initialize,
    raw_answer,
    read_request,
    request,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.server import MCPServer

pytestmark = pytest.mark.slow

RETRY_MS = 200
# How long the server below keeps a GET waiting for its answer, unless a request comes.
GET_HOLD = 0.5

# The ordering of messages within a 2025-11-25 session (cancels after their requests,
# slots, JSON answers): the handshake era, forced.
HANDSHAKE = ClientSessionOptions(protocol_version="2025-11-25")


def _head(content_type: str) -> bytes:
    return (
        "HTTP/1.1 200 OK\r\nconnection: close\r\nmcp-session-id: s1\r\n"
        f"content-type: {content_type}\r\n\r\n"
    ).encode()


class RetryServer:
    """The conformance suite's ``sse-retry`` server in miniature, slow to open GET streams.

    A ``tools/call`` is answered with an SSE stream holding only a priming event (id ``p0``,
    ``retry:``), then the connection closes: the client has to resume with GET and
    ``Last-Event-ID: p0``, and gets the result there. Like the suite's server, any GET that
    comes while the call is pending gets the result, even a plain standalone GET; so a
    client whose GET stream opens after its first request gets its answer there and never
    resumes. The standalone GET is answered after ``GET_HOLD`` seconds, or as soon as a
    request comes: a client that does not wait for it sends its request first, every time.
    """

    def __init__(self) -> None:
        self.pending: int | None = None
        self.request_came = trio.Event()
        self.get_answered = False
        self.requests_before_get: list[str] = []
        self.answer_closed_at = math.nan
        self.resumed_at: list[float] = []
        self.result_on_standalone = False

    async def serve(self, stream: trio.SocketStream) -> None:
        async with stream:
            got = await read_request(stream)
            if got is None:
                return
            method, headers, body = got
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                if method == "POST":
                    await self._post(stream, orjson.loads(body))
                elif method == "GET":
                    await self._get(stream, headers.get("last-event-id"))
                else:
                    await stream.send_all(raw_answer("200 OK", None, b""))

    async def _post(self, stream: trio.SocketStream, message: dict[str, Any]) -> None:
        if message.get("method") == "initialize":
            body = init_result(message["id"])
            await stream.send_all(_head("application/json") + body)
            return
        if "id" not in message:
            await stream.send_all(raw_answer("202 Accepted", None, b""))
            return
        if not self.get_answered:
            self.requests_before_get.append(message["method"])
        self.pending = message["id"]
        self.request_came.set()
        priming = f"id: p0\nretry: {RETRY_MS}\ndata:\n\n"
        await stream.send_all(_head("text/event-stream") + priming.encode())
        self.answer_closed_at = trio.current_time()  # leaving closes the connection

    async def _get(self, stream: trio.SocketStream, last_event_id: str | None) -> None:
        if last_event_id == "p0":
            self.resumed_at.append(trio.current_time())
            await stream.send_all(_head("text/event-stream") + self._result("p1"))
            return
        if last_event_id is None:
            with trio.move_on_after(GET_HOLD):
                await self.request_came.wait()
            self.get_answered = True
            result = self._result("g1")
            self.result_on_standalone = bool(result)
            priming = f"id: g0\nretry: {RETRY_MS}\ndata:\n\n".encode()
            await stream.send_all(_head("text/event-stream") + priming + result)
        await trio.sleep_forever()  # the standalone stream stays open

    def _result(self, event_id: str) -> bytes:
        if self.pending is None:
            return b""
        result = {"content": [{"type": "text", "text": "resumed"}]}
        message = {"jsonrpc": "2.0", "id": self.pending, "result": result}
        self.pending = None
        data = orjson.dumps(message).decode()
        return f"event: message\nid: {event_id}\ndata: {data}\n\n".encode()


@contextlib.asynccontextmanager
async def serving(server: RetryServer) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        serve = functools.partial(trio.serve_tcp, server.serve, 0, host="127.0.0.1")
        listeners = await nursery.start(serve)
        port = listeners[0].socket.getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            nursery.cancel_scope.cancel()


async def test_the_get_stream_opens_before_the_first_request_and_answers_are_resumed() -> None:
    server = RetryServer()
    async with serving(server) as url, open_http_client_stream(url, status_wait=5.0) as stream:
        await initialize(stream)
        request_id, data = request("tools/call", {"name": "test_reconnection", "arguments": {}})
        await stream.send_message(data)
        with trio.fail_after(5):
            answer = await answer_to(stream, request_id)
    assert server.requests_before_get == []
    assert not server.result_on_standalone
    assert answer["result"]["content"][0]["text"] == "resumed"
    assert len(server.resumed_at) == 1  # resumed once, with Last-Event-ID: p0
    assert server.resumed_at[0] - server.answer_closed_at >= RETRY_MS / 1000


class Log:
    """What the ``hold`` tool did, in order; a test can wait for an entry."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self._changed = trio.Event()

    def add(self, entry: str) -> None:
        self.entries.append(entry)
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for(self, entry: str) -> None:
        with trio.fail_after(5):
            while entry not in self.entries:
                await self._changed.wait()


def holding_server(log: Log, release: trio.Event) -> MCPServer:
    """``echo`` and ``slow``, plus ``hold``: runs until ``release``, logging start and end."""
    server = build_server()

    @server.tool()
    async def hold(n: int) -> str:
        log.add(f"start {n}")
        try:
            await release.wait()
        finally:
            log.add(f"end {n}")  # released, or cancelled by notifications/cancelled
        return f"released {n}"

    return server


async def test_a_slow_json_answer_holds_back_no_other_message() -> None:
    log = Log()
    release = trio.Event()
    options = HttpOptions(json_response=True)
    async with (
        running(holding_server(log, release), options) as listener,
        open_http_client_stream(listener.url) as stream,
        open_client_session(stream, options=HANDSHAKE) as session,
        trio.open_nursery() as nursery,
    ):
        slow = trio.CancelScope()

        async def call_slow() -> None:
            with slow:
                await session.call_tool("hold", {"n": 1})

        nursery.start_soon(call_slow)
        await log.wait_for("start 1")
        # Before: every later message waited up to 5 s for the slow call's HTTP status,
        # which a JSON answer sends only with the result.
        with trio.fail_after(1):
            result = await session.call_tool("echo", {"text": "quick"})
            await session.ping()
        assert result.raw["content"][0]["text"] == "quick"
        assert log.entries == ["start 1"]  # still in flight
        slow.cancel()  # the session sends notifications/cancelled
        await log.wait_for("end 1")
        assert not release.is_set()  # ended by the cancel, not released


async def test_requests_beyond_the_limit_wait_in_line_and_a_cancel_still_leaves() -> None:
    log = Log()
    release = trio.Event()
    options = HttpOptions(json_response=True)
    async with (
        running(holding_server(log, release), options) as listener,
        open_http_client_stream(listener.url, max_requests_in_flight=2) as stream,
        open_client_session(stream, options=HANDSHAKE) as session,
        trio.open_nursery() as nursery,
    ):
        scopes = {n: trio.CancelScope() for n in (1, 2, 3, 4)}

        async def call(n: int) -> None:
            with scopes[n]:
                await session.call_tool("hold", {"n": n})

        nursery.start_soon(call, 1)
        await log.wait_for("start 1")
        nursery.start_soon(call, 2)
        await log.wait_for("start 2")
        nursery.start_soon(call, 3)
        nursery.start_soon(call, 4)
        await trio.testing.wait_all_tasks_blocked()
        assert stream.statistics().waiting == 2
        assert stream.statistics().in_flight == 2
        scopes[4].cancel()  # withdrawn from the line: never sent
        scopes[1].cancel()  # in flight: its cancel leaves at once, its slot goes to 3
        await log.wait_for("start 3")
        release.set()
        await log.wait_for("end 3")
        with trio.fail_after(5):
            result = await session.call_tool("echo", {"text": "after"})  # behind 4, if sent
        assert result.raw["content"][0]["text"] == "after"
        assert stream.statistics().in_flight == 0
    assert log.entries[:4] == ["start 1", "start 2", "end 1", "start 3"]
    assert "start 4" not in log.entries
