"""A trimcp client for the official MCP conformance suite's client scenarios.

The harness starts a mock server for a scenario and runs ``conformance_client.py <url>``
with ``MCP_CONFORMANCE_SCENARIO`` naming what to do (and ``MCP_CONFORMANCE_CONTEXT``, JSON,
holding credentials or arguments for the scenarios that hand some over). The session is
dual-era: ``server/discover`` first, ``initialize`` for a 2025-11-25 server.

* ``initialize``, ``request-metadata``, ``json-schema-ref-no-deref``: connect, list tools;
* ``tools_call``: call ``add_numbers`` with two numbers;
* ``elicitation-sep1034-client-defaults``: call the tool that asks for elicitation, and
  accept it without filling anything in: the client applies the schema's defaults;
* ``sse-retry``: call the tool whose SSE stream the server closes; the client reconnects
  after the server's ``retry:`` with ``Last-Event-ID`` and gets the answer there;
* ``sep-2322-client-request-state``: the multi round-trip tools; while one waits for its
  elicitation, another tool is called beside it (its rounds must not leak into that call);
* ``http-*``: list and call every tool (with the context's ``toolCalls`` arguments, else
  made-up ones), read every resource, get every prompt: the headers are what is checked;
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
from typing import Any

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
    ClientSession,
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
SAMPLE_VALUES: dict[str, Any] = {"string": "us-west1", "integer": 1, "number": 1, "boolean": True}


def authorization(
    url: str, scenario: str, context: dict[str, Any]
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


def made_up_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool's required parameters, one plausible value per type."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        kind = (properties.get(name) or {}).get("type")
        arguments[name] = SAMPLE_VALUES.get(kind if isinstance(kind, str) else "", "x")
    return arguments


async def exercise_everything(session: ClientSession, context: dict[str, Any]) -> None:
    """Call every tool, read every resource, get every prompt (the http-* scenarios)."""
    given = {call["name"]: call["arguments"] for call in context.get("toolCalls", [])}
    tools = await session.list_tools()
    for tool in tools:
        arguments = given.get(tool.name) or made_up_arguments(tool.input_schema)
        await session.call_tool(tool.name, arguments)
    for name, arguments in given.items():
        if name not in {tool.name for tool in tools}:
            await session.call_tool(name, arguments)
    for resource in await session.list_resources():
        await session.read_resource(resource.uri)
    for prompt in await session.list_prompts():
        await session.get_prompt(prompt.name)


async def multi_round_trip(session: ClientSession, handlers: dict[str, Any]) -> None:
    """The sep-2322 tools; ``handlers["during"]`` runs inside the first elicitation."""
    await session.list_tools()

    async def call_unrelated() -> None:
        print((await session.call_tool("test_mrtr_unrelated")).text)

    handlers["during"] = call_unrelated
    print((await session.call_tool("test_mrtr_echo_state")).text)
    print((await session.call_tool("test_mrtr_no_state")).text)
    print((await session.call_tool("test_mrtr_no_result_type")).text)


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    pending: dict[str, Any] = {}

    async def elicit(request: ElicitRequest) -> ElicitResult:
        during = pending.pop("during", None)
        if during is not None:
            await during()  # another call while this one waits for its input
        if scenario == "sep-2322-client-request-state":
            return ElicitResult(action="accept", content={"confirmed": True})
        return ElicitResult(action="accept", content={})  # the session fills in defaults

    info = Implementation(name="trimcp-conformance-client", version="1.0.0")
    auth = authorization(url, scenario, context)
    async with (
        open_http_client_stream(url, auth=auth) as stream,
        open_client_session(
            stream, client_info=info, handlers=ClientHandlers(elicitation=elicit)
        ) as session,
    ):
        if scenario == "sep-2322-client-request-state":
            await multi_round_trip(session, pending)
        elif scenario.startswith("http-"):
            await exercise_everything(session, context)
        elif scenario in TOOL_CALLS:
            print((await session.call_tool(*TOOL_CALLS[scenario])).text)
        else:
            tools = [tool.name for tool in await session.list_tools()]
            if scenario.startswith("auth/") and tools:
                print((await session.call_tool(tools[0], {})).text)
            else:
                print(f"connected ({session.protocol_version}); tools: {', '.join(tools)}")


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
