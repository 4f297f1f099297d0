"""The official MCP Python SDK (``mcp``, test-only) drives the everything server.

Every test runs twice: over stdio (the SDK starts ``python examples/everything_server.py
--transport stdio`` and talks to its stdin/stdout) and over Streamable HTTP (the server
listens on 127.0.0.1 and a free port; the SDK's ``streamable_http_client`` connects). The
SDK client is anyio-based and runs under trio here. Each test starts and stops its own
server process.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

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

ROOT = Path(__file__).resolve().parent.parent.parent
PARAMS_HTTP = [
    sys.executable,
    str(ROOT / "examples" / "everything_server.py"),
    "--transport",
    "http",
]
PARAMS = StdioServerParameters(
    command=sys.executable,
    args=[str(ROOT / "examples" / "everything_server.py"), "--transport", "stdio"],
    cwd=ROOT,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("transport", TRANSPORTS),
    # mcp 2.3.0 deprecates logging, subscriptions and roots for its 2026-07-28 protocol;
    # they are current features of 2025-11-25, which these tests speak (mode="legacy").
    pytest.mark.filterwarnings(
        "ignore:The logging capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
    ),
    pytest.mark.filterwarnings(
        "ignore:resources/subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
    ),
    pytest.mark.filterwarnings(
        "ignore:resources/unsubscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
    ),
]


def run(
    transport: str,
    test: Callable[[Client], Awaitable[None]],
    errlog: Path | None = None,
    **options: Any,
) -> None:
    """Connect an SDK client to a fresh server process, run ``test``, stop the process.

    ``transport`` is ``stdio`` (the SDK starts the process) or ``http`` (the server listens
    on 127.0.0.1 and a free port, and the SDK's Streamable HTTP client connects to it).
    ``errlog`` receives the server's stderr.
    """
    options.setdefault("mode", "legacy")

    async def over_stdio() -> None:
        with contextlib.ExitStack() as files:
            log = files.enter_context(errlog.open("w")) if errlog else sys.stderr
            transport_cm = stdio_client(PARAMS, errlog=log)
            async with Client(transport_cm, read_timeout_seconds=10, **options) as client:
                with anyio.fail_after(20):
                    await test(client)

    async def over_http() -> None:
        with contextlib.ExitStack() as files:
            log_path = errlog or Path(files.enter_context(tempfile.TemporaryDirectory())) / "log"
            log = files.enter_context(log_path.open("w"))
            engine = "hypercorn" if transport == "http-hypercorn" else "trimcp"
            command = [*PARAMS_HTTP, "--port", "0", "--engine", engine]
            process = await anyio.open_process(command, stderr=log, cwd=ROOT)
            try:
                url = await listening_url(log_path)
                async with Client(
                    streamable_http_client(url), read_timeout_seconds=10, **options
                ) as client:
                    with anyio.fail_after(20):
                        await test(client)
            finally:
                process.terminate()
                await process.wait()

    anyio.run(over_stdio if transport == "stdio" else over_http, backend="trio")


def test_initialize_and_tools(transport: str) -> None:
    async def body(client: Client) -> None:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None
        assert client.server_info.name == "trimcp-everything"
        capabilities = client.server_capabilities
        assert capabilities.tools is not None
        assert capabilities.resources is not None
        assert capabilities.resources.subscribe
        assert capabilities.prompts is not None
        assert capabilities.completions is not None
        assert capabilities.logging is not None

        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "echo" in tools
        assert tools["json_schema_2020_12_tool"].input_schema["$schema"] == (
            "https://json-schema.org/draft/2020-12/schema"
        )
        await check_tool_calls(client)

    run(transport, body)


def test_auto_mode_speaks_2026_07_28(transport: str) -> None:
    """The SDK's default mode probes server/discover: trimcp answers it, on every transport."""

    async def body(client: Client) -> None:
        assert client.protocol_version == "2026-07-28"
        assert text_of(await client.call_tool("echo", {"text": "auto"})) == "auto"

    run(transport, body, mode="auto")


def test_resources_and_subscription(transport: str) -> None:
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async def body(client: Client) -> None:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert listed == RESOURCES
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]

        await check_resource_reads(client)

        with pytest.raises(MCPError) as caught:
            await client.read_resource("test://missing")
        assert caught.value.error.code == -32002

        await client.subscribe_resource("test://watched-resource")
        await client.call_tool("update_watched_resource", {})
        with anyio.fail_after(5):
            await arrived.wait()
        assert updated == ["test://watched-resource"]
        (watched,) = (
            await client.read_resource("test://watched-resource", cache_mode="bypass")
        ).contents
        assert isinstance(watched, types.TextResourceContents)
        assert watched.text.endswith("version 1")
        await client.unsubscribe_resource("test://watched-resource")
        result = await client.call_tool("update_watched_resource", {})
        assert "0 subscriber(s)" in text_of(result)

    run(transport, body, message_handler=on_message)


