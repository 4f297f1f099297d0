"""MCP 2026-07-28 over Streamable HTTP: the per-request era, against a real listener.

Each request is its own POST with ``_meta`` and the mirrored headers (Transports >
Streamable HTTP, 2026-07-28); the endpoint serves it statelessly beside the handshake-era
sessions. Results are validated against the revision's ``schema.json`` where it describes
them. Timing never decides a test: a handler reports what happened to it through
``trio.Event``s, waits for the server to notice a closed connection end when every task is
blocked (``until``), and keep-alive timing runs against the endpoint in virtual time.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import jsonschema
import orjson
import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from tests.modern_requests import Probe
from trimcp.auth import Identity, ResourceMetadata, ResourceServer
from trimcp.errors import InvalidToken
from trimcp.http import HttpListener, HttpOptions
from trimcp.http._body import read_post_body
from trimcp.http._checks import Headers
from trimcp.http._modern import ModernEndpoint
from trimcp.server import Context, MCPServer
from trimcp.sessions import SessionOptions
from trimcp.sessions._context import MAX_DROPPED_NOTICES, MAX_QUEUED_NOTICES
from trimcp.transports import SSEDecoder

from ._client import ACCEPT_BOTH, INITIALIZE, Answer, handshake, post, read_answer, running

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
SCHEMA = Path("/work/shared/spec/schema/2026-07-28/schema.json")
REGION_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "query": {"type": "string"},
    },
    "required": ["region"],
}
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
ELICITING = {"elicitation": {"form": {}}}


# --- the schema ------------------------------------------------------------------------------


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{name}"})


def conforms(value: object, name: str) -> None:
    """Fail unless ``value`` is a valid ``name`` of the 2026-07-28 schema."""
    _validator(name).validate(value)


# --- the server under test -------------------------------------------------------------------


def build_server(probe: Probe | None = None) -> MCPServer:
    """Tools for every case, two resources and a template, and a prompt."""
    server = MCPServer("modern-test", "2.0", instructions="Echo things back.")
    add_tools(server, probe or Probe())

    @server.resource("file:///a.txt")
    def file_a() -> str:
        return "A"

    @server.resource("file:///b.txt")
    def file_b() -> str:
        return "B"

    @server.resource("file:///notes/{name}")
    def note(name: str) -> str:
        return f"note {name}"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return server


def add_tools(server: MCPServer, held: Probe) -> None:
    """Quick, mirrored header, chatty, held open (reporting to ``held``), asking for input."""

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool(description="Look something up in a region", input_schema=REGION_SCHEMA)
    def lookup(region: str, query: str = "") -> str:
        return f"{query or 'everything'} in {region}"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Report progress and log at every level below and above warning."""
        await ctx.report_progress(1, 2, "half")
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"a {level} line")
        await ctx.report_progress(2, 2, "all")
        return "talked"

    @server.tool()
    async def hold(stream_first: bool, ctx: Context) -> str:
        """Wait until released or cancelled; say so through the probe."""
        if stream_first:
            await ctx.report_progress(1, None, "holding")
        held.started.set()
        try:
            await held.release.wait()
        finally:
            held.ended.set()
        return "released"

    @server.tool()
    async def confirm(item: str, ctx: Context) -> str:
        """Ask the user before acting (a multi round-trip call in 2026-07-28)."""
        answer = await ctx.elicit(f"Delete {item}?", CONFIRM_SCHEMA)
        ok = answer.action == "accept" and bool((answer.content or {}).get("ok"))
        return f"deleted {item}" if ok else f"kept {item}"


# --- requests --------------------------------------------------------------------------------


def request(
    request_id: int | str, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    """A 2026-07-28 request: ``params`` plus ``_meta`` (version, no capabilities, ``meta``)."""
    wire_meta: dict[str, Any] = {VERSION_KEY: MODERN, CAPABILITIES_KEY: {}}
    for key, value in meta.items():
        wire_meta[_META_NAMES.get(key, key)] = value
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": wire_meta},
    }


_META_NAMES = {
    "capabilities": CAPABILITIES_KEY,
    "log_level": LOG_LEVEL_KEY,
    "progress_token": "progressToken",
    "version": VERSION_KEY,
}


def call(
    request_id: int | str, name: str, arguments: dict[str, Any], **meta: Any
) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments}, **meta)


def mirrored(body: dict[str, Any]) -> dict[str, str]:
    """The headers a 2026-07-28 client sends with ``body``."""
    params = body.get("params") or {}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": body["method"]}
    if body["method"] in ("tools/call", "prompts/get"):
        headers["mcp-name"] = params["name"]
    elif body["method"] == "resources/read":
        headers["mcp-name"] = params["uri"]
    if body["method"] == "tools/call" and "region" in params.get("arguments", {}):
        headers["mcp-param-region"] = params["arguments"]["region"]
    return headers


