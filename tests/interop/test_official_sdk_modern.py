"""The official MCP Python SDK (``mcp``, test-only) speaks 2026-07-28 to the everything server.

The legacy twin, ``test_official_sdk.py``, drives the SDK with ``mode="legacy"`` (the
2025-11-25 ``initialize`` handshake). Here the SDK runs in its default ``mode="auto"``, which
probes ``server/discover`` and must settle on 2026-07-28 with trimcp, and with the version
forced (``mode="2026-07-28"``: no probe, every request carries its ``_meta``). Every test
runs over stdio (the SDK starts ``python examples/everything_server.py --transport stdio``),
over Streamable HTTP on 127.0.0.1 and a free port, and over the same endpoint on hypercorn's
trio worker. Each test starts and stops its own server process; the SDK client is
anyio-based and runs under trio.

Assertions are about what trimcp puts on the wire, read through the SDK's public API:
results, errors, the callbacks the SDK feeds (progress, logs, elicitation, sampling, roots)
and the events of its ``subscriptions/listen`` driver. The MCP 2026-07-28 revision:
https://modelcontextprotocol.io/specification/2026-07-28.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, FileUrl

from tests.interop.sdk_checks import (
    RESOURCES,
    TRANSPORTS,
    check_completion,
    check_prompts,
    check_resource_reads,
    check_tool_calls,
    listening_url,
    text_of,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.client.session import ClientRequestContext
    from mcp.client.subscriptions import ServerEvent, Subscription

ROOT = Path(__file__).resolve().parent.parent.parent
SERVER = [sys.executable, str(ROOT / "examples" / "everything_server.py")]
SKILLS = ROOT / "examples" / "skills"
MODERN = "2026-07-28"
LOG_LEVEL = types.LOG_LEVEL_META_KEY  # "io.modelcontextprotocol/logLevel"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: ``ttlMs`` of the list methods and ``server/discover`` (trimcp's default hint, 60 s).
LIST_TTL_MS = 60_000

pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("transport", TRANSPORTS),
    # "auto" is the SDK's default: it must land on 2026-07-28. The pinned version skips the
    # probe, so the server sees per-request _meta from the first request on.
    pytest.mark.parametrize("mode", ["auto", MODERN]),
]


def run(
    transport: str,
    mode: str,
    test: Callable[[Client], Awaitable[None]],
    errlog: Path | None = None,
    **options: Any,
) -> None:
    """Connect an SDK client in ``mode`` to a fresh server process, run ``test``, stop it.

    ``transport`` is ``stdio`` (the SDK starts the process) or ``http``/``http-hypercorn``
    (the server listens on 127.0.0.1 and a free port, and the SDK's Streamable HTTP client
    connects to it). ``errlog`` receives the server's stderr. Before ``test`` runs, the
    negotiated version is checked: 2026-07-28 in both modes, and in ``auto`` mode reached
    through ``server/discover``, not the handshake fallback.
    """

    async def connected(client: Client) -> None:
        assert client.protocol_version == MODERN
        if mode == "auto":
            assert client.session.discover_result is not None
            assert client.session.initialize_result is None
        with anyio.fail_after(20):
            await test(client)

    async def over_stdio() -> None:
        with contextlib.ExitStack() as files:
            log = files.enter_context(errlog.open("w")) if errlog else sys.stderr
            params = StdioServerParameters(
                command=SERVER[0], args=[*SERVER[1:], "--transport", "stdio"], cwd=ROOT
            )
            transport_cm = stdio_client(params, errlog=log)
            async with Client(transport_cm, read_timeout_seconds=10, mode=mode, **options) as c:
                await connected(c)

    async def over_http() -> None:
        with contextlib.ExitStack() as files:
            log_path = errlog or Path(files.enter_context(tempfile.TemporaryDirectory())) / "log"
            log = files.enter_context(log_path.open("w"))
            engine = "hypercorn" if transport == "http-hypercorn" else "trimcp"
            command = [*SERVER, "--transport", "http", "--port", "0", "--engine", engine]
            process = await anyio.open_process(command, stderr=log, cwd=ROOT)
            try:
                url = await listening_url(log_path)
                async with Client(
                    streamable_http_client(url), read_timeout_seconds=10, mode=mode, **options
                ) as c:
                    await connected(c)
            finally:
                await _stop(process)

    anyio.run(over_stdio if transport == "stdio" else over_http, backend="trio")


async def _stop(process: anyio.abc.Process) -> None:
    """Stop the server by its PID: SIGTERM, then SIGKILL if it is still there after 5 s."""
    process.terminate()
    with anyio.move_on_after(5, shield=True):
        await process.wait()
    if process.returncode is None:
        process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()


def log_level(level: types.LoggingLevel) -> types.RequestParamsMeta:
    """A request ``_meta`` asking for the request's logs at ``level`` and above."""
    # An open TypedDict: mypy takes only literal keys, and LOG_LEVEL is a constant.
    return cast("types.RequestParamsMeta", {LOG_LEVEL: level})