def test_prompts_and_completion(transport: str) -> None:
    async def body(client: Client) -> None:
        await check_prompts(client, await client.list_prompts())
        await check_completion(client)

    run(transport, body)


def test_logging_and_progress(transport: str) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    async def body(client: Client) -> None:
        await client.set_logging_level("debug")
        await client.call_tool("test_tool_with_logging", {})
        await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        await client.set_logging_level("error")
        await client.call_tool("test_tool_with_logging", {})

    run(transport, body, logging_callback=on_log)
    assert [(log.level, log.data) for log in logs] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]
    assert progress == [(0, 100), (50, 100), (100, 100)]


def test_cancellation(transport: str, tmp_path: Path) -> None:
    log = tmp_path / "server.log"

    async def body(client: Client) -> None:
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("sleep", {"seconds": 30})
        assert scope.cancelled_caught
        # The SDK sent notifications/cancelled: the server stops the tool while the session
        # is still open (not only when the process ends), and still answers.
        for _ in range(250):  # polling a file: up to 5 s
            if "sleep cancelled after" in log.read_text():
                break
            await anyio.sleep(0.02)
        assert "sleep cancelled after" in log.read_text()
        assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"

    run(transport, body, errlog=log)


def test_sampling_elicitation_and_roots(transport: str) -> None:
    sampled: list[types.CreateMessageRequestParams] = []
    elicited: list[types.ElicitRequestParams] = []

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="This is a test response from the client"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        elicited.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="decline")
        properties = params.requested_schema["properties"]
        if "username" in properties:
            return types.ElicitResult(
                action="accept", content={"username": "u", "email": "u@example.com"}
            )
        defaults = {name: schema["default"] for name, schema in properties.items()}
        return types.ElicitResult(action="accept", content=defaults)

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])

    async def body(client: Client) -> None:
        sample = await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
        assert text_of(sample) == "LLM response: This is a test response from the client"
        elicit = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert text_of(elicit).startswith("User response: action=accept")
        defaults = await client.call_tool("test_elicitation_sep1034_defaults", {})
        assert '"name": "John Doe"' in text_of(defaults)
        url = await client.call_tool("connect_account", {})
        assert text_of(url) == "URL elicitation: action=decline"
        listed = await client.call_tool("list_roots", {})
        assert json.loads(text_of(listed)) == [{"uri": "file:///srv/project", "name": "project"}]

    run(
        transport,
        body,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    )
    (request,) = sampled
    assert request.max_tokens == 100
    assert [type(p).__name__ for p in elicited] == [
        "ElicitRequestFormParams",
        "ElicitRequestFormParams",
        "ElicitRequestURLParams",
    ]


def test_task_augmented_call(transport: str) -> None:
    async def body(client: Client) -> None:
        capabilities = client.server_capabilities
        assert capabilities.tasks is not None
        session = client.session

        async def create(arguments: dict[str, Any], task: dict[str, Any]) -> types.CreateTaskResult:
            # mcp 2.3.0 checks a tools/call answer against CallToolResult only (the schema's
            # ServerResult union lacks CreateTaskResult), so send it raw and parse the answer
            # with the SDK's own CreateTaskResult model.
            params = {"name": "sleep", "arguments": arguments, "task": task}
            raw = await session._dispatcher.send_raw_request("tools/call", params, {})
            return types.CreateTaskResult.model_validate(raw, by_name=False)

        created = await create({"seconds": 0.2}, {"ttl": 30_000})
        task_id = created.task.task_id
        assert created.task.status == "working"
        assert created.task.ttl == 30_000
        get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
        assert (await session.send_request(get, types.GetTaskResult)).task_id == task_id
        payload = types.GetTaskPayloadRequest(
            params=types.GetTaskPayloadRequestParams(task_id=task_id)
        )
        result = await session.send_request(payload, types.CallToolResult)
        assert text_of(result) == "slept 0.2 s"
        done = await session.send_request(get, types.GetTaskResult)
        assert done.status == "completed"
        listed = await session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        assert [task.task_id for task in listed.tasks] == [task_id]
        running = await create({"seconds": 30}, {})
        cancel = types.CancelTaskRequest(
            params=types.CancelTaskRequestParams(task_id=running.task.task_id)
        )
        cancelled = await session.send_request(cancel, types.CancelTaskResult)
        assert cancelled.status == "cancelled"

    run(transport, body)
