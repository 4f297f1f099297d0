"""A stand-in for the daemon's admin app: canned answers over a real socket on 127.0.0.1.

``trimcp status``, ``reload`` and ``restart`` are tested against the contract's documents
without a daemon: ``AdminStub`` serves, from a trio task in the test's own run, whatever
answer a route is given (status, JSON body, headers), records each request (method, path,
headers) and can hold a route unanswered, for the timeout tests. One request per connection
(h11 on a trio stream), which is all an ``httpx.AsyncClient`` opened per command needs.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import h11
import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

#: The /status document of the contract, as the admin app sends it.
STATUS: dict[str, object] = {
    "application": {
        "name": "trimcp",
        "version": "0.1.0",
        "pid": 4242,
        "started_at": "2026-11-27T18:00:00+00:00",
        "uptime": 12.5,
        "state": "running",
    },
    "health": {"healthy": True, "ready": True, "not_ready": []},
    "tree": {
        "id": "trimcp",
        "kind": "supervisor",
        "state": "running",
        "strategy": "one_for_one",
        "restarts": 0,
        "intensity": 1,
        "period": 5.0,
        "last_exit": None,
        "mailbox": {"length": 0, "capacity": 256, "peak": 1},
        "children": [
            {
                "id": "http",
                "kind": "supervisor",
                "state": "running",
                "restart": "permanent",
                "restarts": 0,
                "last_exit": None,
                "children": [],
                "children_total": 0,
            }
        ],
        "children_total": 1,
    },
    "listeners": [
        {
            "name": "http",
            "transport": "http",
            "address": "http://127.0.0.1:8000/mcp",
            "bound": True,
            "sessions": 2,
            "in_flight": 0,
            "created": 5,
            "expired": 1,
            "evicted": 0,
            "refused": 0,
            "terminated": 2,
        }
    ],
    "sessions": [
        {
            "listener": "http",
            "id": "3f2a9c1b",
            "age": 40.2,
            "idle": 3.0,
            "protocol_version": "2025-11-25",
            "client": "claude-code 1.2.0",
            "mailbox": {"length": 0, "capacity": 64, "peak": 3},
            "dropped_notifications": 0,
            "streams": 1,
            "subscriptions": 2,
            "in_flight": 0,
        }
    ],
    "sessions_total": 2,
    "upstreams": [
        {
            "name": "github",
            "state": "connected",
            "pid": 5151,
            "restarts": 0,
            "attempt": 1,
            "tools": 12,
            "resources": 0,
            "prompts": 0,
            "connected_for": 30.1,
            "next_attempt_in": None,
            "next_attempt_at": None,
            "failure": None,
            "last_error": None,
            "exit_code": None,
            "exit_signal": None,
            "stderr_tail": [],
        }
    ],
    "event_store": {"bytes": 1234, "limit": 33554432, "streams": 1, "events": 4},
    "tasks": {"stored": 0, "running": 0, "limit": 1000},
}


@dataclass(frozen=True, slots=True)
class Answer:
    """What a route answers: a status, a body (JSON unless bytes) and extra headers."""

    status: int = 200
    body: object = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    #: Never answer (the connection stays open until the stub stops).
    hang: bool = False


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the stub received."""

    method: str
    path: str
    headers: dict[str, str]


@dataclass
class AdminStub:
    """Serves ``routes`` (``"GET /status"`` -> Answer); 404 JSON for anything else."""

    routes: dict[str, Answer] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen on 127.0.0.1 (``port``, 0 for a free one) until cancelled."""
        listeners = await trio.open_tcp_listeners(self.port, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, stream: trio.SocketStream) -> None:
        async with stream:
            connection = h11.Connection(h11.SERVER)
            request = await _next_event(connection, stream)
            if not isinstance(request, h11.Request):
                return
            while not isinstance(await _next_event(connection, stream), h11.EndOfMessage):
                pass
            headers = {k.decode().lower(): v.decode() for k, v in request.headers}
            method, path = request.method.decode(), request.target.decode()
            self.seen.append(Seen(method, path, headers))
            answer = self.routes.get(f"{method} {path}")
            if answer is None:
                answer = Answer(404, {"error": f"no route {method} {path}"})
            if answer.hang:
                await trio.sleep_forever()
            body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body)
            data = body if isinstance(body, bytes) else body.encode()
            response_headers = [
                ("content-type", "application/json"),
                ("content-length", str(len(data))),
                ("connection", "close"),
                *answer.headers,
            ]
            await stream.send_all(
                connection.send(h11.Response(status_code=answer.status, headers=response_headers))
                or b""
            )
            await stream.send_all(connection.send(h11.Data(data=data)) or b"")
            await stream.send_all(connection.send(h11.EndOfMessage()) or b"")


async def _next_event(connection: h11.Connection, stream: trio.SocketStream) -> object:
    while True:
        event = connection.next_event()
        if event is not h11.NEED_DATA:
            return event
        data = await stream.receive_some(65536)
        connection.receive_data(data)
        if not data:
            return connection.next_event()


@contextlib.asynccontextmanager
async def serving(routes: dict[str, Answer], port: int = 0) -> AsyncIterator[AdminStub]:
    """An ``AdminStub`` of ``routes`` listening for the ``async with`` block, then stopped."""
    stub = AdminStub(routes, port=port)
    async with trio.open_nursery() as nursery:
        await nursery.start(stub.serve)
        try:
            yield stub
        finally:
            nursery.cancel_scope.cancel()