async def send(
    client: httpx.AsyncClient,
    url: str,
    body: Any,
    headers: dict[str, str | None] | None = None,
) -> Answer:
    """POST ``body`` with its mirrored headers, changed by ``headers`` (None: left out)."""
    sent: dict[str, str] = mirrored(body) if isinstance(body, dict) and "method" in body else {}
    for name, value in (headers or {}).items():
        if value is None:
            sent.pop(name, None)
        else:
            sent[name] = value
    return await post(client, url, body, headers=sent)


def result_of(answer: Answer) -> dict[str, Any]:
    assert answer.status == 200, (answer.status, answer.messages)
    message = answer.message
    assert "result" in message, message
    result: dict[str, Any] = message["result"]
    return result


def text_of(answer: Answer) -> str:
    return str(result_of(answer)["content"][0]["text"])


async def until(condition: Callable[[], bool]) -> None:
    """Wait until ``condition`` holds once every task is blocked.

    A socket the client closed is readable at once on 127.0.0.1, so a server task that has
    not yet acted on it is not blocked: this returns only after the server caught up. It
    fails (bounded) if the condition never holds.
    """
    with trio.fail_after(10):
        while not condition():
            await wait_all_tasks_blocked()


# --- server/discover -------------------------------------------------------------------------


async def test_discover_answers_in_json_with_what_initialize_used_to() -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(client, listener.url, request("d1", "server/discover"))
    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in answer.headers
    conforms(answer.message, "DiscoverResultResponse")
    assert answer.message["id"] == "d1"
    result = result_of(answer)
    conforms(result, "DiscoverResult")
    assert result["supportedVersions"][0] == MODERN
    assert {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} <= set(
        result["supportedVersions"]
    )
    assert result["resultType"] == "complete"
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] == "public"
    assert result["instructions"] == "Echo things back."
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "modern-test",
        "version": "2.0",
    }
    capabilities = result["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}


async def test_discover_without_a_header_is_modern_by_its_method() -> None:
    # server/discover names the era itself; the missing header is then the mismatch.
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(
            client, listener.url, request(1, "server/discover"), {"mcp-protocol-version": None}
        )
    assert answer.status == 400
    assert answer.message["error"]["code"] == -32020
    assert answer.message["id"] == 1


# --- refusals --------------------------------------------------------------------------------


def _without_meta(member: str) -> dict[str, Any]:
    body = request(1, "tools/list")
    del body["params"]["_meta"][member]
    return body


def _region(region: str) -> dict[str, Any]:
    return call(1, "lookup", {"region": region, "query": "pizza"})


@dataclass(frozen=True)
class Refusal:
    body: Any
    headers: dict[str, str | None]
    status: int
    code: int
    data: Any = None


REFUSALS: dict[str, Refusal] = {
    "no _meta": Refusal(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {},
        400,
        -32602,
        {"missing": "_meta"},
    ),
    "no params": Refusal(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {}, 400, -32602, {"missing": "_meta"}
    ),
    "params not an object": Refusal(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]},
        {},
        400,
        -32602,
        {"param": "params"},
    ),
    "no protocolVersion": Refusal(
        _without_meta(VERSION_KEY), {}, 400, -32602, {"missing": VERSION_KEY}
    ),
    "no clientCapabilities": Refusal(
        _without_meta(CAPABILITIES_KEY), {}, 400, -32602, {"missing": CAPABILITIES_KEY}
    ),
    "bad logLevel": Refusal(
        request(1, "tools/list", log_level="loud"), {}, 400, -32602, {"invalid": LOG_LEVEL_KEY}
    ),
    "unhashable logLevel": Refusal(
        request(1, "tools/list", log_level=["info"]), {}, 400, -32602, {"invalid": LOG_LEVEL_KEY}
    ),
    "header is not the body's version": Refusal(
        request(1, "tools/list", version="2025-11-25"),
        {},
        400,
        -32020,
        {"header": "MCP-Protocol-Version"},
    ),
    "unknown header version, modern body": Refusal(
        request(1, "tools/list"),
        {"mcp-protocol-version": "2099-01-01"},
        400,
        -32020,
        {"header": "MCP-Protocol-Version"},
    ),
    "no version header, modern body": Refusal(
        request(1, "tools/list"),
        {"mcp-protocol-version": None},
        400,
        -32020,
        {"header": "MCP-Protocol-Version"},
    ),
    "unsupported version": Refusal(
        request(1, "tools/list", version="2099-01-01"),
        {"mcp-protocol-version": "2099-01-01"},
        400,
        -32022,
    ),
    "Mcp-Method mismatch": Refusal(
        request(1, "tools/list"), {"mcp-method": "prompts/list"}, 400, -32020
    ),
    "Mcp-Method missing": Refusal(request(1, "tools/list"), {"mcp-method": None}, 400, -32020),
    "Mcp-Name mismatch": Refusal(
        call(1, "echo", {"text": "x"}), {"mcp-name": "lookup"}, 400, -32020
    ),
    "Mcp-Name missing": Refusal(call(1, "echo", {"text": "x"}), {"mcp-name": None}, 400, -32020),
    "Mcp-Name of resources/read": Refusal(
        request(1, "resources/read", {"uri": "file:///a.txt"}),
        {"mcp-name": "file:///b.txt"},
        400,
        -32020,
    ),
    "Mcp-Name of prompts/get": Refusal(
        request(1, "prompts/get", {"name": "greet", "arguments": {"name": "x"}}),
        {"mcp-name": None},
        400,
        -32020,
    ),
    "Mcp-Param mismatch": Refusal(
        _region("eu-west1"), {"mcp-param-region": "us-east1"}, 400, -32020
    ),
    "Mcp-Param missing": Refusal(_region("eu-west1"), {"mcp-param-region": None}, 400, -32020),
    "unknown method": Refusal(request(1, "vendor/frobnicate"), {}, 404, -32601),
    "initialize": Refusal(request(1, "initialize"), {}, 404, -32601),
    "ping": Refusal(request(1, "ping"), {}, 404, -32601),
    "logging/setLevel": Refusal(request(1, "logging/setLevel", {"level": "info"}), {}, 404, -32601),
    "resources/subscribe": Refusal(
        request(1, "resources/subscribe", {"uri": "file:///a.txt"}), {}, 404, -32601
    ),
    "tasks/list": Refusal(request(1, "tasks/list"), {}, 404, -32601),
    "an unknown resource": Refusal(
        request(1, "resources/read", {"uri": "file:///nope"}),
        {},
        400,
        -32602,
        {"uri": "file:///nope"},
    ),
    "input the client cannot give": Refusal(
        call(1, "confirm", {"item": "x"}),
        {},
        400,
        -32021,
        {"requiredCapabilities": {"elicitation": {"form": {}}}},
    ),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
