"""A server with no room for another session refuses every way of starting one alike.

An ``initialize`` POST, a POST in stateless mode and the 2024-11-05 transport's SSE GET get
503 with a JSON-RPC internal error; a WebSocket connection is closed with 1013 (try again
later). All four carry the same words. ``McpHttpApp`` is driven through its ASGI interface
in this process, with its one session slot taken by a session nothing may evict.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import orjson
import trio

from trimcp.http import HttpOptions
from trimcp.http._app import McpHttpApp
from trimcp.http._legacy import LegacySseStream
from trimcp.protocol import ErrorCode
from trimcp.sessions import SessionLimits, SessionManager, SessionOptions
from trimcp.supervision import ChildSpec, open_supervisor
from trimcp.transports import CloseCode

from ._client import INITIALIZE, build_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, MutableMapping

Message = dict[str, Any]
LIMIT = "Service Unavailable: all 1 sessions are busy"
POST_HEADERS = [
    (b"host", b"127.0.0.1"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]


@contextlib.asynccontextmanager
async def full_manager() -> AsyncIterator[SessionManager]:
    """Yield a manager whose one session slot is taken by a busy session."""
    managers: list[SessionManager] = []

    def build() -> SessionManager:
        options = SessionOptions(initialization_timeout=60.0)
        manager = SessionManager(build_server(), options, SessionLimits(max_sessions=1))
        managers.append(manager)
        return manager

    async with open_supervisor([ChildSpec.for_actor("manager", build)]) as supervisor:
        # A legacy session is busy while its SSE connection lasts: it is never evicted.
        await managers[0].create_session("taken", LegacySseStream("taken"))
        yield managers[0]
        supervisor.request_stop()


async def exchange(app: McpHttpApp, scope: Message, incoming: list[Message]) -> list[Message]:
    """Run ``app`` on ``scope``, receiving ``incoming`` then nothing; return what it sent."""
    sent: list[Message] = []
    pending = list(incoming)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    with trio.fail_after(5):
        await app(scope, receive, send)
    return sent


def refusal(sent: list[Message]) -> tuple[int, Any, str]:
    """Return the status, the error's id and its message, checking its code."""
    start, body = sent
    error = orjson.loads(body["body"])
    assert error["error"]["code"] == ErrorCode.INTERNAL_ERROR
    return start["status"], error["id"], error["error"]["message"]


def post(body: object) -> tuple[Message, list[Message]]:
    scope = {"type": "http", "path": "/mcp", "method": "POST", "headers": POST_HEADERS}
    return scope, [{"type": "http.request", "body": orjson.dumps(body), "more_body": False}]


async def test_every_way_to_start_a_session_is_refused_with_the_same_words() -> None:
    async with full_manager() as manager:
        app = McpHttpApp(manager, HttpOptions(legacy_sse=True), None)
        stateless = McpHttpApp(manager, HttpOptions(stateless=True), None)

        initialize = refusal(await exchange(app, *post(INITIALIZE)))
        ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
        one_shot = refusal(await exchange(stateless, *post(ping)))
        sse_headers = [(b"host", b"127.0.0.1"), (b"accept", b"text/event-stream")]
        sse = {"type": "http", "path": "/sse", "method": "GET", "headers": sse_headers}
        legacy = refusal(await exchange(app, sse, [{"type": "http.disconnect"}]))
        ws = {
            "type": "websocket",
            "path": "/mcp/ws",
            "headers": [(b"host", b"127.0.0.1")],
            "subprotocols": ["mcp"],
        }
        connect = [{"type": "websocket.connect"}, {"type": "websocket.disconnect", "code": 1013}]
        accept, close = await exchange(app, ws, connect)

        assert (initialize[:2], one_shot[:2], legacy[:2]) == ((503, 0), (503, 7), (503, None))
        assert initialize[2].startswith(LIMIT)
        assert one_shot[2] == legacy[2] == initialize[2]
        assert accept["type"] == "websocket.accept"
        assert (close["code"], close["reason"]) == (CloseCode.TRY_AGAIN_LATER, initialize[2])
        assert len(manager.table) == 1
