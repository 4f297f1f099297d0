"""Prompts and completion through a real session."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from trimcp.errors import JsonRpcError
from trimcp.server import (
    Audio,
    Completion,
    EmbeddedResource,
    Image,
    MCPServer,
    PromptMessage,
    PromptRef,
    ResourceLink,
    ResourceTemplateRef,
)
from trimcp.testing import open_in_memory_client

from .conftest import assert_valid

if TYPE_CHECKING:
    from collections.abc import Mapping


def build() -> MCPServer:
    server = MCPServer("prompts")

    @server.prompt(title="Review")
    def review(code: str, strictness: int = 1) -> str:
        """Review some code.

        Args:
            code: the code to review.
        """
        return f"review {code} at {strictness}"

    @server.prompt("rich")
    async def everything() -> list[object]:
        return [
            PromptMessage("user", "look"),
            PromptMessage("user", Image(b"img", "image/png")),
            PromptMessage("assistant", Audio(b"wav", "audio/wav")),
            {"role": "user", "content": EmbeddedResource.of("file:///x", text="x")},
            PromptMessage("user", ResourceLink(uri="file:///y", name="y")),
        ]

    @server.resource("repo://{owner}/{name}")
    def repo(owner: str, name: str) -> str:
        return f"{owner}/{name}"

    @server.completion()
    async def complete(
        ref: PromptRef | ResourceTemplateRef,
        argument_name: str,
        argument_value: str,
        context_arguments: Mapping[str, str],
    ) -> list[str] | Completion:
        if isinstance(ref, PromptRef):
            return [f"{argument_value}{i}" for i in range(150)]
        owner = context_arguments.get("owner", "?")
        return Completion(values=[f"{owner}/{argument_value}x"], total=7, has_more=True)

    return server


async def test_prompts_list_and_get() -> None:
    async with open_in_memory_client(build()) as client:
        listed = await client.request("prompts/list")
        got = await client.request(
            "prompts/get", {"name": "review", "arguments": {"code": "x=1", "strictness": "3"}}
        )
        rich = await client.request("prompts/get", {"name": "rich"})
    assert_valid("ListPromptsResult", listed)
    assert listed["prompts"][0] == {  # type: ignore[index]
        "name": "review",
        "title": "Review",
        "description": "Review some code.",
        "arguments": [
            {"name": "code", "description": "the code to review.", "required": True},
            {"name": "strictness"},
        ],
    }
    assert_valid("GetPromptResult", got)
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "review x=1 at 3"}}
    ]
    assert_valid("GetPromptResult", rich)
    kinds = [m["content"]["type"] for m in rich["messages"]]  # type: ignore[index,union-attr]
    assert kinds == ["text", "image", "audio", "resource", "resource_link"]


@pytest.mark.parametrize(
    "params",
    [
        {"name": "nope"},
        {"name": "review"},
        {"name": "review", "arguments": {"code": "x", "strictness": "high"}},
        {"name": "review", "arguments": {"code": "x", "extra": "1"}},
    ],
)
async def test_prompt_errors_are_invalid_params(params: dict[str, object]) -> None:
    async with open_in_memory_client(build()) as client:
        with pytest.raises(JsonRpcError) as error:
            await client.request("prompts/get", params)  # type: ignore[arg-type]
    assert error.value.code == -32602


async def test_completion_caps_values_and_passes_context() -> None:
    async with open_in_memory_client(build()) as client:
        assert client.initialize_result.capabilities.completions
        prompt = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "code", "value": "v"},
            },
        )
        template = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "repo://{owner}/{name}"},
                "argument": {"name": "name", "value": "tri"},
                "context": {"arguments": {"owner": "python"}},
            },
        )
        with pytest.raises(JsonRpcError) as unknown:
            await client.request(
                "completion/complete",
                {
                    "ref": {"type": "ref/prompt", "name": "nope"},
                    "argument": {"name": "a", "value": ""},
                },
            )
    assert_valid("CompleteResult", prompt)
    values = prompt["completion"]["values"]  # type: ignore[index]
    assert len(values) == 100  # type: ignore[arg-type]
    assert prompt["completion"]["total"] == 150  # type: ignore[index]
    assert prompt["completion"]["hasMore"] is True  # type: ignore[index]
    assert template == {"completion": {"values": ["python/trix"], "total": 7, "hasMore": True}}
    assert unknown.value.code == -32602
