"""Resources and templates through a real session: listing, reading, subscriptions."""

from __future__ import annotations

import pytest

from trimcp.errors import JsonRpcError, LocalProtocolError
from trimcp.server import Context, MCPServer, ResourceContents
from trimcp.testing import open_in_memory_client

from .conftest import assert_valid


def build() -> MCPServer:
    server = MCPServer("files")

    @server.resource("file:///notes/todo.md", mime_type="text/markdown", size=12, title="Todo")
    def todo() -> str:
        """The todo list."""
        return "- [ ] tests\n"

    @server.resource("file:///logo.png", mime_type="image/png")
    async def logo() -> bytes:
        return b"\x89PNG\r\n\x1a\n"

    @server.resource("notes://{note_id}/v{version}", name="note")
    async def note(note_id: str, version: int, ctx: Context) -> str:
        """A note at a version."""
        return f"{note_id}@{version}"

    @server.resource("data://config")
    def config() -> dict[str, int]:
        return {"retries": 3}

    @server.resource("multi://{name}")
    def multi(name: str) -> list[ResourceContents]:
        return [
            ResourceContents(uri=f"multi://{name}/a", text="a"),
            ResourceContents(uri=f"multi://{name}/b", blob=b"b", mime_type="application/x"),
        ]

    return server


async def test_lists_and_reads() -> None:
    async with open_in_memory_client(build()) as client:
        caps = client.initialize_result.capabilities
        listed = await client.request("resources/list")
        templates = await client.request("resources/templates/list")
        text = await client.request("resources/read", {"uri": "file:///notes/todo.md"})
        blob = await client.request("resources/read", {"uri": "file:///logo.png"})
        templated = await client.request("resources/read", {"uri": "notes://n1/v3"})
        as_json = await client.request("resources/read", {"uri": "data://config"})
        several = await client.request("resources/read", {"uri": "multi://x"})
    assert (caps.resources, caps.resources_subscribe, caps.resources_list_changed) == (True,) * 3
    assert_valid("ListResourcesResult", listed)
    assert_valid("ListResourceTemplatesResult", templates)
    assert listed["resources"][0] == {  # type: ignore[index]
        "uri": "file:///notes/todo.md",
        "name": "todo",
        "title": "Todo",
        "description": "The todo list.",
        "mimeType": "text/markdown",
        "size": 12,
    }
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [  # type: ignore[index,union-attr]
        "notes://{note_id}/v{version}",
        "multi://{name}",
    ]
    for result in (text, blob, templated, as_json, several):
        assert_valid("ReadResourceResult", result)
    assert text["contents"] == [
        {"uri": "file:///notes/todo.md", "mimeType": "text/markdown", "text": "- [ ] tests\n"}
    ]
    assert blob["contents"][0]["blob"] == "iVBORw0KGgo="  # type: ignore[index]
    assert templated["contents"][0]["text"] == "n1@3"  # type: ignore[index]
    assert as_json["contents"][0] == {  # type: ignore[index]
        "uri": "data://config",
        "mimeType": "application/json",
        "text": '{"retries":3}',
    }
    assert [c["uri"] for c in several["contents"]] == ["multi://x/a", "multi://x/b"]  # type: ignore[index,union-attr]


async def test_unknown_uri_is_32002_with_the_uri() -> None:
    async with open_in_memory_client(build()) as client:
        for uri in ("file:///missing.md", "notes://n1/vX"):
            with pytest.raises(JsonRpcError) as missing:
                await client.request("resources/read", {"uri": uri})
            assert missing.value.code == -32002
            assert missing.value.data == {"uri": uri}


async def test_updates_go_only_to_subscribers() -> None:
    server = build()
    async with (
        open_in_memory_client(server) as subscriber,
        open_in_memory_client(server) as bystander,
    ):
        assert await subscriber.request("resources/subscribe", {"uri": "notes://a/v1"}) == {}
        with pytest.raises(JsonRpcError) as unknown:
            await subscriber.request("resources/subscribe", {"uri": "nothing://here"})
        assert unknown.value.code == -32002
        assert await server.notify_resource_updated("notes://a/v1") == 1
        assert await server.notify_resource_updated("file:///notes/todo.md") == 0
        updated = await subscriber.wait_notification("notifications/resources/updated")
        assert updated.params == {"uri": "notes://a/v1"}
        await subscriber.request("resources/unsubscribe", {"uri": "notes://a/v1"})
        assert await server.notify_resource_updated("notes://a/v1") == 0
        await bystander.request("ping")
        assert bystander.received("notifications/resources/updated") == []


async def test_template_parameters_must_match_variables() -> None:
    server = MCPServer("bad")
    with pytest.raises(ValueError, match="template variables"):

        @server.resource("x://{a}")
        def wrong(b: str) -> str:
            return b


async def test_no_resources_no_capability() -> None:
    async with open_in_memory_client(MCPServer("empty")) as client:
        caps = client.initialize_result.capabilities
        with pytest.raises(LocalProtocolError):  # the client core sees it was not declared
            await client.request("resources/list")
        await client.stream.send_message(b'{"jsonrpc":"2.0","id":"raw","method":"prompts/list"}')
        with pytest.raises(JsonRpcError) as refused:
            await client.wait_response("raw")
    assert (caps.resources, caps.prompts, caps.completions) == (False, False, False)
    assert (caps.tools, caps.tools_list_changed, caps.logging) == (True, True, True)
    assert refused.value.code == -32601
