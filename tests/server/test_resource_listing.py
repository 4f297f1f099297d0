"""The hooks for resources that come and go: ``list_with``, ``on_subscribe``, background work.

``list_with`` adds a template's concrete resources to ``resources/list`` (paged with the
static ones, cursors bound to the listing they came from); ``on_subscribe`` may refuse a
subscription before it is recorded; ``subscribed_uris`` tells a watcher what to watch;
``add_background`` runs a long task beside the server's notifications.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from trimcp.errors import InvalidRequest, JsonRpcError, ResourceNotFound
from trimcp.server import Context, MCPServer
from trimcp.testing import open_in_memory_client

from .conftest import assert_valid

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def files_server(names: list[str], calls: list[bool], **options: Any) -> MCPServer:
    """A server with one static resource and a template listing ``names`` (as it is now)."""
    server = MCPServer("files", **options)

    @server.resource("mem:///readme", mime_type="text/plain")
    def readme() -> str:
        return "read me"

    async def lister(ctx: Context, fresh: bool) -> Sequence[Mapping[str, object]]:
        assert isinstance(ctx, Context)
        calls.append(fresh)
        return [{"uri": f"mem:///{name}", "name": name, "size": len(name)} for name in names]

    @server.resource("mem:///{+path}", name="file", list_with=lister)
    def file(path: str) -> str:
        return path

    return server


async def list_all(client: Any) -> list[list[str]]:
    """Every page of resources/list, as lists of URIs."""
    pages: list[list[str]] = []
    params: dict[str, Any] = {}
    while True:
        result = await client.request("resources/list", params)
        assert_valid("ListResourcesResult", result)
        pages.append([item["uri"] for item in result["resources"]])
        if "nextCursor" not in result:
            return pages
        params = {"cursor": result["nextCursor"]}


async def test_listed_after_the_static_resources_and_paged() -> None:
    calls: list[bool] = []
    server = files_server(["a", "b c", "d"], calls, page_size=2)
    async with open_in_memory_client(server) as client:
        pages = await list_all(client)
        first = await client.request("resources/list")
    assert pages == [["mem:///readme", "mem:///a"], ["mem:///b c", "mem:///d"]]
    assert calls == [True, False, True]  # a cursor's page may reuse its listing
    assert first["resources"][1] == {"uri": "mem:///a", "name": "a", "size": 1}  # type: ignore[index]


async def test_a_cursor_from_a_listing_that_changed_is_refused() -> None:
    names = ["a", "b", "c"]
    server = files_server(names, [], page_size=2)
    async with open_in_memory_client(server) as client:
        first = await client.request("resources/list")
        names.append("new")  # this lister ignores ``fresh``: the next page sees the change
        with pytest.raises(JsonRpcError) as stale:
            await client.request("resources/list", {"cursor": first["nextCursor"]})
    assert stale.value.code == -32602
    assert "changed" in stale.value.message


async def test_a_static_uri_keeps_its_place() -> None:
    server = files_server(["readme", "x"], [])
    async with open_in_memory_client(server) as client:
        listed = await client.request("resources/list")
    resources: list[dict[str, Any]] = listed["resources"]  # type: ignore[assignment]
    assert [item["uri"] for item in resources] == ["mem:///readme", "mem:///x"]
    assert resources[0]["mimeType"] == "text/plain"


async def test_older_clients_get_listed_items_trimmed_like_static_ones() -> None:
    server = MCPServer("files")

    async def lister(ctx: Context, fresh: bool) -> Sequence[Mapping[str, object]]:
        return [{"uri": "mem:///a", "name": "a", "title": "A", "icons": [{"src": "x"}]}]

    @server.resource("mem:///{+path}", list_with=lister)
    def file(path: str) -> str:
        return path

    async with open_in_memory_client(server, protocol_version="2025-03-26") as client:
        listed = await client.request("resources/list")
    assert listed["resources"] == [{"uri": "mem:///a", "name": "a"}]


async def test_a_lister_item_without_a_uri_is_an_internal_error() -> None:
    server = MCPServer("files")

    async def lister(ctx: Context, fresh: bool) -> Sequence[Mapping[str, object]]:
        return [{"name": "no uri"}]

    @server.resource("mem:///{+path}", list_with=lister)
    def file(path: str) -> str:
        return path

    async with open_in_memory_client(server) as client:
        with pytest.raises(JsonRpcError) as failed:
            await client.request("resources/list")
    assert failed.value.code == -32603


def test_list_with_is_for_templates_only() -> None:
    server = MCPServer("files")

    async def lister(ctx: Context, fresh: bool) -> Sequence[Mapping[str, object]]:
        return []

    with pytest.raises(ValueError, match="templates only"):
        server.add_resource(lambda: "x", "mem:///static", list_with=lister)


async def test_a_not_found_from_a_template_function_names_the_uri_asked_for() -> None:
    server = MCPServer("files")

    @server.resource("mem:///{+path}")
    def file(path: str) -> str:
        raise ResourceNotFound(f"mem:///{path}", f"{path} is not there")

    async with open_in_memory_client(server) as client:
        with pytest.raises(JsonRpcError) as missing:
            await client.request("resources/read", {"uri": "mem:///a%2Fb"})
    assert (missing.value.code, missing.value.message) == (-32002, "a/b is not there")
    assert missing.value.data == {"uri": "mem:///a%2Fb"}


# --- subscriptions -----------------------------------------------------------------------


def watched_server(seen: list[tuple[str, str]]) -> MCPServer:
    server = MCPServer("watched")

    async def on_subscribe(uri: str, ctx: Context) -> None:
        seen.append((uri, ctx.session.session_id))
        if "secret" in uri:
            raise InvalidRequest("not that one", {"uri": uri})

    @server.resource("mem:///{+path}", on_subscribe=on_subscribe)
    def file(path: str) -> str:
        return path

    return server


async def test_on_subscribe_sees_the_uri_and_may_refuse() -> None:
    seen: list[tuple[str, str]] = []
    server = watched_server(seen)
    async with open_in_memory_client(server) as client:
        assert await client.request("resources/subscribe", {"uri": "mem:///a"}) == {}
        with pytest.raises(JsonRpcError) as refused:
            await client.request("resources/subscribe", {"uri": "mem:///secret"})
        assert set(server.subscribed_uris()) == {"mem:///a"}
        with pytest.raises(JsonRpcError) as unknown:
            await client.request("resources/subscribe", {"uri": "other://a"})
    assert [uri for uri, _ in seen] == ["mem:///a", "mem:///secret"]
    assert (refused.value.code, refused.value.message) == (-32600, "not that one")
    assert unknown.value.code == -32002  # no hook runs for a URI nothing matches


async def test_subscribed_uris_follow_unsubscribes_and_closed_sessions() -> None:
    server = watched_server([])
    async with open_in_memory_client(server) as one:
        async with open_in_memory_client(server) as two:
            await one.request("resources/subscribe", {"uri": "mem:///a"})
            await one.request("resources/subscribe", {"uri": "mem:///c"})
            await two.request("resources/subscribe", {"uri": "mem:///a"})
            await two.request("resources/subscribe", {"uri": "mem:///b"})
            assert sorted(server.subscribed_uris()) == ["mem:///a", "mem:///b", "mem:///c"]
            await one.request("resources/unsubscribe", {"uri": "mem:///a"})
            assert sorted(server.subscribed_uris()) == ["mem:///a", "mem:///b", "mem:///c"]
        assert sorted(server.subscribed_uris()) == ["mem:///c"]
    assert list(server.subscribed_uris()) == []


# --- background work ---------------------------------------------------------------------


async def test_background_children_run_with_the_notifications() -> None:
    server = MCPServer("busy")
    running: list[str] = []
    stopped = trio.Event()

    async def work(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        running.append("started")
        task_status.started()
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()

    server.add_background("worker", work)
    async with server.open_notifications():
        assert running == ["started"]
        assert not stopped.is_set()
    assert stopped.is_set()
    async with server.open_notifications():  # each run starts it afresh
        assert running == ["started", "started"]


async def test_a_background_child_that_crashes_is_restarted() -> None:
    server = MCPServer("flaky")
    starts: list[int] = []
    again = trio.Event()

    async def work() -> None:
        starts.append(1)
        if len(starts) == 1:
            raise RuntimeError("first run fails")
        again.set()
        await trio.sleep_forever()

    server.add_background("flaky", work)
    async with server.open_notifications():
        with trio.fail_after(5):
            await again.wait()
    assert len(starts) == 2


@pytest.mark.parametrize("child_id", ["fanout", "notify", "twice"])
def test_background_ids_are_unique(child_id: str) -> None:
    server = MCPServer("ids")

    async def work() -> None:
        await trio.sleep_forever()

    server.add_background("twice", work)
    with pytest.raises(ValueError, match="already there"):
        server.add_background(child_id, work)
