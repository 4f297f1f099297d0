"""HTTP failures explained in plain words, and SSE resumption, against a scripted raw server."""

from __future__ import annotations

import functools
import socket
from typing import Any

import orjson
import pytest
import trio

from trimcp.errors import (
    ConnectFailed,
    EndpointNotFound,
    HttpAuthRequired,
    HttpStatusError,
    NotAnMcpEndpoint,
)
from trimcp.transports.http_client._client import open_http_client_stream
from trimcp.transports.http_client._resume import ReconnectPolicy

from .test_helpers import (
    init_result,
    initialize,
    initialize_request,
    raw_answer,
    raw_server,
    request,
)

pytestmark = pytest.mark.slow

FAST = ReconnectPolicy(default_delay=0.01, max_delay=0.05, max_attempts=3)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_connection_refused_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with open_http_client_stream(url) as stream:
        _, data = initialize_request()
        with pytest.raises(ConnectFailed, match="is the server running") as caught:
            await stream.send_message(data)
    assert url in str(caught.value)
    assert caught.value.__cause__ is not None


async def test_tls_to_a_plain_server_is_a_tls_error() -> None:
    async def plain(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.send_all(raw_answer("400 Bad Request", "text/plain", b"plain HTTP"))

    async with trio.open_nursery() as nursery:
        serve = functools.partial(trio.serve_tcp, plain, 0, host="127.0.0.1")
        listeners = await nursery.start(serve)
        port = listeners[0].socket.getsockname()[1]
        async with open_http_client_stream(f"https://127.0.0.1:{port}/mcp") as stream:
            _, data = initialize_request()
            with pytest.raises(ConnectFailed, match="TLS handshake failed"):
                await stream.send_message(data)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("status", "content_type", "body", "error", "words"),
    [
        ("404 Not Found", "text/plain", b"nope", EndpointNotFound, "/mcp"),
        ("401 Unauthorized", None, b"", HttpAuthRequired, "authorization"),
        ("403 Forbidden", None, b"", HttpAuthRequired, '"auth": "oauth"'),
        (
            "400 Bad Request",
            "application/json",
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad version"}}',
            HttpStatusError,
            "Bad version",
        ),
        ("503 Service Unavailable", "text/plain", b"overloaded", HttpStatusError, "logs"),
        ("200 OK", "text/html", b"<html><body>Welcome</body></html>", NotAnMcpEndpoint, "HTML"),
        ("200 OK", "application/json", b"<html>oops</html>", NotAnMcpEndpoint, "oops"),
    ],
)
async def test_initialize_failures_are_explained(
    status: str, content_type: str | None, body: bytes, error: type[Exception], words: str
) -> None:
    async def answer(method: str, headers: dict[str, str], _: bytes) -> bytes:
        return raw_answer(status, content_type, body)

    async with raw_server(answer) as url, open_http_client_stream(url) as stream:
        _, data = initialize_request()
        with pytest.raises(error, match=words):
            await stream.send_message(data)


class Script:
    """A raw server's script: initialize, then one answer per tools/call."""

    def __init__(self, *answers: bytes) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[str, dict[str, str]]] = []

    async def __call__(self, method: str, headers: dict[str, str], body: bytes) -> bytes:
        self.requests.append((method, headers))
        if method == "POST":
            message = orjson.loads(body)
            if message.get("method") == "initialize":
                session = [("mcp-session-id", "s1")]
                answer = raw_answer("200 OK", "application/json", init_result(message["id"]))
                head, _, rest = answer.partition(b"\r\n")
                extra = "".join(f"{name}: {value}\r\n" for name, value in session)
                return head + b"\r\n" + extra.encode() + rest
            if "id" not in message:
                return raw_answer("202 Accepted", None, b"")
        if method == "DELETE":
            return raw_answer("200 OK", None, b"")
        if method == "GET" and "last-event-id" not in headers:
            return raw_answer("405 Method Not Allowed", None, b"")
        return self.answers.pop(0)


def sse(*events: str) -> bytes:
    return raw_answer("200 OK", "text/event-stream", "".join(events).encode())


async def test_a_request_refused_with_500_gets_a_local_error_answer() -> None:
    script = Script(raw_answer("500 Internal Server Error", "text/plain", b"boom"))
    async with raw_server(script) as url, open_http_client_stream(url) as stream:
        await initialize(stream)
        request_id, data = request("tools/call", {"name": "x", "arguments": {}})
        await stream.send_message(data)
        answer = orjson.loads(await stream.receive_message())
    assert answer["id"] == request_id
    assert "HTTP 500" in answer["error"]["message"]
    assert "boom" in answer["error"]["message"]
    post = [headers for method, headers in script.requests if method == "POST"][-1]
    assert post["mcp-session-id"] == "s1"
    assert post["mcp-protocol-version"] == "2025-11-25"
    assert post["accept"] == "application/json, text/event-stream"


def message_event(event_id: str, message: dict[str, Any]) -> str:
    return f"id: {event_id}\ndata: {orjson.dumps(message).decode()}\n\n"


async def test_resumption_delivers_replayed_events_once() -> None:
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    request_id, data = request("tools/call", {"name": "x", "arguments": {}})
    result = {"jsonrpc": "2.0", "id": request_id, "result": {"content": []}}
    script = Script(
        # The POST's stream: priming, a progress event, then the connection closes.
        sse("id: p0\nretry: 10\ndata:\n\n", message_event("p1", progress)),
        # The resumption replays p1 (a careless server), then answers.
        sse(message_event("p1", progress), message_event("p2", result)),
    )
    async with raw_server(script) as url, open_http_client_stream(url, reconnect=FAST) as stream:
        await initialize(stream)
        await stream.send_message(data)
        with trio.fail_after(5):
            first = orjson.loads(await stream.receive_message())
            second = orjson.loads(await stream.receive_message())
    assert first == progress
    assert second == result
    resumed = [headers for method, headers in script.requests if method == "GET"][-1]
    assert resumed["last-event-id"] == "p1"


async def test_a_stream_without_ids_that_breaks_fails_its_request() -> None:
    request_id, data = request("tools/call", {"name": "x", "arguments": {}})
    script = Script(sse("data: " + '{"jsonrpc":"2.0","method":"notifications/message"}\n\n'))
    async with raw_server(script) as url, open_http_client_stream(url, reconnect=FAST) as stream:
        await initialize(stream)
        await stream.send_message(data)
        with trio.fail_after(5):
            await stream.receive_message()  # the notification
            answer = orjson.loads(await stream.receive_message())
    assert answer["id"] == request_id
    assert "carry no id" in answer["error"]["message"]


async def test_resumption_gives_up_after_fruitless_attempts() -> None:
    request_id, data = request("tools/call", {"name": "x", "arguments": {}})
    empty = sse("")
    script = Script(sse("id: a\ndata:\n\n"), empty, empty, empty, empty)
    async with raw_server(script) as url, open_http_client_stream(url, reconnect=FAST) as stream:
        await initialize(stream)
        await stream.send_message(data)
        with trio.fail_after(5):
            answer = orjson.loads(await stream.receive_message())
    assert answer["id"] == request_id
    assert "reconnections in a row" in answer["error"]["message"]
