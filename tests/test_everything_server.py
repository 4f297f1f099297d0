"""examples/everything_server.py: each conformance fixture answers what the official suite checks.

Expectations come from the scenario sources of @modelcontextprotocol/conformance (see the
comment block before the fixtures in the example). Every result is also checked against the
MCP 2025-11-25 JSON Schema.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import jsonschema
import pytest
import trio

from trimcp.errors import JsonRpcError
from trimcp.protocol import ClientCapabilities, JsonObject
from trimcp.testing import InMemoryClient, open_in_memory_client
from trimcp.transports import open_websocket_stream

if TYPE_CHECKING:
    from types import ModuleType

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "everything_server.py"
SCHEMA = Path("/work/shared/spec/schema/2025-11-25/schema.json")
ALL = ClientCapabilities(sampling=True, elicitation_form=True, elicitation_url=True, roots=True)


@functools.cache
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("everything_server", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while decorating
    spec.loader.exec_module(module)
    return module


@functools.cache
def _defs() -> dict[str, Any]:
    defs: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    return defs


def valid(definition: str, instance: JsonObject) -> JsonObject:
    """Return ``instance`` after checking it against ``$defs[definition]``."""
    schema = {"$ref": f"#/$defs/{definition}", "$defs": _defs()}
    errors = [
        error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(instance)
    ]
    assert not errors, f"{definition}: {errors}"
    return instance


def client(**kwargs: Any) -> Any:
    return open_in_memory_client(example().build_server(), **kwargs)


async def call(client: InMemoryClient, name: str, arguments: JsonObject | None = None) -> Any:
    params: JsonObject = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return valid("CallToolResult", await client.request("tools/call", params))


# --- tools ------------------------------------------------------------------------------------


async def test_tools_list_has_every_fixture_with_a_description() -> None:
    async with client() as c:
        tools = valid("ListToolsResult", await c.request("tools/list"))["tools"]
    names = {tool["name"] for tool in tools}
    assert {
        "echo",
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "json_schema_2020_12_tool",
        "test_reconnection",
    } <= names
    assert all(tool["description"] and tool["inputSchema"]["type"] == "object" for tool in tools)


async def test_json_schema_2020_12_tool_keeps_its_keywords() -> None:
    async with client() as c:
        tools = (await c.request("tools/list"))["tools"]
        arguments = {"name": "n", "address": {"city": "c"}, "email": "n@example.com"}
        result = await call(c, "json_schema_2020_12_tool", arguments)
        # if/then/else: without contactMethod, email is required (the else branch).
        refused = await call(c, "json_schema_2020_12_tool", {"name": "n", "phone": "1"})
    (tool,) = [tool for tool in tools if tool["name"] == "json_schema_2020_12_tool"]
    assert tool["description"] == "Tool with JSON Schema 2020-12 features"
    assert tool["inputSchema"] == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }
    jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
    assert json.loads(result["content"][0]["text"]) == {
        "name": "n",
        "address": {"city": "c"},
        "contactMethod": None,
        "phone": None,
        "email": "n@example.com",
    }
    assert refused["isError"] is True
    assert "email" in refused["content"][0]["text"]


async def test_echo() -> None:
    async with client() as c:
        result = await call(c, "echo", {"text": "hello there"})
    assert result == {"content": [{"type": "text", "text": "hello there"}], "isError": False}


async def test_simple_text() -> None:
    async with client() as c:
        result = await call(c, "test_simple_text")
    assert result["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]


async def test_image_content_is_a_png() -> None:
    async with client() as c:
        (block,) = (await call(c, "test_image_content", {}))["content"]
    assert block["type"] == "image"
    assert block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]).startswith(b"\x89PNG\r\n\x1a\n")


async def test_audio_content_is_a_wav() -> None:
    async with client() as c:
        (block,) = (await call(c, "test_audio_content", {}))["content"]
    assert block["type"] == "audio"
    assert block["mimeType"] == "audio/wav"
    data = base64.b64decode(block["data"])
    assert data[:4] == b"RIFF"
    assert data[8:12] == b"WAVE"


async def test_embedded_resource() -> None:
    async with client() as c:
        result = await call(c, "test_embedded_resource", {})
    assert result["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    ]


async def test_multiple_content_types() -> None:
    async with client() as c:
        content = (await call(c, "test_multiple_content_types", {}))["content"]
    assert [block["type"] for block in content] == ["text", "image", "resource"]
    assert content[0]["text"] == "Multiple content types test:"
    assert content[2]["resource"] == {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": '{"test":"data","value":123}',
    }


async def test_tool_with_logging_sends_three_info_messages() -> None:
    async with client() as c:
        valid("EmptyResult", await c.request("logging/setLevel", {"level": "debug"}))
        result = await call(c, "test_tool_with_logging", {})
        logs = c.received("notifications/message")
    assert result["content"][0]["text"]
    assert [(log.params or {})["level"] for log in logs] == ["info"] * 3
    assert [(log.params or {})["data"] for log in logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


async def test_tool_with_logging_respects_the_level() -> None:
    async with client() as c:
        await c.request("logging/setLevel", {"level": "warning"})
        await call(c, "test_tool_with_logging", {})
        assert c.received("notifications/message") == []


async def test_tool_with_progress_reports_0_50_100() -> None:
    async with client() as c:
        params: JsonObject = {"name": "test_tool_with_progress", "arguments": {}}
        result = await c.request("tools/call", params, progress_token="progress-test-1")
        progress = [note.params or {} for note in c.received("notifications/progress")]
    valid("CallToolResult", result)
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("progress-test-1", 0, 100),
        ("progress-test-1", 50, 100),
        ("progress-test-1", 100, 100),
    ]


async def test_tool_with_progress_without_a_token_sends_none() -> None:
    async with client() as c:
        result = await call(c, "test_tool_with_progress", {})
        assert c.received("notifications/progress") == []
    assert result["isError"] is False


async def test_error_handling_is_a_tool_error() -> None:
    async with client() as c:
        result = await call(c, "test_error_handling", {})
    assert result["isError"] is True
    assert "This tool intentionally returns an error for testing" in result["content"][0]["text"]


async def test_reconnection_answers_over_a_stream_transport() -> None:
    async with client() as c:
        result = await call(c, "test_reconnection", {})
    assert result["content"] == [
        {"type": "text", "text": "Reconnection test completed successfully"}
    ]


async def test_unknown_tool_is_a_protocol_error() -> None:
    async with client() as c:
        with pytest.raises(JsonRpcError) as caught:
            await c.request("tools/call", {"name": "nope"})
    assert caught.value.code == -32602


async def test_structured_output() -> None:
    async with client() as c:
        result = await call(c, "add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"sum": 5}
    assert json.loads(result["content"][0]["text"]) == {"sum": 5}


async def test_resource_links() -> None:
    async with client() as c:
        content = (await call(c, "get_resource_links"))["content"]
    assert [(block["type"], block["uri"]) for block in content] == [
        ("resource_link", "test://static-text"),
        ("resource_link", "test://static-binary"),
    ]


# --- requests to the client -------------------------------------------------------------------


async def test_sampling_sends_the_prompt_and_returns_the_answer() -> None:
    seen: list[JsonObject] = []

    async def create_message(params: JsonObject) -> JsonObject:
        seen.append(params)
        text = "This is a test response from the client"
        return valid(
            "CreateMessageResult",
            {
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": "test-model",
                "stopReason": "endTurn",
            },
        )

    handlers = {"sampling/createMessage": create_message}
    async with client(capabilities=ALL, handlers=handlers) as c:
        result = await call(c, "test_sampling", {"prompt": "Test prompt for sampling"})
    assert seen == [
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}
            ],
            "maxTokens": 100,
        }
    ]
    assert result["content"] == [
        {"type": "text", "text": "LLM response: This is a test response from the client"}
    ]


async def test_sampling_without_the_capability_is_a_tool_error() -> None:
    async with client() as c:
        result = await call(c, "test_sampling", {"prompt": "x"})
        assert c.server_requests == []
    assert result["isError"] is True


async def test_elicitation_sends_the_message_and_schema() -> None:
    seen: list[JsonObject] = []

    async def elicit(params: JsonObject) -> JsonObject:
        seen.append(params)
        content = {"username": "testuser", "email": "test@example.com"}
        return valid("ElicitResult", {"action": "accept", "content": content})

    async with client(capabilities=ALL, handlers={"elicitation/create": elicit}) as c:
        result = await call(c, "test_elicitation", {"message": "Please provide your information"})
    (params,) = seen
    valid("ElicitRequestParams", params)
    assert params["message"] == "Please provide your information"
    assert params["requestedSchema"] == {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    text = result["content"][0]["text"]
    assert text.startswith("User response: action=accept")
    assert "testuser" in text


async def test_elicitation_decline() -> None:
    async def decline(params: JsonObject) -> JsonObject:
        return {"action": "decline"}

    async with client(capabilities=ALL, handlers={"elicitation/create": decline}) as c:
        result = await call(c, "test_elicitation", {"message": "m"})
    assert result["content"][0]["text"] == "User response: action=decline, content=null"


async def test_elicitation_sep1034_defaults() -> None:
    seen: list[JsonObject] = []

    async def elicit(params: JsonObject) -> JsonObject:
        seen.append(params)
        content = {"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive"}
        return {"action": "accept", "content": {**content, "verified": False}}

    async with client(capabilities=ALL, handlers={"elicitation/create": elicit}) as c:
        result = await call(c, "test_elicitation_sep1034_defaults", {})
    (params,) = seen
    valid("ElicitRequestParams", params)
    properties = params["requestedSchema"]["properties"]
    assert {name: (p["type"], p["default"]) for name, p in properties.items()} == {
        "name": ("string", "John Doe"),
        "age": ("integer", 30),
        "score": ("number", 95.5),
        "status": ("string", "active"),
        "verified": ("boolean", True),
    }
    assert properties["status"]["enum"] == ["active", "inactive", "pending"]
    assert result["content"][0]["text"].startswith("Elicitation completed: action=accept")


async def test_elicitation_sep1330_enums() -> None:
    seen: list[JsonObject] = []

    async def elicit(params: JsonObject) -> JsonObject:
        seen.append(params)
        content = {
            "untitledSingle": "option1",
            "titledSingle": "value1",
            "legacyEnum": "opt1",
            "untitledMulti": ["option1", "option2"],
            "titledMulti": ["value1", "value2"],
        }
        return {"action": "accept", "content": content}

    async with client(capabilities=ALL, handlers={"elicitation/create": elicit}) as c:
        result = await call(c, "test_elicitation_sep1330_enums", {})
    (params,) = seen
    valid("ElicitRequestParams", params)
    props = params["requestedSchema"]["properties"]
    assert props["untitledSingle"] == {"type": "string", "enum": ["option1", "option2", "option3"]}
    assert props["titledSingle"]["type"] == "string"
    assert "enum" not in props["titledSingle"]
    assert all(isinstance(o["const"], str) and o["title"] for o in props["titledSingle"]["oneOf"])
    legacy = props["legacyEnum"]
    assert legacy["type"] == "string"
    assert len(legacy["enum"]) == len(legacy["enumNames"]) == 3
    assert props["untitledMulti"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
    }
    assert props["titledMulti"]["type"] == "array"
    assert "enum" not in props["titledMulti"]["items"]
    assert all(
        isinstance(o["const"], str) and o["title"] for o in props["titledMulti"]["items"]["anyOf"]
    )
    assert result["isError"] is False


async def test_url_elicitation() -> None:
    async def elicit(params: JsonObject) -> JsonObject:
        assert params["mode"] == "url"
        valid("ElicitRequestURLParams", params)
        return {"action": "accept"}

    async with client(capabilities=ALL, handlers={"elicitation/create": elicit}) as c:
        result = await call(c, "connect_account")
    assert result["content"][0]["text"] == "URL elicitation: action=accept"


async def test_list_roots() -> None:
    async def roots(params: JsonObject) -> JsonObject:
        return valid("ListRootsResult", {"roots": [{"uri": "file:///work", "name": "work"}]})

    async with client(capabilities=ALL, handlers={"roots/list": roots}) as c:
        result = await call(c, "list_roots")
    assert json.loads(result["content"][0]["text"]) == [{"uri": "file:///work", "name": "work"}]


# --- resources --------------------------------------------------------------------------------


async def test_resources_list_and_templates() -> None:
    async with client() as c:
        resources = valid("ListResourcesResult", await c.request("resources/list"))["resources"]
        templates = valid(
            "ListResourceTemplatesResult", await c.request("resources/templates/list")
        )["resourceTemplates"]
    # Each example skill's SKILL.md is listed too (the Skills extension; without PyYAML none).
    fixtures = [r for r in resources if not r["uri"].startswith("skill://")]
    assert {r["uri"] for r in fixtures} == {
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    }
    assert all(r["name"] and r["description"] and r["mimeType"] for r in fixtures)
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]


async def read(client: InMemoryClient, uri: str) -> Any:
    return valid("ReadResourceResult", await client.request("resources/read", {"uri": uri}))


async def test_read_static_text() -> None:
    async with client() as c:
        result = await read(c, "test://static-text")
    assert result["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]


async def test_read_static_binary() -> None:
    async with client() as c:
        (item,) = (await read(c, "test://static-binary"))["contents"]
    assert item["uri"] == "test://static-binary"
    assert item["mimeType"] == "image/png"
    assert base64.b64decode(item["blob"]).startswith(b"\x89PNG")


async def test_read_template() -> None:
    async with client() as c:
        result = await read(c, "test://template/123/data")
    assert result["contents"] == [
        {
            "uri": "test://template/123/data",
            "mimeType": "application/json",
            "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
        }
    ]


async def test_read_unknown_resource_is_32002() -> None:
    async with client() as c:
        with pytest.raises(JsonRpcError) as caught:
            await c.request("resources/read", {"uri": "test://nope"})
    assert caught.value.code == -32002


async def test_watched_resource_subscription() -> None:
    async with client() as c:
        before = (await read(c, "test://watched-resource"))["contents"][0]["text"]
        valid(
            "EmptyResult",
            await c.request("resources/subscribe", {"uri": "test://watched-resource"}),
        )
        first = await call(c, "update_watched_resource")
        note = await c.wait_notification("notifications/resources/updated")
        after = (await read(c, "test://watched-resource"))["contents"][0]["text"]
        valid(
            "EmptyResult",
            await c.request("resources/unsubscribe", {"uri": "test://watched-resource"}),
        )
        second = await call(c, "update_watched_resource")
        updates = c.received("notifications/resources/updated")
    assert note.params == {"uri": "test://watched-resource"}
    assert before != after
    assert "1 subscriber(s)" in first["content"][0]["text"]
    assert "0 subscriber(s)" in second["content"][0]["text"]
    assert len(updates) == 1


# --- prompts and completion -------------------------------------------------------------------


async def get(client: InMemoryClient, name: str, arguments: JsonObject | None = None) -> Any:
    params: JsonObject = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return valid("GetPromptResult", await client.request("prompts/get", params))


async def test_prompts_list() -> None:
    async with client() as c:
        prompts = valid("ListPromptsResult", await c.request("prompts/list"))["prompts"]
    assert [p["name"] for p in prompts] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    ]
    assert all(p["description"] for p in prompts)
    assert prompts[1]["arguments"] == [
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ]


async def test_simple_prompt() -> None:
    async with client() as c:
        result = await get(c, "test_simple_prompt")
    assert result["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }
    ]


async def test_prompt_with_arguments() -> None:
    async with client() as c:
        result = await get(c, "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        with pytest.raises(JsonRpcError) as caught:
            await c.request("prompts/get", {"name": "test_prompt_with_arguments"})
    assert result["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": "Prompt with arguments: arg1='hello', arg2='world'",
            },
        }
    ]
    assert caught.value.code == -32602


async def test_prompt_with_embedded_resource() -> None:
    async with client() as c:
        args = {"resourceUri": "test://example-resource"}
        result = await get(c, "test_prompt_with_embedded_resource", args)
    assert result["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://example-resource",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {
            "role": "user",
            "content": {"type": "text", "text": "Please process the embedded resource above."},
        },
    ]


async def test_prompt_with_image() -> None:
    async with client() as c:
        image, text = (await get(c, "test_prompt_with_image"))["messages"]
    assert image["content"]["type"] == "image"
    assert image["content"]["mimeType"] == "image/png"
    assert base64.b64decode(image["content"]["data"]).startswith(b"\x89PNG")
    assert text["content"] == {"type": "text", "text": "Please analyze the image above."}


async def complete(client: InMemoryClient, ref: JsonObject, name: str, value: str) -> Any:
    params: JsonObject = {"ref": ref, "argument": {"name": name, "value": value}}
    return valid("CompleteResult", await client.request("completion/complete", params))[
        "completion"
    ]


async def test_completion_of_prompt_arguments() -> None:
    ref: JsonObject = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
    async with client() as c:
        assert c.initialize_result.capabilities.completions
        par = await complete(c, ref, "arg1", "par")
        test = await complete(c, ref, "arg1", "test")
    assert par == {"values": ["paris", "park", "party"], "total": 3, "hasMore": False}
    assert test["values"] == []


async def test_completion_of_the_template() -> None:
    ref: JsonObject = {"type": "ref/resource", "uri": "test://template/{id}/data"}
    async with client() as c:
        result = await complete(c, ref, "id", "1")
    assert result["values"] == ["1", "123"]


async def test_ping() -> None:
    async with client() as c:
        assert valid("EmptyResult", await c.request("ping")) == {}


# --- the command line -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_network_transports_serve(transport: str, tmp_path: Path) -> None:
    """``--transport http|ws --port 0`` logs its URL and answers initialize there."""
    log = tmp_path / "server.log"
    command = [sys.executable, str(EXAMPLE), "--transport", transport, "--port", "0"]
    with log.open("w") as errors:
        process = await trio.lowlevel.open_process(command, stderr=errors)
    try:
        url = await _logged_url(
            log, "Streamable HTTP at " if transport == "http" else "WebSocket at "
        )
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "cli-test", "version": "1"},
            },
        }
        if transport == "http":
            async with httpx.AsyncClient() as http:
                response = await http.post(
                    url,
                    json=initialize,
                    headers={"accept": "application/json, text/event-stream"},
                )
            assert response.status_code == 200
            assert "mcp-session-id" in response.headers
            answer = response.json()
        else:
            async with open_websocket_stream(url) as stream:
                await stream.send_message(json.dumps(initialize).encode())
                answer = json.loads(await stream.receive_message())
        assert answer["result"]["serverInfo"]["name"] == "trimcp-everything"
    finally:
        process.terminate()
        await process.wait()


async def _logged_url(log: Path, marker: str) -> str:
    with trio.fail_after(15):
        while True:
            for line in (await trio.Path(log).read_text()).splitlines():
                if marker in line:
                    return line.rsplit(" ", 1)[-1]
            await trio.sleep(0.02)
