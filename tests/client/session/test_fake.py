"""``ClientSession`` against a scripted fake server over memory streams (virtual time).

The test plays the server by hand: it reads what the client sent (``FakeServer.expect``) and
writes raw JSON-RPC back, so timeouts, progress, cancellation, junk, dying servers, expired
sessions and refused server requests are exact.
"""

from __future__ import annotations

import math
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.client.session import open_client_session
from trimcp.client.session._handlers import (
    ClientHandlers,
    ElicitRequest,
    ElicitResult,
    Root,
)
from trimcp.client.session._options import ClientSessionOptions
from trimcp.errors import (
    ConnectionLost,
    InvalidParams,
    MessageTooLarge,
    MethodNotFound,
    RequestTimeout,
    SessionExpired,
    ToolOutputInvalid,
    TransportClosed,
)
from trimcp.transports import memory_stream_pair

from ._fakes import FakeServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from trimcp.client.session._results import Progress
    from trimcp.client.session._session import ClientSession
    from trimcp.transports import MemoryMessageStream, MessageStream


@asynccontextmanager
async def fake_session(
    *,
    capabilities: dict[str, Any] | None = None,
    handlers: ClientHandlers | None = None,
    options: ClientSessionOptions | None = None,
    wrap: Callable[[MemoryMessageStream], MessageStream] | None = None,
) -> AsyncIterator[tuple[ClientSession, FakeServer]]:
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    stream: MessageStream = client_end if wrap is None else wrap(client_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handshake, capabilities)
        async with open_client_session(stream, handlers=handlers, options=options) as session:
            await server.ready.wait()
            yield session, server
        await server_end.aclose()


async def test_handshake_declares_only_configured_capabilities() -> None:
    async def elicit(request: ElicitRequest) -> ElicitResult:
        return ElicitResult(action="cancel")

    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    handlers = ClientHandlers(elicitation=elicit, roots=[Root(uri="file:///tmp")])
    async with trio.open_nursery() as nursery:
        seen: list[dict[str, Any]] = []

        async def run_server() -> None:
            seen.append(await server.handshake())

        nursery.start_soon(run_server)
        async with open_client_session(client_end, handlers=handlers) as session:
            assert session.server_info.name == "fake"
            assert session.instructions == "be nice"
            assert session.protocol_version == "2025-11-25"
            assert session.server_capabilities.tools_list_changed
    capabilities = seen[0]["params"]["capabilities"]
    assert capabilities == {"elicitation": {"form": {}}, "roots": {"listChanged": True}}


async def test_timeout_sends_cancelled(autojump_clock: trio.testing.MockClock) -> None:
    async with fake_session() as (session, server):
        with pytest.raises(RequestTimeout) as info:
            await session.request("tools/list")
        assert trio.current_time() == 60.0
        assert info.value.method == "tools/list"
        request = await server.expect("tools/list")
        cancel = await server.expect("notifications/cancelled")
        assert cancel["params"]["requestId"] == request["id"]


async def test_progress_resets_timeout(autojump_clock: trio.testing.MockClock) -> None:
    seen: list[Progress] = []
    async with fake_session() as (session, server):

        async def serve() -> None:
            call = await server.expect("tools/call")
            token = call["params"]["_meta"]["progressToken"]
            for step in (1, 2):
                await trio.sleep(50)
                await server.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step, "total": 2},
                    }
                )
            await trio.sleep(50)
            await server.answer(call, {"content": [{"type": "text", "text": "done"}]})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            result = await session.call_tool("slow", {}, on_progress=seen.append)
        assert result.text == "done"
        assert trio.current_time() == 150.0
        assert [p.progress for p in seen] == [1, 2]


async def test_max_request_timeout_caps_progress(autojump_clock: trio.testing.MockClock) -> None:
    options = ClientSessionOptions(request_timeout=60, max_request_timeout=100)
    async with fake_session(options=options) as (session, server):

        async def progress_forever() -> None:
            call = await server.expect("tools/call")
            token = call["params"]["_meta"]["progressToken"]
            for step in range(1, 10):
                await trio.sleep(30)
                await server.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step},
                    }
                )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(progress_forever)
            with pytest.raises(RequestTimeout):
                await session.call_tool("slow", {}, on_progress=lambda p: None)
            assert trio.current_time() == 100.0
            nursery.cancel_scope.cancel()