async def test_a_refusal_has_its_status_code_data_and_the_requests_id(case: Refusal) -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(client, listener.url, case.body, case.headers)
        assert len(listener.manager.table) == 0  # nothing was created for it
    assert answer.status == case.status, answer.messages
    assert answer.headers["content-type"] == "application/json"
    conforms(answer.message, "JSONRPCErrorResponse")
    error = answer.message["error"]
    assert error["code"] == case.code, error
    assert answer.message["id"] == 1
    if case.data is not None:
        assert error.get("data") == case.data
    if case.code == -32020:
        conforms(answer.message, "HeaderMismatchError")
    if case.code == -32601:
        assert answer.message["error"]["message"].startswith("Method not found")


async def test_an_unsupported_version_names_the_supported_ones() -> None:
    body = request(5, "tools/list", version="2099-01-01")
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(client, listener.url, body, {"mcp-protocol-version": "2099-01-01"})
    assert answer.status == 400
    conforms(answer.message, "UnsupportedProtocolVersionError")
    data = answer.message["error"]["data"]
    assert MODERN in data["supported"]
    assert data["requested"] == "2099-01-01"
    assert answer.message["id"] == 5


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ([request(1, "tools/list"), request(2, "tools/list")], "not a batch"),
        ([request(1, "tools/list")], "not a batch"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "only requests"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}}, "only requests"),
    ],
)
async def test_a_batch_or_a_response_is_a_bad_request(body: Any, reason: str) -> None:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await post(client, listener.url, body, headers=headers)
    assert answer.status == 400
    assert answer.message["error"]["code"] == -32600
    assert reason in answer.message["error"]["message"]


async def test_a_notification_is_taken_with_202_and_nothing_else() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    note["params"]["_meta"] = {VERSION_KEY: MODERN, CAPABILITIES_KEY: {}}
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(client, listener.url, note)
        assert len(listener.manager.table) == 0
    assert answer.status == 202
    assert answer.messages == []


# --- results ---------------------------------------------------------------------------------


CACHEABLE = {
    "tools/list": ({}, "ListToolsResult"),
    "prompts/list": ({}, "ListPromptsResult"),
    "resources/list": ({}, "ListResourcesResult"),
    "resources/templates/list": ({}, "ListResourceTemplatesResult"),
    "resources/read": ({"uri": "file:///a.txt"}, "ReadResourceResult"),
    "server/discover": ({}, "DiscoverResult"),
}


