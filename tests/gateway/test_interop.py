"""The gateway end to end: real processes, driven by the official MCP Python SDK's client.

``python -m trimcp serve --config <tmp toml>`` serves one MCP server over Streamable HTTP
(``[http] port = 0``; the URL is read from its "MCP over Streamable HTTP at <url>" line) in
front of three upstreams of ``tests/gateway/servers``:

- ``trimcp_stdio``: a trimcp ``MCPServer`` the gateway launches over stdio;
- ``trimcp_http``: a trimcp ``MCPServer`` serving Streamable HTTP on a free port, started by
  the test before the gateway (its URL goes into the gateway's config);
- ``sdk``: a server written with the official SDK (``mcp`` 2.3.0's ``MCPServer``), stdio.

The SDK's ``Client`` (anyio, run under trio as in ``tests/interop``), in its legacy mode
(MCP 2025-11-25 sessions) and, where marked with ``mode``, in its default auto mode too
(which lands on MCP 2026-07-28: per-request ``_meta``, and a backend's asks answered through
its callbacks as ``InputRequiredResult`` rounds while the gateway keeps the backend call
parked), checks the namespaced listing (``{server}__{name}``, MCP 2025-11-25 Server
Features > Tools), calls to each, progress (Basic > Utilities > Progress) and cancellation
(Basic > Utilities > Cancellation) crossing the gateway, sampling and elicitation relayed
(Client Features), an upstream killed with SIGKILL mid-call, and SIGTERM to the gateway with
calls in flight.

Isolation: HOME and XDG_CONFIG_HOME point at the test's folder, which is also the gateway's
working directory, so no user or project ``mcpServers`` file is read; ``[skills]`` is off.
Every process is stopped by its PID (the gateway also by its own process group, at the end).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.daemon_process import ChildProcess

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from mcp.client.session import ClientRequestContext

SERVERS = Path(__file__).with_name("servers")
REPO = Path(__file__).resolve().parents[2]
UPSTREAMS = ("trimcp_stdio", "trimcp_http", "sdk")
CHILDREN = ("trimcp_stdio", "sdk")  # the upstreams the gateway launches itself
TOOLS = {"pid", "echo", "count", "wait", "nap"}
TRIMCP_ONLY = {"ask", "greet"}  # the tools only the trimcp upstreams have
TRIMCP = ("trimcp_stdio", "trimcp_http")
URL_LINE = re.compile(r"MCP over Streamable HTTP at (\S+)")

pytestmark = [
    pytest.mark.slow,
    # The SDK's HTTP client leaves its own response generators to the garbage collector when
    # it closes; trio reports them as unraisable ResourceWarnings (as in tests/interop).
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


# --- processes ----------------------------------------------------------------------------


Proc = ChildProcess


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, exited but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _env(home: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "HOME": str(home),  # no user mcpServers file
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("TRIMCP_CONFIG", None)
    return env


def _toml(value: str) -> str:
    return json.dumps(value)  # a TOML basic string for these paths and URLs


@dataclass
class Stack:
    """The HTTP upstream, the gateway over all three upstreams, and the upstream PIDs seen."""

    http: Proc
    gateway: Proc
    url: str
    markers: Path
    pids: set[int] = field(default_factory=set)

    def marker(self, name: str) -> str:
        return str(self.markers / name)

    def stop(self) -> None:
        """Stop the gateway (it stops its children), the HTTP upstream; kill any PID left."""
        self.gateway.stop()
        self.http.stop()
        for pid in self.pids:
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def start_stack(folder: Path, stop_timeout: float = 10.0) -> Stack:
    """Start the trimcp HTTP upstream, then the gateway whose config names its URL."""
    folder.mkdir(parents=True, exist_ok=True)
    markers = folder / "markers"
    markers.mkdir(exist_ok=True)
    env = _env(folder)
    python = _toml(sys.executable)
    http = Proc([sys.executable, str(SERVERS / "trimcp_http.py")], folder, env)
    try:
        http_url = http.wait_for(URL_LINE).group(1)
        config = folder / "sys_config.toml"
        config.write_text(
            f"[application]\nstop_timeout = {stop_timeout}\n\n"
            "[http]\nenabled = true\nport = 0\n\n"
            "[skills]\nenabled = false\n\n"
            "[upstreams.trimcp_stdio]\n"
            f"command = {python}\nargs = [{_toml(str(SERVERS / 'trimcp_stdio.py'))}]\n\n"
            f"[upstreams.trimcp_http]\nurl = {_toml(http_url)}\n\n"
            "[upstreams.sdk]\n"
            f"command = {python}\nargs = [{_toml(str(SERVERS / 'sdk_stdio.py'))}]\n",
            encoding="utf-8",
        )
        gateway = Proc(
            [sys.executable, "-m", "trimcp", "serve", "--config", str(config)], folder, env
        )
    except BaseException:
        http.stop()
        raise
    try:
        url = gateway.wait_for(URL_LINE).group(1)
    except BaseException:
        gateway.stop()
        http.stop()
        raise
    return Stack(http=http, gateway=gateway, url=url, markers=markers)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One gateway for the tests that leave it as they found it."""
    stack = start_stack(tmp_path_factory.mktemp("interop"))
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def own(tmp_path: Path) -> Iterator[Stack]:
    """A gateway of the test's own, for the tests that kill or stop something."""
    stack = start_stack(tmp_path)
    try:
        yield stack
    finally:
        stack.stop()


