"""What both eras' SDK interop tests check the same way (``test_official_sdk*.py``).

The official SDK's ``Client`` drives the everything server in its legacy mode (2025-11-25,
``test_official_sdk.py``) and in its 2026-07-28 modes (``test_official_sdk_modern.py``). The
server's tools, resources and prompts answer the same in both eras; these checks are written
once, and each file adds what only its era has (cache hints, ``resultType``, error data).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

if TYPE_CHECKING:
    from pathlib import Path

    from mcp.client.client import Client

#: The everything server's transports: stdio (the SDK starts the process), Streamable HTTP on
#: trimcp's own HTTP server, and the same endpoint on hypercorn's trio worker.
TRANSPORTS = [
    "stdio",
    # The SDK's HTTP client leaves its own httpx2 response generators to the garbage
    # collector when it closes; trio reports them as unraisable ResourceWarnings.
    pytest.param(
        "http",
        marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ),
    pytest.param(
        "http-hypercorn",
        marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ),
]

#: The resources the everything server lists, the example skills' SKILL.md files included.
RESOURCES = {
    "test://static-text",
    "test://static-binary",
    "test://watched-resource",
    "skill://code-review/SKILL.md",
    "skill://pdf-processing/SKILL.md",
}


async def listening_url(log: Path) -> str:
    """Wait (up to 10 s) for the server's "MCP over Streamable HTTP at <url>" log line."""
    with anyio.fail_after(10):
        while True:
            for line in (await anyio.Path(log).read_text()).splitlines():
                if "Streamable HTTP at " in line:
                    return line.rsplit(" ", 1)[-1]
            await anyio.sleep(0.02)


def text_of(result: types.CallToolResult) -> str:
    """The text of a result of one text block."""
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def check_tool_calls(client: Client) -> MCPError:
    """Results, a tool error, invalid arguments and every content type; returns the error
    an unknown tool raised (-32602), for the era's own checks of its data."""
    assert text_of(await client.call_tool("echo", {"text": "héllo"})) == "héllo"

    structured = await client.call_tool("add", {"a": 2, "b": 40})
    assert structured.structured_content == {"sum": 42}
    assert not structured.is_error

    failed = await client.call_tool("test_error_handling", {})
    assert failed.is_error
    assert "intentionally" in text_of(failed)
    invalid = await client.call_tool("echo", {"text": 3})
    assert invalid.is_error

    with pytest.raises(MCPError) as caught:
        await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == types.INVALID_PARAMS

    content = (await client.call_tool("test_multiple_content_types", {})).content
    assert [type(block) for block in content] == [
        types.TextContent,
        types.ImageContent,
        types.EmbeddedResource,
    ]
    (audio,) = (await client.call_tool("test_audio_content", {})).content
    assert isinstance(audio, types.AudioContent)
    assert audio.mime_type == "audio/wav"
    return caught.value


async def check_resource_reads(client: Client) -> None:
    """Text, a blob and a template's resource read back as the server serves them."""
    (text,) = (await client.read_resource("test://static-text")).contents
    assert isinstance(text, types.TextResourceContents)
    assert text.text == "This is the content of the static text resource."
    (blob,) = (await client.read_resource("test://static-binary")).contents
    assert isinstance(blob, types.BlobResourceContents)
    assert blob.mime_type == "image/png"
    (data,) = (await client.read_resource("test://template/123/data")).contents
    assert isinstance(data, types.TextResourceContents)
    assert json.loads(data.text) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }


async def check_prompts(client: Client, listed: types.ListPromptsResult) -> None:
    """The listed prompts, their arguments, and each kind of message they return."""
    prompts = {p.name: p for p in listed.prompts}
    assert set(prompts) == {
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    }
    assert [a.name for a in prompts["test_prompt_with_arguments"].arguments or []] == [
        "arg1",
        "arg2",
    ]
    got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
    (message,) = got.messages
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Prompt with arguments: arg1='hello', arg2='world'"
    embedded = await client.get_prompt(
        "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
    )
    assert isinstance(embedded.messages[0].content, types.EmbeddedResource)
    image = await client.get_prompt("test_prompt_with_image")
    assert isinstance(image.messages[0].content, types.ImageContent)


async def check_completion(client: Client) -> None:
    """Completion of a prompt argument and of a resource template's variable."""
    ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    completion = (await client.complete(ref, {"name": "arg1", "value": "par"})).completion
    assert completion.values == ["paris", "park", "party"]
    template = types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data")
    assert (await client.complete(template, {"name": "id", "value": "12"})).completion.values == [
        "123"
    ]