def assert_cache_hints(result: types.Result, ttl_ms: int) -> None:
    """Check that the server sent ``ttlMs`` and ``cacheScope`` (not the SDK's defaults)."""
    assert isinstance(result, types.CacheableResult)
    assert {"ttl_ms", "cache_scope"} <= result.model_fields_set
    assert result.ttl_ms == ttl_ms
    assert result.cache_scope == "public"  # no authorization on these endpoints


class ExtensionRequest(types.Request[dict[str, Any], str]):
    """A request of a method the SDK has no model for (the Skills extension's)."""

    params: dict[str, Any]


class ExtensionResult(types.Result):
    """Its result: ``resultType`` and ``_meta``, and the rest as sent."""

    model_config = ConfigDict(extra="allow")


async def extension_request(client: Client, method: str, **params: Any) -> dict[str, Any]:
    """Send ``method`` through the SDK's generic ``send_request`` (stamped with _meta).

    Returns the result's members as they were on the wire.
    """
    request = ExtensionRequest(method=method, params=params)
    result = await client.session.send_request(request, ExtensionResult)
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


# --- discovery -------------------------------------------------------------------------------


def test_discover(transport: str, mode: str) -> None:
    """``server/discover``: versions, identity, capabilities (with extensions), cache hints."""

    async def body(client: Client) -> None:
        raw = await client.session.send_discover(MODERN)
        discovered = types.DiscoverResult.model_validate(raw, by_name=False)
        if mode == "auto":
            # The probe the SDK connected with saw the same answer.
            assert client.session.discover_result == discovered
            assert client.server_info is not None
            assert client.server_info.name == "trimcp-everything"
            assert client.instructions == discovered.instructions
        assert discovered.supported_versions[0] == MODERN
        assert "2025-11-25" in discovered.supported_versions
        server_info = raw["_meta"][types.SERVER_INFO_META_KEY]
        assert server_info == {
            "name": "trimcp-everything",
            "version": "1.0.0",
            "title": "trimcp everything server",
        }
        assert discovered.instructions == (
            "A test server: every MCP feature and the conformance fixtures."
        )
        capabilities = discovered.capabilities
        assert capabilities.tools is not None
        assert capabilities.tools.list_changed
        assert capabilities.resources is not None
        assert capabilities.resources.list_changed
        assert capabilities.resources.subscribe  # through subscriptions/listen
        assert capabilities.prompts is not None
        assert capabilities.completions is not None
        assert capabilities.extensions is not None
        assert capabilities.extensions[SKILLS_EXTENSION] == {"directoryRead": True}
        assert discovered.result_type == "complete"
        assert_cache_hints(discovered, LIST_TTL_MS)

        # A version it does not speak: -32022, naming the ones it does.
        with pytest.raises(MCPError) as caught:
            await client.session.send_discover("2099-01-01")
        assert caught.value.error.code == types.UNSUPPORTED_PROTOCOL_VERSION
        assert caught.value.error.data == {
            "supported": discovered.supported_versions,
            "requested": "2099-01-01",
        }
        # A method it does not know: -32601.
        with pytest.raises(MCPError) as caught:
            await extension_request(client, "no/such-method")
        assert caught.value.error.code == types.METHOD_NOT_FOUND

    run(transport, mode, body)


