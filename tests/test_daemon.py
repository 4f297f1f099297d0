"""The daemon: signal handling, loading the server, its listeners, and ``trimcp serve``.

In-process tests send real signals to this process (pytest runs trio in the main thread, so
trio's signal receiver gets them) and use the autojump clock for the stop deadline.
``load_server`` and ``daemon_children`` are tested on modules written to ``tmp_path``. The
subprocess tests start ``python -m trimcp serve`` and stop it with SIGTERM/SIGINT; the ones
serving MCP read the listener's URL (port 0) from its log on stderr.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import orjson
import pytest
import trio

from trimcp.actors import Actor, ExitReason, whereis
from trimcp.client import ClientConfig, ServerConfig
from trimcp.config import (
    HttpSettings,
    ServerSettings,
    SessionSettings,
    StdioSettings,
    SysConfig,
    WebSocketSettings,
    load_config,
    validate_config,
)
from trimcp.config._settings import ApplicationSettings
from trimcp.daemon import build_daemon, check_config, daemon_children, load_server, restart_needed
from trimcp.errors import ConfigError, TransportBroken, TransportClosed
from trimcp.notify import TOOLS_LIST_CHANGED
from trimcp.server import MCPServer
from trimcp.supervision import (
    Application,
    ChildSpec,
    open_application,
    run_application,
    which_children,
)
from trimcp.transports import CloseCode, SSEDecoder, open_websocket_stream

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from trio.testing import MockClock

REPO = Path(__file__).resolve().parent.parent
EVERYTHING = "examples.everything_server:build_server"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "daemon-test", "version": "1"},
    },
}


class Recorder(Actor):
    """Records terminate calls; its terminate takes ``linger`` seconds."""

    def __init__(self, log: list[tuple[str, float]], tag: str, linger: float = 0.0) -> None:
        self.log = log
        self.tag = tag
        self.linger = linger

    async def terminate(self, reason: ExitReason) -> None:
        self.log.append((f"{self.tag} terminating: {reason}", trio.current_time()))
        await trio.sleep(self.linger)
        self.log.append((f"{self.tag} terminated", trio.current_time()))


def _specs(log: list[tuple[str, float]], linger: float = 0.0) -> list[ChildSpec]:
    return [
        ChildSpec.for_actor("first", lambda: Recorder(log, "first")),
        ChildSpec.for_actor("slow", lambda: Recorder(log, "slow", linger), shutdown=math.inf),
    ]


async def test_sigterm_stops_children_in_reverse_order(autojump_clock: MockClock) -> None:
    log: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_application(SysConfig(), children=_specs(log, 1.0)))
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert log == [
        ("slow terminating: shutdown", 0.0),
        ("slow terminated", 1.0),
        ("first terminating: shutdown", 1.0),
        ("first terminated", 1.0),
    ]


async def test_stop_timeout_kills_what_is_left(autojump_clock: MockClock) -> None:
    log: list[tuple[str, float]] = []
    config = SysConfig(application=ApplicationSettings(stop_timeout=3.0))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_application(config, children=_specs(log, 1000.0)))
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert trio.current_time() == 3.0
    assert ("slow terminating: shutdown", 0.0) in log
    assert ("slow terminated", 3.0) not in log


async def test_second_signal_cancels_everything(autojump_clock: MockClock) -> None:
    log: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_application(SysConfig(), children=_specs(log, 1000.0)))
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
        await trio.sleep(2.0)
        os.kill(os.getpid(), signal.SIGINT)
    assert trio.current_time() == pytest.approx(2.0)
    assert [entry for entry, _ in log] == ["slow terminating: shutdown"]


async def test_sighup_reloads_and_keeps_running_on_a_bad_file(tmp_path: Path) -> None:
    config_file = tmp_path / "sys_config.toml"
    config_file.write_text('[application]\nname = "before"\n', encoding="utf-8")
    reloaded: list[str] = []
    seen = trio.Event()

    async def on_reload(app: Application, config: SysConfig) -> None:
        reloaded.append(config.application.name)
        seen.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: run_application(
                load_config(config_file),
                reload_config=lambda: load_config(config_file),
                on_reload=on_reload,
            )
        )
        await trio.testing.wait_all_tasks_blocked()
        config_file.write_text('[application]\nname = "after"\n', encoding="utf-8")
        os.kill(os.getpid(), signal.SIGHUP)
        with trio.fail_after(5):
            await seen.wait()
        config_file.write_text("[application]\nname = 3\n", encoding="utf-8")
        os.kill(os.getpid(), signal.SIGHUP)
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert reloaded == ["after"]


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "trimcp", "serve", *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen[str], needle: str) -> list[str]:
    assert process.stderr is not None
    lines: list[str] = []
    for line in process.stderr:
        lines.append(line)
        if needle in line:
            return lines
    pytest.fail(f"{needle!r} never appeared; stderr was:\n{''.join(lines)}")


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_trimcp_serve_stops_cleanly(signum: int, status: int) -> None:
    # SIGINT is Ctrl-C: the same graceful stop, then the status a shell gives an interrupted
    # program (128 + 2), and no traceback.
    process = _serve("--config", "sys_config.toml")
    try:
        _wait_for_line(process, "application trimcp started")
        process.send_signal(signum)
        _, rest = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == status, rest
    assert "application trimcp stopped" in rest
    assert "Traceback" not in rest


@pytest.mark.slow
def test_trimcp_serve_refuses_a_broken_config(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[supervision]\nintensity = -1\n", encoding="utf-8")
    process = _serve("--config", str(broken))
    _, err = process.communicate(timeout=20)
    assert process.returncode == 1
    assert "supervision.intensity" in err
    assert str(broken) in err


@pytest.mark.slow
def test_trimcp_serve_sighup_rereads_the_file_and_applies_logging(tmp_path: Path) -> None:
    config_file = tmp_path / "sys_config.toml"
    config_file.write_text('[logging]\nformat = "text"\n', encoding="utf-8")
    process = _serve("--config", str(config_file))
    try:
        _wait_for_line(process, "application trimcp started")
        config_file.write_text('[logging]\nformat = "json"\n', encoding="utf-8")
        process.send_signal(signal.SIGHUP)
        lines = _wait_for_line(process, "configuration reloaded")
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    applied, reloaded = (json.loads(line)["message"] for line in lines[-2:])
    assert applied == (
        "SIGHUP: applied [logging] and application.stop_timeout; listeners are not rebound"
    )
    assert reloaded.startswith("SIGHUP: configuration reloaded from")
    assert process.returncode == 0


# --- load_server ----------------------------------------------------------------------------

_NAMES = itertools.count()

SERVER_MODULE = """\
from trimcp.server import MCPServer

