"""The official MCP Python SDK (mcp 2.3.0): ``MCPServer`` with one ``echo`` tool over HTTP.

For ``bench/modern.py``. The SDK's high-level ``MCPServer`` (``mcp.server.mcpserver``,
FastMCP's successor in the SDK) with ``@server.tool()`` ``echo``, served by its own
``streamable_http_app(json_response=True)`` (a Starlette app around
``StreamableHTTPSessionManager``) under uvicorn the way ``run_streamable_http_async`` runs
it (uvicorn's defaults: the asyncio loop and h11, as neither uvloop nor httptools is
installed), except that the access log is off and the log level is ``warning``.

The session manager routes a POST whose ``MCP-Protocol-Version`` header is not a handshake
version to ``mcp.server._streamable_http_modern.handle_modern_request``: served statelessly
(no ``initialize``, no ``Mcp-Session-Id``), in JSON mode directly in the ASGI task.

``--port 0`` (the default) binds a free port on 127.0.0.1; the bound port is printed as
``PORT <n>`` on stdout once uvicorn has started. The server exits when its stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-modern-bench", version="1.0", log_level="WARNING")


@server.tool(structured_output=False)  # one text block, as trimcp answers
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


async def stop_when_stdin_closes(uv_server: uvicorn.Server) -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)
    uv_server.should_exit = True


async def main(port: int) -> None:
    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uv_server = uvicorn.Server(config)
    # IPPROTO_TCP explicitly (see sdk_http_server.py): asyncio sets TCP_NODELAY only on
    # sockets whose proto says TCP; without it a two-part response waits for a delayed ACK.
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
    stopper = asyncio.create_task(stop_when_stdin_closes(uv_server))
    await serving
    stopper.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(main(args.port))
