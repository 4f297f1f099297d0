"""A session in a graceful stop: new requests refused with -32000, those in flight finish or
are answered with an error when the drain's time is up (``trimcp.supervision.Drain``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
import pytest
import trio
import trio.testing

from trimcp.actors import spawn
from trimcp.errors import SessionLimitReached
from trimcp.sessions import SHUTTING_DOWN, SessionLimits, SessionManager, SessionOptions
from trimcp.supervision import DRAINING, open_drain
from trimcp.transports import memory_stream_pair

from .conftest import ScriptedHandler, open_client

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject, Request
    from trimcp.sessions import RequestContext


def _call(request_id: int, method: str = "tools/call", name: str = "slow") -> bytes:
    params = {"name": name, "arguments": {}} if method == "tools/call" else {}
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def _handler() -> ScriptedHandler:
    async def call(request: Request, context: RequestContext) -> JsonObject:
        params = request.params or {}
        if params.get("name") == "stuck":
            await trio.sleep_forever()
        await trio.sleep(2)
        return {"content": [{"type": "text", "text": "slept"}]}

    async def quick(request: Request, context: RequestContext) -> JsonObject:
        return {"tools": []}

    return ScriptedHandler({"tools/call": call, "tools/list": quick})


async def test_a_request_in_flight_finishes_and_a_new_one_is_refused(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with open_drain() as drain:
        async with open_client(_handler()) as client:
            await client.send(_call(1))
            await trio.testing.wait_all_tasks_blocked()
            assert drain.in_flight == 1
            async with trio.open_nursery() as nursery:
                nursery.start_soon(drain.run, 30.0)
                await trio.testing.wait_all_tasks_blocked()
                assert client.actor.phase is DRAINING
                await client.send(_call(2, "tools/list"))
                refused = await client.receive_wire()
                assert refused["id"] == 2
                assert refused["error"] == {
                    "code": SHUTTING_DOWN,
                    "message": "the server is shutting down and takes no new requests; "
                    "retry once it is back",
                    "data": {"reason": "shutting_down"},
                }
                finished = await client.receive_wire()
                assert finished["id"] == 1
                assert finished["result"]["content"][0]["text"] == "slept"
            # The drain returned as soon as the call was answered.
            assert trio.current_time() == 2.0
            assert drain.in_flight == 0


async def test_what_is_still_running_at_the_timeout_is_answered_with_an_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with open_drain() as drain:
        async with open_client(_handler()) as client:
            await client.send(_call(7, name="stuck"))
            await trio.testing.wait_all_tasks_blocked()
            assert not await drain.run(3.0)
            answer = await client.receive_wire()
            assert trio.current_time() == 3.0
            assert answer["id"] == 7
            assert answer["error"]["code"] == SHUTTING_DOWN
            assert "cancelled after 3 s (application.stop_timeout)" in answer["error"]["message"]
            assert drain.in_flight == 0
            # Nothing more comes for it: the cancelled handler writes nothing.
            with trio.move_on_after(1.0):
                extra = await client.receive_wire()
                raise AssertionError(f"unexpected {extra}")


async def test_a_session_stopped_with_requests_in_flight_answers_them(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with open_drain() as drain:
        async with open_client(_handler()) as client:
            await client.send(_call(3, name="stuck"))
            await trio.testing.wait_all_tasks_blocked()
            drain.begin()
            client.session.request_stop()
            answer = await client.receive_wire()
            assert answer["id"] == 3
            assert answer["error"]["code"] == SHUTTING_DOWN
            assert "shutting down: the request was cancelled" in answer["error"]["message"]
            await client.session.wait_exited()
            assert drain.in_flight == 0  # it left the drain


async def test_a_session_started_during_the_drain_refuses_requests_from_the_start(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with open_drain() as drain:
        drain.begin()
        async with open_client(_handler()) as client:
            assert client.actor.phase is DRAINING
            await client.send(_call(4, "tools/list"))
            assert (await client.receive_wire())["error"]["code"] == SHUTTING_DOWN


async def test_without_a_drain_nothing_changes(autojump_clock: trio.testing.MockClock) -> None:
    async with open_client(_handler()) as client:
        await client.send(_call(5, "tools/list"))
        assert (await client.receive_wire())["result"] == {"tools": []}


async def test_the_manager_starts_no_session_while_draining(
    autojump_clock: trio.testing.MockClock,
) -> None:
    with open_drain() as drain:
        async with trio.open_nursery() as nursery:
            manager = SessionManager(_handler(), SessionOptions(), SessionLimits())
            ref = await spawn(nursery, manager)
            server_side, _client_side = memory_stream_pair()
            first = await manager.create_session("a", server_side)
            assert not manager.draining
            drain.begin()
            assert manager.draining
            assert manager.phase is DRAINING
            other, _ = memory_stream_pair()
            with pytest.raises(SessionLimitReached, match="shutting down"):
                await manager.create_session("b", other)
            assert manager.statistics().refused == 1
            assert manager.table.peek("a") is first  # the live one is kept
            ref.request_stop()