server = MCPServer("from-a-file", "2.0")
number = 3

def build():
    return MCPServer("built", "1.0")

def broken():
    raise RuntimeError("no database")

async def build_async():
    return server

def build_list():
    return [server]

class Holder:
    inner = server
"""


@pytest.fixture
def write_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], str]]:
    """Return a function writing a module under tmp_path/src with a fresh name; returns it.

    sys.path is restored afterwards and the modules written are forgotten.
    """
    monkeypatch.setattr(sys, "path", sys.path[:])
    written: list[str] = []
    (tmp_path / "src").mkdir()

    def write(stem: str, text: str) -> str:
        name = f"{stem}_{next(_NAMES)}_{os.getpid()}"
        (tmp_path / "src" / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def _load(tmp_path: Path, target: str, path: tuple[str, ...] = ("src",)) -> object:
    return load_server(ServerSettings(object=target, path=path), tmp_path, file="srv.toml")


def test_load_server_instance_factory_and_nested_attribute(
    tmp_path: Path, write_module: Callable[[str, str], str]
) -> None:
    name = write_module("servers", SERVER_MODULE)
    instance = _load(tmp_path, f"{name}:server")
    assert isinstance(instance, MCPServer)
    assert instance.server_info.name == "from-a-file"
    built = _load(tmp_path, f"{name}:build")
    assert isinstance(built, MCPServer)
    assert built.server_info.name == "built"
    assert _load(tmp_path, f"{name}:Holder.inner") is instance
    assert sys.path[0] == str((tmp_path / "src").resolve())


def test_load_server_examples_everything_server() -> None:
    server = load_server(ServerSettings(object=EVERYTHING, path=(".",)), REPO)
    assert isinstance(server, MCPServer)
    assert server.server_info.name == "trimcp-everything"


def _error(tmp_path: Path, target: str, path: tuple[str, ...] = ("src",)) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, target, path)
    error = caught.value
    assert (error.file, error.key, error.given) == (
        "srv.toml",
        "server.object",
        f'"{target}" (a string)',
    )
    return error


def test_module_not_found_shows_sys_path_and_the_path_setting(
    tmp_path: Path, write_module: Callable[[str, str], str]
) -> None:
    error = _error(tmp_path, "no_such_module_here:server")
    message = str(error)
    assert error.expected == "an importable module"
    assert "no module named 'no_such_module_here' on sys.path:\n" in message
    assert f"    {(tmp_path / 'src').resolve()}\n" in message
    assert "to path in the [server] table" in message
    assert f"(relative to {tmp_path})" in message
    assert isinstance(error.__cause__, ModuleNotFoundError)


def test_missing_package_of_a_dotted_module_is_not_found(
    tmp_path: Path, write_module: Callable[[str, str], str]
) -> None:
    error = _error(tmp_path, "no_such_package_here.server:server")
    assert error.expected == "an importable module"
    assert "no module named 'no_such_package_here'" in str(error)


def test_module_whose_dependency_is_missing(
    tmp_path: Path, write_module: Callable[[str, str], str]
) -> None:
    name = write_module("needs", "import no_such_dependency_here\n")
    error = _error(tmp_path, f"{name}:server")
    assert error.expected == "a module whose imports are installed"
    message = str(error)
    assert f"importing '{name}' failed: it imports 'no_such_dependency_here'" in message
    assert "install no_such_dependency_here into the environment" in message


@pytest.mark.parametrize(
    ("text", "cause"),
    [("x = 1 / 0\n", "ZeroDivisionError: division by zero"), ("def f(:\n", "SyntaxError")],
)
def test_module_that_raises_on_import(
    tmp_path: Path, write_module: Callable[[str, str], str], text: str, cause: str
) -> None:
    name = write_module("raises", text)
    error = _error(tmp_path, f"{name}:server")
    assert error.expected == "a module that imports without errors"
    message = str(error)
    assert f"importing '{name}' raised {cause}" in message
    assert f"at {tmp_path / 'src' / name}.py:1\n" in message


@pytest.mark.parametrize(
    ("attribute", "detail", "fix"),
    [
        ("servr", "has no attribute 'servr'", 'did you mean "{name}:server"?'),
        ("zzz", "has no attribute 'zzz'", 'it holds these servers: "{name}:server"'),
        (
            "Holder.innr",
            "'{name}.Holder' has no attribute 'innr'",
            'did you mean "{name}:Holder.inner"?',
        ),
    ],
)
def test_missing_attribute_suggests_a_name(
    tmp_path: Path,
    write_module: Callable[[str, str], str],
    attribute: str,
    detail: str,
    fix: str,
) -> None:
    name = write_module("servers", SERVER_MODULE)
    error = _error(tmp_path, f"{name}:{attribute}")
    assert error.expected == "the name of an attribute of the module"
    message = str(error)
    assert detail.format(name=name) in message
    assert f"  fix:      {fix.format(name=name)}" in message


@pytest.mark.parametrize(
    ("attribute", "detail", "fix"),
    [
        ("number", " is a value of type int", "point object at the MCPServer"),
        ("MCPServer", "() raised TypeError", "the function is called with no arguments"),
        ("broken", "() raised RuntimeError: no database", "the function is called with no"),
        ("build_async", " is an async function", "make it a plain function"),
        ("build_list", "() returned a value of type list, not a server", "return the MCPServer"),
    ],
)
def test_not_a_server(
    tmp_path: Path,
    write_module: Callable[[str, str], str],
    attribute: str,
    detail: str,
    fix: str,
) -> None:
    name = write_module("servers", SERVER_MODULE)
    error = _error(tmp_path, f"{name}:{attribute}")
    assert error.expected == "an MCPServer, or a function of no arguments returning one"
    message = str(error)
    assert f"{name}:{attribute}{detail}" in message
    assert f"  fix:      {fix}" in message


def test_a_factory_error_is_chained_and_located(
    tmp_path: Path, write_module: Callable[[str, str], str]
) -> None:
    name = write_module("servers", SERVER_MODULE)
    error = _error(tmp_path, f"{name}:broken")
    assert isinstance(error.__cause__, RuntimeError)
    assert f"at {tmp_path / 'src' / name}.py:10\n" in str(error)


def test_a_malformed_object_is_refused_before_importing(tmp_path: Path) -> None:
    error = _error(tmp_path, "no_colon_here", path=())
    assert error.expected == 'a string of the form "package.module:attribute"'


# --- check_config, daemon_children, restart_needed --------------------------------------------


@pytest.mark.parametrize(
    ("table", "data", "key", "expected"),
    [
        (
            "http",
            {"allowed_hosts": ["localhost:*", "a b"]},
            "http.allowed_hosts[1]",
            "a host pattern",
        ),
        ("http", {"allowed_origins": ["ftp//x"]}, "http.allowed_origins[0]", "an origin pattern"),
        ("websocket", {"allowed_hosts": ["[::1"]}, "websocket.allowed_hosts[0]", "a host pattern"),
        ("websocket", {"allowed_origins": ["1x://a"]}, "websocket.allowed_origins[0]", "an origin"),
    ],
)
def test_a_malformed_pattern_is_a_config_error_naming_the_key(
    tmp_path: Path, table: str, data: dict[str, list[str]], key: str, expected: str
) -> None:
    main_file = tmp_path / "main.toml"
    more = tmp_path / "more.toml"
    main_file.write_text('include = ["more.toml"]\n', encoding="utf-8")
    ((key_name, patterns),) = data.items()
    more.write_text(f"[{table}]\n{key_name} = {json.dumps(patterns)}\n", encoding="utf-8")
    config = load_config(main_file)
    with pytest.raises(ConfigError) as caught:
        check_config(config)
    error = caught.value
    assert (error.file, error.key) == (str(more), key)
    assert error.expected is not None
    assert error.expected.startswith(expected)
    assert "malformed" in str(error)
    assert isinstance(error.__cause__, ValueError)


def test_star_and_null_are_accepted_patterns() -> None:
    check_config(
        validate_config({"http": {"allowed_hosts": ["*"], "allowed_origins": ["null", "*"]}})
    )


def test_no_server_means_no_children() -> None:
    assert daemon_children(SysConfig()) == []


def test_children_follow_the_enabled_listeners(caplog: pytest.LogCaptureFixture) -> None:
    server = ServerSettings(object=EVERYTHING, path=(str(REPO),))
    config = SysConfig(
        server=server,
        http=HttpSettings(enabled=True),
        websocket=WebSocketSettings(enabled=True),
        stdio=StdioSettings(enabled=True),
    )
    with caplog.at_level("INFO", logger="trimcp.daemon"):
        assert [child.id for child in daemon_children(config)] == [
            "notifications",
            "http",
            "websocket",
            "stdio",
        ]
    assert (
        f"serving trimcp-everything 1.0.0 ({EVERYTHING}) over http, websocket, stdio" in caplog.text
    )
    assert [child.id for child in daemon_children(SysConfig(server=server))] == []
    assert "is loaded but not served" in caplog.text


@pytest.mark.slow
async def test_websocket_listener_keeps_to_max_sessions(caplog: pytest.LogCaptureFixture) -> None:
    config = SysConfig(
        server=ServerSettings(object=EVERYTHING, path=(str(REPO),)),
        websocket=WebSocketSettings(enabled=True, port=0),
        sessions=SessionSettings(max_sessions=1),
    )
    caplog.set_level("INFO")
    async with open_application(config, children=daemon_children(config)):
        match = re.search(r"serving MCP over WebSocket at (\S+)", caplog.text)
        assert match is not None
        with trio.fail_after(10):
            async with open_websocket_stream(match.group(1)) as first:
                await first.send_message(orjson.dumps(INITIALIZE))
                assert orjson.loads(await first.receive_message())["id"] == 1
                async with open_websocket_stream(match.group(1)) as second:
                    with pytest.raises(TransportBroken, match="1013 TRY_AGAIN_LATER"):
                        await second.receive_message()
                    assert second.close_code == CloseCode.TRY_AGAIN_LATER


@pytest.mark.slow
async def test_the_hub_starts_before_the_listeners_and_carries_the_servers_notifications(
    tmp_path: Path, write_module: Callable[[str, str], str]
) -> None:
    name = write_module("hubbed", SERVER_MODULE)
    config = SysConfig(
        server=ServerSettings(object=f"{name}:server", path=(str(tmp_path / "src"),)),
        http=HttpSettings(enabled=True, port=0),
    )
    server = _load(tmp_path, f"{name}:server")
    assert isinstance(server, MCPServer)
    async with open_application(config, children=daemon_children(config)) as app:
        children = await which_children(app.supervisor)
        assert [child.id for child in children] == ["notifications", "http"]
        hub = server.notification_hub
        assert hub is not None
        assert hub.name == "notify"
        assert whereis("notify") is not None
        assert whereis(f"notify.topic:{TOOLS_LIST_CHANGED}") is not None
    assert server.notification_hub is None


def test_restart_needed_names_the_tables_a_reload_does_not_apply() -> None:
    running = SysConfig()
    reloaded = validate_config(
        {
            "logging": {"level": "DEBUG"},
            "application": {"stop_timeout": 1.0},
            "http": {"port": 9000},
            "sessions": {"max_sessions": 3},
        }
    )
    assert restart_needed(running, reloaded) == ["[http]", "[sessions]"]
    renamed = validate_config({"application": {"name": "other"}})
    assert restart_needed(running, renamed) == ["application.name"]
    assert restart_needed(running, SysConfig()) == []


# --- trimcp serve, serving MCP ----------------------------------------------------------------

STOP_TIMEOUT = 10.0


def _serving_config(tmp_path: Path, listeners: str) -> Path:
    path = tmp_path / "sys_config.toml"
    path.write_text(
        f"[application]\nstop_timeout = {STOP_TIMEOUT}\n\n"
        f"[server]\nobject = {json.dumps(EVERYTHING)}\npath = [{json.dumps(str(REPO))}]\n\n"
        + textwrap.dedent(listeners),
        encoding="utf-8",
    )
    return path


def _url_from_log(process: subprocess.Popen[str], needle: str) -> str:
    line = _wait_for_line(process, needle)[-1]
    match = re.search(re.escape(needle) + r"(\S+)", line)
    assert match is not None, line
    return match.group(1)


def _stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM the daemon; return the rest of its stderr once it exited cleanly in time."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, rest = process.communicate(timeout=STOP_TIMEOUT + 5)
    assert time.monotonic() - started < STOP_TIMEOUT
    assert process.returncode == 0, rest
    assert "application trimcp stopped" in rest
    return rest


def _messages(answer: httpx.Response) -> list[dict[str, object]]:
    """Return the JSON-RPC messages of a POST's answer, a JSON body or an SSE stream."""
    if answer.headers["content-type"].startswith("application/json"):
        return [orjson.loads(answer.content)]
    decoder = SSEDecoder()
    events = decoder.feed(answer.content) + decoder.feed_eof()
    return [orjson.loads(event.data) for event in events if event.data]