async def test_caller_cancellation_sends_cancelled() -> None:
    async with fake_session() as (session, server):
        with trio.move_on_after(0.01):
            await session.request("prompts/list")
        request = await server.expect("prompts/list")
        cancel = await server.expect("notifications/cancelled")
        assert cancel["params"]["requestId"] == request["id"]
        # A late answer is dropped, and the session goes on.
        await server.answer(request, {"prompts": []})
        ping = trio.Event()

        async def pong() -> None:
            await server.answer(await server.expect("ping"), {})
            ping.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pong)
            await session.ping()


async def test_interleaved_answers_matched_by_id() -> None:
    async with fake_session() as (session, server):
        results: dict[str, str] = {}

        async def call(name: str) -> None:
            results[name] = (await session.call_tool(name)).text

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "a")
            first = await server.expect("tools/call")
            nursery.start_soon(call, "b")
            second = await server.expect("tools/call")
            await server.send({"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": "hi"}})  # fmt: skip
            for request in (second, first):
                name = request["params"]["name"]
                await server.answer(request, {"content": [{"type": "text", "text": name}]})
        assert results == {"a": "a", "b": "b"}


async def test_server_death_fails_every_pending_request() -> None:
    async with fake_session() as (session, server):
        errors: list[BaseException] = []

        async def call() -> None:
            with pytest.raises(ConnectionLost) as info:
                await session.call_tool("x")
            errors.append(info.value)

        with trio.fail_after(1):
            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(call)
                for _ in range(3):
                    await server.expect("tools/call")
                await server.stream.aclose()
        assert len(errors) == 3
        assert all(isinstance(error.__cause__, TransportClosed) for error in errors)
        assert "connection to the server ended" in str(errors[0])
        reason = await session.wait_closed()
        assert isinstance(reason, TransportClosed)
        with pytest.raises(ConnectionLost):
            await session.list_tools()


async def test_undeclared_capabilities_send_nothing() -> None:
    async with fake_session(capabilities={}) as (session, server):
        assert await session.list_tools() == []
        assert await session.list_resources() == []
        assert await session.list_resource_templates() == []
        assert await session.list_prompts() == []
        assert await session.tasks.list() == []
        assert (await session.complete({"type": "ref/prompt", "name": "p"}, "a", "")).values == ()
        await session.set_logging_level("debug")
        with pytest.raises(MethodNotFound):
            await session.call_tool("x")
        with pytest.raises(MethodNotFound):
            await session.subscribe_resource("file:///x")
        await server.stream.aclose()
        with pytest.raises(TransportClosed):  # nothing was sent before the close
            await server.receive()


async def test_pagination_and_output_schema() -> None:
    schema = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    tool = {"name": "add", "inputSchema": {"type": "object"}, "outputSchema": schema}
    async with fake_session() as (session, server):

        async def serve() -> None:
            first = await server.expect("tools/list")
            assert "params" not in first or "cursor" not in first["params"]
            await server.answer(first, {"tools": [tool], "nextCursor": "c1"})
            second = await server.expect("tools/list")
            assert second["params"]["cursor"] == "c1"
            other = {"name": "echo", "title": "Echo", "inputSchema": {"type": "object"},
                     "annotations": {"readOnlyHint": True}, "icons": [{"src": "https://x/i.png"}],
                     "execution": {"taskSupport": "optional"}}  # fmt: skip
            await server.answer(second, {"tools": [other]})
            bad = await server.expect("tools/call")
            await server.answer(bad, {"content": [], "structuredContent": {"sum": "two"}})
            good = await server.expect("tools/call")
            await server.answer(good, {"content": [], "structuredContent": {"sum": 2}})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            tools = await session.list_tools()
            assert [t.name for t in tools] == ["add", "echo"]
            echo = tools[1]
            assert echo.display_name == "Echo"
            assert echo.annotations is not None
            assert echo.annotations.read_only_hint
            assert echo.icons == ({"src": "https://x/i.png"},)
            assert echo.task_support == "optional"
            with pytest.raises(ToolOutputInvalid, match="sum"):
                await session.call_tool("add", {"a": 1, "b": 1})
            assert (await session.call_tool("add", {"a": 1, "b": 1})).structured_content == {
                "sum": 2
            }


async def refused(server: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    await server.send({"jsonrpc": "2.0", "id": "s1", "method": method, "params": params})
    answer = await server.receive()
    assert answer["id"] == "s1"
    return answer


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("sampling/createMessage", {"messages": [], "maxTokens": 5}, -32601),
        ("roots/list", {}, -32601),
        ("elicitation/create", {"message": "m", "requestedSchema": {"type": "object"}}, -32601),
        ("tasks/list", {}, -32601),
        ("no/such", {}, -32601),
    ],
)
async def test_unconfigured_server_requests_are_refused(
    method: str, params: dict[str, Any], code: int
) -> None:
    async with fake_session() as (_session, server):
        answer = await refused(server, method, params)
        assert answer["error"]["code"] == code