async def test_every_result_has_a_result_type_and_cacheable_ones_cache_hints() -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        for number, (method, (params, shape)) in enumerate(CACHEABLE.items()):
            answer = await send(client, listener.url, request(number, method, params))
            result = result_of(answer)
            conforms(result, shape)
            assert result["resultType"] == "complete", method
            assert isinstance(result["ttlMs"], int), method
            assert result["ttlMs"] >= 0, method
            assert result["cacheScope"] == "public", method  # no authorization here
        called = await send(client, listener.url, call(10, "echo", {"text": "hi"}))
        prompt = await send(
            client,
            listener.url,
            request(11, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        )
        tools = [await send(client, listener.url, request(n, "tools/list")) for n in (12, 13)]
    for answer, shape in ((called, "CallToolResult"), (prompt, "GetPromptResult")):
        result = result_of(answer)
        conforms(result, shape)
        assert result["resultType"] == "complete"
        assert "ttlMs" not in result
        assert "cacheScope" not in result
    assert text_of(called) == "hi"
    first, again = ([tool["name"] for tool in result_of(t)["tools"]] for t in tools)
    assert first == again == ["echo", "lookup", "chatty", "hold", "confirm"]  # registered


async def test_a_mirrored_tool_parameter_passes_when_it_matches() -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        plain = await send(client, listener.url, _region("eu-west1"))
        # Not safe ASCII: the header carries it base64-encoded (Value Encoding).
        encoded = await send(
            client,
            listener.url,
            _region("Zürich"),
            {"mcp-param-region": "=?base64?WsO8cmljaA==?="},
        )
    assert text_of(plain) == "pizza in eu-west1"
    assert text_of(encoded) == "pizza in Zürich"


async def test_a_quick_call_answers_json_even_with_a_progress_token_and_log_level() -> None:
    body = call(1, "echo", {"text": "x"}, progress_token="p", log_level="debug")
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(client, listener.url, body)
    assert answer.headers["content-type"] == "application/json"
    assert text_of(answer) == "x"


# --- progress and logs on the request's own SSE stream ----------------------------------------


async def _raw_post(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> Answer:
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json", **mirrored(body)}
    async with client.stream("POST", url, content=orjson.dumps(body), headers=headers) as response:
        answer = await read_answer(response)
    return answer


async def test_progress_and_logs_at_or_above_the_level_stream_before_the_result() -> None:
    body = call(7, "chatty", {}, progress_token="tok", log_level="warning")
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await _raw_post(client, listener.url, body)
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.headers["x-accel-buffering"] == "no"
    assert "mcp-session-id" not in answer.headers
    # Nothing is resumable in 2026-07-28: no event ids, no priming event.
    assert all(event.id is None for event in answer.events)
    assert all(event.data.strip() for event in answer.events)
    kinds = [(m.get("method"), (m.get("params") or {}).get("level")) for m in answer.messages]
    assert kinds == [
        ("notifications/progress", None),
        ("notifications/message", "warning"),
        ("notifications/message", "error"),
        ("notifications/progress", None),
        (None, None),
    ]
    progress = answer.messages[0]
    conforms(progress, "ProgressNotification")
    assert progress["params"]["progressToken"] == "tok"
    conforms(answer.messages[1], "LoggingMessageNotification")
    assert answer.messages[-1]["id"] == 7
    assert result_of(answer)["content"][0]["text"] == "talked"
    assert answer.messages[-1]["result"]["resultType"] == "complete"


async def test_without_a_log_level_no_log_message_is_sent() -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        with_progress = await _raw_post(
            client, listener.url, call(1, "chatty", {}, progress_token=3)
        )
        quiet = await _raw_post(client, listener.url, call(2, "chatty", {}))
    methods = [m.get("method") for m in with_progress.messages]
    assert methods == ["notifications/progress", "notifications/progress", None]
    # No progress token and no log level: nothing to stream, so the answer is JSON.
    assert quiet.headers["content-type"] == "application/json"
    assert [m.get("id") for m in quiet.messages] == [2]


async def test_debug_level_gets_every_line() -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await _raw_post(client, listener.url, call(1, "chatty", {}, log_level="debug"))
    levels = [m["params"]["level"] for m in answer.messages if "method" in m]
    assert levels == ["debug", "info", "warning", "error"]


# --- cancellation: the client closing the connection ------------------------------------------


@pytest.mark.parametrize("stream_first", [False, True], ids=["json", "sse"])
async def test_closing_the_connection_cancels_the_handler(stream_first: bool) -> None:
    probe = Probe()
    server = build_server(probe)
    body = call(1, "hold", {"stream_first": stream_first}, progress_token="p")
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json", **mirrored(body)}
    async with running(server) as listener, httpx.AsyncClient(timeout=None) as client:
        async with trio.open_nursery() as nursery:
            streaming = trio.Event()

            async def read_stream() -> None:
                async with client.stream(
                    "POST", listener.url, content=orjson.dumps(body), headers=headers
                ) as response:
                    assert response.status_code == 200
                    assert response.headers["content-type"].startswith("text/event-stream")
                    # Cancellation finds this task waiting in the iterator, which then closes.
                    async for _ in response.aiter_raw():
                        streaming.set()  # the progress event came

            if stream_first:
                nursery.start_soon(read_stream)
                await streaming.wait()
            else:
                # A JSON answer sends nothing before the result.
                nursery.start_soon(_post_until_cancelled, client, listener.url, body)
                await probe.started.wait()
            nursery.cancel_scope.cancel()  # hang up: the connection closes
        with trio.fail_after(10):
            await probe.ended.wait()  # the handler's finally ran: it was cancelled
        assert not probe.release.is_set()
        await until(lambda: listener.per_request_in_flight == 0)  # not left counted
        # The endpoint still serves.
        assert text_of(await send(client, listener.url, call(2, "echo", {"text": "on"}))) == "on"


async def test_requests_in_flight_count_a_held_request_until_it_ends() -> None:
    # They belong to no session: the listener counts them for /status and /metrics.
    probe = Probe()
    async with (
        running(build_server(probe)) as listener,
        httpx.AsyncClient(timeout=None) as client,
    ):
        assert listener.per_request_in_flight == 0
        held: list[Answer] = []
        async with trio.open_nursery() as nursery:

            async def hold() -> None:
                body = call("h", "hold", {"stream_first": False})
                held.append(await send(client, listener.url, body))

            nursery.start_soon(hold)
            await probe.started.wait()
            assert listener.per_request_in_flight == 1
            quick = await send(client, listener.url, call(2, "echo", {"text": "x"}))
            assert text_of(quick) == "x"
            await until(lambda: listener.per_request_in_flight == 1)  # the quick one ended
            probe.release.set()
        assert text_of(held[0]) == "released"
        await until(lambda: listener.per_request_in_flight == 0)


async def _post_until_cancelled(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> None:
    await send(client, url, body)
    raise AssertionError("the held call answered")  # pragma: no cover


# --- multi round-trip ------------------------------------------------------------------------


async def test_a_multi_round_trip_call_over_http() -> None:
    arguments = {"item": "report.pdf"}
    first = call(1, "confirm", arguments, capabilities=ELICITING)
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        round1 = result_of(await send(client, listener.url, first))
        conforms(round1, "InputRequiredResult")
        assert round1["resultType"] == "input_required"
        (key,) = round1["inputRequests"]
        asked = round1["inputRequests"][key]
        assert asked["method"] == "elicitation/create"
        assert asked["params"]["message"] == "Delete report.pdf?"
        state = round1["requestState"]
        assert isinstance(state, str)
        retry_params = {
            "name": "confirm",
            "arguments": arguments,
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": state,
        }
        retry = request(2, "tools/call", retry_params, capabilities=ELICITING)
        round2 = await send(client, listener.url, retry)
        assert round2.message["id"] == 2
        assert result_of(round2)["resultType"] == "complete"
        assert text_of(round2) == "deleted report.pdf"
        # The same state again: single use.
        replayed = await send(client, listener.url, {**retry, "id": 3})
        # A state bound to other arguments.
        round1b = result_of(await send(client, listener.url, {**first, "id": 4}))
        moved = request(
            5,
            "tools/call",
            {
                **retry_params,
                "arguments": {"item": "payroll.xlsx"},
                "requestState": round1b["requestState"],
            },
            capabilities=ELICITING,
        )
        other_arguments = await send(client, listener.url, moved)
        # A tampered state.
        round1c = result_of(await send(client, listener.url, {**first, "id": 6}))
        sealed = round1c["requestState"]
        flipped = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
        tampered_params = {**retry_params, "requestState": flipped}
        tampered = await send(
            client, listener.url, request(7, "tools/call", tampered_params, capabilities=ELICITING)
        )
    for answer, request_id, reason in (
        (replayed, 3, "replayed"),
        (other_arguments, 5, "mismatch"),
        (tampered, 7, "invalid"),
    ):
        assert answer.status == 400, answer.messages
        assert answer.message["id"] == request_id
        assert answer.message["error"]["code"] == -32602
        assert answer.message["error"]["data"] == {"reason": reason}


# --- no sessions ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_with_the_modern_version_are_405(method: str) -> None:
    headers = {"mcp-protocol-version": MODERN, "accept": "text/event-stream"}
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await client.request(method, listener.url, headers=headers)
    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST"


async def test_a_session_id_on_a_modern_post_is_ignored() -> None:
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        unknown = await send(
            client, listener.url, call(1, "echo", {"text": "a"}), {"mcp-session-id": "nope"}
        )
        session = await handshake(client, listener.url)
        real = await send(
            client, listener.url, call(2, "echo", {"text": "b"}), {"mcp-session-id": session}
        )
        assert len(listener.manager.table) == 1  # only the handshake's own session
    assert text_of(unknown) == "a"
    assert text_of(real) == "b"
    assert "mcp-session-id" not in unknown.headers
    assert "mcp-session-id" not in real.headers


async def test_legacy_sessions_are_served_beside_modern_requests() -> None:
    probe = Probe()
    server = build_server(probe)
    async with (
        running(server) as listener,
        httpx.AsyncClient(timeout=None) as client,
        trio.open_nursery() as nursery,
    ):
        held: list[Answer] = []

        async def hold() -> None:
            held.append(
                await send(client, listener.url, call("h", "hold", {"stream_first": False}))
            )

        nursery.start_soon(hold)
        await probe.started.wait()
        session = await handshake(client, listener.url)
        legacy_call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "old"}},
        }
        legacy = await post(client, listener.url, legacy_call, session=session)
        modern = await send(client, listener.url, call(2, "echo", {"text": "new"}))
        discovered = await send(client, listener.url, request(3, "server/discover"))
        ping = {"jsonrpc": "2.0", "id": 4, "method": "ping"}
        pong = await post(client, listener.url, ping, session=session)
        probe.release.set()
    assert legacy.message["result"]["content"][0]["text"] == "old"
    assert "resultType" not in legacy.message["result"]  # the handshake era's shape
    assert text_of(modern) == "new"
    assert result_of(discovered)["resultType"] == "complete"
    assert pong.message == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert text_of(held[0]) == "released"


