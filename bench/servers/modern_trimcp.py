"""trimcp's ``MCPServer`` with one ``echo`` tool over Streamable HTTP, JSON answers (both eras).

For ``bench/modern.py``. ``serve_http`` with ``HttpOptions(json_response=True)``: a
2025-11-25 session's ``tools/call`` is answered with ``application/json`` instead of SSE; a
2026-07-28 POST (``MCP-Protocol-Version: 2026-07-28`` and ``_meta``) is served statelessly
and answered with JSON whatever the option (nothing is sent before the answer). Everything
else is trimcp's default.

``--port 0`` (the default) binds a free port on 127.0.0.1; the bound port is printed as
``PORT <n>`` on stdout once the server accepts connections. The server exits when its stdin
closes.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys

import trio

from trimcp.http import HttpOptions
from trimcp.server import MCPServer

server = MCPServer("trimcp-modern-bench", "1.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text it is given."""
    return text


async def main(port: int) -> None:
    options = HttpOptions(json_response=True)
    serve = functools.partial(server.serve_http, host="127.0.0.1", port=port, options=options)
    async with trio.open_nursery() as nursery:
        listener = await nursery.start(serve)
        print(f"PORT {listener.url.rsplit(':', 1)[1].split('/', 1)[0]}", flush=True)
        await trio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    trio.run(main, args.port)
