"""What the client's lean send path (``_wire.Sender``) keeps of ``httpx.AsyncClient.send``.

Requests go to the transport itself, so cookies and redirects are handled by ``Sender``: a
front server on 127.0.0.1 (hypercorn, forwarding to trimcp's own endpoint) sets an
affinity cookie on ``initialize`` and refuses later requests without it, as a load
balancer with sticky sessions does, and moves the endpoint with a 307. A proxy in the
environment sends everything through ``AsyncClient.send``, which applies it.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from tests.http._client import running
from trimcp.client.session import open_client_session
from trimcp.http import HttpOptions
from trimcp.transports.http_client._client import open_http_client_stream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

pytestmark = pytest.mark.slow

_COOKIE = b"affinity=backend-1"


def front(backend: str, seen: list[str]) -> Callable[..., Awaitable[None]]:
    """An ASGI app: ``/old`` -> 307 ``/mcp``; ``/mcp`` forwarded, with the cookie rule."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rpartition(".")[2]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = dict(scope["headers"])
        seen.append(f"{scope['method']} {scope['path']} cookie={headers.get(b'cookie', b'')!r}")
        if scope["path"] == "/old":
            await send(
                {
                    "type": "http.response.start",
                    "status": 307,
                    "headers": [(b"location", b"/mcp"), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        first = b"mcp-session-id" not in headers
        if not first and headers.get(b"cookie") != _COOKIE:
            await send(
                {
                    "type": "http.response.start",
                    "status": 421,
                    "headers": [(b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"no affinity cookie"})
            return
        forwarded = {
            k.decode(): v.decode()
            for k, v in headers.items()
            if k not in (b"host", b"cookie", b"content-length")
        }
        async with httpx.AsyncClient() as client:
            answer = await client.request(scope["method"], backend, headers=forwarded, content=body)
        out = [
            (k.encode(), v.encode())
            for k, v in answer.headers.items()
            if k.lower() not in ("content-length", "transfer-encoding", "connection")
        ]
        if first:
            out.append((b"set-cookie", _COOKIE + b"; Path=/"))
        await send({"type": "http.response.start", "status": answer.status_code, "headers": out})
        await send({"type": "http.response.body", "body": answer.content})

    return app


@contextlib.asynccontextmanager
async def _serve_front(app: Callable[..., Awaitable[None]], path: str) -> AsyncIterator[str]:
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(functools.partial(serve, app, config))
        yield binds[0] + path
        nursery.cancel_scope.cancel()


async def _echo_through_front(seen: list[str], path: str = "/old") -> str:
    async with running(options=HttpOptions(json_response=True)) as backend:  # noqa: SIM117
        async with (  # the front needs the backend's URL
            _serve_front(front(backend.url, seen), path) as url,
            open_http_client_stream(url) as stream,
            open_client_session(stream) as session,
        ):
            first = await session.call_tool("echo", {"text": "one"})
            second = await session.call_tool("echo", {"text": "two"})
    return f"{first.raw['content'][0]['text']} {second.raw['content'][0]['text']}"


async def test_the_affinity_cookie_comes_back() -> None:
    seen: list[str] = []
    assert await _echo_through_front(seen, "/mcp") == "one two"
    assert seen[0] == "POST /mcp cookie=b''"
    assert len(seen) >= 4  # initialize, initialized, two calls (and maybe the GET stream)
    assert all(line.endswith("cookie=b'affinity=backend-1'") for line in seen[1:])


async def test_the_affinity_cookie_comes_back_and_the_redirect_is_followed() -> None:
    seen: list[str] = []
    assert await _echo_through_front(seen) == "one two"
    assert seen[0] == "POST /old cookie=b''"  # initialize, moved with a 307 ...
    # ... sent again through the client, which follows the redirect; the cookie is set at
    # /mcp and comes back on every later request, each of which is redirected too.
    assert seen[1:3] == ["POST /old cookie=b''", "POST /mcp cookie=b''"]
    later = seen[3:]
    assert later
    assert all("cookie=b'affinity=backend-1'" in line for line in later)
    assert [line.split()[1] for line in later] == ["/old", "/mcp"] * (len(later) // 2)


async def test_with_a_proxy_in_the_environment_the_client_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The proxy is never used (127.0.0.1 is in NO_PROXY); what matters is that requests
    # take AsyncClient.send, which decides that per URL, and still work end to end.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    seen: list[str] = []
    assert await _echo_through_front(seen) == "one two"