# --- subscriptions/listen --------------------------------------------------------------------


@dataclass
class Listen:
    """One open listen stream: its messages, in order, as a reader task parsed them."""

    messages: trio.MemoryReceiveChannel[dict[str, Any]]

    async def next(self) -> dict[str, Any]:
        """The next message; ``trio.EndOfChannel`` once the server ended the stream."""
        with trio.fail_after(10):
            return await self.messages.receive()


@contextlib.asynccontextmanager
async def listening(
    client: httpx.AsyncClient, url: str, request_id: int | str, notifications: dict[str, Any]
) -> AsyncIterator[Listen]:
    """Open ``subscriptions/listen`` for ``notifications``; leaving the block hangs up."""
    body = request(request_id, "subscriptions/listen", {"notifications": notifications})
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json", **mirrored(body)}
    sink, messages = trio.open_memory_channel[dict[str, Any]](math.inf)

    async def read(task_status: trio.TaskStatus[None]) -> None:
        async with client.stream(
            "POST", url, content=orjson.dumps(body), headers=headers
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["x-accel-buffering"] == "no"
            task_status.started()
            decoder = SSEDecoder()
            # Cancellation finds this task waiting in the iterator, which then closes.
            async for chunk in response.aiter_raw():
                for event in decoder.feed(chunk):
                    assert event.id is None  # nothing is resumable in 2026-07-28
                    sink.send_nowait(orjson.loads(event.data))
        sink.close()

    async with trio.open_nursery() as nursery:
        await nursery.start(read)
        yield Listen(messages)
        nursery.cancel_scope.cancel()


def _members(server: MCPServer) -> int:
    # The broadcast set: sessions and listen streams the server's notifications reach.
    return len(server._sessions)


async def test_listen_acknowledges_first_then_carries_what_was_asked_for() -> None:
    server = build_server()
    wanted = {
        "toolsListChanged": True,
        "promptsListChanged": False,
        "resourceSubscriptions": ["file:///a.txt", "file:///nowhere"],
    }
    everything = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourcesListChanged": True,
        "resourceSubscriptions": ["file:///a.txt", "file:///b.txt"],
    }
    async with (
        running(server) as listener,
        httpx.AsyncClient(timeout=None) as client,
        listening(client, listener.url, 41, wanted) as listen,
        listening(client, listener.url, "all", everything) as control,
    ):
        ack = await listen.next()
        conforms(ack, "SubscriptionsAcknowledgedNotification")
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        # Only what it will honour: no prompts, no URI it does not serve.
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": ["file:///a.txt"],
        }
        assert ack["params"]["_meta"] == {SUBSCRIPTION_KEY: 41}
        control_ack = await control.next()
        assert control_ack["params"]["notifications"] == everything
        assert control_ack["params"]["_meta"] == {SUBSCRIPTION_KEY: "all"}
        # The listeners join the broadcasts once acknowledged (see test_modern_lane for a
        # change made while the acknowledgement is in flight).
        await until(lambda: _members(server) == 2)
        assert set(server.subscribed_uris()) == {"file:///a.txt", "file:///b.txt"}

        # What the first stream did not ask for, each seen by the control stream first (so
        # it was offered to both before the next change; a wrongly kept one would come
        # before the tools change below).
        async def seen(method: str, uri: str | None = None) -> None:
            got = await control.next()
            assert got["method"] == method
            assert got["params"]["_meta"] == {SUBSCRIPTION_KEY: "all"}
            if uri is not None:
                assert got["params"]["uri"] == uri

        server.add_prompt(lambda: "hi", "hello")
        await seen("notifications/prompts/list_changed")
        server.add_resource(lambda: "C", "file:///c.txt")
        await seen("notifications/resources/list_changed")
        await server.notify_resource_updated("file:///b.txt")
        await seen("notifications/resources/updated", "file:///b.txt")
        await server.notify_resource_updated("file:///a.txt")
        await seen("notifications/resources/updated", "file:///a.txt")
        server.add_tool(lambda: "new", "fresh")
        await seen("notifications/tools/list_changed")

        updated = await listen.next()
        conforms(updated, "ResourceUpdatedNotification")
        assert updated["params"] == {"uri": "file:///a.txt", "_meta": {SUBSCRIPTION_KEY: 41}}
        changed = await listen.next()
        conforms(changed, "ToolListChangedNotification")
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"] == {"_meta": {SUBSCRIPTION_KEY: 41}}
    # Both streams closed by the client: the server forgets them and their URIs.
    await until(lambda: _members(server) == 0)
    assert not server.subscribed_uris()