# --- the SDK client -----------------------------------------------------------------------


#: The SDK client's modes: the 2025-11-25 handshake, and its default (2026-07-28 here).
MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def run(stack: Stack, test: Callable[[Client], Awaitable[None]], **options: Any) -> None:
    """Connect the SDK's client to the gateway over Streamable HTTP and run ``test``.

    ``mode`` is the SDK's (default here: ``"legacy"``, MCP 2025-11-25).
    """
    mode = options.setdefault("mode", "legacy")

    async def main() -> None:
        async with Client(
            streamable_http_client(stack.url), read_timeout_seconds=20, **options
        ) as client:
            assert client.protocol_version == PROTOCOL[mode]
            await settled(client)
            with anyio.fail_after(60):
                await test(client)

    try:
        anyio.run(main, backend="trio")
    except BaseException:
        sys.stderr.write("--- gateway stderr ---\n" + stack.gateway.log())
        raise


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def tool_names(client: Client) -> set[str]:
    """Every tool name the gateway lists now (all pages, never the SDK's cache)."""
    names: set[str] = set()
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        names.update(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return names


async def settled(client: Client) -> None:
    """Wait (bounded) until every upstream's tools are listed.

    The gateway listens before its upstreams are connected: each one's tools join the list
    as it connects (with ``list_changed``), so a test that starts at once polls first.
    """
    wanted = {f"{upstream}__echo" for upstream in UPSTREAMS}
    with anyio.fail_after(20):
        while not wanted <= await tool_names(client):  # noqa: ASYNC110  (polling the server)
            await anyio.sleep(0.05)


async def call(client: Client, name: str, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool(name, arguments)


async def upstream_pid(stack: Stack, client: Client, upstream: str) -> int:
    result = await call(client, f"{upstream}__pid")
    assert not result.is_error, text_of(result)
    pid = int(text_of(result))
    stack.pids.add(pid)
    return pid


async def wait_file(path: Path, timeout: float = 10.0) -> None:
    """Poll (bounded) for a marker file an upstream tool writes (no event crosses processes)."""
    with anyio.fail_after(timeout):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110
            await anyio.sleep(0.01)


# --- listing and calls --------------------------------------------------------------------


def test_tools_of_all_three_upstreams_are_listed_namespaced(shared: Stack) -> None:
    async def body(client: Client) -> None:
        names = await tool_names(client)
        expected = {f"{upstream}__{tool}" for upstream in UPSTREAMS for tool in TOOLS}
        expected |= {f"{upstream}__{tool}" for upstream in TRIMCP for tool in TRIMCP_ONLY}
        assert names == expected

    run(shared, body)


@MODES
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_call_reaches_its_upstream(shared: Stack, upstream: str, mode: str) -> None:
    server_name = {"trimcp_stdio": "trimcp-stdio", "trimcp_http": "trimcp-http", "sdk": "sdk-stdio"}

    async def body(client: Client) -> None:
        result = await call(client, f"{upstream}__echo", text="hello")
        assert not result.is_error, text_of(result)
        assert text_of(result) == f"{server_name[upstream]}: hello"
        pid = await upstream_pid(shared, client, upstream)
        assert pid != shared.gateway.pid

    run(shared, body, mode=mode)


def test_an_unknown_tool_is_an_error_not_a_hang(shared: Stack) -> None:
    async def body(client: Client) -> None:
        # A protocol error, -32602 (2025-11-25, Server Features > Tools > Error Handling).
        with anyio.fail_after(5), pytest.raises(MCPError, match="nobody__echo"):
            await call(client, "nobody__echo", text="x")
        # The session goes on.
        assert not (await call(client, "sdk__echo", text="x")).is_error

    run(shared, body)


# --- progress and cancellation ------------------------------------------------------------


@MODES
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_progress_from_the_upstream_reaches_the_sdk_client(
    shared: Stack, upstream: str, mode: str
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def body(client: Client) -> None:
        result = await client.call_tool(
            f"{upstream}__count", {"steps": 3}, progress_callback=on_progress
        )
        assert not result.is_error, text_of(result)
        assert text_of(result) == "counted 3"

    run(shared, body, mode=mode)
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@MODES
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_cancellation_reaches_the_upstream(shared: Stack, upstream: str, mode: str) -> None:
    marker = Path(shared.marker(f"cancel-{upstream}-{mode}"))
    started = marker.with_name(marker.name + ".started")
    cancelled = marker.with_name(marker.name + ".cancelled")

    async def body(client: Client) -> None:
        async with anyio.create_task_group() as group:

            async def waiting() -> None:
                await call(client, f"{upstream}__wait", marker=str(marker))

            group.start_soon(waiting)
            await wait_file(started)
            # Cancelling the SDK's call sends notifications/cancelled to the gateway, which
            # must send its own to the upstream: the tool's cancel scope fires there.
            group.cancel_scope.cancel()
        await wait_file(cancelled)
        # The session is still good.
        result = await call(client, f"{upstream}__echo", text="still here")
        assert text_of(result).endswith("still here")

    run(shared, body, mode=mode)
    assert cancelled.exists()


# --- sampling -----------------------------------------------------------------------------


@MODES
def test_sampling_is_relayed_to_the_client_whose_call_asked(shared: Stack, mode: str) -> None:
    asked: list[types.CreateMessageRequestParams] = []

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="forty-two"),
            model="test-model",
            stop_reason="endTurn",
        )

    texts: list[str] = []

    async def body(client: Client) -> None:
        result = await call(client, "trimcp_stdio__ask", prompt="the answer?")
        texts.append(text_of(result))

    run(shared, body, sampling_callback=sampling, mode=mode)
    (text,) = texts
    assert text == "model said: forty-two"
    (params,) = asked
    assert params.max_tokens == 50
    (message,) = params.messages
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "the answer?"


@MODES
@pytest.mark.parametrize("upstream", TRIMCP)
def test_elicitation_reaches_the_sdk_client_s_callback(
    shared: Stack, upstream: str, mode: str
) -> None:
    """A backend's ``ctx.elicit`` during the call, answered by the SDK's callback.

    In auto mode the gateway answers the call with an ``InputRequiredResult`` and keeps the
    backend call parked; the SDK asks its callback and retries with the answer and the
    ``requestState``, and the backend's result comes back on the retry.
    """
    asked: list[str] = []

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def body(client: Client) -> None:
        result = await call(client, f"{upstream}__greet")
        assert not result.is_error, text_of(result)
        assert text_of(result) == "hello Ada"

    run(shared, body, elicitation_callback=elicitation, mode=mode)
    assert asked == ["What is your name?"]


# --- an upstream killed mid-call ----------------------------------------------------------


@pytest.mark.parametrize("upstream", CHILDREN)
def test_an_upstream_killed_mid_call_fails_the_call_and_comes_back(
    own: Stack, upstream: str
) -> None:
    changes: list[float] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.append(time.monotonic())

    marker = Path(own.marker(f"kill-{upstream}"))
    kill_time = [float("inf")]

    async def body(client: Client) -> None:
        first = await upstream_pid(own, client, upstream)
        results: list[types.CallToolResult] = []
        answered = anyio.Event()
        async with anyio.create_task_group() as group:

            async def waiting() -> None:
                results.append(await call(client, f"{upstream}__wait", marker=str(marker)))
                answered.set()

            group.start_soon(waiting)
            await wait_file(marker.with_name(marker.name + ".started"))
            os.kill(first, signal.SIGKILL)
            killed = kill_time[0] = time.monotonic()
            with anyio.fail_after(1):  # never a hang
                await answered.wait()
            assert time.monotonic() - killed < 1
        (result,) = results
        assert result.is_error, text_of(result)
        # It names the upstream and what happened to it.
        assert f"MCP server {upstream!r} failed" in text_of(result)
        assert "SIGKILL" in text_of(result)

        # Back after the supervisor's backoff (0.5 s at first): poll with a deadline.
        async def restarted() -> int | None:
            """The upstream's new PID once its tools are back, else None."""
            if f"{upstream}__pid" not in await tool_names(client):
                return None
            try:
                again = await call(client, f"{upstream}__pid")
            except MCPError:  # listed just before its tools went: not back yet
                return None
            pid = None if again.is_error else int(text_of(again))
            return None if pid == first else pid

        with anyio.fail_after(15):
            while (second := await restarted()) is None:  # noqa: ASYNC110  (polling the server)
                await anyio.sleep(0.05)
        own.pids.add(second)
        assert not alive(first)
        # The same session goes on: every upstream answers.
        for other in UPSTREAMS:
            echoed = await call(client, f"{other}__echo", text="after")
            assert not echoed.is_error, text_of(echoed)
        assert await tool_names(client) >= {f"{name}__echo" for name in UPSTREAMS}

    run(own, body, message_handler=on_message)
    # Its tools went (list_changed) and came back (list_changed): all the session noticed.
    after = [moment - kill_time[0] for moment in changes if moment > kill_time[0]]
    assert len(after) >= 2, after


# --- SIGTERM with calls in flight ---------------------------------------------------------


def test_sigterm_with_calls_in_flight_completes_them_exits_0_and_leaves_no_child(
    own: Stack,
) -> None:
    results: dict[str, types.CallToolResult] = {}
    children: dict[str, int] = {}

    async def body(client: Client) -> None:
        for upstream in CHILDREN:
            children[upstream] = await upstream_pid(own, client, upstream)
        # A call in flight on each upstream, the HTTP one (not the gateway's child) too.
        async with anyio.create_task_group() as group:

            async def napping(upstream: str) -> None:
                marker = own.marker(f"nap-{upstream}")
                results[upstream] = await call(
                    client, f"{upstream}__nap", seconds=1.5, marker=marker
                )

            for upstream in UPSTREAMS:
                group.start_soon(napping, upstream)
            for upstream in UPSTREAMS:
                await wait_file(own.markers / f"nap-{upstream}.started")
            os.kill(own.gateway.pid, signal.SIGTERM)
        code = await anyio.to_thread.run_sync(lambda: own.gateway.process.wait(15))
        assert code == 0, own.gateway.log()

    run(own, body)
    for upstream in UPSTREAMS:
        result = results[upstream]
        assert not result.is_error, text_of(result)
        assert text_of(result) == "slept 1.5 s"
    left = {name: pid for name, pid in children.items() if alive(pid)}
    assert not left, f"upstream processes left after the gateway exited: {left}"
