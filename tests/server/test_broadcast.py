"""MCPServer's fan-out through a NotificationHub: real sessions over in-memory streams.

Each test runs the server's notifications (``server.open_notifications``: the hub and the
``Fanout`` actor) beside sessions made by ``trimcp.testing.open_in_memory_client``, and
checks both what clients receive and that it went through the topic's broadcaster. Under
``MockClock`` autojump, "promptly" means: at the same virtual instant.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from trimcp.actors import Registry, spawn
from trimcp.notify import (
    LOG_MESSAGES,
    TOOLS_LIST_CHANGED,
    NotificationHub,
    resource_topic,
)
from trimcp.protocol import ClientConnection, Implementation, InitializeCompleted
from trimcp.server import MCPServer
from trimcp.sessions import Session, SessionOptions
from trimcp.testing import open_in_memory_client
from trimcp.transports import memory_stream_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.actors import ActorRef
    from trimcp.server._broadcast import SessionGroup
    from trimcp.testing import InMemoryClient

TOOLS_CHANGED = "notifications/tools/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
UPDATED = "notifications/resources/updated"
MESSAGE = "notifications/message"


def build_server() -> MCPServer:
    server = MCPServer("fan-out")

    @server.resource("x://a")
    def a() -> str:
        return "a"

    @server.resource("x://b")
    def b() -> str:
        return "b"

    @server.prompt()
    def greet() -> str:
        return "hi"

    return server


def group(server: MCPServer, topic: str) -> SessionGroup:
    found = server._sessions.groups[topic]
    assert found.subscribed, found
    return found


async def noop() -> str:
    return "x"


@asynccontextmanager
async def clients(server: MCPServer, count: int) -> AsyncIterator[list[InMemoryClient]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(open_in_memory_client(server)) for _ in range(count)]


@asynccontextmanager
async def stalled_client(
    server: MCPServer, options: SessionOptions | None = None
) -> AsyncIterator[ActorRef]:
    """A real session whose client does the handshake and then never reads again.

    Its stream holds 4 messages and its session queues 8 for the writer, so it stalls early.
    """
    server_side, client_side = memory_stream_pair(capacity=4)
    options = options or SessionOptions(write_queue=8)
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(server_side, server, options))
        connection = ClientConnection(Implementation(name="stalled", version="1"))
        _, data = connection.send_initialize()
        await client_side.send_message(data)
        while not any(
            isinstance(event, InitializeCompleted)
            for event in connection.receive(await client_side.receive_message())
        ):
            pass
        await client_side.send_message(connection.send_initialized())
        try:
            yield ref
        finally:
            ref.request_stop()


# --- reaching the right sessions ----------------------------------------------------------------


async def test_list_changed_reaches_every_session_through_the_broadcaster(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with server.open_notifications() as hub, clients(server, 3) as sessions:
        await wait_all_tasks_blocked()
        assert server.notification_hub is hub
        start = trio.current_time()
        server.add_tool(noop, "extra")
        server.add_resource(noop, "x://c")
        server.add_prompt(noop, "other")
        await wait_all_tasks_blocked()
        for client in sessions:
            for method in (TOOLS_CHANGED, RESOURCES_CHANGED, PROMPTS_CHANGED):
                assert len(client.received(method)) == 1, method
        assert trio.current_time() == start
        stats = await hub.statistics(TOOLS_LIST_CHANGED)
        assert stats is not None
        assert (stats.subscribers, stats.published, stats.queued) == (1, 1, 1)
        assert group(server, TOOLS_LIST_CHANGED).delivered == 3


async def test_a_session_joins_the_topics_as_it_opens(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with server.open_notifications() as hub:
        await wait_all_tasks_blocked()
        async with open_in_memory_client(server) as first:
            server.add_tool(noop, "one")
            await wait_all_tasks_blocked()
            async with open_in_memory_client(server) as second:
                server.remove_tool("one")
                await wait_all_tasks_blocked()
                assert len(first.received(TOOLS_CHANGED)) == 2
                assert len(second.received(TOOLS_CHANGED)) == 1
        stats = await hub.statistics(TOOLS_LIST_CHANGED)
        assert stats is not None
        assert stats.published == 2


async def test_resource_updated_goes_only_to_that_uris_subscribers(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with server.open_notifications() as hub, clients(server, 3) as (a, b, bystander):
        await a.request("resources/subscribe", {"uri": "x://a"})
        await b.request("resources/subscribe", {"uri": "x://b"})
        await b.request("resources/subscribe", {"uri": "x://a"})
        await wait_all_tasks_blocked()
        assert hub.whereis(resource_topic("x://a")) is not None
        assert await server.notify_resource_updated("x://a") == 2
        assert await server.notify_resource_updated("x://b") == 1
        assert await server.notify_resource_updated("x://nobody") == 0
        await wait_all_tasks_blocked()
        assert [n.params for n in a.received(UPDATED)] == [{"uri": "x://a"}]
        assert [n.params for n in b.received(UPDATED)] == [{"uri": "x://a"}, {"uri": "x://b"}]
        assert bystander.received(UPDATED) == []
        stats = await hub.statistics(resource_topic("x://a"))
        assert stats is not None
        assert (stats.subscribers, stats.published) == (1, 1)
        assert group(server, resource_topic("x://a")).delivered == 2
        assert hub.whereis(resource_topic("x://nobody")) is None

        # The last subscriber gone, the URI's group leaves its topic, which lingers out.
        await a.request("resources/unsubscribe", {"uri": "x://a"})
        await b.request("resources/unsubscribe", {"uri": "x://a"})
        await wait_all_tasks_blocked()
        assert resource_topic("x://a") not in server._sessions.groups
        await trio.sleep(hub.linger + 1)
        assert hub.whereis(resource_topic("x://a")) is None
        assert await server.notify_resource_updated("x://a") == 0
        assert hub.whereis(resource_topic("x://b")) is not None


async def test_a_subscription_made_just_before_an_update_is_not_missed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Subscribing answers before the Fanout has subscribed the URI's group: meanwhile the
    # update goes directly, so nothing falls between the two ways.
    server = build_server()
    async with server.open_notifications(), open_in_memory_client(server) as client:
        await client.request("resources/subscribe", {"uri": "x://a"})
        assert await server.notify_resource_updated("x://a") == 1
        await wait_all_tasks_blocked()
        assert await server.notify_resource_updated("x://a") == 1
        await wait_all_tasks_blocked()
        assert len(client.received(UPDATED)) == 2
        assert group(server, resource_topic("x://a")).delivered == 1


async def test_server_wide_logs_respect_each_sessions_level(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with server.open_notifications() as hub, clients(server, 3) as (quiet, chatty, unset):
        await quiet.request("logging/setLevel", {"level": "warning"})
        await chatty.request("logging/setLevel", {"level": "debug"})
        await wait_all_tasks_blocked()
        await server.log("info", {"n": 1}, logger="app")
        await server.log("error", "boom")
        await server.log("debug", "details")
        with pytest.raises(ValueError, match="unknown log level"):
            await server.log("loud", "x")
        await wait_all_tasks_blocked()

        def seen(client: InMemoryClient) -> list[object]:
            return [n.params["data"] for n in client.received(MESSAGE) if n.params]

        assert seen(quiet) == ["boom"]
        assert seen(chatty) == [{"n": 1}, "boom", "details"]
        assert seen(unset) == [{"n": 1}, "boom", "details"]
        assert chatty.received(MESSAGE)[0].params == {
            "level": "info",
            "data": {"n": 1},
            "logger": "app",
        }
        stats = await hub.statistics(LOG_MESSAGES)
        assert stats is not None
        assert stats.published == 3
        logs = group(server, LOG_MESSAGES)
        assert (logs.delivered, logs.filtered) == (7, 2)


# --- slow consumers -----------------------------------------------------------------------------


async def test_a_stalled_session_never_delays_a_hundred_healthy_ones(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with (
        server.open_notifications(),
        stalled_client(server) as stuck,
        clients(server, 100) as healthy,
    ):
        await wait_all_tasks_blocked()
        start = trio.current_time()
        total, burst = 300, 50
        for first in range(0, total, burst):
            for n in range(first, first + burst):
                await server.log("info", n)
            await wait_all_tasks_blocked()
        assert trio.current_time() == start  # nobody waited, not even for a moment
        for client in healthy:
            assert [n.params["data"] for n in client.received(MESSAGE) if n.params] == list(
                range(total)
            )
        logs = group(server, LOG_MESSAGES)
        assert logs.delivered == 100 * total + (total - logs.dropped)
        # The stalled one: its writer is stuck, its mailbox is full, the rest is dropped.
        assert logs.dropped > 0
        stuck_stats = stuck.statistics()
        assert stuck.alive
        assert stuck_stats.mailbox_peak <= 256 + 1


async def test_a_stalled_session_is_dropped_then_closed_and_logged_once(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server = build_server()
    async with (
        server.open_notifications(),
        stalled_client(server) as stuck,
        clients(server, 2) as healthy,
    ):
        await wait_all_tasks_blocked()
        start = trio.current_time()
        total, burst = 1_400, 100
        for first in range(0, total, burst):
            for n in range(first, first + burst):
                await server.log("info", n)
            await wait_all_tasks_blocked()
        assert trio.current_time() == start
        assert not stuck.alive
        assert stuck.statistics().mailbox_peak <= 256 + 1
        assert len(server._sessions) == 2
        for client in healthy:
            assert len(client.received(MESSAGE)) == total
        session_records = [
            r.getMessage() for r in caplog.records if r.name == "trimcp.sessions._context"
        ]
        assert sum("not keeping up" in text for text in session_records) == 1
        assert sum("slow consumer" in text for text in session_records) == 1


# --- crashes and restarts -----------------------------------------------------------------------


async def test_a_topic_that_crashes_loses_no_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with server.open_notifications() as hub, clients(server, 3) as sessions:
        await wait_all_tasks_blocked()
        old = hub.whereis(TOOLS_LIST_CHANGED)
        assert old is not None
        old.kill()
        await wait_all_tasks_blocked()
        new = hub.whereis(TOOLS_LIST_CHANGED)
        assert new is not None
        assert new != old
        assert group(server, TOOLS_LIST_CHANGED).broadcaster == new
        server.add_tool(noop, "after")
        await wait_all_tasks_blocked()
        assert all(len(client.received(TOOLS_CHANGED)) == 1 for client in sessions)
        assert all(client.session.alive for client in sessions)
        stats = await hub.statistics(TOOLS_LIST_CHANGED)
        assert stats is not None
        assert stats.published == 1


async def test_a_hub_that_restarts_loses_no_session(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with server.open_notifications() as hub, clients(server, 3) as sessions:
        await sessions[0].request("resources/subscribe", {"uri": "x://a"})
        await wait_all_tasks_blocked()
        assert hub.registry is not None
        supervisor = hub.registry.whereis(hub.name)
        assert supervisor is not None
        supervisor.kill()
        await wait_all_tasks_blocked()
        assert hub.registry.whereis(hub.name) not in (None, supervisor)
        assert server.notification_hub is hub
        server.add_tool(noop, "after")
        assert await server.notify_resource_updated("x://a") == 1
        await wait_all_tasks_blocked()
        assert all(len(client.received(TOOLS_CHANGED)) == 1 for client in sessions)
        assert all(client.session.alive for client in sessions)
        assert len(sessions[0].received(UPDATED)) == 1
        stats = await hub.statistics(TOOLS_LIST_CHANGED)
        assert stats is not None
        assert stats.published == 1
        assert group(server, resource_topic("x://a")).delivered == 1


async def test_notifications_published_as_the_hub_stops_are_delivered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with clients(server, 2) as sessions:
        async with server.open_notifications():
            await wait_all_tasks_blocked()
            for n in range(20):
                await server.log("info", n)
        assert server.notification_hub is None
        await server.log("info", 20)
        await wait_all_tasks_blocked()
        for client in sessions:
            assert [n.params["data"] for n in client.received(MESSAGE) if n.params] == list(
                range(21)
            )


async def test_a_second_hub_stands_by_and_takes_over(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    first = NotificationHub(registry=Registry())
    first_done = trio.Event()

    async def run_first(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with server.open_notifications(first):
            task_status.started()
            await first_done.wait()

    async with open_in_memory_client(server) as client, trio.open_nursery() as nursery:
        await nursery.start(run_first)
        async with server.open_notifications() as second:
            await wait_all_tasks_blocked()
            assert server.notification_hub is first
            assert second.whereis(TOOLS_LIST_CHANGED) is None
            first_done.set()
            await wait_all_tasks_blocked()
            assert server.notification_hub is second
            server.add_tool(noop, "later")
            await wait_all_tasks_blocked()
            stats = await second.statistics(TOOLS_LIST_CHANGED)
            assert stats is not None
            assert stats.published == 1
        assert len(client.received(TOOLS_CHANGED)) == 1


# --- without a hub ------------------------------------------------------------------------------


async def test_without_a_hub_everything_goes_directly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with clients(server, 2) as (a, b):
        assert server.notification_hub is None
        await a.request("resources/subscribe", {"uri": "x://a"})
        await b.request("logging/setLevel", {"level": "error"})
        server.add_tool(noop, "extra")
        assert await server.notify_resource_updated("x://a") == 1
        assert await server.log("info", "hello") == 1
        await wait_all_tasks_blocked()
        for client in (a, b):
            assert len(client.received(TOOLS_CHANGED)) == 1
        assert len(a.received(UPDATED)) == 1
        assert b.received(UPDATED) == []
        assert len(a.received(MESSAGE)) == 1
        assert b.received(MESSAGE) == []
        assert server._sessions.groups == {}


# --- what a session costs -----------------------------------------------------------------------


async def test_capabilities_are_built_once_per_change() -> None:
    server = MCPServer("caps")
    first = server.capabilities
    assert server.capabilities is first
    assert not first.prompts
    server.add_prompt(noop, "p")
    second = server.capabilities
    assert second is not first
    assert second.prompts
    assert server.capabilities is second


async def test_a_session_holds_no_subscription_set_until_it_subscribes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    async with open_in_memory_client(server) as client:
        entries = server._sessions._sessions
        assert list(entries.values()) == [None]
        await client.request("resources/subscribe", {"uri": "x://a"})
        assert list(entries.values()) == [{"x://a"}]
        await client.request("resources/unsubscribe", {"uri": "x://a"})
        assert list(entries.values()) == [None]
        assert server._sessions.subscribers("x://a") == []


def test_a_hub_of_its_own_by_default() -> None:
    server = build_server()
    spec = server.notification_spec()
    assert spec.id == "notifications"
    assert spec.kind == "supervisor"
    assert NotificationHub().registry is None  # the daemon's, found by name in its registry
