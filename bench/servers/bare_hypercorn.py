"""The HTTP floor under trimcp: hypercorn's trio worker serving a do-nothing ASGI app.

Every HTTP request (any method, any path) gets ``200`` with one fixed small JSON body, the
size of an echo ``tools/call`` response, with ``Content-Length``; the request body is read
and dropped. ``--chunked`` leaves the length out, so hypercorn sends the body chunked, as it
does for any response whose length is not declared up front (trimcp's, for one). hypercorn is
configured as trimcp's listener configures it (``trimcp/http/_serve.py``: no access log,
``keep_alive_max_requests`` raised so keep-alive connections are never recycled), so the
difference to trimcp is the MCP work and the framing of its responses.

``--port 0`` (the default) binds a free port on 127.0.0.1; the bound port is printed as
``PORT <n>`` on stdout once the server accepts connections. The server exits when its
stdin closes (``bench/http.py`` keeps the pipe open for as long as it needs the server).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    AsgiApp = Callable[
        [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
        Awaitable[None],
    ]

BODY = b'{"jsonrpc":"2.0","id":10000000,"result":{"content":[{"type":"text","text":"echo-00000000"}],"isError":false}}'  # noqa: E501
# With Content-Length, hypercorn writes a response in two socket writes (head, body); a
# chunked response (no length) takes a third for the last chunk. This is the cheaper form.
HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]


def make_app(headers: list[tuple[bytes, bytes]]) -> AsgiApp:
    """Return an ASGI app answering every HTTP request with BODY and ``headers``."""

    async def app(
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body", False):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": BODY})

    return app


def config_for(port: int) -> Config:
    """Return hypercorn's config as trimcp's HTTP listener sets it."""
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.keep_alive_max_requests = 10_000_000
    config.graceful_timeout = 1.0
    return config


async def wait_stdin_closed() -> None:
    """Return once stdin reaches end of file (the bench's cue to stop)."""
    await trio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)


async def main(port: int, chunked: bool) -> None:
    app = make_app(HEADERS[:1] if chunked else HEADERS)
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serve, app, config_for(port))
        print(f"PORT {binds[0].rsplit(':', 1)[1]}", flush=True)
        await wait_stdin_closed()
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--chunked", action="store_true", help="no Content-Length")
    args = parser.parse_args()
    trio.run(main, args.port, args.chunked)
