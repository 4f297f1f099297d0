"""trimcp's HTTP/1.1 server under slow and greedy clients, and HTTP/1.0 framing.

Deadlines run on ``MockClock`` over in-memory streams (exact times); the connection limit
and the slow-head deadline are also checked over real loopback sockets.
"""

from __future__ import annotations

import functools
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import h11
import pytest
import trio
import trio.testing

from tests.http.test_h1_server import Client, connection, echo, streaming
from trimcp.http._h1 import H1Settings, _serve_connection, _Server, serve_h1

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

POST_HEAD = b"POST / HTTP/1.1\r\nhost: t\r\ncontent-length: 100\r\n\r\n"
CHUNKED_HEAD = b"POST / HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n"


async def trickle(client: Client, data: bytes, every: float) -> None:
    """Send ``data`` one byte at a time, ``every`` seconds apart, until the server hangs up."""
    for byte in data:
        try:
            await client.send_raw(bytes([byte]))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        await trio.sleep(every)


async def test_a_head_trickled_a_byte_at_a_time_ends_at_the_head_deadline(
    autojump_clock: object,
) -> None:
    # Each byte comes well within any per-read timeout; the head as a whole does not.
    settings = H1Settings(head_timeout=10.0)
    async with connection(echo, settings) as client, trio.open_nursery() as nursery:
        start = trio.current_time()
        nursery.start_soon(trickle, client, b"POST / HTTP/1.1\r\nhost: t\r\nx: " + b"a" * 100, 1.0)
        response, body = await client.response()
        assert response.status_code == 408
        assert b"head took too long" in body
        assert trio.current_time() - start == pytest.approx(10.0)
        assert await client.closed()


@pytest.mark.parametrize(("head", "framed"), [(POST_HEAD, b"x" * 100), (CHUNKED_HEAD, b"64\r\n")])
async def test_a_trickled_body_ends_at_the_body_deadline(
    autojump_clock: object, head: bytes, framed: bytes
) -> None:
    # 100 bytes at 100 bytes/s: the body's deadline is body_timeout + 1 s after it began.
    settings = H1Settings(body_timeout=20.0, min_body_rate=100)
    async with connection(echo, settings) as client, trio.open_nursery() as nursery:
        await client.send_raw(head)
        start = trio.current_time()
        nursery.start_soon(trickle, client, framed + b"y" * 1000, 10.0)
        response, body = await client.response()
        assert response.status_code == 408
        assert b"body took too long" in body
        elapsed = trio.current_time() - start
        # Content-Length counts whole; a chunked body counts what has arrived.
        assert elapsed == pytest.approx(21.0 if head is POST_HEAD else 20.0, abs=0.1)
        assert await client.closed()


async def test_a_body_at_the_minimum_rate_is_served(autojump_clock: object) -> None:
    settings = H1Settings(body_timeout=5.0, min_body_rate=10)
    async with connection(echo, settings) as client, trio.open_nursery() as nursery:
        await client.send_raw(POST_HEAD)
        # 100 bytes in 10-byte pieces, one a second: 10 s, within 5 s + 100 / 10.
        for _ in range(10):
            await trio.sleep(1.0)
            await client.send_raw(b"z" * 10)
        client.h11.send(
            h11.Request(
                method="POST", target="/", headers=[("host", "t"), ("content-length", "100")]
            )
        )
        client.h11.send(h11.Data(data=b"z" * 100))
        client.h11.send(h11.EndOfMessage())
        response, _ = await client.response()
        assert response.status_code == 200
        nursery.cancel_scope.cancel()


async def test_chunked_framing_and_trailers_count_toward_the_wire_limit() -> None:
    settings = H1Settings(max_body_size=1000)
    async with connection(echo, settings) as client:
        # One byte of body, then trailers: decoded it is tiny, on the wire it is not.
        trailers = b"".join(b"x-t%d: y\r\n" % n for n in range(100))
        await client.send_raw(CHUNKED_HEAD + b"1\r\na\r\n0\r\n" + trailers + b"\r\n")
        response, body = await client.response()
        assert response.status_code == 413
        assert b"larger than 1000 bytes" in body


async def test_oversized_trailers_are_refused_whatever_the_limit() -> None:
    async with connection(echo) as client:
        trailers = b"x: " + b"y" * 20_000 + b"\r\n"
        await client.send_raw(CHUNKED_HEAD + b"1\r\na\r\n0\r\n" + trailers + b"\r\n")
        response, body = await client.response()
        assert response.status_code == 431
        assert b"trailer section" in body
        assert await client.closed()


