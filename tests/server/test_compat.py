"""Older negotiated versions get definitions and results in their own shape (changelogs)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from trimcp.server import Audio, MCPServer, ResourceLink
from trimcp.testing import open_in_memory_client

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject

SPEC = Path("/work/shared/spec/schema")
OLDER = ["2024-11-05", "2025-03-26", "2025-06-18"]


@functools.cache
def _schema(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SPEC / version / "schema.json").read_text("utf-8"))
    return loaded


def assert_valid_in(version: str, definition: str, instance: object) -> None:
    """Validate against the version's schema, and allow no top-level field it lacks."""
    schema = _schema(version)
    key = "$defs" if "$defs" in schema else "definitions"
    validator = jsonschema.Draft7Validator({"$ref": f"#/{key}/{definition}", key: schema[key]})
    errors = [error.message for error in validator.iter_errors(instance)]
    assert not errors, f"{version} {definition}: {errors}"
    assert isinstance(instance, dict)
    known = set(schema[key][definition]["properties"])
    assert set(instance) <= known, f"{version} {definition}: {set(instance) - known}"


def build() -> MCPServer:
    server = MCPServer("compat")

    @server.tool(
        title="Echo", icons=[{"src": "https://example.org/i.png"}], task_support="optional"
    )
    def echo(text: str) -> dict[str, str]:
        """Echo back."""
        return {"text": text}

    @server.tool(annotations={"readOnlyHint": True})
    def media() -> list[object]:
        return [ResourceLink(uri="file:///a.txt", name="a"), Audio(b"\x00", "audio/wav")]

    @server.prompt(title="Greeting")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.resource("info://motd", title="Message of the day")
    def motd() -> str:
        return "hi"

    return server


@pytest.mark.parametrize("version", OLDER)
async def test_lists_and_results_fit_the_negotiated_version(version: str) -> None:
    async with open_in_memory_client(build(), protocol_version=version) as client:
        tools = (await client.request("tools/list"))["tools"]
        prompts = (await client.request("prompts/list"))["prompts"]
        resources = (await client.request("resources/list"))["resources"]
        echo = await client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        media = await client.request("tools/call", {"name": "media"})
    assert isinstance(tools, list)
    for tool in tools:
        assert_valid_in(version, "Tool", tool)
        assert "icons" not in tool
        assert "execution" not in tool
    assert isinstance(prompts, list)
    assert isinstance(resources, list)
    for prompt in prompts:
        assert_valid_in(version, "Prompt", prompt)
    for resource in resources:
        assert_valid_in(version, "Resource", resource)
    has_structured = version >= "2025-06-18"
    assert ("structuredContent" in echo) is has_structured
    assert echo["content"] == [{"type": "text", "text": '{"text":"x"}'}]
    blocks = media["content"]
    assert isinstance(blocks, list)
    kinds = [block["type"] for block in blocks]  # type: ignore[index]
    expected = {
        "2024-11-05": ["text", "text"],
        "2025-03-26": ["text", "audio"],
        "2025-06-18": ["resource_link", "audio"],
    }
    assert kinds == expected[version]
    assert_valid_in(version, "CallToolResult", media)


async def test_newest_version_keeps_everything() -> None:
    async with open_in_memory_client(build()) as client:
        tools: list[JsonObject] = (await client.request("tools/list"))["tools"]  # type: ignore[assignment]
    echo = next(tool for tool in tools if tool["name"] == "echo")
    assert echo["title"] == "Echo"
    assert echo["icons"] == [{"src": "https://example.org/i.png"}]
    assert echo["execution"] == {"taskSupport": "optional"}
    assert "outputSchema" in echo
