"""``ClientSession`` against trimcp's everything server, in-process over memory streams.

The server is ``examples/everything_server.py``'s ``build_server()``, run in a real
``trimcp.sessions.Session`` actor (as ``trimcp.testing``'s in-memory client does), so every
typed method meets a real implementation: no process, no socket. Each test runs in both
eras (the ``era`` fixture): 2026-07-28 per request, and 2025-11-25's handshake.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.actors import spawn
from trimcp.client.session import (
    ClientSessionOptions,
    open_client_session,
    prompt_ref,
    resource_ref,
)
from trimcp.client.session._handlers import (
    ClientHandlers,
    ElicitRequest,
    ElicitResult,
    Root,
    SamplingRequest,
    SamplingResult,
)
from trimcp.errors import InvalidParams, MissingClientCapability, ResourceNotFound
from trimcp.protocol import Era
from trimcp.sessions import Session
from trimcp.transports import memory_stream_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from types import ModuleType

    from trimcp.client.session._results import LogMessage, Progress, Task
    from trimcp.client.session._session import ClientSession

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "everything_server.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("everything_server_for_client", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while decorating
    spec.loader.exec_module(module)
    return module


EVERYTHING = load_example()


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def era(request: pytest.FixtureRequest) -> str:
    """The protocol version every session of the test is forced to speak."""
    return str(request.param)


@asynccontextmanager
async def everything(
    version: str, handlers: ClientHandlers | None = None
) -> AsyncIterator[ClientSession]:
    server = EVERYTHING.build_server()
    server_end, client_end = memory_stream_pair()
    options = ClientSessionOptions(protocol_version=version)
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(server_end, server, server.session_options))
        try:
            async with open_client_session(
                client_end, handlers=handlers, options=options
            ) as session:
                assert session.protocol_version == version
                yield session
        finally:
            ref.request_stop()


async def test_tools_list_and_call(era: str) -> None:
    async with everything(era) as session:
        assert session.server_info.name == "trimcp-everything"
        tools = {tool.name: tool for tool in await session.list_tools()}
        assert tools["echo"].display_name == "Echo"
        assert tools["echo"].annotations is not None
        assert tools["echo"].annotations.read_only_hint is True
        if session.era is Era.HANDSHAKE:  # 2026-07-28 moved tasks to an extension
            assert tools["sleep"].task_support == "optional"
        assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"
        added = await session.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"sum": 5}  # validated against its outputSchema
        failed = await session.call_tool("test_error_handling")
        assert failed.is_error
        with pytest.raises(InvalidParams):
            await session.call_tool("no_such_tool")


async def test_progress_and_logging(era: str) -> None:
    logs: list[LogMessage] = []
    seen: list[Progress] = []
    async with everything(era, ClientHandlers(on_log=logs.append)) as session:
        await session.set_logging_level("debug")
        result = await session.call_tool("sleep", {"seconds": 0.3}, on_progress=seen.append)
        assert result.text == "slept 0.3 s"
        assert [p.progress for p in seen] == [1, 2, 3]
        await session.call_tool("test_tool_with_logging")
        await session.ping()
    assert logs
    assert all(isinstance(log.level, str) for log in logs)


async def test_resources_and_subscription(era: str) -> None:
    updated: list[str] = []
    done = trio.Event()

    def on_updated(uri: str) -> None:
        updated.append(uri)
        done.set()

    async with everything(era, ClientHandlers(on_resource_updated=on_updated)) as session:
        uris = {resource.uri for resource in await session.list_resources()}
        assert "test://static-text" in uris
        templates = await session.list_resource_templates()
        assert templates[0].uri_template == "test://template/{id}/data"
        contents = await session.read_resource("test://template/7/data")
        assert json.loads(contents[0].text or "")["id"] == "7"
        binary = await session.read_resource("test://static-binary")
        assert binary[0].blob
        with pytest.raises(ResourceNotFound) as missing:
            await session.read_resource("test://nothing-here")
        # 2026-07-28 answers an unknown resource with -32602, no longer -32002.
        assert missing.value.code == (-32602 if session.era is Era.MODERN else -32002)
        await session.subscribe_resource("test://watched-resource")
        await session.call_tool("update_watched_resource")
        with trio.fail_after(5):
            await done.wait()
        await session.unsubscribe_resource("test://watched-resource")
    assert updated == ["test://watched-resource"]


async def test_prompts_and_completion(era: str) -> None:
    async with everything(era) as session:
        names = {prompt.name for prompt in await session.list_prompts()}
        assert "test_prompt_with_arguments" in names
        prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "x", "arg2": "y"})
        assert prompt.messages[0].role == "user"
        completion = await session.complete(prompt_ref("test_prompt_with_arguments"), "arg1", "par")
        assert isinstance(completion.values, tuple)
        template = resource_ref("test://template/{id}/data")
        assert isinstance((await session.complete(template, "id", "")).values, tuple)


async def test_sampling_elicitation_and_roots(era: str) -> None:
    async def sample(request: SamplingRequest) -> SamplingResult:
        text = request.messages[0]["content"]
        assert isinstance(text, dict)
        return SamplingResult(content={"type": "text", "text": f"echo {text['text']}"}, model="m")

    async def elicit(request: ElicitRequest) -> ElicitResult:
        if request.mode == "url":
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={})  # leave every default in place

    handlers = ClientHandlers(
        sampling=sample,
        elicitation=elicit,
        elicitation_modes=("form", "url"),
        roots=[Root(uri="file:///work", name="work")],
    )
    async with everything(era, handlers) as session:
        sampled = await session.call_tool("test_sampling", {"prompt": "hello"})
        assert sampled.text == "LLM response: echo hello"
        defaults = await session.call_tool("test_elicitation_sep1034_defaults")
        assert "John Doe" in defaults.text
        assert "95.5" in defaults.text
        url = await session.call_tool("connect_account")
        assert "decline" in url.text
        roots = await session.call_tool("list_roots")
        assert json.loads(roots.text) == [{"uri": "file:///work", "name": "work"}]
        await session.send_roots_list_changed()


async def test_refused_client_features_reach_the_tool(era: str) -> None:
    async with everything(era) as session:
        if session.era is Era.MODERN:
            # 2026-07-28: the server refuses the request itself (-32021).
            with pytest.raises(MissingClientCapability):
                await session.call_tool("list_roots")
            return
        result = await session.call_tool("list_roots")
        assert result.is_error  # the server could not ask: roots were not declared


async def test_tool_as_task() -> None:
    statuses: list[Task] = []
    progress: list[Progress] = []
    handlers = ClientHandlers(on_task_status=statuses.append)
    # The core tasks of 2025-11-25; 2026-07-28 made them an extension.
    async with everything("2025-11-25", handlers) as session:
        # The everything server declares tasks for tools/call; if it stops, this must fail,
        # not skip, or the client's task methods would go untested without anyone noticing.
        assert session.server_capabilities.tasks_tools_call, "tasks for tools/call not declared"
        task = await session.tasks.call_tool(
            "sleep", {"seconds": 0.2}, ttl=60_000, on_progress=progress.append
        )
        assert task.status == "working"
        assert (await session.tasks.get(task.task_id)).task_id == task.task_id
        assert task.task_id in {t.task_id for t in await session.tasks.list()}
        result = await session.tasks.result(task.task_id)
        assert result.text == "slept 0.2 s"
        other = await session.tasks.call_tool("sleep", {"seconds": 30})
        cancelled = await session.tasks.cancel(other.task_id)
        assert cancelled.status == "cancelled"


async def test_raw_request(era: str) -> None:
    async with everything(era) as session:
        result = await session.request("tools/call", {"name": "echo", "arguments": {"text": "r"}})
        assert result["content"] == [{"type": "text", "text": "r"}]


async def test_the_public_client_pair_helper() -> None:
    from trimcp.testing import open_client_pair

    async with open_client_pair(EVERYTHING.build_server()) as session:
        result = await session.call_tool("echo", {"text": "paired"})
        assert result.text == "paired"