async def test_at_the_connection_limit_the_longest_idle_gives_way(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trimcp.http._h1")
    server = _Server(echo, H1Settings(max_connections=2))
    async with trio.open_nursery() as nursery:

        async def open_one() -> Client:
            client_side, server_side = trio.testing.memory_stream_pair()
            nursery.start_soon(_serve_connection, server, server_side)
            await trio.testing.wait_all_tasks_blocked()
            return Client(client_side)

        idle = await open_one()
        await idle.request("POST", "/", b"{}")
        await idle.response()
        busy = await open_one()
        await busy.send_raw(b"POST / HTTP/1.1\r\nhost: t\r\n")  # a head in progress
        await trio.testing.wait_all_tasks_blocked()
        assert server.active == 2
        newcomer = await open_one()
        # The idle connection made room; the busy one and the newcomer are served.
        assert await idle.closed(within=1.0)
        await newcomer.request("POST", "/", b"{}")
        response, _ = await newcomer.response()
        assert response.status_code == 200
        # Now nobody is idle: newcomers are closed at once, logged once.
        await newcomer.send_raw(b"GET / HTTP/1.1\r\n")
        await trio.testing.wait_all_tasks_blocked()  # its head begun: no longer idle
        turned_away = [await open_one() for _ in range(3)]
        for client in turned_away:
            assert await client.closed(within=1.0)
        refusals = [r for r in caplog.records if "none is idle" in r.getMessage()]
        assert len(refusals) == 1
        # Once a connection ends, newcomers are served again (and that is logged).
        await busy.stream.aclose()
        await trio.testing.wait_all_tasks_blocked()
        again = await open_one()
        await again.request("POST", "/", b"{}")
        assert (await again.response())[0].status_code == 200
        assert any("3 were closed" in r.getMessage() for r in caplog.records)
        nursery.cancel_scope.cancel()


async def read_all(client: Client) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with trio.fail_after(5):
        while chunk := await client.stream.receive_some(65536):
            received += chunk
    return received


async def test_a_half_closed_client_still_gets_its_pipelined_answers() -> None:
    async with connection(echo) as client:
        one = b"POST /1 HTTP/1.1\r\nhost: t\r\ncontent-length: 2\r\n\r\n{}"
        two = b"POST /2 HTTP/1.1\r\nhost: t\r\ncontent-length: 2\r\n\r\n[]"
        await client.send_raw(one + two)
        await client.stream.send_eof()
        received = await read_all(client)
        assert received.count(b"HTTP/1.1 200") == 2
        assert b'"path":"/1"' in received
        assert b'"path":"/2"' in received


# --- HTTP/1.0 ----------------------------------------------------------------------------------


async def test_a_streamed_answer_to_http10_is_close_delimited() -> None:
    async with connection(streaming) as client:
        await client.send_raw(b"GET / HTTP/1.0\r\n\r\n")
        received = await read_all(client)
    head, _, body = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower()
    assert b"content-length" not in head.lower()
    assert b"connection: close" in head.lower()
    assert body == b"onethree"


async def test_http10_keep_alive_only_when_asked_and_then_said() -> None:
    async with connection(echo) as client:
        ask = b"POST / HTTP/1.0\r\nconnection: keep-alive\r\ncontent-length: 2\r\n\r\n{}"
        await client.send_raw(ask + ask)
        received = b""
        with trio.fail_after(5):
            while received.count(b"HTTP/1.1 200") < 2 or not received.endswith(b"}"):
                received += await client.stream.receive_some(65536)
        assert received.lower().count(b"connection: keep-alive") == 2
    async with connection(echo) as client:
        await client.send_raw(b"POST / HTTP/1.0\r\ncontent-length: 2\r\n\r\n{}")
        received = await read_all(client)
        assert b"connection: close" in received.lower()
        assert b"keep-alive" not in received.lower()


async def test_http10_keep_alive_with_a_streamed_answer_closes() -> None:
    async with connection(streaming) as client:
        await client.send_raw(b"GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n")
        received = await read_all(client)
    assert b"connection: close" in received.lower()
    assert received.endswith(b"onethree")


# --- real sockets ------------------------------------------------------------------------------


async def connect(port: int) -> trio.SocketStream:
    return await trio.open_tcp_stream("127.0.0.1", port)


async def hung_up(stream: trio.SocketStream, within: float = 5.0) -> bool:
    with trio.move_on_after(within):
        while True:
            try:
                if not await stream.receive_some(65536):
                    return True
            except trio.BrokenResourceError:
                return True
    return False


@asynccontextmanager
async def listening(settings: H1Settings) -> AsyncIterator[int]:
    """Serve ``echo`` with ``settings`` on 127.0.0.1 and a free port; yield the port."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with trio.open_nursery() as nursery:
        await nursery.start(functools.partial(serve_h1, echo, listeners, settings=settings))
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


@pytest.mark.slow
async def test_slow_heads_over_real_sockets_are_all_closed() -> None:
    async with listening(H1Settings(head_timeout=0.5)) as port:
        streams = [await connect(port) for _ in range(50)]
        for stream in streams:
            await stream.send_all(b"P")  # each has begun a head, and sends no more
        start = trio.current_time()
        for stream in streams:
            assert await hung_up(stream)
        assert trio.current_time() - start < 3.0
        for stream in streams:
            await stream.aclose()


@pytest.mark.slow
async def test_the_connection_limit_over_real_sockets() -> None:
    async with listening(H1Settings(max_connections=5)) as port:
        held = [await connect(port) for _ in range(5)]
        for stream in held:
            await stream.send_all(b"POST / HTTP/1.1\r\n")  # busy: a head in progress
        extra = await connect(port)
        assert await hung_up(extra)
        await extra.aclose()
        # The held connections are still served.
        await held[0].send_all(b"host: t\r\ncontent-length: 2\r\n\r\n{}")
        answer = await held[0].receive_some(65536)
        assert answer.startswith(b"HTTP/1.1 200")
        for stream in held:
            await stream.aclose()
