"""A trimcp client for the official MCP conformance suite's client scenarios.

The harness starts a mock server for a scenario and runs ``conformance_client.py <url>``
with ``MCP_CONFORMANCE_SCENARIO`` naming what to do:

* ``initialize``: connect (the handshake) and list the tools;
* ``tools_call``: call ``add_numbers`` with two numbers;
* ``elicitation-sep1034-client-defaults``: call the tool that asks for elicitation, and
  accept it without filling anything in: the client applies the schema's defaults;
* ``sse-retry``: call the tool whose SSE stream the server closes; the client reconnects
  after the server's ``retry:`` with ``Last-Event-ID`` and gets the answer there.

Exits 0 when the scenario's steps worked, 1 with the error otherwise.
"""

from __future__ import annotations

import logging
import os
import sys

import trio

from trimcp.client import (
    ClientHandlers,
    ElicitRequest,
    ElicitResult,
    open_client_session,
    open_http_client_stream,
)
from trimcp.protocol import Implementation


async def accept_with_defaults(request: ElicitRequest) -> ElicitResult:
    """Accept, leaving every field to its default (the session fills them in)."""
    return ElicitResult(action="accept", content={})


async def run(url: str, scenario: str) -> None:
    handlers = ClientHandlers(elicitation=accept_with_defaults)
    info = Implementation(name="trimcp-conformance-client", version="1.0.0")
    async with (
        open_http_client_stream(url) as stream,
        open_client_session(stream, client_info=info, handlers=handlers) as session,
    ):
        tools = {tool.name for tool in await session.list_tools()}
        if scenario == "tools_call":
            result = await session.call_tool("add_numbers", {"a": 2, "b": 3})
            print(result.text)
        elif scenario == "elicitation-sep1034-client-defaults":
            result = await session.call_tool("test_client_elicitation_defaults", {})
            print(result.text)
        elif scenario == "sse-retry":
            result = await session.call_tool("test_reconnection", {})
            print(result.text)
        else:
            print(f"connected; tools: {', '.join(sorted(tools)) or 'none'}")


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if len(sys.argv) != 2:
        sys.stderr.write("usage: conformance_client.py SERVER_URL\n")
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    try:
        trio.run(run, sys.argv[1], scenario)
    except Exception as exc:  # noqa: BLE001  (the harness reads the exit status and stderr)
        sys.stderr.write(f"scenario {scenario} failed: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
