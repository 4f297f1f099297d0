"""What an idle Streamable HTTP session costs: one task, no timer, and little else.

``McpHttpApp`` is driven through its ASGI interface in this process (the same calls hypercorn
makes), so the test can walk the trio task tree. Bytes vary with the Python build; tasks do
not, and a task is most of an idle session's memory (bench/RESULTS.md), so the count is what
is pinned here.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import orjson
import trio
import trio.testing

from trimcp.http import HttpOptions
from trimcp.http._app import McpHttpApp
from trimcp.sessions import SessionManager, SessionOptions
from trimcp.supervision import ChildSpec, open_supervisor
from trimcp.transports import MemoryEventStore

from ._client import INITIALIZE, build_server

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from trimcp.actors import ActorRef

INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


async def asgi_post(app: McpHttpApp, body: bytes, session: str | None = None) -> tuple[int, str]:
    """POST ``body`` through the ASGI interface; return the status and the session id."""
    headers = [
        (b"host", b"127.0.0.1"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
    ]
    if session is not None:
        headers += [(b"mcp-session-id", session.encode()), (b"mcp-protocol-version", b"2025-11-25")]
    scope = {"type": "http", "path": "/mcp", "method": "POST", "headers": headers}
    sent: list[MutableMapping[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    session_id = dict(start["headers"]).get(b"mcp-session-id", b"").decode()
    return start["status"], session_id or (session or "")


def count_tasks() -> int:
    pending = [trio.lowlevel.current_root_task()]
    count = 0
    while pending:
        task = pending.pop()
        count += 1
        for nursery in task.child_nurseries:
            pending.extend(nursery.child_tasks)
    return count


async def test_an_idle_session_is_one_task_and_keeps_no_timer() -> None:
    managers: list[SessionManager] = []

    def build() -> SessionManager:
        manager = SessionManager(build_server(), SessionOptions(initialization_timeout=60.0))
        managers.append(manager)
        return manager

    async with open_supervisor([ChildSpec.for_actor("manager", build)]) as supervisor:
        app = McpHttpApp(managers[0], HttpOptions(), MemoryEventStore())

        async def open_idle_session() -> None:
            status, session = await asgi_post(app, orjson.dumps(INITIALIZE))
            assert status == 200
            assert (await asgi_post(app, INITIALIZED, session))[0] == 202
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
            params = {"name": "echo", "arguments": {"text": "hi"}}
            assert (await asgi_post(app, orjson.dumps({**call, "params": params}), session))[
                0
            ] == 200

        await open_idle_session()
        await trio.testing.wait_all_tasks_blocked()
        before = count_tasks()
        for _ in range(20):
            await open_idle_session()
        await trio.testing.wait_all_tasks_blocked()
        # One task per session (the actor's own): no reader waiting for input, no helper,
        # and no handshake timer (the manager times all handshakes with one).
        assert count_tasks() - before == 20
        assert len(managers[0].table) == 21
        supervisor.request_stop()


async def test_sessions_that_never_finish_the_handshake_close_on_time(
    autojump_clock: trio.testing.MockClock,
) -> None:
    managers: list[SessionManager] = []

    def build() -> SessionManager:
        options = SessionOptions(initialization_timeout=10.0)
        manager = SessionManager(build_server(), options)
        managers.append(manager)
        return manager

    async with open_supervisor([ChildSpec.for_actor("manager", build)]) as supervisor:
        manager = managers[0]
        app = McpHttpApp(manager, HttpOptions(), MemoryEventStore())
        opened: dict[str, float] = {}
        for delay in (0.0, 3.0, 4.0):
            await trio.sleep(delay)
            status, session = await asgi_post(app, orjson.dumps(INITIALIZE))
            assert status == 200
            opened[session] = trio.current_time()
        finished = next(iter(opened))
        assert (await asgi_post(app, INITIALIZED, finished))[0] == 202
        closed: dict[str, float] = {}
        async with trio.open_nursery() as nursery:
            for session in opened:
                record = manager.table.peek(session)
                assert record is not None

                async def watch(session: str, ref: ActorRef) -> None:
                    await ref.wait_exited()
                    closed[session] = trio.current_time()

                nursery.start_soon(watch, session, record.ref)
            await trio.sleep(100)
            nursery.cancel_scope.cancel()
        # Each at its own deadline: the one timer is re-armed for the next.
        assert {s: closed[s] - opened[s] for s in closed} == {
            s: 10.0 for s in opened if s != finished
        }
        assert manager.table.peek(finished) is not None
        supervisor.request_stop()


async def test_a_second_handshake_timer_is_never_armed_while_one_is_pending(
    autojump_clock: trio.testing.MockClock,
) -> None:
    managers: list[SessionManager] = []
    build = functools.partial(SessionManager, build_server(), SessionOptions())

    def keep() -> SessionManager:
        manager = build()
        managers.append(manager)
        return manager

    async with open_supervisor([ChildSpec.for_actor("manager", keep)]) as supervisor:
        app = McpHttpApp(managers[0], HttpOptions(), MemoryEventStore())
        await trio.testing.wait_all_tasks_blocked()
        before = count_tasks()
        for _ in range(10):
            assert (await asgi_post(app, orjson.dumps(INITIALIZE)))[0] == 200
        await trio.testing.wait_all_tasks_blocked()
        assert count_tasks() - before == 10 + 1  # the sessions, and one timer for all
        supervisor.request_stop()
