"""Serving an official-SDK ASGI app under uvicorn for the benchmarks, the same way each time.

The SDK's own ``run_streamable_http_async`` runs uvicorn with its defaults (the asyncio loop
and h11, as neither uvloop nor httptools is installed); the servers here do the same, with
the access log off and the log level ``warning``, on a socket of their own (below), print
``PORT <n>`` on stdout once uvicorn has started, and stop when their stdin closes.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    from starlette.types import ASGIApp


async def _stop_when_stdin_closes(uv_server: uvicorn.Server) -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)
    uv_server.should_exit = True


async def serve_until_stdin_closes(app: ASGIApp, port: int) -> None:
    """Serve ``app`` on 127.0.0.1:``port`` (0: a free one) until stdin closes."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uv_server = uvicorn.Server(config)
    # IPPROTO_TCP explicitly, as asyncio's own create_server gets it from getaddrinfo:
    # asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it every
    # response written in two parts waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    serving = asyncio.create_task(uv_server.serve(sockets=[sock]))
    while not uv_server.started:
        if serving.done():
            serving.result()  # raises why it stopped
            return
        await asyncio.sleep(0.01)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    stopper = asyncio.create_task(_stop_when_stdin_closes(uv_server))
    await serving
    stopper.cancel()