async def test_listen_without_a_notifications_object_is_invalid_params() -> None:
    body = request(1, "subscriptions/listen", {})
    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        answer = await send(client, listener.url, body)
    assert answer.status == 400
    assert answer.message["error"]["code"] == -32602
    assert answer.message["id"] == 1


async def test_closing_a_listen_stream_removes_its_listener() -> None:
    server = build_server()
    async with running(server) as listener, httpx.AsyncClient(timeout=None) as client:
        for round_ in range(3):
            async with listening(client, listener.url, round_, {"toolsListChanged": True}) as one:
                await one.next()
                await until(lambda: _members(server) == 1)
            await until(lambda: _members(server) == 0)
        # Later changes reach nobody and break nothing.
        server.add_tool(lambda: "x", "after")
        assert text_of(await send(client, listener.url, call(9, "after", {}))) == "x"


# --- authorization ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OneToken:
    """A verifier that knows one token (``trimcp.auth.TokenVerifier``)."""

    token: str

    async def verify(self, token: str) -> Identity:
        if token != self.token:
            raise InvalidToken("this test server knows one token only")
        return Identity(
            subject="alice",
            client_id="test-client",
            scopes=frozenset({"mcp"}),
            expires_at=None,
            issuer="https://issuer.example",
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_with_authorization_a_token_is_required_and_results_are_private() -> None:
    port = _free_port()
    auth = ResourceServer(
        OneToken("s3cret"),
        ResourceMetadata(
            resource=f"http://127.0.0.1:{port}/mcp",
            authorization_servers=("https://issuer.example",),
        ),
    )
    server = build_server()
    options = HttpOptions(auth=auth)
    async with (
        trio.open_nursery() as nursery,
        httpx.AsyncClient() as client,
    ):
        listener: HttpListener = await nursery.start(
            functools.partial(server.serve_http, port=port, options=options)
        )
        body = request(1, "tools/list")
        anonymous = await send(client, listener.url, body)
        wrong = await send(client, listener.url, body, {"authorization": "Bearer nope"})
        bearer = {"authorization": "Bearer s3cret"}
        listed = await send(client, listener.url, body, bearer)
        discovered = await send(client, listener.url, request(2, "server/discover"), bearer)
        called = await send(client, listener.url, call(3, "echo", {"text": "me"}), bearer)
        legacy = await post(client, listener.url, INITIALIZE)  # the other era, same rule
        nursery.cancel_scope.cancel()
    assert anonymous.status == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer ")
    assert wrong.status == 401
    assert result_of(listed)["cacheScope"] == "private"
    assert result_of(discovered)["cacheScope"] == "private"
    assert text_of(called) == "me"
    assert legacy.status == 401


# --- a listener that does not read -----------------------------------------------------------


async def _listen_without_reading(url: str, body: dict[str, Any]) -> trio.SocketStream:
    """POST ``body`` on a raw connection whose client then reads nothing at all.

    A small receive buffer makes the server's writes block after a few events, as they do
    for a stalled client once the kernel's buffers are full.
    """
    host_port = url.split("/")[2]
    host, port = host_port.rsplit(":", 1)
    sock = trio.socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    await sock.connect((host, int(port)))
    stream = trio.SocketStream(sock)
    content = orjson.dumps(body)
    headers = {
        "host": host_port,
        "accept": ACCEPT_BOTH,
        "content-type": "application/json",
        "content-length": str(len(content)),
        **mirrored(body),
    }
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    await stream.send_all(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + content)
    return stream


async def test_a_listener_that_does_not_read_is_dropped_and_nobody_else_notices(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = build_server()
    # Large notifications fill the stalled connection's buffers quickly.
    uri = "file:///notes/" + "x" * 16_000
    notifications = {"resourceSubscriptions": [uri], "toolsListChanged": True}
    bound = MAX_QUEUED_NOTICES + MAX_DROPPED_NOTICES
    async with running(server) as listener, httpx.AsyncClient(timeout=None) as client:
        session = await handshake(client, listener.url)
        stalled = await _listen_without_reading(
            listener.url,
            request("stalled", "subscriptions/listen", {"notifications": notifications}),
        )
        async with listening(client, listener.url, "reader", notifications) as reader:
            await reader.next()
            await until(lambda: _members(server) == 3)  # the session and two listeners
            sent = 0
            # The reader takes each notification before the next is sent: only the stalled
            # listener falls behind, by one notification per round.
            while _members(server) == 3:
                assert sent < 10 * bound, "the stalled listener was never dropped"
                await server.notify_resource_updated(uri)
                sent += 1
                got = await reader.next()
                assert got["params"]["uri"] == uri
            assert sent >= bound  # it had 256 queued and 1,024 dropped first
            assert server.subscribed_uris() == {uri}  # the reader's subscription is kept
            # The reader and the session go on as before.
            server.add_tool(lambda: "later", "later")
            assert (await reader.next())["method"] == "notifications/tools/list_changed"
            legacy_call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "later", "arguments": {}},
            }
            legacy = await post(client, listener.url, legacy_call, session=session)
            assert legacy.message["result"]["content"][0]["text"] == "later"
        # The stalled connection was closed by the server: reading it reaches its end.
        with trio.fail_after(10):
            while await stalled.receive_some(1 << 20):
                pass
        await stalled.aclose()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("not keeping up" in w for w in warnings) == 1
    assert sum("does not read its notifications" in w for w in warnings) == 1


