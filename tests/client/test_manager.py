"""The connection manager with real trimcp servers, each in a real session over memory streams.

The connector here runs an ``MCPServer`` per connection (``open_in_memory_client``); a test
"crashes" a server by stopping its session, which ends the connection as a dying process
would. Timing (backoff, intensity) runs on ``MockClock``.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing

from trimcp.client._backoff import BackoffPolicy
from trimcp.client._connection import permanent
from trimcp.client._manager import ConnectionManager
from trimcp.client._permissions import PermissionPolicy, PermissionRule
from trimcp.config.mcp_servers._model import ServerConfig
from trimcp.errors import (
    CommandNotExecutable,
    CommandNotFound,
    ConfigError,
    ConnectionLost,
    LocalProtocolError,
    NotConnected,
    ServerExited,
    ToolCallDenied,
    TransportClosed,
    UnknownServer,
    UnknownTool,
)
from trimcp.server import MCPServer, ToolAnnotations
from trimcp.supervision import open_supervisor
from trimcp.testing import open_in_memory_client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping
    from pathlib import Path

    from trimcp.client._connection import CatalogKind

LIST_METHODS = {
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "resourceTemplates": ("resources/templates/list", "resourceTemplates"),
    "prompts": ("prompts/list", "prompts"),
}


def make_server(name: str, tools: tuple[str, ...] = ("echo",)) -> MCPServer:
    server = MCPServer(name, "1.0")
    for tool in tools:

        def echo(text: str, _tool: str = tool) -> str:
            return f"{name}/{_tool}: {text}"

        server.add_tool(echo, name=tool, description=f"{tool} of {name}")
    return server


@dataclass
class Upstreams:
    """The connector of these tests: a fresh server per connection, and a kill switch."""

    servers: dict[str, Callable[[], MCPServer]]
    opened: dict[str, int] = field(default_factory=dict)
    refuse: set[str] = field(default_factory=set)
    #: Servers whose command "is not installed": every attempt raises CommandNotFound.
    missing: set[str] = field(default_factory=set)
    #: Servers that "fail their first N starts": attempts left to refuse, by name.
    failing_starts: dict[str, int] = field(default_factory=dict)
    #: Seconds of (virtual) time each server takes to answer the handshake.
    start_delay: dict[str, float] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, Any] = field(default_factory=dict)

    def kill(self, name: str) -> None:
        self.sessions[name].request_stop()

    @asynccontextmanager
    async def __call__(
        self, config: ServerConfig, on_list_changed: Callable[[CatalogKind], None]
    ) -> AsyncIterator[Any]:
        name = config.name
        self.attempts[name] = self.attempts.get(name, 0) + 1
        if name in self.missing:
            raise CommandNotFound(
                f'MCP server "{name}" could not be started: command "{name}-bin" was not found',
                server=name,
                command=[f"{name}-bin"],
                searched=["/usr/bin"],
            )
        if self.failing_starts.get(name, 0) > 0:
            self.failing_starts[name] -= 1
            raise ConnectionError(f"{name}: exited while starting")
        if name in self.refuse:
            raise ConnectionRefusedError(f"{name}: connection refused")
        await trio.sleep(self.start_delay.get(name, 0))
        self.opened[config.name] = self.opened.get(config.name, 0) + 1
        async with open_in_memory_client(self.servers[config.name]()) as client:
            self.sessions[config.name] = client.session
            yield _Adapter(client)


class _Adapter:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def list_all(self, kind: CatalogKind) -> list[Mapping[str, Any]]:
        method, key = LIST_METHODS[kind]
        try:
            result = await self.client.request(method, {})
        except LocalProtocolError:  # a capability the server did not declare
            return []
        return list(result.get(key, []))

    async def call_tool(self, name: str, arguments: Any, *, on_progress: Any = None) -> Any:
        try:
            return await self.client.request("tools/call", {"name": name, "arguments": arguments})
        except trio.ClosedResourceError as exc:
            raise TransportClosed("the server is gone") from exc

    async def wait_closed(self) -> BaseException | None:
        await self.client.session.wait_exited()
        return ConnectionError("the server session ended")


def config(name: str, **extra: Any) -> ServerConfig:
    return ServerConfig(name=name, transport="stdio", command="unused", **extra)


@asynccontextmanager
async def host(
    upstreams: Upstreams, servers: Mapping[str, ServerConfig], **options: Any
) -> AsyncIterator[ConnectionManager]:
    manager = ConnectionManager(connector=upstreams, **options)
    async with open_supervisor([manager.spec(servers)]):
        yield manager
        await manager.disconnect_all()


async def test_connect_all_namespaces_tools_and_routes_calls() -> None:
    upstreams = Upstreams(
        {"a": lambda: make_server("a"), "b": lambda: make_server("b", ("echo", "x"))}
    )
    servers = {"a": config("a"), "b": config("b"), "off": config("off", enabled=False)}
    async with host(upstreams, servers) as manager:
        statuses = await manager.connect_all()
        assert [(s.name, s.state, s.tools) for s in statuses] == [
            ("a", "connected", 1),
            ("b", "connected", 2),
        ]
        names = sorted(tool.qualified_name for tool in await manager.all_tools())
        assert names == ["mcp__a__echo", "mcp__b__echo", "mcp__b__x"]
        result = await manager.call_tool("mcp__b__x", {"text": "hi"})
        assert result["content"][0]["text"] == "b/x: hi"
        assert await manager.list_connections() == ["a", "b"]
        table = {s.name: s.state for s in await manager.status()}
        assert table == {"a": "connected", "b": "connected", "off": "stopped"}
        exported = await manager.export_tools("openai")
        assert {entry["function"]["name"] for entry in exported} == set(names)  # type: ignore[index]


async def test_unknown_names_get_clear_errors() -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")})
    async with host(upstreams, {"a": config("a")}) as manager:
        with pytest.raises(UnknownServer, match="configured: a"):
            await manager.connect("nope")
        await manager.connect("a")
        with pytest.raises(UnknownTool, match="it offers: echo"):
            await manager.call_tool("mcp__a__missing", {})
        with pytest.raises(UnknownTool, match="mcp__<server>__<tool>"):
            await manager.call_tool("echo", {})
        await manager.disconnect("a")
        with pytest.raises(NotConnected, match="connect it first"):
            await manager.call_tool("mcp__a__echo", {"text": "x"})


async def test_a_crashed_server_is_restarted_and_its_tools_come_back(
    autojump_clock: object,
) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a"), "b": lambda: make_server("b")})
    policy = BackoffPolicy(initial=1.0, jitter=0.0, intensity=3, period=60.0)
    async with host(upstreams, {"a": config("a"), "b": config("b")}, backoff=policy) as manager:
        await manager.connect_all()
        upstreams.kill("a")
        await upstreams.sessions["a"].wait_exited()
        await trio.testing.wait_all_tasks_blocked()
        down = await manager.status_of("a")
        assert down.state == "reconnecting"
        assert "session ended" in (down.last_error or "")
        assert [t.server for t in await manager.all_tools()] == ["b"]
        # The other server is untouched.
        assert (await manager.call_tool("mcp__b__echo", {"text": "x"}))["content"]
        await trio.sleep(1.5)
        again = await manager.status_of("a")
        assert (again.state, again.restarts, again.tools) == ("connected", 1, 1)
        assert upstreams.opened == {"a": 2, "b": 1}


async def test_a_server_that_keeps_failing_is_given_up_until_reconnected(
    autojump_clock: object,
) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")}, refuse={"a"})
    policy = BackoffPolicy(initial=1.0, jitter=0.0, intensity=2, period=60.0)
    async with host(upstreams, {"a": config("a")}, backoff=policy) as manager:
        first = await manager.connect("a")
        assert first.state == "reconnecting"
        assert "connection refused" in (first.last_error or "")
        await trio.sleep(10)
        failed = await manager.status_of("a")
        assert failed.state == "failed"
        with pytest.raises(
            NotConnected, match=r"(?s)not connected.*connection refused.*/mcp connect a"
        ):
            await manager.get_connection("a")
        upstreams.refuse.clear()
        assert (await manager.reconnect("a")).state == "connected"


async def test_reload_touches_only_what_changed() -> None:
    upstreams = Upstreams(
        {name: (lambda n=name: make_server(n)) for name in ("same", "changed", "removed", "added")}
    )
    before = {name: config(name) for name in ("same", "changed", "removed")}
    async with host(upstreams, before) as manager:
        await manager.connect_all()
        after = {
            "same": config("same"),
            "changed": config("changed", args=("--new",)),
            "added": config("added"),
        }
        diff = await manager.reload(after)
        assert diff == {
            "added": {"added"},
            "removed": {"removed"},
            "changed": {"changed"},
            "unchanged": {"same"},
        }
        assert upstreams.opened == {"same": 1, "changed": 2, "removed": 1, "added": 1}
        assert await manager.list_connections() == ["added", "changed", "same"]


async def test_permission_rules_guard_calls() -> None:
    upstreams = Upstreams({"a": lambda: make_server("a", ("read", "delete"))})
    rules = PermissionPolicy(rules=[PermissionRule(pattern="*delete*", dangerous=True)])
    async with host(upstreams, {"a": config("a")}, permissions=rules) as manager:
        await manager.connect("a")
        assert (await manager.call_tool("mcp__a__read", {"text": "x"}))["content"]
        with pytest.raises(ToolCallDenied, match="no one to ask"):
            await manager.call_tool("mcp__a__delete", {"text": "x"})


async def test_tools_the_entry_always_allows_are_called_without_asking() -> None:
    def destructive() -> MCPServer:
        server = make_server("a", ("read",))
        for tool in ("wipe", "drop"):

            def gone(text: str, _tool: str = tool) -> str:
                return f"{_tool}: {text} gone"

            hint = ToolAnnotations(destructive_hint=True)
            server.add_tool(gone, name=tool, annotations=hint)
        return server

    upstreams = Upstreams({"a": destructive})
    servers = {"a": config("a", always_allow=("wipe",))}
    deny_drop = PermissionPolicy(rules=[PermissionRule(pattern="*drop*", action="deny")])
    async with host(upstreams, servers, permissions=deny_drop) as manager:
        await manager.connect("a")
        wiped = await manager.call_tool("mcp__a__wipe", {"text": "x"})
        assert wiped["content"] == [{"type": "text", "text": "wipe: x gone"}]
        # Listed or not, a rule that denies still denies; asking is all the list skips.
        await manager.reload({"a": config("a", always_allow=("wipe", "drop"))})
        await manager.connect("a")
        with pytest.raises(ToolCallDenied, match="rule '\\*drop\\*'"):
            await manager.call_tool("mcp__a__drop", {"text": "x"})
        # The list is read at each call: the reloaded configuration's list is the one in force.
        await manager.reload({"a": config("a")})
        await manager.connect("a")
        with pytest.raises(ToolCallDenied, match="marks it destructive"):
            await manager.call_tool("mcp__a__wipe", {"text": "x"})


async def test_state_is_saved_and_restored(tmp_path: Path) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a"), "b": lambda: make_server("b")})
    servers = {"a": config("a"), "b": config("b", auto_connect=False)}
    state = tmp_path / "host-state.json"
    async with host(upstreams, servers) as manager:
        await manager.connect("b")
        await manager.save_state(state)
    assert '"b"' in state.read_text()
    async with host(upstreams, servers) as manager:
        restored = await manager.restore_state(state)
        assert [s.name for s in restored] == ["b"]
        assert await manager.list_connections() == ["b"]
        assert await manager.restore_state(tmp_path / "missing.json") == []


def test_only_failures_no_retry_can_cure_are_permanent() -> None:
    missing = CommandNotFound("not found", server="a", command=["a"], searched=[])
    assert permanent(missing)
    assert permanent(CommandNotExecutable("no x bit", server="a", command=["a"]))
    assert permanent(ConfigError("${TOKEN} is not set"))
    # A connector's nursery wraps the launch error with what it brought down.
    assert permanent(ExceptionGroup("", [ConnectionError("pipe closed"), missing]))
    exited = ServerExited(
        "exited",
        server="a",
        command=["a"],
        returncode=1,
        signal=None,
        stderr_tail=(),
        during="start",
    )
    assert not permanent(exited)
    assert not permanent(ConnectionRefusedError("refused"))
    assert not permanent(ExceptionGroup("", [ConnectionError("reset")]))


async def test_a_command_that_is_not_installed_fails_at_once(autojump_clock: object) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")}, missing={"a"})
    policy = BackoffPolicy(initial=1.0, jitter=0.0, intensity=5, period=60.0)
    async with host(upstreams, {"a": config("a")}, backoff=policy) as manager:
        status = await manager.connect("a")
        assert (status.state, status.restarts) == ("failed", 0)
        assert 'command "a-bin" was not found' in (status.last_error or "")
        assert trio.current_time() == 0
        # Nothing is retried in the background: the same failure would come back.
        await trio.sleep(120)
        assert (await manager.wait_connected("a")).state == "failed"
        assert upstreams.attempts == {"a": 1}
        # Installed now: reconnecting by hand works at once.
        upstreams.missing.clear()
        assert (await manager.reconnect("a")).state == "connected"


async def test_wait_connected_waits_through_the_retries(autojump_clock: object) -> None:
    upstreams = Upstreams(
        {"flaky": lambda: make_server("flaky"), "dead": lambda: make_server("dead")},
        failing_starts={"flaky": 1},
        refuse={"dead"},
    )
    policy = BackoffPolicy(initial=1.0, jitter=0.0, intensity=2, period=60.0)
    servers = {"flaky": config("flaky"), "dead": config("dead")}
    async with host(upstreams, servers, backoff=policy) as manager:
        first = await manager.connect_all()
        # The first attempt's outcome is transient for both...
        assert [s.state for s in first] == ["reconnecting", "reconnecting"]
        # ...the verdict comes after the retries: flaky is up at t=1 (its first delay).
        flaky = await manager.wait_connected("flaky")
        assert (flaky.state, flaky.restarts, trio.current_time()) == ("connected", 1, 1.0)
        # dead failed at t=0, 1 and 1+2: the third failure is over the intensity of 2.
        dead = await manager.wait_connected("dead")
        assert (dead.state, dead.restarts, trio.current_time()) == ("failed", 2, 3.0)
        assert "connection refused" in (dead.last_error or "")
        assert upstreams.attempts == {"flaky": 2, "dead": 3}


async def test_a_caller_that_saw_the_loss_never_then_reads_connected(
    autojump_clock: object,
) -> None:
    # The caller's request fails with ConnectionLost in its own task; here the connection
    # itself notices only a second later (its wait_closed lags), as a busy host may.
    noticed = trio.Event()
    attempts: list[int] = []

    class Dying:
        async def list_all(self, kind: CatalogKind) -> list[Mapping[str, Any]]:
            return [{"name": "work", "inputSchema": {"type": "object"}}] if kind == "tools" else []

        async def call_tool(self, name: str, arguments: Any, *, on_progress: Any = None) -> Any:
            if len(attempts) > 1:
                return {"content": [{"type": "text", "text": "fine"}]}
            raise ConnectionLost("the server exited", method="tools/call")

        async def wait_closed(self) -> BaseException | None:
            if len(attempts) > 1:
                await trio.sleep_forever()
            await noticed.wait()
            return ConnectionError("the server exited")

    @asynccontextmanager
    async def connector(
        config: ServerConfig, on_list_changed: Callable[[CatalogKind], None]
    ) -> AsyncIterator[Any]:
        attempts.append(1)
        yield Dying()

    async def notice_later() -> None:
        await trio.sleep(1.0)
        noticed.set()

    policy = BackoffPolicy(initial=0.5, jitter=0.0, intensity=3, period=60.0)
    manager = ConnectionManager(connector=connector, backoff=policy)
    async with open_supervisor([manager.spec({"x": config("x")})]), trio.open_nursery() as n:
        await manager.connect_all()
        n.start_soon(notice_later)
        with pytest.raises(ConnectionLost):
            await manager.call_tool("mcp__x__work", {})
        assert (await manager.status_of("x")).state == "reconnecting"
        again = await manager.wait_connected("x", timeout=10)
        assert (again.state, again.restarts) == ("connected", 1)
        result = await manager.call_tool("mcp__x__work", {})
        assert result["content"][0]["text"] == "fine"
        await manager.disconnect_all()