@pytest.mark.slow
def test_trimcp_serve_over_http(tmp_path: Path) -> None:
    config = _serving_config(tmp_path, "[http]\nenabled = true\nport = 0\n")
    process = _serve("--config", str(config))
    try:
        url = _url_from_log(process, "MCP over Streamable HTTP at ")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        with httpx.Client(timeout=10) as client:
            answer = client.post(
                url,
                json=INITIALIZE,
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert answer.status_code == 200
            session = answer.headers["mcp-session-id"]
            (reply,) = _messages(answer)
            assert reply["id"] == 1
            result = reply["result"]
            assert isinstance(result, dict)
            assert result["serverInfo"]["name"] == "trimcp-everything"
            assert result["protocolVersion"] == "2025-11-25"
            ended = client.delete(
                url, headers={"MCP-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            )
            assert ended.status_code == 200
        _stop(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def _initialize_then_stop(url: str, process: subprocess.Popen[str]) -> int | None:
    """Initialize over WebSocket, SIGTERM the daemon while connected; return the close code."""
    with trio.fail_after(10):
        async with open_websocket_stream(url) as stream:
            await stream.send_message(orjson.dumps(INITIALIZE))
            reply = orjson.loads(await stream.receive_message())
            assert reply["id"] == 1
            assert reply["result"]["serverInfo"]["name"] == "trimcp-everything"
            process.send_signal(signal.SIGTERM)
            with pytest.raises(TransportClosed, match="1001 GOING_AWAY"):
                await stream.receive_message()
            return stream.close_code


@pytest.mark.slow
def test_trimcp_serve_over_websocket(tmp_path: Path) -> None:
    config = _serving_config(tmp_path, "[websocket]\nenabled = true\nport = 0\n")
    process = _serve("--config", str(config))
    try:
        url = _url_from_log(process, "serving MCP over WebSocket at ")
        assert re.fullmatch(r"ws://127\.0\.0\.1:\d+/mcp/ws", url)
        started = time.monotonic()
        assert trio.run(_initialize_then_stop, url, process) == CloseCode.GOING_AWAY
        _, rest = process.communicate(timeout=STOP_TIMEOUT + 5)
        assert time.monotonic() - started < STOP_TIMEOUT
        assert process.returncode == 0, rest
        assert "application trimcp stopped" in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_trimcp_serve_over_stdio_stops_when_stdin_closes(tmp_path: Path) -> None:
    config = _serving_config(tmp_path, "[stdio]\nenabled = true\n")
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        },
    ]
    result = subprocess.run(
        [sys.executable, "-m", "trimcp", "serve", "--config", str(config)],
        cwd=REPO,
        input="".join(json.dumps(message) + "\n" for message in messages),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert "stdin closed: stopping trimcp" in result.stderr
    assert "application trimcp stopped" in result.stderr


@pytest.mark.slow
def test_trimcp_serve_refuses_a_server_it_cannot_load(tmp_path: Path) -> None:
    config = tmp_path / "sys_config.toml"
    config.write_text(
        '[server]\nobject = "no_such_module_here:server"\n[http]\nenabled = true\n',
        encoding="utf-8",
    )
    process = _serve("--config", str(config))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert f"config error in {config}\n" in err
    assert "no module named 'no_such_module_here'" in err


@pytest.mark.slow
@pytest.mark.parametrize("table", ["http", "websocket"])
def test_trimcp_serve_on_a_taken_port_names_it_and_the_setting(tmp_path: Path, table: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = _serving_config(tmp_path, f"[{table}]\nenabled = true\nport = {port}\n")
        process = _serve("--config", str(config))
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.splitlines()[-1] == (
        f"trimcp serve: cannot listen on 127.0.0.1:{port}: Address already in use; stop what"
        f" uses that port, or choose another: [{table}] port in {config}"
    )
    assert "Traceback" not in err


@pytest.mark.slow
def test_trimcp_serve_applies_the_http_connection_settings(tmp_path: Path) -> None:
    listener = (
        "[http]\nenabled = true\nport = 0\nmax_connections = 2\n"
        "head_timeout = 0.5\nbody_timeout = 1.0\n"
    )
    process = _serve("--config", str(_serving_config(tmp_path, listener)))
    try:
        url = httpx.URL(_url_from_log(process, "MCP over Streamable HTTP at "))
        address = (url.host, url.port or 80)
        # Two connections in a request (their bodies awaited after "100 Continue") fill the
        # limit of two; a third is closed at once, since neither is idle.
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            "Content-Length: 100\r\nExpect: 100-continue\r\n\r\n"
        ).encode()
        busy = [socket.create_connection(address, timeout=10) for _ in range(2)]
        for connection in busy:
            connection.sendall(head)
            assert connection.recv(100).startswith(b"HTTP/1.1 100 Continue")
        with socket.create_connection(address, timeout=10) as third:
            assert third.recv(100) == b""
        _wait_for_line(process, "none is idle")
        # A body that never comes gets 408 once body_timeout (here 1 s) has passed.
        for connection in busy:
            with connection:
                assert connection.recv(100).startswith(b"HTTP/1.1 408 ")
        # With both gone, a newcomer is served again (once their ends are noticed), and the
        # log says how many were turned away.
        with httpx.Client(timeout=10) as client:
            for _ in range(100):
                with contextlib.suppress(httpx.TransportError):
                    assert client.get(str(url)).status_code in (400, 405, 406)
                    break
                time.sleep(0.05)
        _wait_for_line(process, "1 were closed at the limit of 2")
        # A head that never ends gets 408 after head_timeout.
        with socket.create_connection(address, timeout=10) as slow:
            slow.sendall(b"POST /mcp HTTP/1.1\r\n")
            assert slow.recv(100).startswith(b"HTTP/1.1 408 ")
        _stop(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# --- Daemon.reload: SIGHUP re-reads the upstreams and [gateway] -------------------------------


@pytest.fixture
def no_user_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home, XDG folder and working directory with no mcpServers file; returns the folder."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _upstreams_file(path: Path, *names: str, namespace: str = "{server}__{name}") -> Path:
    # Commands that do not exist: the connections fail at once and no process is started.
    tables = "".join(
        f'[upstreams.{name}]\ncommand = ["/nonexistent/trimcp-test-{name}"]\n\n' for name in names
    )
    path.write_text(
        f"[http]\nenabled = true\nport = 0\n\n[skills]\nenabled = false\n\n"
        f'[gateway]\nnamespace = "{namespace}"\n\n{tables}',
        encoding="utf-8",
    )
    return path


def test_build_daemon_keeps_the_gateway_it_serves() -> None:
    config = SysConfig(http=HttpSettings(enabled=True, port=0))
    upstreams = ClientConfig(
        servers={"a": ServerConfig(name="a", transport="stdio", command="/nonexistent")}
    )
    daemon = build_daemon(config, upstreams=upstreams)
    assert [child.id for child in daemon.children] == ["gateway", "http"]
    assert daemon.gateway is not None
    assert daemon.gateway.backends == ("a",)
    # Nothing served: nothing to reload.
    assert build_daemon(SysConfig(), upstreams=upstreams).gateway is None


async def test_a_reload_applies_the_re_read_upstreams_and_gateway_settings(
    no_user_files: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _upstreams_file(no_user_files / "sys_config.toml", "a", "b")
    daemon = build_daemon(load_config(path))
    gateway = daemon.gateway
    assert gateway is not None
    assert gateway.backends == ("a", "b")
    caplog.set_level("INFO")
    async with gateway.open():
        await gateway.wait_settled()
        _upstreams_file(path, "b", "c", namespace="none")
        report = await daemon.reload(load_config(path))
    assert report is not None
    assert (report.added, report.removed, report.unchanged) == (("c",), ("a",), ("b",))
    assert report.settings_changed
    assert gateway.backends == ("b", "c")
    assert "upstream MCP servers read from" in caplog.text
    assert "gateway reloaded: added c; removed a; unchanged b" in caplog.text


async def test_a_reload_with_a_broken_mcp_servers_file_keeps_what_runs(
    no_user_files: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _upstreams_file(no_user_files / "sys_config.toml", "a")
    daemon = build_daemon(load_config(path))
    gateway = daemon.gateway
    assert gateway is not None
    async with gateway.open():
        (no_user_files / ".mcp.json").write_text("{not json", encoding="utf-8")
        assert await daemon.reload(load_config(path)) is None
    assert gateway.backends == ("a",)
    assert "SIGHUP: the MCP servers files cannot be read" in caplog.text
    assert ".mcp.json" in caplog.text


async def test_a_reload_without_a_gateway_says_new_upstreams_wait_for_a_restart(
    no_user_files: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = SysConfig(
        server=ServerSettings(object=EVERYTHING, path=(str(REPO),)),
        http=HttpSettings(enabled=True, port=0),
    )
    daemon = build_daemon(config)
    assert daemon.gateway is None
    assert [child.id for child in daemon.children] == ["notifications", "http"]
    assert await daemon.reload(config) is None
    assert "configured now" not in caplog.text
    path = _upstreams_file(no_user_files / "sys_config.toml", "a")
    assert await daemon.reload(load_config(path)) is None
    assert "upstream MCP servers are configured now (a)" in caplog.text


def test_gateway_settings_are_no_longer_start_only() -> None:
    reloaded = validate_config({"gateway": {"namespace": "none"}})
    assert restart_needed(SysConfig(), reloaded) == []
