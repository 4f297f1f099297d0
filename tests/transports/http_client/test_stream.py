"""``open_http_client_stream`` against trimcp's own Streamable HTTP server on 127.0.0.1.

Raw JSON-RPC over the stream: the handshake, answers as SSE and as JSON, progress, the GET
stream, SEP-1699 polling resumed with ``Last-Event-ID``, an expired session, DELETE on close.
"""

from __future__ import annotations

import orjson
import pytest
import trio

from tests.http._client import running
from trimcp.errors import SessionExpired, TransportClosed
from trimcp.http import HttpOptions
from trimcp.transports.http_client._client import open_http_client_stream

from .test_helpers import (
    call_tool,
    initialize,
    notification,
    request,
    streaming_server,
)

pytestmark = pytest.mark.slow


async def test_handshake_keeps_session_and_version() -> None:
    async with (
        running(streaming_server()) as listener,
        open_http_client_stream(listener.url) as stream,
    ):
        assert stream.session_id is None
        result = await initialize(stream)
        assert result["protocolVersion"] == "2025-11-25"
        assert stream.protocol_version == "2025-11-25"
        assert stream.session_id is not None
        answer = await call_tool(stream, "echo", {"text": "hi"})
        assert answer["result"]["content"][0]["text"] == "hi"


async def test_progress_arrives_before_the_result() -> None:
    async with (
        running(streaming_server()) as listener,
        open_http_client_stream(listener.url) as stream,
    ):
        await initialize(stream)
        seen: list[dict[str, object]] = []
        answer = await call_tool(stream, "progress", {"steps": 5}, progress=True, seen=seen)
        assert answer["result"]["content"][0]["text"] == "5 steps"
        steps = [m["params"]["progress"] for m in seen if m["method"] == "notifications/progress"]
        assert steps == [1, 2, 3, 4, 5]


async def test_a_long_answer_does_not_block_the_sender() -> None:
    async with (
        running(streaming_server()) as listener,
        open_http_client_stream(listener.url) as stream,
    ):
        await initialize(stream)
        slow_id, slow = request("tools/call", {"name": "slow", "arguments": {"seconds": 0.5}})
        echo_id, echo = request("tools/call", {"name": "echo", "arguments": {"text": "quick"}})
        with trio.fail_after(0.4):
            await stream.send_message(slow)
            await stream.send_message(echo)
            first = orjson.loads(await stream.receive_message())
        assert first["id"] == echo_id
        second = orjson.loads(await stream.receive_message())
        assert second["id"] == slow_id


@pytest.mark.parametrize("options", [HttpOptions(json_response=True), HttpOptions(stateless=True)])
async def test_json_answers_and_stateless_servers(options: HttpOptions) -> None:
    async with (
        running(streaming_server(), options) as listener,
        open_http_client_stream(listener.url) as stream,
    ):
        await initialize(stream)
        assert (stream.session_id is None) == options.stateless
        answer = await call_tool(stream, "echo", {"text": "json"})
        assert answer["result"]["content"][0]["text"] == "json"


async def test_polling_is_resumed_without_losing_anything() -> None:
    options = HttpOptions(retry_ms=20)
    async with (
        running(streaming_server(), options) as listener,
        open_http_client_stream(listener.url) as stream,
    ):
        await initialize(stream)
        seen: list[dict[str, object]] = []
        with trio.fail_after(5):
            answer = await call_tool(stream, "poll", {}, progress=True, seen=seen)
        assert answer["result"]["content"][0]["text"] == "polled (closed: True)"
        steps = [m["params"]["progress"] for m in seen if m["method"] == "notifications/progress"]
        assert steps == [1, 2]


async def test_server_messages_arrive_on_the_get_stream() -> None:
    server = streaming_server()
    async with running(server) as listener, open_http_client_stream(listener.url) as stream:
        await initialize(stream)
        with trio.fail_after(5):
            while True:
                await server.log("info", "to everyone")
                with trio.move_on_after(0.2):
                    message = orjson.loads(await stream.receive_message())
                    break
        assert message["method"] == "notifications/message"
        assert message["params"]["data"] == "to everyone"


async def test_expired_session_raises_then_a_new_one_starts() -> None:
    async with (
        running(streaming_server()) as listener,
        open_http_client_stream(listener.url) as stream,
    ):
        await initialize(stream)
        old = stream.session_id
        assert old is not None
        assert await listener.manager.end_session(old, "expired for the test")
        _, data = request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        with pytest.raises(SessionExpired):
            await stream.send_message(data)
        assert stream.session_id is None
        with pytest.raises(SessionExpired):  # nothing but initialize until then
            await stream.send_message(notification("notifications/roots/list_changed"))
        await initialize(stream)
        assert stream.session_id not in (None, old)
        answer = await call_tool(stream, "echo", {"text": "again"})
        assert answer["result"]["content"][0]["text"] == "again"


async def test_close_deletes_the_session() -> None:
    async with running(streaming_server()) as listener:
        async with open_http_client_stream(listener.url) as stream:
            await initialize(stream)
            assert listener.manager.statistics().live == 1
        assert listener.manager.statistics().terminated == 1
        assert listener.manager.statistics().live == 0
        with pytest.raises(TransportClosed):
            await stream.receive_message()
        with pytest.raises(TransportClosed):
            await stream.send_message(notification("notifications/initialized"))