# --- tools -----------------------------------------------------------------------------------


def test_tools(transport: str, mode: str) -> None:
    async def body(client: Client) -> None:
        listed = await client.list_tools(cache_mode="bypass")
        assert_cache_hints(listed, LIST_TTL_MS)
        tools = {tool.name: tool for tool in listed.tools}
        assert tools["echo"].title == "Echo"
        assert tools["echo"].annotations is not None
        assert tools["echo"].annotations.read_only_hint is True
        assert tools["add"].output_schema is not None
        assert tools["json_schema_2020_12_tool"].input_schema["$schema"] == (
            "https://json-schema.org/draft/2020-12/schema"
        )

        unknown = await check_tool_calls(client)
        assert unknown.error.data == {"name": "no_such_tool"}
        echoed = await client.call_tool("echo", {"text": "héllo"})
        assert echoed.result_type == "complete"
        assert not echoed.is_error
        (audio,) = (await client.call_tool("test_audio_content", {})).content
        assert isinstance(audio, types.AudioContent)
        assert base64.b64decode(audio.data).startswith(b"RIFF")
        links = (await client.call_tool("get_resource_links", {})).content
        assert [(type(link), getattr(link, "uri", None)) for link in links] == [
            (types.ResourceLink, "test://static-text"),
            (types.ResourceLink, "test://static-binary"),
        ]
        # SEP-2243: over HTTP, ``region`` is mirrored into the Mcp-Param-Region header.
        region = await client.call_tool("test_region_lookup", {"region": "eu", "query": "pubs"})
        assert text_of(region) == "pubs in eu"

    run(transport, mode, body)


def test_progress(transport: str, mode: str) -> None:
    reported: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, total, message))

    async def body(client: Client) -> None:
        result = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        assert text_of(result).startswith("Tool with progress executed successfully")
        slept = await client.call_tool("sleep", {"seconds": 0.2}, progress_callback=on_progress)
        assert text_of(slept) == "slept 0.2 s"

    run(transport, mode, body)
    assert reported == [
        (0, 100, None),
        (50, 100, None),
        (100, 100, None),
        (1, 2, "slept 0.1 s"),
        (2, 2, "slept 0.2 s"),
    ]


def test_no_logs_without_a_log_level(transport: str, mode: str) -> None:
    """2026-07-28 logging is per request: without ``_meta`` logLevel the server sends none."""
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def body(client: Client) -> None:
        result = await client.call_tool("test_tool_with_logging", {})
        assert text_of(result) == "Tool with logging executed successfully"
        assert text_of(await client.call_tool("test_logging_tool", {})) == "Logging evaluated"
        # One request that asks: its logs arrive, and only its own.
        await client.call_tool("test_logging_tool", {}, meta=log_level("info"))

    run(transport, mode, body, logging_callback=on_log)
    assert [(log.level, log.data) for log in logs] == [
        ("info", "Diagnostic trace logging activated")
    ]


def test_logs_at_the_clients_log_level(transport: str, mode: str) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def body(client: Client) -> None:
        await client.call_tool("test_tool_with_logging", {})
        # A request's own level overrides the client's: info is below error.
        await client.call_tool("test_tool_with_logging", {}, meta=log_level("error"))

    run(transport, mode, body, logging_callback=on_log, log_level="debug")
    assert [(log.level, log.data) for log in logs] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]


def test_cancellation(transport: str, mode: str, tmp_path: Path) -> None:
    """The SDK abandons a call (stdio: notifications/cancelled; HTTP: it closes the POST)."""
    log = tmp_path / "server.log"

    async def body(client: Client) -> None:
        running = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            running.set()

        async def call() -> None:
            await client.call_tool("sleep", {"seconds": 30}, progress_callback=on_progress)

        # Cancelled once the tool has reported progress, so it is known to be running.
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                with anyio.fail_after(5):
                    await running.wait()
                scope.cancel()
        assert scope.cancelled_caught
        # The server stops the tool while the connection is still open (not only when the
        # process ends), and still answers.
        for _ in range(250):  # polling a file: up to 5 s
            if "sleep cancelled after" in log.read_text():
                break
            await anyio.sleep(0.02)
        assert "sleep cancelled after" in log.read_text()
        assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"

    run(transport, mode, body, errlog=log)


