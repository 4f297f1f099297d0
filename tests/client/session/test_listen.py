"""The ``subscriptions/listen`` stream a session keeps open to a 2026-07-28 server.

A server played by the test over memory streams, under ``MockClock``: the filter asked for,
the acknowledgement awaited, notifications matched by ``subscriptionId`` (a stale stream's
dropped), a replaced stream cancelled only after its successor's acknowledgement, drops
reopened after an exact backoff, a graceful end not reopened, a refusal not retried.
"""

from __future__ import annotations

import itertools
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from trimcp.client.session import (
    ClientHandlers,
    ClientSessionOptions,
    EraCache,
    open_client_session,
)
from trimcp.client.session._listen import listen_delay
from trimcp.transports import memory_stream_pair

from ._fakes import FakeServer, discover_result

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.client.session import ClientSession

SID = "io.modelcontextprotocol/subscriptionId"
LISTENABLE = {
    "tools": {"listChanged": True},
    "prompts": {},
    "resources": {"subscribe": True, "listChanged": True},
}


@asynccontextmanager
async def listening(
    handlers: ClientHandlers, capabilities: dict[str, Any] | None = None
) -> AsyncIterator[tuple[ClientSession, FakeServer]]:
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    options = ClientSessionOptions(era_cache=EraCache())
    result = discover_result(LISTENABLE if capabilities is None else capabilities)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.discover, result)
        async with open_client_session(client_end, handlers=handlers, options=options) as s:
            yield s, server
        await server_end.aclose()


async def acknowledge(server: FakeServer, listen: dict[str, Any]) -> None:
    wanted = listen["params"]["notifications"]
    await server.notify(
        "notifications/subscriptions/acknowledged",
        {"notifications": wanted, "_meta": {SID: listen["id"]}},
    )


def test_the_backoff_doubles_up_to_thirty_seconds() -> None:
    assert [listen_delay(n) for n in (1, 2, 3, 7, 50)] == [0.5, 1.0, 2.0, 30.0, 30.0]


async def test_list_changes_come_over_the_listen_stream() -> None:
    changed: list[str] = []
    seen = trio.Event()

    def on_tools_changed() -> None:
        changed.append("tools")
        seen.set()

    async with listening(ClientHandlers(on_tools_changed=on_tools_changed)) as (session, server):
        listen = await server.expect("subscriptions/listen")
        assert listen["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourcesListChanged": True,
        }
        await acknowledge(server, listen)
        stale = {"_meta": {SID: 999}}
        await server.notify("notifications/tools/list_changed", stale)  # not ours: dropped
        await server.notify("notifications/tools/list_changed", {"_meta": {SID: listen["id"]}})
        with trio.fail_after(5):
            await seen.wait()
        assert changed == ["tools"]
        assert session.listener is not None


async def test_subscribing_replaces_the_stream_once_the_new_one_is_acknowledged() -> None:
    updates: list[str] = []
    got = trio.Event()

    def on_updated(uri: str) -> None:
        updates.append(uri)
        got.set()

    async with listening(ClientHandlers(on_resource_updated=on_updated)) as (session, server):
        first = await server.expect("subscriptions/listen")
        await acknowledge(server, first)

        async def serve() -> None:
            second = await server.expect("subscriptions/listen")
            assert second["params"]["notifications"]["resourceSubscriptions"] == ["file:///a"]
            await acknowledge(server, second)
            cancel = await server.expect("notifications/cancelled")
            assert cancel["params"]["requestId"] == first["id"]  # only after the ack
            await server.notify(
                "notifications/resources/updated",
                {"uri": "file:///a", "_meta": {SID: second["id"]}},
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with trio.fail_after(5):
                await session.subscribe_resource("file:///a")
                await got.wait()
        assert updates == ["file:///a"]


async def test_a_dropped_stream_is_reopened_after_the_backoff(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with listening(ClientHandlers()) as (_, server):
        times: list[float] = []
        for _ in range(3):
            listen = await server.expect("subscriptions/listen")
            times.append(trio.current_time())
            await acknowledge(server, listen)
            # An HTTP transport answers like this when the stream broke.
            await server.fail(listen, -32603, "the stream ended without it")
        assert [b - a for a, b in itertools.pairwise(times)] == [0.5, 1.0]


async def test_a_graceful_end_is_reopened_too_and_the_lists_forgotten(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with listening(ClientHandlers()) as (session, server):
        listen = await server.expect("subscriptions/listen")
        await acknowledge(server, listen)

        async def answer_listing() -> None:
            listing = await server.expect("tools/list")
            page = {"tools": [], "resultType": "complete", "ttlMs": 3_600_000}
            await server.answer(listing, {**page, "cacheScope": "public"})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_listing)
            assert await session.list_tools() == []
        assert await session.list_tools() == []  # fresh for an hour: not asked again
        await trio.sleep(100)  # up long enough for its end not to count as a failure
        await server.answer(listen, {"resultType": "complete", "_meta": {SID: listen["id"]}})
        again = await server.expect("subscriptions/listen")
        assert again["id"] != listen["id"]
        assert trio.current_time() == 100.5
        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_listing)
            assert await session.list_tools() == []  # forgotten: asked again


async def test_a_server_that_refuses_listen_is_not_asked_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with listening(ClientHandlers()) as (session, server):
        listen = await server.expect("subscriptions/listen")
        await server.fail(listen, -32601, "Method not found")
        with trio.move_on_after(3600):
            extra = await server.receive()
            pytest.fail(f"the client sent {extra}")
        assert session.listener is not None


async def test_nothing_to_listen_to_opens_no_stream(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with listening(ClientHandlers(), {"tools": {}}) as (_, server):
        with trio.move_on_after(60):
            extra = await server.receive()
            pytest.fail(f"the client sent {extra}")
