"""The Session actor against a scripted client over an in-memory stream."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
import trio
import trio.testing

from trimcp.actors import NORMAL, spawn
from trimcp.errors import JsonRpcError, RequestTimeout
from trimcp.protocol import (
    ClientCapabilities,
    JsonObject,
    Request,
    RequestReceived,
    ServerCapabilities,
)
from trimcp.sessions import ConnectionBound, RequestContext, Session, SessionOptions
from trimcp.sessions._session import transport_of
from trimcp.transports import StdioStream, WrappingStream, memory_stream_pair

from .conftest import ScriptedHandler, open_client

if TYPE_CHECKING:
    import pytest


async def list_tools(request: Request, context: RequestContext) -> JsonObject:
    return {"tools": []}


async def test_handshake_then_a_request_is_answered() -> None:
    handler = ScriptedHandler({"tools/list": list_tools})
    async with open_client(handler) as client:
        await client.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}')
        assert await client.receive_wire() == {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}


async def test_garbage_and_early_requests_get_errors_and_the_session_keeps_working() -> None:
    handler = ScriptedHandler({"tools/list": list_tools})
    async with open_client(handler, handshake=False) as client:
        await client.send(b"{not json")
        parse_error = await client.receive_wire()
        assert parse_error["error"]["code"] == -32700  # type: ignore[index,call-overload]
        assert "id" not in parse_error or parse_error["id"] is None
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
        early = await client.receive_wire()
        assert early["id"] == 1
        assert early["error"]["code"] == -32600  # type: ignore[index,call-overload]
        await client.handshake()
        await client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        assert (await client.receive_wire())["result"] == {"tools": []}


async def test_unknown_method_and_a_crashing_handler(caplog: pytest.LogCaptureFixture) -> None:
    async def crash(request: Request, context: RequestContext) -> JsonObject:
        raise RuntimeError("secret internals")

    handler = ScriptedHandler({"tools/list": list_tools, "tools/call": crash})
    async with open_client(handler) as client:
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":"nope/nothing"}')
        unknown = await client.receive_wire()
        assert unknown["error"]["code"] == -32601  # type: ignore[index,call-overload]
        await client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}')
        crashed = await client.receive_wire()
        assert crashed["error"]["code"] == -32603  # type: ignore[index,call-overload]
        assert "secret" not in str(crashed)
        await client.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
        assert (await client.receive_wire())["id"] == 3
    crash_records = [r for r in caplog.records if "failed" in r.getMessage()]
    assert len(crash_records) == 1
    assert crash_records[0].exc_info is not None


async def test_cancellation_stops_the_handler_and_sends_nothing() -> None:
    started = trio.Event()
    cancelled = trio.Event()

    async def slow(request: Request, context: RequestContext) -> JsonObject:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    handler = ScriptedHandler({"tools/call": slow, "tools/list": list_tools})
    async with open_client(handler) as client:
        await client.send(b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}')
        await started.wait()
        await client.send(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}'
        )
        await cancelled.wait()
        await client.send(b'{"jsonrpc":"2.0","id":"b","method":"tools/list"}')
        assert (await client.receive_wire())["id"] == "b"  # nothing was sent for "a"
        # ... and the core no longer tracks "a" (a later request may reuse the id).
        assert client.actor.connection.statistics().inbound_in_flight == frozenset()


async def test_progress_goes_out_with_the_token_and_stops_with_the_request() -> None:
    async def work(request: Request, context: RequestContext) -> JsonObject:
        for step in (1, 2, 3):
            assert await context.report_progress(step, 3, f"step {step}")
        return {"content": [], "isError": False}

    handler = ScriptedHandler({"tools/call": work})
    async with open_client(handler) as client:
        await client.send(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
            b'"params":{"name":"x","_meta":{"progressToken":"tok"}}}'
        )
        messages = [await client.receive_wire() for _ in range(4)]
    progress = [m["params"] for m in messages[:3]]
    assert [p["progress"] for p in progress] == [1, 2, 3]  # type: ignore[index,call-overload]
    assert {p["progressToken"] for p in progress} == {"tok"}  # type: ignore[index,call-overload]
    assert messages[3]["id"] == 1


async def test_concurrent_requests_finish_in_their_own_order(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def sleepy(request: Request, context: RequestContext) -> JsonObject:
        assert request.params is not None
        await trio.sleep(float(request.params["delay"]))  # type: ignore[arg-type]
        return {"content": []}

    handler = ScriptedHandler({"tools/call": sleepy})
    async with open_client(handler) as client:
        start = trio.current_time()
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"delay":2}}')
        await client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"delay":1}}')
        answers = []
        for _ in range(2):
            answer = await client.receive_wire()
            answers.append((answer["id"], trio.current_time() - start))
    # The short request is answered first, and the long one 2 s after both were sent, not
    # 3 s: they ran side by side (virtual time, so the times are exact).
    assert answers == [(2, 1.0), (1, 2.0)]


async def test_a_request_to_the_client_and_its_answer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def ask_roots(request: Request, context: RequestContext) -> JsonObject:
        roots = await context.session.request("roots/list")
        return {"content": [{"type": "text", "text": str(roots["roots"])}]}

    handler = ScriptedHandler({"tools/call": ask_roots})
    async with open_client(handler, capabilities=ClientCapabilities(roots=True)) as client:
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}')
        [event] = await client.events()
        assert isinstance(event, RequestReceived)
        assert event.request.method == "roots/list"
        await client.send(
            client.connection.send_result(event.request.id, {"roots": [{"uri": "file:///r"}]})
        )
        answer = await client.receive_wire()
    assert answer["id"] == 1
    assert "file:///r" in str(answer["result"])


async def test_a_request_to_the_client_times_out_and_is_cancelled(
    autojump_clock: trio.testing.MockClock,
) -> None:
    failures: list[str] = []

    async def ask_roots(request: Request, context: RequestContext) -> JsonObject:
        try:
            await context.session.request("roots/list", timeout=10.0)
        except RequestTimeout as exc:
            failures.append(f"{trio.current_time():g}: {exc}")
            raise JsonRpcError(-32001, "the client did not answer roots/list") from exc
        raise AssertionError("unreachable")

    handler = ScriptedHandler({"tools/call": ask_roots})
    async with open_client(handler, capabilities=ClientCapabilities(roots=True)) as client:
        await client.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}')
        roots_request = await client.receive_wire()
        assert roots_request["method"] == "roots/list"
        cancel = await client.receive_wire()
        answer = await client.receive_wire()
    assert failures == ["10: roots/list got no answer within 10 s"]
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == roots_request["id"]  # type: ignore[index,call-overload]
    assert answer["error"]["code"] == -32001  # type: ignore[index,call-overload]


async def test_no_handshake_closes_the_session_after_the_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    handler = ScriptedHandler()
    async with open_client(
        handler, handshake=False, options=SessionOptions(initialization_timeout=30.0)
    ) as client:
        assert await client.session.wait_exited() == NORMAL
        assert trio.current_time() == 30.0


async def test_end_of_input_ends_the_session_normally() -> None:
    handler = ScriptedHandler()
    async with open_client(handler) as client:
        assert len(handler.sessions) == 1
        await client.stream.aclose()
        assert await client.session.wait_exited() == NORMAL
    assert handler.sessions == set()


async def test_an_oversized_message_is_refused_and_the_next_one_served() -> None:
    handler = ScriptedHandler({"tools/list": list_tools})
    async with open_client(handler, options=SessionOptions(max_message_size=1000)) as client:
        await client.send(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"y" * 2000 + b'"}}'
        )
        refused = await client.receive_wire()
        assert refused["error"]["code"] == -32600  # type: ignore[index,call-overload]
        await client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')
        assert (await client.receive_wire())["id"] == 2


async def test_logging_respects_the_level() -> None:
    async def set_level(request: Request, context: RequestContext) -> JsonObject:
        assert request.params is not None
        context.session.set_log_level(str(request.params["level"]))
        return {}

    async def chatty(request: Request, context: RequestContext) -> JsonObject:
        sent = [
            await context.session.log(level, f"{level} message")
            for level in ("debug", "info", "warning", "error")
        ]
        return {"content": [], "sent": sent}  # type: ignore[dict-item]

    handler = ScriptedHandler({"logging/setLevel": set_level, "tools/call": chatty})
    async with open_client(handler) as client:
        await client.send(
            b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}'
        )
        assert (await client.receive_wire())["result"] == {}
        await client.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}')
        first, second, result = [await client.receive_wire() for _ in range(3)]
    assert [first["params"]["level"], second["params"]["level"]] == ["warning", "error"]  # type: ignore[index,call-overload]
    assert result["result"]["sent"] == [False, False, True, True]  # type: ignore[index,call-overload]


async def test_posted_notifications_wait_for_initialized() -> None:
    handler = ScriptedHandler(capabilities=ServerCapabilities(tools=True, tools_list_changed=True))
    async with open_client(handler, handshake=False) as client:
        _, data = client.connection.send_initialize()
        await client.send(data)
        await client.events()
        [session] = handler.sessions
        assert session.notify_nowait("notifications/tools/list_changed")
        assert session.notify_nowait("notifications/tools/list_changed")  # a duplicate
        await trio.testing.wait_all_tasks_blocked()  # the session has taken (and held) both
        await client.send(client.connection.send_initialized())
        await client.send(b'{"jsonrpc":"2.0","id":9,"method":"ping"}')
        held = await client.receive_wire()
        pong = await client.receive_wire()
    assert held == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert pong["id"] == 9  # the duplicate was dropped
    await trio.testing.wait_all_tasks_blocked()
    assert not session.notify_nowait("notifications/tools/list_changed")  # closed


async def test_requests_in_flight_when_input_ends_are_still_answered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow(request: Request, context: RequestContext) -> JsonObject:
        await trio.sleep(2)
        return {"content": []}

    async def stuck(request: Request, context: RequestContext) -> JsonObject:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    # stdio semantics: the client closes only its side (stdin); stdout stays open.
    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    to_client_send, to_client_receive = trio.testing.memory_stream_one_way_pair()
    stream = StdioStream(to_server_receive, to_client_send)
    handler = ScriptedHandler({"tools/call": slow, "tools/list": stuck})
    requests = (
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
        b'"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    )
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(stream, handler))
        await to_server_send.send_all(requests)
        await to_server_send.aclose()
        assert await ref.wait_exited() == NORMAL
        # tools/call finished at t=2; tools/list never would: the drain gives up at t=5.
        assert trio.current_time() == 5.0
        received = b""
        while chunk := await to_client_receive.receive_some():
            received += chunk
    replies = [orjson.loads(line) for line in received.splitlines()]
    assert [reply.get("id") for reply in replies] == [0, 1, 2]
    assert "result" in replies[1]
    # The one the drain gave up on is answered too, with an error: never left unanswered.
    assert replies[2]["error"]["code"] == -32000
    assert "closed before the request finished" in replies[2]["error"]["message"]


class _SlowSendStream(trio.abc.SendStream):
    """A byte stream whose every write takes one second (a slow stdout)."""

    def __init__(self, inner: trio.abc.SendStream) -> None:
        self.inner = inner

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.sleep(1)
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_replies_queued_behind_a_slow_write_still_go_out_before_close(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def quick(request: Request, context: RequestContext) -> JsonObject:
        return {"content": []}

    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    to_client_send, to_client_receive = trio.testing.memory_stream_one_way_pair()
    stream = StdioStream(to_server_receive, _SlowSendStream(to_client_send))
    handler = ScriptedHandler({"tools/call": quick})
    requests = (
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
        b'"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}\n'
    )
    received = b""
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(stream, handler))
        await to_server_send.send_all(requests)
        await to_server_send.aclose()  # both calls finish while the first write is slow
        assert await ref.wait_exited() == NORMAL
        while chunk := await to_client_receive.receive_some():
            received += chunk
    replies = [orjson.loads(line) for line in received.splitlines()]
    assert sorted(reply["id"] for reply in replies) == [0, 1, 2]


def test_a_wrapped_stream_is_named_after_the_one_underneath() -> None:
    # ConnectionBound (the WebSocket listener's) and the HTTP WebSocket route's authorized
    # stream pass another stream's messages on: telemetry names the transport underneath.
    send, receive = trio.testing.memory_stream_pair()
    stdio = StdioStream(receive, send)
    assert transport_of(stdio) == "stdio"
    assert transport_of(ConnectionBound(ConnectionBound(stdio))) == "stdio"
    assert isinstance(ConnectionBound(stdio), WrappingStream)
    memory, _ = memory_stream_pair()
    assert transport_of(ConnectionBound(memory)) is None
