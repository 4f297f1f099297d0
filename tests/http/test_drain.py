"""The HTTP endpoint in a graceful stop (``trimcp.supervision.Drain``), on 127.0.0.1.

While the server drains: new sessions, new requests and new GET streams get 503 with
``Retry-After`` and the JSON-RPC -32000 error; notifications still pass; a call in flight
finishes with its real result, and the drain waits for its answer to be sent. When the
drain's time is up, a call still running is answered on its own stream with the error.
The tool waits on events the test sets, so nothing depends on timing.
"""

from __future__ import annotations

import httpx
import trio
import trio.testing

from trimcp.http import HttpOptions
from trimcp.server import MCPServer
from trimcp.sessions import SHUTTING_DOWN
from trimcp.supervision import open_drain

from ._client import INITIALIZE, Answer, handshake, post, running


def _gated_server(started: trio.Event, release: trio.Event) -> MCPServer:
    server = MCPServer("drain-test")

    @server.tool()
    async def hold() -> str:
        """Wait until the test releases it."""
        started.set()
        await release.wait()
        return "released"

    return server


def _call(request_id: int) -> dict[str, object]:
    params = {"name": "hold", "arguments": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _assert_shutting_down(answer: Answer, request_id: object) -> None:
    assert answer.status == 503
    assert answer.headers["retry-after"] == "30"
    assert answer.headers["content-type"] == "application/json"
    (error,) = answer.messages
    assert error["id"] == request_id
    assert error["error"]["code"] == SHUTTING_DOWN
    assert "shutting down" in error["error"]["message"]


async def _graceful_stop(json_response: bool) -> None:
    started, release = trio.Event(), trio.Event()
    server = _gated_server(started, release)
    options = HttpOptions(json_response=json_response)
    answers: list[Answer] = []
    with trio.fail_after(20), open_drain() as drain:
        async with running(server, options) as listener, httpx.AsyncClient() as client:
            url = listener.url
            session = await handshake(client, url)

            async def call_in_flight() -> None:
                answers.append(await post(client, url, _call(1), session=session))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_in_flight)
                await started.wait()
                finished: list[bool] = []

                async def drain_it() -> None:
                    finished.append(await drain.run(30.0))

                nursery.start_soon(drain_it)
                # drain.run begins the drain before its first checkpoint.
                await trio.testing.wait_all_tasks_blocked()
                assert drain.draining

                # A new session, a new request on the live session, a new GET stream: 503.
                _assert_shutting_down(await post(client, url, INITIALIZE), 0)
                _assert_shutting_down(await post(client, url, _call(2), session=session), 2)
                get = await client.get(
                    url,
                    headers={
                        "accept": "text/event-stream",
                        "mcp-session-id": session,
                        "mcp-protocol-version": "2025-11-25",
                    },
                )
                assert get.status_code == 503
                assert get.json()["error"]["code"] == SHUTTING_DOWN
                # A notification still passes (how a client cancels or answers).
                note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
                assert (await post(client, url, note, session=session)).status == 202
                assert drain.in_flight >= 1
                assert not finished
                release.set()
            assert finished == [True]
    (answer,) = answers
    assert answer.status == 200
    assert answer.message["id"] == 1
    assert answer.message["result"]["content"][0]["text"] == "released"


async def test_a_call_in_flight_finishes_and_new_work_gets_503_over_sse() -> None:
    await _graceful_stop(json_response=False)


async def test_a_call_in_flight_finishes_and_new_work_gets_503_as_json() -> None:
    await _graceful_stop(json_response=True)


async def test_a_call_still_running_at_the_timeout_is_answered_with_an_error() -> None:
    started, never = trio.Event(), trio.Event()
    server = _gated_server(started, never)
    answers: list[Answer] = []
    with trio.fail_after(20), open_drain() as drain:
        async with running(server) as listener, httpx.AsyncClient() as client:
            session = await handshake(client, listener.url)

            async def call_in_flight() -> None:
                answers.append(await post(client, listener.url, _call(5), session=session))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call_in_flight)
                await started.wait()
                assert not await drain.run(0.2)
            # The answer was sent within the drain's grace: the exchange is over.
            assert drain.in_flight == 0
    (answer,) = answers
    assert answer.status == 200
    error = answer.message
    assert error["id"] == 5
    assert error["error"]["code"] == SHUTTING_DOWN
    assert "cancelled after 0.2 s (application.stop_timeout)" in error["error"]["message"]


async def test_a_stateless_post_during_the_drain_gets_503() -> None:
    with trio.fail_after(20), open_drain() as drain:
        async with (
            running(options=HttpOptions(stateless=True)) as listener,
            httpx.AsyncClient() as client,
        ):
            drain.begin()
            answer = await post(client, listener.url, _call(9))
    assert answer.status == 503
    assert answer.messages[0]["id"] == 9
    assert answer.messages[0]["error"]["code"] == SHUTTING_DOWN