# --- keep-alive comments on a listen stream (the endpoint over ASGI, in virtual time) ----------


async def test_an_idle_listen_stream_gets_keepalive_comments(autojump_clock: object) -> None:
    server = build_server()
    endpoint = ModernEndpoint(server, HttpOptions(keepalive_interval=15.0), SessionOptions())
    body = request(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    raw_headers = [(name.encode(), value.encode()) for name, value in mirrored(body).items()]
    sent: list[tuple[float, dict[str, Any]]] = []
    wrote, gone = trio.Event(), trio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal wrote
        sent.append((trio.current_time(), message))
        wrote.set()
        wrote = trio.Event()

    def bodies() -> list[tuple[float, bytes]]:
        return [(at, m["body"]) for at, m in sent if m["type"] == "http.response.body"]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            endpoint.post,
            Headers(raw_headers),
            read_post_body(orjson.dumps(body)),
            receive,
            send,
            None,
        )
        await until_sent(lambda: len(bodies()) == 1, lambda: wrote)  # the acknowledgement
        assert sent[0][1]["status"] == 200
        await trio.sleep(20.0)
        server.add_tool(lambda: "x", "added")  # a notification at t=20
        await until_sent(lambda: len(bodies()) == 3, lambda: wrote)
        await trio.sleep(50.0 - trio.current_time())
        gone.set()
    at = [(time, chunk.startswith(b":")) for time, chunk in bodies()]
    # A comment each interval the stream was quiet for a whole interval: at 15, not at 30
    # (the notification at 20 was 10 s before), then at 45.
    assert at == [(0.0, False), (15.0, True), (20.0, False), (45.0, True)]
    assert _members(server) == 0


async def until_sent(condition: Callable[[], bool], event: Callable[[], trio.Event]) -> None:
    with trio.fail_after(5):
        while not condition():
            await event().wait()
