"""trimcp's HTTP/1.1 server (``trimcp/http/_h1.py``), driven by h11 as the client.

Connections run over trio's in-memory stream pairs with ``MockClock`` where time matters
(idle and read timeouts), and over real loopback sockets for shutdown.
"""

from __future__ import annotations

import functools
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import h11
import orjson
import pytest
import trio
import trio.testing

from trimcp.http._h1 import H1Settings, _serve_connection, _Server, serve_h1

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

Scope = dict[str, Any]
Message = dict[str, Any]


async def echo(scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """Answer with what was asked: method, path, query, body and the header names."""
    body = b""
    while True:
        message = await receive()
        assert message["type"] == "http.request"
        body += message["body"]
        if not message["more_body"]:
            break
    answer = orjson.dumps(
        {
            "method": scope["method"],
            "path": scope["path"],
            "query": scope["query_string"].decode(),
            "body": body.decode("latin-1"),
            "headers": [name.decode() for name, _ in scope["headers"]],
        }
    )
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x-a", b"1")]})
    await send({"type": "http.response.body", "body": answer})


async def streaming(scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """Three body parts, the middle one empty; ends with an empty final part."""
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    for part in (b"one", b"", b"three"):
        await send({"type": "http.response.body", "body": part, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


class Client:
    """One client connection: h11 on our side of an in-memory stream."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT)

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def request(
        self, method: str, target: str, body: bytes = b"", headers: list[tuple[str, str]] = ()
    ) -> None:
        fields = [("host", "test"), *headers]
        if method != "GET" or body:
            fields.append(("content-length", str(len(body))))
        out = self.h11.send(h11.Request(method=method, target=target, headers=fields))
        out += self.h11.send(h11.Data(data=body)) if body else b""
        out += self.h11.send(h11.EndOfMessage())
        await self.stream.send_all(out)

    async def response(self) -> tuple[h11.Response, bytes]:
        head: h11.Response | None = None
        body = b""
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                self.h11.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
                    self.h11.start_next_cycle()
                return head, body
            elif isinstance(event, h11.InformationalResponse):
                continue
            else:
                raise AssertionError(f"unexpected {event!r}")

    async def closed(self, within: float = 5.0) -> bool:
        """Whether the server closes the connection within ``within`` seconds."""
        with trio.move_on_after(within):
            while True:
                if not await self.stream.receive_some(65536):
                    return True
        return False


def header(response: h11.Response, name: bytes) -> bytes | None:
    return dict(response.headers).get(name)


@asynccontextmanager
async def connection(app: Any, settings: H1Settings | None = None) -> AsyncIterator[Client]:
    client_side, server_side = trio.testing.memory_stream_pair()
    server = _Server(app, settings or H1Settings())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_serve_connection, server, server_side)
        yield Client(client_side)
        nursery.cancel_scope.cancel()


async def test_requests_share_a_kept_alive_connection() -> None:
    async with connection(echo) as client:
        for n in range(3):
            await client.request("POST", f"/mcp?n={n}", b'{"n":%d}' % n)
            response, body = await client.response()
            assert response.status_code == 200
            assert header(response, b"content-length") == str(len(body)).encode()
            assert header(response, b"x-a") == b"1"
            assert header(response, b"date")
            answer = orjson.loads(body)
            assert (answer["path"], answer["query"], answer["body"]) == (
                "/mcp",
                f"n={n}",
                f'{{"n":{n}}}',
            )


async def test_pipelined_requests_are_answered_in_order() -> None:
    async with connection(echo) as client:
        raw = b"".join(
            b"POST /%d HTTP/1.1\r\nhost: t\r\ncontent-length: 1\r\n\r\n%d" % (n, n)
            for n in range(4)
        )
        await client.send_raw(raw)
        client.h11 = h11.Connection(h11.CLIENT)
        for n in range(4):
            # h11 as a client cannot send pipelined requests itself; read each answer with it.
            client.h11.send(
                h11.Request(
                    method="POST", target=f"/{n}", headers=[("host", "t"), ("content-length", "1")]
                )
            )
            client.h11.send(h11.Data(data=b"x"))
            client.h11.send(h11.EndOfMessage())
            _, body = await client.response()
            assert orjson.loads(body)["body"] == str(n)


async def test_chunked_request_body_and_expect_continue() -> None:
    async with connection(echo) as client:
        await client.send_raw(
            b"POST /c HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n"
            b"expect: 100-continue\r\n\r\n"
        )
        interim = await client.stream.receive_some(65536)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        await client.send_raw(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n")
        client.h11.send(
            h11.Request(
                method="POST",
                target="/c",
                headers=[("host", "t"), ("transfer-encoding", "chunked")],
            )
        )
        client.h11.send(h11.EndOfMessage())
        _, body = await client.response()
        assert orjson.loads(body)["body"] == "abcde"


async def test_a_streamed_response_is_chunked_and_a_head_request_has_no_body() -> None:
    async with connection(streaming) as client:
        await client.request("GET", "/s")
        response, body = await client.response()
        assert header(response, b"transfer-encoding") == b"chunked"
        assert body == b"onethree"
        await client.request("HEAD", "/s")
        head, nothing = await client.response()
        assert head.status_code == 200
        assert nothing == b""
        await client.request("GET", "/s")
        assert (await client.response())[1] == b"onethree"


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"GET / HTTP/1.1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nhost: t\r\n folded\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nhost: t\r\ntransfer-encoding: gzip\r\n\r\n", 501),
        (b"GET / HTTP/3\r\nhost: t\r\n\r\n", 505),
        (b"GET / HTTP/1.1\r\nhost: t\r\nx: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    ],
)
async def test_malformed_requests_get_an_error_and_the_connection_ends(
    raw: bytes, status: int
) -> None:
    async with connection(echo) as client:
        await client.send_raw(raw)
        response, body = await client.response()
        assert response.status_code == status
        assert header(response, b"connection") == b"close"
        assert body.strip()
        assert await client.closed()


async def test_a_malformed_chunked_body_ends_the_connection() -> None:
    async with connection(echo) as client:
        await client.send_raw(
            b"POST / HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"
        )
        client.h11.send(
            h11.Request(
                method="POST", target="/", headers=[("host", "t"), ("transfer-encoding", "chunked")]
            )
        )
        response, body = await client.response()
        assert response.status_code == 400
        assert b"chunk size" in body
        assert await client.closed()


async def test_an_app_that_fails_or_answers_nothing_gets_500() -> None:
    async def failing(scope: Scope, receive: Any, send: Any) -> None:
        raise RuntimeError("boom")

    async def silent(scope: Scope, receive: Any, send: Any) -> None:
        await receive()

    for app in (failing, silent):
        async with connection(app) as client:
            await client.request("GET", "/")
            response, _ = await client.response()
            assert response.status_code == 500
            assert await client.closed()


async def test_an_unread_body_closes_the_connection_after_the_answer() -> None:
    async def early(scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 413, "headers": []})
        await send({"type": "http.response.body", "body": b"too big"})

    async with connection(early) as client:
        await client.send_raw(b"POST / HTTP/1.1\r\nhost: t\r\ncontent-length: 100000\r\n\r\nabc")
        client.h11.send(
            h11.Request(method="POST", target="/", headers=[("host", "t"), ("content-length", "3")])
        )
        response, body = await client.response()
        assert (response.status_code, body) == (413, b"too big")
        assert header(response, b"connection") == b"close"
        assert await client.closed()


async def test_a_streaming_app_hears_the_client_leave() -> None:
    heard = trio.Event()

    async def watcher(scope: Scope, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        assert (await receive())["type"] == "http.disconnect"
        heard.set()

    async with connection(watcher) as client:
        await client.request("GET", "/events")
        assert b"first" in await client.stream.receive_some(65536)
        await client.stream.aclose()
        with trio.fail_after(5):
            await heard.wait()


async def test_idle_connections_and_slow_heads_time_out(autojump_clock: object) -> None:
    settings = H1Settings(keep_alive_timeout=30.0, head_timeout=10.0)
    async with connection(echo, settings) as client:
        await client.request("POST", "/", b"{}")
        await client.response()
        start = trio.current_time()
        assert await client.closed(within=60.0)
        assert trio.current_time() - start == pytest.approx(30.0)
    async with connection(echo, settings) as client:
        await client.send_raw(b"POST / HTTP/1.1\r\nho")
        start = trio.current_time()
        response, _ = await client.response()
        assert response.status_code == 408
        assert trio.current_time() - start == pytest.approx(10.0)


@pytest.mark.slow
async def test_shutdown_closes_idle_connections_and_lets_requests_finish() -> None:
    release = trio.Event()

    async def slow(scope: Scope, receive: Any, send: Any) -> None:
        await receive()
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"finished"})

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    settings = H1Settings(graceful_timeout=5.0)
    async with trio.open_nursery() as nursery:
        scope = trio.CancelScope()

        async def run_server(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            with scope:
                await serve_h1(slow, listeners, settings=settings, task_status=task_status)

        await nursery.start(run_server)
        idle = Client(await trio.open_tcp_stream("127.0.0.1", port))
        busy = Client(await trio.open_tcp_stream("127.0.0.1", port))
        await busy.request("GET", "/")
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()
        assert await idle.closed()
        release.set()
        response, body = await busy.response()
        assert (response.status_code, body) == (200, b"finished")
        assert header(response, b"connection") == b"close"
        assert await busy.closed()
        await idle.stream.aclose()
        await busy.stream.aclose()
        with pytest.raises(OSError, match="connect"):
            await trio.open_tcp_stream("127.0.0.1", port)


@pytest.mark.slow
async def test_a_real_socket_round_trip() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(functools.partial(serve_h1, echo, listeners))
        client = Client(await trio.open_tcp_stream("127.0.0.1", port))
        await client.request("POST", "/x", b"hello")
        _, body = await client.response()
        assert orjson.loads(body)["body"] == "hello"
        await client.stream.aclose()
        nursery.cancel_scope.cancel()
