"""A trimcp client for the official MCP conformance suite's client scenarios.

The harness starts a mock server for a scenario and runs ``conformance_client.py <url>``
with ``MCP_CONFORMANCE_SCENARIO`` naming what to do (and ``MCP_CONFORMANCE_CONTEXT``, JSON,
holding credentials for the scenarios that hand some over):

* ``initialize``: connect (the handshake) and list the tools;
* ``tools_call``: call ``add_numbers`` with two numbers;
* ``elicitation-sep1034-client-defaults``: call the tool that asks for elicitation, and
  accept it without filling anything in: the client applies the schema's defaults;
* ``sse-retry``: call the tool whose SSE stream the server closes; the client reconnects
  after the server's ``retry:`` with ``Last-Event-ID`` and gets the answer there;
* ``auth/...``: the server wants OAuth. List the tools and call the first one, signed in
  with ``trimcp.auth.client.OAuth`` (its authorization server approves at once, so the
  browser step just follows the redirects) or, for ``auth/client-credentials-*``, with
  ``ClientCredentials`` and the context's secret or private key.

Exits 0 when the scenario's steps worked, 1 with the error otherwise.
"""

from __future__ import annotations

import json
import logging
import os
import sys

import trio

from trimcp.auth.client import (
    ClientCredentials,
    LoopbackBrowser,
    OAuth,
    PrivateKeyJwt,
    follow_redirects,
)
from trimcp.client import (
    ClientHandlers,
    ElicitRequest,
    ElicitResult,
    open_client_session,
    open_http_client_stream,
)
from trimcp.protocol import Implementation

# The harness accepts this URL as a client id without fetching it (its CIMD scenario).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
TOOL_CALLS = {
    "tools_call": ("add_numbers", {"a": 2, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}


async def accept_with_defaults(request: ElicitRequest) -> ElicitResult:
    """Accept, leaving every field to its default (the session fills them in)."""
    return ElicitResult(action="accept", content={})


def authorization(
    url: str, scenario: str, context: dict[str, str]
) -> OAuth | ClientCredentials | None:
    if scenario.startswith("auth/client-credentials"):
        pem = context.get("private_key_pem")
        key = PrivateKeyJwt(pem, context.get("signing_algorithm", "ES256")) if pem else None
        return ClientCredentials(
            url, client_id=context["client_id"], client_secret=context.get("client_secret"),
            private_key=key,
        )  # fmt: skip
    if scenario.startswith("auth/"):
        browser = LoopbackBrowser(opener=follow_redirects, timeout=20.0)
        return OAuth(
            url, client_id=context.get("client_id"), client_secret=context.get("client_secret"),
            issuer=context.get("issuer"), client_metadata_url=CLIENT_METADATA_URL,
            client_name="trimcp-conformance-client", browser=browser,
        )  # fmt: skip
    return None


async def run(url: str, scenario: str, context: dict[str, str]) -> None:
    handlers = ClientHandlers(elicitation=accept_with_defaults)
    info = Implementation(name="trimcp-conformance-client", version="1.0.0")
    auth = authorization(url, scenario, context)
    async with (
        open_http_client_stream(url, auth=auth) as stream,
        open_client_session(stream, client_info=info, handlers=handlers) as session,
    ):
        tools = [tool.name for tool in await session.list_tools()]
        if scenario in TOOL_CALLS:
            result = await session.call_tool(*TOOL_CALLS[scenario])
            print(result.text)
        elif scenario.startswith("auth/") and tools:
            print((await session.call_tool(tools[0], {})).text)
        else:
            print(f"connected; tools: {', '.join(sorted(tools)) or 'none'}")


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if len(sys.argv) != 2:
        sys.stderr.write("usage: conformance_client.py SERVER_URL\n")
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        trio.run(run, sys.argv[1], scenario, context)
    except Exception as exc:  # noqa: BLE001  (the harness reads the exit status and stderr)
        sys.stderr.write(f"scenario {scenario} failed: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
