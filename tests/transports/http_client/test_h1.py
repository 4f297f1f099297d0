"""``H1Pool``: framing of answers, keep-alive and its stale connections, the httpx fallbacks.

A raw trio TCP server on 127.0.0.1 answers with canned bytes, so every framing case is exact.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING

import httpx
import pytest
import trio

from trimcp.transports.http_client._h1 import H1Pool, pool_for

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from trimcp.transports.http_client._h1 import H1Response


async def read_request(stream: trio.SocketStream, buffer: bytes) -> tuple[bytes, bytes] | None:
    """Return one request (head and Content-Length body) and the bytes after it; None: EOF."""
    while b"\r\n\r\n" not in buffer:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += await stream.receive_some(65536)
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


@contextlib.asynccontextmanager
async def serve(
    reply: Callable[[bytes], list[bytes] | None],
) -> AsyncIterator[tuple[str, list[int]]]:
    """Answer each request with ``reply(request)``'s pieces; None: close (also after a
    ``Connection: close`` answer). Yields the URL and each connection's request count.
    """
    connections: list[int] = []

    async def handle(stream: trio.SocketStream) -> None:
        index = len(connections)
        connections.append(0)
        buffer = b""
        async with stream:
            while (got := await read_request(stream, buffer)) is not None:
                request, buffer = got
                connections[index] += 1
                pieces = reply(request)
                if pieces is None:
                    return
                for piece in pieces:
                    await stream.send_all(piece)
                    await trio.lowlevel.checkpoint()  # the client may read a piece at a time
                if b"Connection: close" in pieces[0]:
                    return

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, handle, 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp", connections
        nursery.cancel_scope.cancel()


def pool(url: str, read_timeout: float | None = 5.0) -> H1Pool:
    return H1Pool(url, connect_timeout=5.0, read_timeout=read_timeout)


async def body_of(response: H1Response) -> bytes:
    try:
        return await response.aread()
    finally:
        await response.aclose()


async def test_content_length_chunked_and_close_framing() -> None:
    answers = iter(
        [
            [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhel", b"lo"],
            [
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r",
                b"\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n",
            ],
            [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"],
            [b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"],
        ]
    )

    def reply(request: bytes) -> list[bytes] | None:
        return next(answers, None)

    async with serve(reply) as (url, connections):
        client = pool(url)
        first = await client.send("POST", {"accept": "application/json"}, b"{}")
        assert first.status_code == 200
        assert first.is_success
        assert first.headers["x-a"] == "1, 2"
        assert await body_of(first) == b"hello"
        second = await client.send("GET", {})
        assert await body_of(second) == b"abcde"
        third = await client.send("GET", {})
        assert third.status_code == 204
        assert await body_of(third) == b""
        fourth = await client.send("DELETE", {})
        assert await body_of(fourth) == b"until the end"
        await client.aclose()
    assert connections == [4]  # one connection kept alive for all of them


async def test_a_connection_closed_while_idle_is_replaced_once() -> None:
    def reply(request: bytes) -> list[bytes] | None:
        return [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]

    served = 0

    def once_per_connection(request: bytes) -> list[bytes] | None:
        nonlocal served
        served += 1
        answer = reply(request)
        return answer if served != 2 else None  # the second: closed unanswered

    async with serve(once_per_connection) as (url, connections):
        client = pool(url)
        assert await body_of(await client.send("POST", {}, b"1")) == b"ok"
        assert await body_of(await client.send("POST", {}, b"2")) == b"ok"
        await client.aclose()
    assert len(connections) == 2  # the stale one, then a new one


async def test_redirects_are_flagged_for_httpx_and_bad_answers_raise() -> None:
    answers = iter(
        [
            [b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /other\r\nContent-Length: 0\r\n\r\n"],
            [b"NOT HTTP\r\n\r\n"],
        ]
    )
    async with serve(lambda request: next(answers, None)) as (url, _):
        client = pool(url)
        moved = await client.send("POST", {}, b"{}")
        assert moved.redirect
        await moved.aclose()
        with pytest.raises(httpx.RemoteProtocolError):
            await client.send("POST", {}, b"{}")
        await client.aclose()


async def test_header_injection_and_silence_are_refused() -> None:
    async with serve(lambda request: [b"HTTP/1.1 200 OK\r\n"]) as (url, _):
        client = pool(url, read_timeout=0.2)
        with pytest.raises(httpx.LocalProtocolError):
            await client.send("POST", {"x-evil": "a\r\nhost: elsewhere"}, b"{}")
        with pytest.raises(httpx.ReadTimeout):
            await client.send("POST", {}, b"{}")
        await client.aclose()


async def test_nothing_listening_is_a_connect_error() -> None:
    async with serve(lambda request: None) as (url, _):
        dead = url.rsplit(":", 1)[0] + ":1/mcp"
    with pytest.raises(httpx.ConnectError):
        await pool(dead).send("POST", {}, b"{}")


def test_an_environment_proxy_leaves_the_url_to_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert pool_for("http://example.com/mcp", connect_timeout=1, read_timeout=None) is not None
    monkeypatch.setenv("http_proxy", "http://proxy.invalid:3128")
    assert pool_for("http://example.com/mcp", connect_timeout=1, read_timeout=None) is None
    monkeypatch.setenv("no_proxy", "example.com")
    assert pool_for("http://example.com/mcp", connect_timeout=1, read_timeout=None) is not None