# --- resources, prompts, completion -----------------------------------------------------------


def test_resources(transport: str, mode: str) -> None:
    async def body(client: Client) -> None:
        listed = await client.list_resources(cache_mode="bypass")
        assert_cache_hints(listed, LIST_TTL_MS)
        assert {str(r.uri) for r in listed.resources} == RESOURCES
        templates = await client.list_resource_templates(cache_mode="bypass")
        assert_cache_hints(templates, LIST_TTL_MS)
        assert [t.uri_template for t in templates.resource_templates] == [
            "test://template/{id}/data"
        ]

        read = await client.read_resource("test://static-text", cache_mode="bypass")
        # A resource can change at any moment: trimcp's hint for resources/read is 0.
        assert_cache_hints(read, 0)
        await check_resource_reads(client)
        (blob,) = (await client.read_resource("test://static-binary")).contents
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob).startswith(b"\x89PNG")
        (skill,) = (await client.read_resource("skill://code-review/SKILL.md")).contents
        assert isinstance(skill, types.TextResourceContents)
        assert skill.text == (SKILLS / "code-review" / "SKILL.md").read_text(encoding="utf-8")

        # 2026-07-28 (Resources > Error Handling): an unknown resource is -32602, naming it.
        with pytest.raises(MCPError) as caught:
            await client.read_resource("test://missing")
        assert caught.value.error.code == types.INVALID_PARAMS
        assert caught.value.error.data == {"uri": "test://missing"}

    run(transport, mode, body)


def test_prompts_and_completion(transport: str, mode: str) -> None:
    async def body(client: Client) -> None:
        listed = await client.list_prompts(cache_mode="bypass")
        assert_cache_hints(listed, LIST_TTL_MS)
        await check_prompts(client, listed)
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("no_such_prompt")
        assert caught.value.error.code == types.INVALID_PARAMS
        await check_completion(client)

    run(transport, mode, body)


# --- multi round-trip requests (SEP-2322) ------------------------------------------------------


class Asked:
    """The SDK's elicitation, sampling and roots callbacks, recording what the server asked."""

    def __init__(self) -> None:
        self.elicited: list[str] = []
        self.sampled: list[str] = []
        self.roots = 0

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.elicited.append(params.message)
        properties = params.requested_schema["properties"]
        answers: dict[str, str | bool] = {"name": "Ada", "color": "teal", "ok": True}
        return types.ElicitResult(
            action="accept", content={key: answers[key] for key in properties}
        )

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        (message,) = params.messages
        assert isinstance(message.content, types.TextContent)
        self.sampled.append(f"{message.content.text} ({params.max_tokens})")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.roots += 1
        root = types.Root(uri=FileUrl("file:///srv/project"), name="project")
        return types.ListRootsResult(roots=[root])

    def callbacks(self) -> dict[str, Any]:
        return {
            "elicitation_callback": self.elicitation,
            "sampling_callback": self.sampling,
            "list_roots_callback": self.list_roots,
        }


