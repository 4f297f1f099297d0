"""List pages reused while fresh (``ttlMs``), per credentials when private (``cacheScope``).

``ListCache`` under ``MockClock`` (freshness is exact), the hints read from any JSON with
Hypothesis, and a session against a 2026-07-28 server played by the test: a fresh listing
is not asked again, a ``list_changed`` notification or the end of its ``ttlMs`` makes it
asked again.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trimcp.client.session import ClientHandlers, ClientSessionOptions, EraCache
from trimcp.client.session._discovery import CacheHint, cache_hint_from_wire
from trimcp.client.session._listcache import ListCache, invalidated_by
from trimcp.client.session._open import open_client_session
from trimcp.transports import memory_stream_pair

from ._fakes import FakeServer, discover_result

SID = "io.modelcontextprotocol/subscriptionId"


def page(ttl_ms: object = 1000, scope: object = "public", **more: Any) -> dict[str, Any]:
    return {"tools": [], "resultType": "complete", "ttlMs": ttl_ms, "cacheScope": scope, **more}


@pytest.mark.parametrize(
    ("result", "hint"),
    [
        (page(1500, "public"), CacheHint(ttl=1.5, private=False)),
        (page(0, "private"), CacheHint(ttl=0.0, private=True)),
        (page(-1), None),
        (page(True), None),
        (page("10"), None),
        (page(10, "shared"), None),
        ({"tools": []}, None),  # an older server: no hints, no caching
    ],
)
def test_hints_are_read_strictly(result: dict[str, Any], hint: CacheHint | None) -> None:
    assert cache_hint_from_wire(result) == hint


@given(
    ttl=st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    scope=st.none() | st.text(max_size=8) | st.sampled_from(["public", "private"]),
)
def test_any_hint_is_read_or_ignored(ttl: object, scope: object) -> None:
    hint = cache_hint_from_wire({"ttlMs": ttl, "cacheScope": scope})
    assert hint is None or (hint.ttl >= 0 and scope in ("public", "private"))


async def test_a_page_is_fresh_for_its_ttl(autojump_clock: trio.testing.MockClock) -> None:
    cache = ListCache()
    cache.put("tools/list", None, page(2000), None)
    assert cache.get("tools/list", None, "anyone") is not None  # public: any credentials
    await trio.sleep(1.999)
    assert cache.get("tools/list", None, None) is not None
    await trio.sleep(0.001)
    assert cache.get("tools/list", None, None) is None
    assert len(cache) == 0


async def test_a_private_page_belongs_to_its_credentials() -> None:
    cache = ListCache()
    cache.put("tools/list", "c1", page(60_000, "private"), "alice")
    assert cache.get("tools/list", "c1", "alice") is not None
    assert cache.get("tools/list", "c1", "bob") is None
    assert cache.get("tools/list", "c1", None) is None
    assert cache.get("tools/list", None, "alice") is None  # another cursor


async def test_what_is_never_kept() -> None:
    cache = ListCache()
    cache.put("tools/list", None, page(0), None)
    cache.put("tools/list", None, {"tools": []}, None)
    cache.put("tools/call", None, page(1000), None)
    assert len(cache) == 0


async def test_the_cache_is_bounded_and_invalidated_by_list_changes() -> None:
    cache = ListCache(max_pages=2)
    for cursor in ("a", "b", "c"):
        cache.put("tools/list", cursor, page(), None)
    assert cache.get("tools/list", "a", None) is None  # the oldest went
    cache.put("prompts/list", None, page(), None)
    cache.invalidate(invalidated_by("notifications/tools/list_changed"))
    assert len(cache) == 1
    assert invalidated_by("notifications/resources/list_changed") == (
        "resources/list",
        "resources/templates/list",
    )
    assert invalidated_by("notifications/message") == ()
    with pytest.raises(ValueError, match="at least one"):
        ListCache(0)


async def test_a_session_asks_again_only_when_stale_or_changed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    options = ClientSessionOptions(era_cache=EraCache())
    result = discover_result({"tools": {"listChanged": True}})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.discover, result)
        async with open_client_session(
            client_end, handlers=ClientHandlers(), options=options
        ) as session:
            listen = await server.expect("subscriptions/listen")
            await server.notify(
                "notifications/subscriptions/acknowledged",
                {"notifications": {"toolsListChanged": True}, "_meta": {SID: listen["id"]}},
            )

            async def answer(count: int) -> None:
                for _ in range(count):
                    request = await server.expect("tools/list")
                    tool = {"name": "t", "inputSchema": {"type": "object"}}
                    await server.answer(request, page(10_000, tools=[tool]))

            async with trio.open_nursery() as serving:
                serving.start_soon(answer, 3)
                assert [t.name for t in await session.list_tools()] == ["t"]
                assert [t.name for t in await session.list_tools()] == ["t"]  # cached
                await trio.sleep(10)
                await session.list_tools()  # stale: asked again
                await server.notify(
                    "notifications/tools/list_changed", {"_meta": {SID: listen["id"]}}
                )
                await trio.testing.wait_all_tasks_blocked()
                await session.list_tools()  # changed: asked again
        await server_end.aclose()
