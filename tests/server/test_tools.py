"""Tools through a real session: schemas, validation, results, errors, context."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Annotated, Any, TypedDict

import pytest
import trio
import trio.testing

from trimcp.errors import JsonRpcError, UrlElicitationRequired
from trimcp.server import (
    Audio,
    Context,
    EmbeddedResource,
    Image,
    MCPServer,
    Param,
    ResourceLink,
    ToolAnnotations,
    ToolError,
    UnsupportedDialect,
)
from trimcp.testing import open_in_memory_client

from .conftest import assert_valid

PNG = b"\x89PNG\r\n\x1a\n"


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Stats(TypedDict):
    count: int
    mean: float


def build() -> MCPServer:
    server = MCPServer("demo", "1.2.3", instructions="be nice")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True), title="Adder")
    async def add(a: int, b: Annotated[int, Param(ge=0, description="non-negative")] = 1) -> str:
        """Add two numbers.

        Args:
            a: the first number.
        """
        return str(a + b)

    @server.tool()
    def norm(p: Point) -> float:
        """Length of a point (sync tool)."""
        return (p.x**2 + p.y**2) ** 0.5

    @server.tool()
    async def stats(values: list[float]) -> Stats:
        return {"count": len(values), "mean": sum(values) / len(values)}

    @server.tool(structured_output=True)
    async def double(n: int) -> int:
        return 2 * n

    @server.tool()
    async def broken_output() -> Stats:
        return {"count": "many"}  # type: ignore[typeddict-item]

    add_content_tools(server)
    return server


def add_content_tools(server: MCPServer) -> None:
    @server.tool()
    async def media() -> list[object]:
        return [
            "caption",
            Image(PNG, "image/png"),
            Audio(b"RIFF", "audio/wav"),
            EmbeddedResource.of("file:///a.txt", text="hello", mime_type="text/plain"),
            ResourceLink(uri="file:///b.bin", name="b.bin", mime_type="application/x"),
        ]

    @server.tool()
    async def as_json() -> dict[str, Any]:
        return {"a": [1, 2]}

    @server.tool(structured_output=False)
    async def plain_dict() -> dict[str, int]:
        return {"a": 1}

    @server.tool()
    async def raw_bytes() -> bytes:
        return b"\x00"

    @server.tool()
    async def crash() -> str:
        raise RuntimeError("disk on fire")

    @server.tool()
    async def needs_url() -> str:
        raise UrlElicitationRequired(
            [{"mode": "url", "message": "m", "elicitationId": "e", "url": "https://x"}]
        )

    @server.tool(run_in_thread=True)
    def in_thread() -> str:
        return threading.current_thread().name

    @server.tool(meta={"x": 1}, icons=[{"src": "https://x/icon.png"}])
    async def nothing(ctx: Context) -> None:
        assert isinstance(ctx, Context)


async def test_tools_list_describes_schemas_and_validates() -> None:
    async with open_in_memory_client(build()) as client:
        result = await client.request("tools/list")
    assert_valid("ListToolsResult", result)
    tools = {tool["name"]: tool for tool in result["tools"]}  # type: ignore[union-attr,index]
    add = tools["add"]
    assert add["title"] == "Adder"
    assert add["description"] == "Add two numbers."
    assert add["annotations"] == {"readOnlyHint": True}
    assert add["inputSchema"] == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "the first number."},
            "b": {"type": "integer", "description": "non-negative", "minimum": 0, "default": 1},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert "outputSchema" not in add  # a str return is unstructured by default
    assert tools["stats"]["outputSchema"]["type"] == "object"  # type: ignore[index]
    assert tools["double"]["outputSchema"]["required"] == ["result"]  # type: ignore[index]
    assert "ctx" not in json.dumps(tools["nothing"]["inputSchema"])
    assert tools["nothing"]["_meta"] == {"x": 1}
    assert tools["nothing"]["icons"] == [{"src": "https://x/icon.png"}]


async def test_calls_convert_arguments_and_return_content() -> None:
    async with open_in_memory_client(build()) as client:
        added = await client.request("tools/call", {"name": "add", "arguments": {"a": 2}})
        norm = await client.request(
            "tools/call", {"name": "norm", "arguments": {"p": {"x": 3, "y": 4}}}
        )
        threaded = await client.request("tools/call", {"name": "in_thread"})
        nothing = await client.request("tools/call", {"name": "nothing"})
    assert added == {"content": [{"type": "text", "text": "3"}], "isError": False}
    assert norm["content"] == [{"type": "text", "text": "5.0"}]
    assert threaded["content"][0]["text"] != threading.current_thread().name  # type: ignore[index]
    assert nothing == {"content": [], "isError": False}
    assert_valid("CallToolResult", added)


async def test_structured_output_has_a_text_copy() -> None:
    async with open_in_memory_client(build()) as client:
        stats = await client.request(
            "tools/call", {"name": "stats", "arguments": {"values": [1, 3]}}
        )
        double = await client.request("tools/call", {"name": "double", "arguments": {"n": 4}})
        broken = await client.request("tools/call", {"name": "broken_output"})
    assert stats["structuredContent"] == {"count": 2, "mean": 2.0}
    assert json.loads(stats["content"][0]["text"]) == {"count": 2, "mean": 2.0}  # type: ignore[index,arg-type]
    assert double["structuredContent"] == {"result": 8}
    assert_valid("CallToolResult", stats)
    assert broken["isError"] is True
    assert "outputSchema" in str(broken["content"])


async def test_media_and_json_content() -> None:
    async with open_in_memory_client(build()) as client:
        media = await client.request("tools/call", {"name": "media"})
        as_json = await client.request("tools/call", {"name": "as_json"})
        plain = await client.request("tools/call", {"name": "plain_dict"})
        raw = await client.request("tools/call", {"name": "raw_bytes"})
    assert_valid("CallToolResult", media)
    kinds = [block["type"] for block in media["content"]]  # type: ignore[index,union-attr]
    assert kinds == ["text", "image", "audio", "resource", "resource_link"]
    assert media["content"][1]["data"] == "iVBORw0KGgo="  # type: ignore[index]
    assert media["content"][3]["resource"] == {  # type: ignore[index]
        "uri": "file:///a.txt",
        "mimeType": "text/plain",
        "text": "hello",
    }
    assert as_json["structuredContent"] == {"a": [1, 2]}
    assert plain == {"content": [{"type": "text", "text": '{"a":1}'}], "isError": False}
    assert raw["isError"] is True
    assert "Image(" in str(raw["content"])


async def test_bad_arguments_and_crashes_are_tool_errors_and_the_session_goes_on() -> None:
    async with open_in_memory_client(build()) as client:
        wrong_type = await client.request("tools/call", {"name": "add", "arguments": {"a": "x"}})
        too_small = await client.request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": -1}}
        )
        missing = await client.request("tools/call", {"name": "add"})
        crashed = await client.request("tools/call", {"name": "crash"})
        after = await client.request("tools/call", {"name": "add", "arguments": {"a": 1}})
    for result in (wrong_type, too_small, missing, crashed):
        assert result["isError"] is True
        assert_valid("CallToolResult", result)
    assert "tool add: a: expected integer" in str(wrong_type["content"])
    assert "a number >= 0" in str(too_small["content"])
    assert "missing" in str(missing["content"])
    assert "disk on fire" in str(crashed["content"])
    assert after["content"] == [{"type": "text", "text": "2"}]


async def test_unknown_tool_is_invalid_params_and_jsonrpc_errors_pass_through() -> None:
    async with open_in_memory_client(build()) as client:
        with pytest.raises(JsonRpcError) as unknown:
            await client.request("tools/call", {"name": "nope"})
        with pytest.raises(JsonRpcError) as url:
            await client.request("tools/call", {"name": "needs_url"})
        with pytest.raises(JsonRpcError) as no_name:
            await client.request("tools/call", {})
    assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: nope")
    assert url.value.code == -32042
    assert no_name.value.code == -32602


async def test_progress_and_logging_from_a_tool() -> None:
    server = MCPServer("p")

    @server.tool()
    async def work(ctx: Context) -> str:
        for step in (1, 2):
            await ctx.report_progress(step, 2, f"step {step}")
        await ctx.debug("hidden")
        await ctx.warning({"disk": "low"}, logger="fs")
        await ctx.log("error", "bad")
        return "done"

    async with open_in_memory_client(server) as client:
        await client.request("logging/setLevel", {"level": "warning"})
        result = await client.request("tools/call", {"name": "work"}, progress_token="t1")
        with pytest.raises(JsonRpcError) as bad_level:
            await client.request("logging/setLevel", {"level": "loud"})
    assert result["content"] == [{"type": "text", "text": "done"}]
    progress = [n.params for n in client.received("notifications/progress")]
    assert progress == [
        {"progressToken": "t1", "progress": 1, "total": 2, "message": "step 1"},
        {"progressToken": "t1", "progress": 2, "total": 2, "message": "step 2"},
    ]
    logs = [n.params for n in client.received("notifications/message")]
    assert logs == [
        {"level": "warning", "data": {"disk": "low"}, "logger": "fs"},
        {"level": "error", "data": "bad"},
    ]
    for params in logs:
        assert_valid("LoggingMessageNotificationParams", params)
    assert bad_level.value.code == -32602


async def test_cancelling_a_tool_stops_it_and_nothing_is_answered() -> None:
    server = MCPServer("c")
    started, stopped = trio.Event(), trio.Event()

    @server.tool()
    async def slow(ctx: Context) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")

    async with open_in_memory_client(server) as client:
        request_id = await client.start_request("tools/call", {"name": "slow"})
        await started.wait()
        await client.cancel(request_id, "user pressed stop")
        await stopped.wait()
        assert await client.request("tools/list")
        assert not client.has_response(request_id)


async def test_registration_errors() -> None:
    server = MCPServer("r")

    async def f() -> None: ...

    server.add_tool(f)
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(f)
    with pytest.raises(ValueError, match="1-128"):
        server.add_tool(f, "has space")
    with pytest.raises(ValueError, match="run_in_thread"):
        server.add_tool(f, "g", run_in_thread=True)


async def test_legacy_aliases_only_when_enabled(autojump_clock: trio.testing.MockClock) -> None:
    for enabled in (False, True):
        server = MCPServer("l", legacy_aliases=enabled)
        async with open_in_memory_client(server) as client:
            request_id, data = client.connection.send_request("tools/list")
            raw = data.replace(b'"tools/list"', b'"list_tools"')
            await client.stream.send_message(raw)
            if enabled:
                assert await client.wait_response(request_id) == {"tools": []}
            else:
                with pytest.raises(JsonRpcError) as refused:
                    await client.wait_response(request_id)
                assert refused.value.code == -32601


WRITTEN_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 10}},
    "required": ["n"],
    "additionalProperties": False,
}


async def test_a_written_input_schema_is_listed_and_enforced() -> None:

    server = MCPServer("written")

    @server.tool(input_schema=WRITTEN_SCHEMA)
    def big(n: int) -> str:
        return f"n={n}"

    async with open_in_memory_client(server) as client:
        [tool] = (await client.request("tools/list"))["tools"]  # type: ignore[misc]
        ok = await client.request("tools/call", {"name": "big", "arguments": {"n": 12}})
        small = await client.request("tools/call", {"name": "big", "arguments": {"n": 3}})
    assert tool["inputSchema"] == WRITTEN_SCHEMA  # type: ignore[index]
    assert ok["content"] == [{"type": "text", "text": "n=12"}]
    assert small["isError"] is True
    assert "minimum" in json.dumps(small["content"]) or "10" in json.dumps(small["content"])


def test_a_written_schema_in_an_unknown_dialect_is_refused_at_registration() -> None:

    server = MCPServer("written")
    with pytest.raises(UnsupportedDialect, match=r"example\.com"):

        @server.tool(input_schema={"$schema": "https://example.com/my-dialect", "type": "object"})
        def odd() -> str:
            return ""


async def test_tool_error_text_is_returned_verbatim(caplog: pytest.LogCaptureFixture) -> None:

    server = MCPServer("errors")

    @server.tool()
    def refuse() -> str:
        raise ToolError("the account is locked; unlock it first")

    async with open_in_memory_client(server) as client:
        result = await client.request("tools/call", {"name": "refuse"})
    assert result == {
        "content": [{"type": "text", "text": "the account is locked; unlock it first"}],
        "isError": True,
    }
    assert not [r for r in caplog.records if "refuse" in r.getMessage()]