def test_input_required_first_round(transport: str, mode: str) -> None:
    """The first answer is an InputRequiredResult: its keys, its asks, a sealed state."""

    async def body(client: Client) -> None:
        first = await client.session.call_tool(
            "test_input_required_result_multiple_inputs", {}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        assert first.result_type == "input_required"
        requests = first.input_requests or {}
        # The three asks run concurrently on the server and come back in one result.
        assert set(requests) == {"user_name", "greeting", "client_roots"}
        assert isinstance(requests["user_name"], types.ElicitRequest)
        assert isinstance(requests["greeting"], types.CreateMessageRequest)
        assert requests["greeting"].params.max_tokens == 50
        assert isinstance(requests["client_roots"], types.ListRootsRequest)
        assert first.request_state  # an opaque, non-empty token

    run(transport, mode, body, **Asked().callbacks())


def test_input_required_resumed(transport: str, mode: str) -> None:
    """A call resumed with the SDK's ``input_responses``/``request_state`` arguments.

    The state must come back exactly as issued, and only once (trimcp seals it and keeps
    track of the states it has seen): a modified one and a replayed one are -32602.
    """
    tool = "test_input_required_result_tampered_state"

    async def body(client: Client) -> None:
        first = await client.session.call_tool(tool, {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert set(first.input_requests or {}) == {"confirm"}
        state = first.request_state
        assert state
        answers: types.InputResponses = {
            "confirm": types.ElicitResult(action="accept", content={"ok": True})
        }
        tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, {}, input_responses=answers, request_state=tampered)
        assert caught.value.error.code == types.INVALID_PARAMS
        done = await client.call_tool(tool, {}, input_responses=answers, request_state=state)
        assert text_of(done) == "integrity-ok: state verified"
        with pytest.raises(MCPError) as caught:
            await client.call_tool(tool, {}, input_responses=answers, request_state=state)
        assert caught.value.error.code == types.INVALID_PARAMS

    run(transport, mode, body, **Asked().callbacks())


def test_input_required_tools(transport: str, mode: str) -> None:
    asked = Asked()

    async def body(client: Client) -> None:
        async def call(name: str) -> str:
            return text_of(await client.call_tool(f"test_input_required_result_{name}", {}))

        accepted = 'action=accept, content={"name": "Ada"}'
        assert await call("elicitation") == f"Hello, {accepted}"
        assert await call("sampling") == "The model said: Paris"
        assert await call("list_roots") == "Roots: file:///srv/project"
        assert await call("multiple_inputs") == f"Name: {accepted}; Greeting: Paris; Roots: 1"
        assert await call("multi_round") == (
            f'Multi-round complete for {accepted} who likes action=accept, content={{"color": '
            '"teal"}'
        )
        # ctx.once: the ticket minted in the first round is the one the retry sees.
        assert await call("request_state") == (
            'state-ok: ticket-42 confirmed (action=accept, content={"ok": true})'
        )

    run(transport, mode, body, **asked.callbacks())
    assert asked.elicited == [
        "What is your name?",
        "What is your name?",
        "Step 1: What is your name?",
        "Step 2: What is your favorite color?",
        "Confirm?",
    ]
    assert asked.sampled == ["What is the capital of France? (50)", "Generate a greeting (50)"]
    assert asked.roots == 2


def test_input_required_prompt(transport: str, mode: str) -> None:
    asked = Asked()

    async def body(client: Client) -> None:
        got = await client.get_prompt("test_input_required_result_prompt")
        (message,) = got.messages
        assert isinstance(message.content, types.TextContent)
        assert message.content.text == (
            'Write a short poem for action=accept, content={"name": "Ada"}.'
        )

    run(transport, mode, body, **asked.callbacks())
    assert asked.elicited == ["Who is this prompt for?"]


def test_missing_capability(transport: str, mode: str) -> None:
    """A tool that samples, called by a client that declared no sampling: -32021."""
    asked = Asked()

    async def body(client: Client) -> None:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("test_missing_capability", {})
        assert caught.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
        data = types.MissingRequiredClientCapabilityErrorData.model_validate(
            caught.value.error.data, by_name=False
        )
        assert data.required_capabilities.sampling is not None
        # The connection is still good.
        assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"

    run(transport, mode, body, elicitation_callback=asked.elicitation)
    assert asked.elicited == []


# --- subscriptions/listen (SEP-2575) ------------------------------------------------------------


async def next_event(subscription: Subscription) -> ServerEvent:
    with anyio.fail_after(5):
        return await anext(subscription)


def test_listen_list_changed(transport: str, mode: str) -> None:
    async def body(client: Client) -> None:
        async with client.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
            assert sub.honored.tools_list_changed
            assert sub.honored.prompts_list_changed
            result = await client.call_tool("test_trigger_tool_change", {})
            assert text_of(result) == "Mutation triggered"
            assert await next_event(sub) == ToolsListChanged()
            await client.call_tool("test_trigger_prompt_change", {})
            # The trigger adds a tool and removes it: a second tools change may come first.
            event = await next_event(sub)
            while event == ToolsListChanged():
                event = await next_event(sub)
            assert event == PromptsListChanged()
        # The tool came and went: the list is back to what it was.
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "test_passing_tool" not in names
        assert "echo" in names

    run(transport, mode, body)


def test_listen_resource_updated(transport: str, mode: str) -> None:
    async def body(client: Client) -> None:
        watched = "test://watched-resource"
        result = await client.call_tool("update_watched_resource", {})
        assert text_of(result) == f"{watched} is now version 1; 0 subscriber(s) notified"
        async with client.listen(resource_subscriptions=[watched]) as sub:
            assert sub.honored.resource_subscriptions == [watched]
            result = await client.call_tool("update_watched_resource", {})
            assert text_of(result) == f"{watched} is now version 2; 1 subscriber(s) notified"
            assert await next_event(sub) == ResourceUpdated(uri=watched)
            (contents,) = (await client.read_resource(watched)).contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "Watched resource content, version 2"
        # Leaving listen ends the subscription on the server too.
        with anyio.fail_after(5):
            while True:
                result = await client.call_tool("update_watched_resource", {})
                if text_of(result).endswith("0 subscriber(s) notified"):
                    break
                await anyio.sleep(0.02)

    run(transport, mode, body)


# --- the Skills extension (SEP-2640) -----------------------------------------------------------


#: The frontmatter of the example skills' SKILL.md files, as JSON.
FRONTMATTER = {
    "code-review": {
        "name": "code-review",
        "description": "Review a change for correctness, tests and clarity before it is merged. "
        "Use when asked to review a diff or a pull request.",
    },
    "pdf-processing": {
        "name": "pdf-processing",
        "description": "Extract text and tables from PDF files and fill PDF forms. "
        "Use when a task mentions PDF documents.",
        "license": "Apache-2.0",
    },
}


def skill_entry(name: str, *files: str) -> dict[str, Any]:
    """The skills/list entry for ``examples/skills/<name>``: its files' digests and sizes."""
    resources = []
    for file in ("SKILL.md", *files):
        data = (SKILLS / name / file).read_bytes()
        resources.append(
            {
                "uri": f"skill://{name}/{file}",
                "digest": f"sha256:{hashlib.sha256(data).hexdigest()}",
                "size": len(data),
            }
        )
    return {
        "uri": f"skill://{name}/SKILL.md",
        "frontmatter": FRONTMATTER[name],
        "resources": resources,
    }


def test_skills_extension(transport: str, mode: str) -> None:
    """skills/list, skills/get and resources/directory/read through the SDK's send_request."""

    async def body(client: Client) -> None:
        review = skill_entry("code-review", "references/checklist.md")
        listed = await extension_request(client, "skills/list")
        assert listed["skills"] == [review, skill_entry("pdf-processing", "templates/report.md")]
        assert "nextCursor" not in listed
        assert listed["ttlMs"] == LIST_TTL_MS
        assert listed["cacheScope"] == "public"

        got = await extension_request(client, "skills/get", uri="skill://code-review/SKILL.md")
        assert got["skill"] == review
        with pytest.raises(MCPError) as caught:
            await extension_request(client, "skills/get", uri="skill://nope/SKILL.md")
        assert caught.value.error.code == types.INVALID_PARAMS

        children = await extension_request(
            client, "resources/directory/read", uri="skill://code-review"
        )
        assert [(r["uri"], r["mimeType"]) for r in children["resources"]] == [
            ("skill://code-review/SKILL.md", "text/markdown"),
            ("skill://code-review/references", "inode/directory"),
        ]
        with pytest.raises(MCPError) as caught:
            await extension_request(
                client, "resources/directory/read", uri="skill://code-review/SKILL.md"
            )
        assert caught.value.error.code == types.INVALID_PARAMS

    run(transport, mode, body)