async def test_undeclared_elicitation_mode_is_invalid_params() -> None:
    async def elicit(request: ElicitRequest) -> ElicitResult:
        raise AssertionError("not called")

    async with fake_session(handlers=ClientHandlers(elicitation=elicit)) as (_session, server):
        params = {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}
        answer = await refused(server, "elicitation/create", params)
        assert answer["error"]["code"] == InvalidParams.CODE


async def test_elicitation_defaults_and_handler_errors() -> None:
    calls: list[ElicitRequest] = []

    async def elicit(request: ElicitRequest) -> ElicitResult:
        calls.append(request)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return ElicitResult(action="accept", content={"name": "Ada"})

    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "Bob"},
            "age": {"type": "integer", "default": 30},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                     "default": ["a"]},
            "email": {"type": "string"},
        },
    }  # fmt: skip
    async with fake_session(handlers=ClientHandlers(elicitation=elicit)) as (session, server):
        params = {"mode": "form", "message": "who?", "requestedSchema": schema}
        answer = await refused(server, "elicitation/create", params)
        assert answer["result"] == {
            "action": "accept",
            "content": {"name": "Ada", "age": 30, "tags": ["a"]},
        }
        failed = await refused(server, "elicitation/create", params)
        assert failed["error"]["code"] == -32603
        assert calls[0].message == "who?"

        async def pong() -> None:
            await server.answer(await server.expect("ping"), {})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pong)
            await session.ping()  # the failed handler did not hurt the session


class ExpiringStream:
    """A memory stream whose send fails once with ``SessionExpired`` for ``method``."""

    def __init__(self, inner: MemoryMessageStream, method: bytes) -> None:
        self.inner = inner
        self.method = method
        self.expired = False

    async def receive_message(self) -> bytes:
        return await self.inner.receive_message()

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        return self.inner.receive_ready()

    async def send_message(self, data: bytes) -> None:
        if not self.expired and self.method in data:
            self.expired = True
            raise SessionExpired("HTTP 404 for the session id")
        await self.inner.send_message(data)

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        for message in messages:
            await self.send_message(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_session_expired_reinitializes_and_retries() -> None:
    def wrap(inner: MemoryMessageStream) -> MessageStream:
        return ExpiringStream(inner, b'"tools/call"')

    async with fake_session(wrap=wrap) as (session, server):

        async def serve() -> None:
            await server.handshake(probed=False)  # the renewal: the era is known
            call = await server.expect("tools/call")
            await server.answer(call, {"content": [{"type": "text", "text": "again"}]})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with trio.fail_after(5):
                assert (await session.call_tool("x")).text == "again"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=st.lists(st.binary(min_size=1, max_size=40), max_size=8))
async def test_junk_from_the_server_never_crashes_the_session(junk: list[bytes]) -> None:
    async with fake_session() as (session, server):

        async def serve() -> None:
            request = await server.expect("ping")
            for line in junk:
                await server.send(line)
            await server.answer(request, {})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with trio.fail_after(5):
                await session.ping()
        assert session.wait_closed is not None
        assert session._core.end_reason is None


async def test_infinite_timeout_waits(autojump_clock: trio.testing.MockClock) -> None:
    async with fake_session() as (session, server):

        async def late() -> None:
            request = await server.expect("ping")
            await trio.sleep(1000)
            await server.answer(request, {})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(late)
            await session.ping(timeout=math.inf)
        assert trio.current_time() == 1000


async def test_errors_in_the_block_come_out_unwrapped() -> None:
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handshake, None)
        with pytest.raises(ValueError, match="mine"):  # not an ExceptionGroup
            async with open_client_session(client_end) as session:
                raise ValueError("mine")
    assert await session.wait_closed() is None  # closed by this side


async def test_server_cancels_its_request_to_the_client() -> None:
    started = trio.Event()

    async def sample(request: Any) -> Any:
        started.set()
        await trio.sleep_forever()

    async with fake_session(handlers=ClientHandlers(sampling=sample)) as (session, server):
        params = {"messages": [], "maxTokens": 5}
        await server.send({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage",
                           "params": params})  # fmt: skip
        await started.wait()
        await server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": 7}})  # fmt: skip

        async def pong() -> None:
            # No answer to request 7 comes before the ping: the handler was cancelled quietly.
            await server.answer(await server.expect("ping"), {})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pong)
            await session.ping()
