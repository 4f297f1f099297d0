"""``MCPServer.serve_http`` runs a NotificationHub: notifications reach real HTTP sessions
through its broadcasters (one server on 127.0.0.1, two clients with their GET streams)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import httpx
import orjson
import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from trimcp.notify import LOG_MESSAGES, TOOLS_LIST_CHANGED, resource_topic
from trimcp.server import MCPServer
from trimcp.transports import SSEDecoder

if TYPE_CHECKING:
    from trimcp.http import HttpListener

pytestmark = pytest.mark.slow

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "fan-out-test", "version": "1"},
    },
}


class Streams:
    """The GET streams of some sessions: what each received, and a wake-up per event."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.received: dict[str, list[dict[str, Any]]] = {}
        self._changed = trio.Event()

    async def open_session(self) -> str:
        answer = await self.client.post(self.url, content=orjson.dumps(INITIALIZE), headers=ACCEPT)
        session = answer.headers["mcp-session-id"]
        await self.post(session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.received[session] = []
        return session

    async def post(self, session: str, body: object) -> None:
        headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        answer = await self.client.post(self.url, content=orjson.dumps(body), headers=headers)
        assert answer.status_code in (200, 202), answer.text

    async def read(self, session: str, task_status: trio.TaskStatus[None]) -> None:
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        decoder = SSEDecoder()
        async with self.client.stream("GET", self.url, headers=headers) as response:
            assert response.status_code == 200
            started = False
            async for chunk in response.aiter_bytes():
                events = decoder.feed(chunk)
                if not started and events:  # the priming event: the stream is attached
                    started = True
                    task_status.started()
                self.received[session].extend(orjson.loads(e.data) for e in events if e.data)
                self._changed.set()
                self._changed = trio.Event()

    async def wait_for(self, counts: dict[str, int]) -> None:
        with trio.fail_after(5):
            while any(len(self.received[s]) < n for s, n in counts.items()):
                await self._changed.wait()


async def test_notifications_reach_http_sessions_through_the_hub() -> None:
    server = MCPServer("http-fan-out")

    @server.resource("x://watched")
    def watched() -> str:
        return "v1"

    async with trio.open_nursery() as nursery, httpx.AsyncClient() as client:
        listener: HttpListener = await nursery.start(functools.partial(server.serve_http))
        hub = server.notification_hub
        assert hub is not None
        streams = Streams(client, listener.url)
        first, second = [await streams.open_session() for _ in range(2)]
        async with trio.open_nursery() as readers:
            for session in (first, second):
                await readers.start(streams.read, session)
            subscribe = {"uri": "x://watched"}
            await streams.post(
                first,
                {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": subscribe},
            )
            level = {"level": "error"}
            await streams.post(
                second, {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": level}
            )
            await wait_all_tasks_blocked()  # the Fanout has subscribed the URI's group
            assert hub.whereis(resource_topic("x://watched")) is not None
            server.add_tool(lambda: "new", "added")
            assert await server.notify_resource_updated("x://watched") == 1
            await server.log("info", "for the first session only")
            await streams.wait_for({first: 3, second: 1})
            for session in (first, second):
                await client.delete(listener.url, headers={"mcp-session-id": session})
            readers.cancel_scope.cancel()
        # Each topic has its broadcaster: their order across topics is not fixed.
        assert sorted(m["method"] for m in streams.received[first]) == [
            "notifications/message",
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        ]
        assert [m["method"] for m in streams.received[second]] == [
            "notifications/tools/list_changed"
        ]
        for topic in (TOOLS_LIST_CHANGED, resource_topic("x://watched"), LOG_MESSAGES):
            stats = await hub.statistics(topic)
            assert stats is not None, topic
            assert stats.published == 1, topic
        nursery.cancel_scope.cancel()
