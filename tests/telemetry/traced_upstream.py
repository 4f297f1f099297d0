"""A trimcp server whose tool answers with the traceparent its request carried.

Over stdio by default; ``--http PORT`` serves Streamable HTTP on 127.0.0.1:PORT instead.
"""

from __future__ import annotations

import sys

from trimcp.server import Context, MCPServer

server = MCPServer("traced")


@server.tool()
def traceparent(ctx: Context) -> str:
    """The traceparent this request's _meta carried."""
    return ctx.trace_context.get("traceparent", "")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run_http(port=int(sys.argv[2]))
    else:
        server.run_stdio()
