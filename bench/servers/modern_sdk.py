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
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

# Appended, not prepended: the benches run servers with -P (no script folder on sys.path).
sys.path.append(str(Path(__file__).resolve().parent))
from _uvicorn import serve_until_stdin_closes

server = MCPServer("sdk-modern-bench", version="1.0", log_level="WARNING")


@server.tool(structured_output=False)  # one text block, as trimcp answers
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


async def main(port: int) -> None:
    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    await serve_until_stdin_closes(app, port)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(main(args.port))
