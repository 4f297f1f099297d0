"""Random bytes as a server's answer never crash the HTTP client stream: a clean error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.errors import MessageTooLarge, TrimcpError
from trimcp.transports.http_client._client import open_http_client_stream
from trimcp.transports.http_client._resume import ReconnectPolicy

from .test_helpers import init_result, raw_answer, raw_server, request

if TYPE_CHECKING:
    from trimcp.transports import MessageStream

pytestmark = pytest.mark.slow

FAST = ReconnectPolicy(default_delay=0.001, max_delay=0.002, max_attempts=2)

# SSE-looking pieces, so that random bodies reach deep into the decoder, not just its start.
PIECES = st.sampled_from(
    [b"data: ", b"id: ", b"retry: 1\n", b"event: x\n", b"\n", b"\r\n", b":", b"{", b"}", b'"id"']
)
BODIES = st.one_of(st.binary(max_size=300), st.lists(PIECES | st.binary(max_size=8)).map(b"".join))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=BODIES, kind=st.sampled_from(["text/event-stream", "application/json", "text/html"]))
async def test_random_answers_end_in_messages_or_clean_errors(body: bytes, kind: str) -> None:
    async def answer(method: str, headers: dict[str, str], sent: bytes) -> bytes:
        if method == "POST":
            message = orjson.loads(sent)
            if message.get("method") == "initialize":
                return raw_answer("200 OK", "application/json", init_result(message["id"]))
            if "id" not in message:
                return raw_answer("202 Accepted", None, b"")
        if method == "GET" and "last-event-id" not in headers:
            return raw_answer("405 Method Not Allowed", None, b"")
        return raw_answer("200 OK", kind, body)

    async with (
        raw_server(answer) as url,
        open_http_client_stream(url, reconnect=FAST, max_message_size=256) as stream,
    ):
        _, data = request("initialize", {"protocolVersion": "2025-11-25"})
        await stream.send_message(data)
        await stream.receive_message()
        call_id, call = request("tools/call", {"name": "x", "arguments": {}})
        try:
            await stream.send_message(call)
        except TrimcpError:
            return
        with trio.fail_after(10):
            await until_answered(stream, call_id)


async def until_answered(stream: MessageStream, call_id: int) -> None:
    """Receive until the answer to ``call_id`` or a clean error; anything else fails."""
    while True:
        try:
            message = await stream.receive_message()
        except MessageTooLarge:
            continue
        except TrimcpError:
            return
        try:
            parsed = orjson.loads(message)
        except orjson.JSONDecodeError:
            continue  # garbage passed on as a message: the session above logs it
        if isinstance(parsed, dict) and parsed.get("id") == call_id:
            return
