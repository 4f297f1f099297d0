"""A trimcp stdio server whose one tool answers with the traceparent its request carried."""

from __future__ import annotations

from trimcp.server import Context, MCPServer

server = MCPServer("traced")


@server.tool()
def traceparent(ctx: Context) -> str:
    """The traceparent this request's _meta carried."""
    return ctx.trace_context.get("traceparent", "")


if __name__ == "__main__":
    server.run_stdio()
