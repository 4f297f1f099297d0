"""Sampling, elicitation and roots from a tool, answered by the scripted client."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.errors import JsonRpcError
from trimcp.protocol import ClientCapabilities, JsonObject
from trimcp.server import (
    ClientCapabilityMissing,
    Context,
    ElicitationError,
    MCPServer,
    PromptMessage,
    Root,
)
from trimcp.server._client_features import read_roots, sampling_params
from trimcp.testing import open_in_memory_client

from .conftest import assert_valid

if TYPE_CHECKING:
    from trimcp.sessions import SessionHandle


@dataclasses.dataclass
class Contact:
    name: str
    age: int = 0


def build() -> MCPServer:
    server = MCPServer("asker")

    @server.resource("info://motd")
    def motd() -> str:
        return "hello"

    @server.tool()
    async def summarize(ctx: Context) -> str:
        result = await ctx.sample(
            "Summarize", max_tokens=50, system_prompt="be brief", temperature=0.1
        )
        return f"{result.model}: {result.text}"

    @server.tool()
    async def sample_with_tools(ctx: Context) -> str:
        await ctx.sample(
            "x", max_tokens=5, tools=[{"name": "t", "inputSchema": {"type": "object"}}]
        )
        return "unreachable"

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Who are you?", Contact)
        if not answer.accepted:
            return answer.action
        assert isinstance(answer.content, Contact)
        return f"{answer.content.name} {answer.content.age}"

    @server.tool()
    async def ask_url(ctx: Context) -> str:
        answer = await ctx.elicit_url("Connect", "https://example.org/c", "e-1")
        return answer.action

    @server.tool()
    async def roots(ctx: Context) -> str:
        found = await ctx.list_roots()
        motd = await ctx.read_resource("info://motd")
        return ",".join(root.uri for root in found) + f" {motd[0]['text']}"

    return server


ALL = ClientCapabilities(sampling=True, elicitation_form=True, elicitation_url=True, roots=True)


async def test_sampling_round_trip() -> None:
    seen: list[JsonObject] = []

    async def create_message(params: JsonObject) -> JsonObject:
        seen.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m1"}

    handlers = {"sampling/createMessage": create_message}
    async with open_in_memory_client(build(), capabilities=ALL, handlers=handlers) as client:
        result = await client.request("tools/call", {"name": "summarize"})
    assert result["content"] == [{"type": "text", "text": "m1: short"}]
    assert seen == [
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize"}}],
            "maxTokens": 50,
            "systemPrompt": "be brief",
            "temperature": 0.1,
        }
    ]
    assert_valid("CreateMessageRequestParams", seen[0])


async def test_elicitation_form_accept_decline_and_invalid() -> None:
    answers: list[JsonObject] = [
        {"action": "accept", "content": {"name": "Ada", "age": 36}},
        {"action": "decline"},
        {"action": "accept", "content": {"age": "old"}},
    ]
    requests: list[JsonObject] = []

    async def elicit(params: JsonObject) -> JsonObject:
        requests.append(params)
        return answers[len(requests) - 1]

    handlers = {"elicitation/create": elicit}
    async with open_in_memory_client(build(), capabilities=ALL, handlers=handlers) as client:
        accepted = await client.request("tools/call", {"name": "ask"})
        declined = await client.request("tools/call", {"name": "ask"})
        invalid = await client.request("tools/call", {"name": "ask"})
    assert accepted["content"] == [{"type": "text", "text": "Ada 36"}]
    assert declined["content"] == [{"type": "text", "text": "decline"}]
    assert invalid["isError"] is True
    assert "requested schema" in str(invalid["content"])
    assert requests[0]["mode"] == "form"
    assert requests[0]["requestedSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 0}},
        "required": ["name"],
    }
    assert_valid("ElicitRequestFormParams", requests[0])


async def test_url_elicitation_and_roots() -> None:
    async def elicit(params: JsonObject) -> JsonObject:
        assert_valid("ElicitRequestURLParams", params)
        return {"action": "accept"}

    async def list_roots(params: JsonObject) -> JsonObject:
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    handlers = {"elicitation/create": elicit, "roots/list": list_roots}
    async with open_in_memory_client(build(), capabilities=ALL, handlers=handlers) as client:
        url = await client.request("tools/call", {"name": "ask_url"})
        roots = await client.request("tools/call", {"name": "roots"})
    assert url["content"] == [{"type": "text", "text": "accept"}]
    assert roots["content"] == [{"type": "text", "text": "file:///work hello"}]


@pytest.mark.parametrize("tool", ["summarize", "sample_with_tools", "ask", "ask_url", "roots"])
async def test_missing_capability_is_refused_before_sending(tool: str) -> None:
    capabilities = ClientCapabilities(sampling=tool == "sample_with_tools")
    async with open_in_memory_client(build(), capabilities=capabilities) as client:
        result = await client.request("tools/call", {"name": tool})
    assert result["isError"] is True
    assert "needs the client capability" in str(result["content"])
    assert client.server_requests == []
    assert issubclass(ClientCapabilityMissing, Exception)


async def test_a_client_error_reaches_the_tool() -> None:
    async def refuse(params: JsonObject) -> JsonObject:
        raise JsonRpcError(-1, "User rejected sampling")

    handlers = {"sampling/createMessage": refuse}
    async with open_in_memory_client(build(), capabilities=ALL, handlers=handlers) as client:
        result = await client.request("tools/call", {"name": "summarize"})
    assert result["isError"] is True
    assert "User rejected sampling" in str(result["content"])
    assert issubclass(ElicitationError, Exception)


async def test_roots_changed_hook_fetches_the_new_roots() -> None:
    server = build()
    seen: list[list[str]] = []
    changed = trio.Event()

    @server.on_notification("notifications/roots/list_changed")
    async def broken(session: SessionHandle, params: JsonObject) -> None:
        raise RuntimeError("hook failure is logged, nothing else")

    @server.on_roots_changed()
    async def refresh(session: SessionHandle, params: JsonObject) -> None:
        seen.append([root.uri for root in await server.list_roots(session)])
        changed.set()

    roots = ["file:///one"]

    async def list_roots(params: JsonObject) -> JsonObject:
        return {"roots": [{"uri": uri} for uri in roots]}

    capabilities = ClientCapabilities(roots=True, roots_list_changed=True)
    handlers = {"roots/list": list_roots}
    async with open_in_memory_client(
        server, capabilities=capabilities, handlers=handlers
    ) as client:
        roots.append("file:///two")
        await client.notify("notifications/roots/list_changed")
        await changed.wait()
        # The session is unharmed by the failing hook.
        assert (await client.request("tools/list"))["tools"]
    assert seen == [["file:///one", "file:///two"]]


async def test_list_roots_outside_a_request_needs_the_capability() -> None:
    server = build()
    sessions: list[SessionHandle] = []

    @server.on_notification("notifications/initialized")
    async def never(session: SessionHandle, params: JsonObject) -> None:
        sessions.append(session)  # lifecycle notifications never reach hooks

    @server.tool()
    async def who(ctx: Context) -> str:
        sessions.append(ctx.session)
        return "ok"

    async with open_in_memory_client(server) as client:
        await client.request("tools/call", {"name": "who"})
        with pytest.raises(ClientCapabilityMissing):
            await server.list_roots(sessions[0])
    assert len(sessions) == 1


def test_read_roots_keeps_every_member_and_skips_malformed_entries() -> None:
    result: JsonObject = {
        "roots": [
            {"uri": "file:///a", "name": "a", "_meta": {"k": 1}},
            {"name": "no uri"},
            "not an object",
            {"uri": "file:///b", "name": 7},
            {"uri": "file:///c"},
        ]
    }
    assert read_roots(result) == [
        Root(uri="file:///a", name="a", meta={"k": 1}),
        Root(uri="file:///c"),
    ]


def test_prompt_messages_become_sampling_messages() -> None:
    params = sampling_params([PromptMessage("user", "hi"), "bare"], 10, {})
    assert params["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "hi"}},
        {"role": "user", "content": {"type": "text", "text": "bare"}},
    ]
