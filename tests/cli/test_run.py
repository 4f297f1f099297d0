"""``trimcp run TARGET``, and Ctrl-C on ``server.run_http()``/``run_stdio()`` scripts.

The loading tests call ``load_target`` on files written to ``tmp_path`` (fresh module names,
``sys.path`` and ``sys.modules`` restored). The others start real processes: ``python -m
trimcp run`` (or a script), in their own process group through ``tests/daemon_process.py``'s
``ChildProcess``, on 127.0.0.1 and a port the OS picks; every wait is bounded and every
process is stopped by its PID at the end, the children of ``--reload`` included.
"""

from __future__ import annotations

import contextlib
import itertools
import json
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

import anyio
import pexpect
import pytest
import trio
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

import trimcp
from tests.daemon_process import ChildProcess
from trimcp.cli import main
from trimcp.cli._load import load_target
from trimcp.cli._target import parse_target
from trimcp.client import open_client_session, open_http_client_stream
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from trimcp.server import MCPServer

ROOT = Path(trimcp.__file__).resolve().parents[1]
#: Seconds a process gets to start, answer or stop (a busy machine starts Python slowly).
TIMEOUT = 30.0

DEMO = '''\
"""A demo MCP server: one tool that adds two numbers."""

from trimcp.server import MCPServer

server = MCPServer("demo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    server.run_stdio()
'''
SERVING = r"serving demo \S+ \(\S+\) over Streamable HTTP at (http://\S+/mcp) -- try: trimcp tools"

_NAMES = itertools.count()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("TRIMCP_CONFIG", "TRIMCP_DEBUG")
    }
    return environment | {"HOME": str(tmp_path), "PYTHONUNBUFFERED": "1", **extra}


def _trimcp_run(tmp_path: Path, *args: str, **env: str) -> ChildProcess:
    command = [sys.executable, "-m", "trimcp", "run", *args]
    return ChildProcess(command, tmp_path, _env(tmp_path, **env))


@pytest.fixture
def processes() -> Iterator[list[ChildProcess]]:
    """The processes a test starts; each is killed by PID (and its group) at the end."""
    started: list[ChildProcess] = []
    yield started
    for process in started:
        process.cleanup()


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.py"
    path.write_text(DEMO, encoding="utf-8")
    return path


def _stopped(process: ChildProcess, signum: int) -> int:
    """Send ``signum`` by PID; return the exit status (bounded wait)."""
    os.kill(process.pid, signum)
    return process.process.wait(timeout=TIMEOUT)


def _stderr(process: ChildProcess) -> str:
    process.cleanup()  # joins the reader: the log is complete
    return process.log()


# --- loading a TARGET -------------------------------------------------------------------------


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """Write a module with a fresh name under tmp_path/app; forget it and sys.path after."""
    monkeypatch.setattr(sys, "path", sys.path[:])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    written: list[str] = []

    def write_module(text: str) -> Path:
        name = f"app_{next(_NAMES)}_{os.getpid()}"
        written.append(name)
        path = tmp_path / "app" / f"{name}.py"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    yield write_module
    for name in written:
        sys.modules.pop(name, None)


def _load(path: Path, attribute: str = "") -> MCPServer:
    return load_target(parse_target(f"{path}:{attribute}" if attribute else str(path)))


def _load_error(path: Path, attribute: str = "") -> str:
    with pytest.raises(ConfigError) as caught:
        _load(path, attribute)
    message = str(caught.value)
    assert message.startswith(f"cannot serve {path}")
    assert "Traceback" not in message
    return message


def test_the_one_server_of_a_file_is_found(write: Callable[[str], Path]) -> None:
    path = write(DEMO)
    assert _load(path).server_info.name == "demo"


def test_a_file_without_a_server_object_uses_its_one_factory(
    write: Callable[[str], Path],
) -> None:
    path = write(
        """
        from __future__ import annotations
        from trimcp.server import MCPServer

        def helper(x):
            return x

        def make(name: str = "made") -> MCPServer:
            return MCPServer(name)
        """
    )
    assert _load(path).server_info.name == "made"


def test_several_servers_are_listed_with_what_to_write(write: Callable[[str], Path]) -> None:
    path = write(
        """
        from trimcp.server import MCPServer
        public = MCPServer("public")
        admin = MCPServer("admin")
        alias = public
        """
    )
    message = _load_error(path)
    assert f"{path} defines 2 MCPServer objects: public, admin" in message
    assert f"name the one to serve: {path}:public, {path}:admin" in message
    assert _load(path, "admin").server_info.name == "admin"


def test_a_file_without_any_server_says_how_to_make_one(write: Callable[[str], Path]) -> None:
    message = _load_error(write("x = 1\n"))
    assert "defines no MCPServer" in message
    assert 'server = MCPServer("demo")' in message


def test_a_misspelt_name_gets_the_close_one(write: Callable[[str], Path]) -> None:
    path = write(DEMO)
    message = _load_error(path, "sever")
    assert f"'{path}' has no attribute 'sever'" in message
    assert f'did you mean "{path}:server"?' in message


def test_an_error_in_the_users_module_names_the_file_and_line(
    write: Callable[[str], Path],
) -> None:
    path = write("from trimcp.server import MCPServer\nserver = MCPServer('x')\nratio = 1 / 0\n")
    with pytest.raises(ConfigError) as caught:
        _load(path)
    message = str(caught.value)
    assert "raised ZeroDivisionError: division by zero" in message
    assert f"at {path}:3\n" in message
    assert isinstance(caught.value.__cause__, ZeroDivisionError)  # what --debug prints


def test_a_file_imports_its_siblings_from_any_working_directory(
    tmp_path: Path, write: Callable[[str], Path]
) -> None:
    sibling = write("NAME = 'from the sibling'\n")
    path = write(f"from trimcp.server import MCPServer\nimport {sibling.stem}\n")
    path.write_text(
        path.read_text() + f"server = MCPServer({sibling.stem}.NAME)\n", encoding="utf-8"
    )
    os.chdir(tmp_path.parent)  # monkeypatch.chdir in `write` restores it
    assert _load(path).server_info.name == "from the sibling"


def test_a_file_named_like_a_module_already_loaded_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "json.py"
    path.write_text(DEMO, encoding="utf-8")
    message = _load_error(path)
    assert "a module named 'json' is already loaded" in message
    assert f"rename {path}" in message


def test_a_module_target_is_imported_from_the_working_directory(
    write: Callable[[str], Path],
) -> None:
    path = write(DEMO)
    server = load_target(parse_target(f"app.{path.stem}:server"))
    assert server.server_info.name == "demo"
    with pytest.raises(ConfigError, match="run trimcp in the folder that holds no_such_pkg"):
        load_target(parse_target("no_such_pkg.server:server"))


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--stdio", "--reload"], "a stdio client\ncannot start a new session"),
        (["--stdio", "--port", "9000"], "--host and --port are for --http"),
        (["--port", "70000"], "expected a port number from 0 to 65535"),
    ],
)
def test_usage_errors_exit_2_and_say_why(
    demo: Path, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", str(demo), *argv])
    assert caught.value.code == 2
    assert " ".join(says.split()) in " ".join(capsys.readouterr().err.split())


def test_a_target_that_is_not_python_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "http://127.0.0.1:1/mcp"])
    assert caught.value.code == 2
    assert "is not Python code: give file.py" in capsys.readouterr().err


# --- serving ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_http_serves_the_official_sdk_client_and_ctrl_c_exits_130(
    tmp_path: Path, demo: Path, processes: list[ChildProcess]
) -> None:
    server = _trimcp_run(tmp_path, "demo.py", "--http", "--port", "0")
    processes.append(server)
    first = server.wait_for(SERVING, timeout=TIMEOUT)
    url = first.group(1)
    assert f"try: trimcp tools {url}" in first.string
    assert server.lines[0] == first.string  # the first line says all that
    # The SDK client is anyio-based; it runs under trio here.
    async with Client(streamable_http_client(url), read_timeout_seconds=10, mode="legacy") as c:
        with anyio.fail_after(TIMEOUT):
            assert [tool.name for tool in (await c.list_tools()).tools] == ["add"]
            result = await c.call_tool("add", {"a": 2, "b": 3})
    assert result.content[0].text == "5"  # type: ignore[union-attr]
    assert _stopped(server, signal.SIGINT) == 130
    log = _stderr(server)
    assert "Traceback" not in log
    assert log.count("SIGINT") == 1


@pytest.mark.slow
def test_without_a_terminal_on_stdin_it_serves_stdio(tmp_path: Path, demo: Path) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _initialize_params()},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": _add(20, 22)},
    ]
    done = subprocess.run(
        [sys.executable, "-m", "trimcp", "run", "demo.py"],
        input="".join(json.dumps(request) + "\n" for request in requests),
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # stdin closed: a normal end
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "42"}]
    first = done.stderr.splitlines()[0]
    assert "serving demo " in first
    assert "(demo.py) over stdio" in first
    assert "stdio because stdin is not a terminal; for HTTP: trimcp run demo.py --http" in (
        done.stderr
    )


@pytest.mark.slow
def test_in_a_terminal_it_serves_http_and_ctrl_c_stops_it_quietly(
    tmp_path: Path, demo: Path
) -> None:
    # No flag: the default address, 127.0.0.1:8000. Something else on this machine may hold
    # it; the refusal to listen there says as well that HTTP was chosen.
    child = pexpect.spawn(
        sys.executable,
        ["-m", "trimcp", "run", "demo.py"],
        cwd=str(tmp_path),
        env=_env(tmp_path),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    try:
        serving = r"over Streamable HTTP at http://127\.0\.0\.1:8000/mcp -- try: trimcp tools"
        taken = r"cannot listen on 127\.0\.0\.1:8000: Address already in use"
        if child.expect([serving, taken]) == 0:
            child.expect_exact("HTTP because stdin is a terminal; a desktop host runs: trimcp run")
            child.sendintr()  # Ctrl-C, as the terminal sends it
            expected_status = 130
        else:
            expected_status = 1
        child.expect(pexpect.EOF)
        transcript = str(child.before)
        child.close()
    finally:
        if child.isalive():
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
    assert child.exitstatus == expected_status, transcript
    assert "Traceback" not in transcript


@pytest.mark.slow
def test_a_taken_port_is_named_with_how_to_choose_another(
    tmp_path: Path, demo: Path, processes: list[ChildProcess]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = _trimcp_run(tmp_path, "demo.py", "--http", "--port", str(port))
        processes.append(server)
        assert server.process.wait(timeout=TIMEOUT) == 1
    log = _stderr(server)
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in log
    assert f"choose another port: trimcp run demo.py --port {port + 1}" in log
    assert "Traceback" not in log


@pytest.mark.slow
def test_ctrl_c_while_the_module_imports_exits_130_quietly(
    tmp_path: Path, processes: list[ChildProcess]
) -> None:
    (tmp_path / "slow.py").write_text(
        "import pathlib, time\npathlib.Path('importing').touch()\ntime.sleep(60)\n"
        + DEMO.split('"""\n', 1)[1],
        encoding="utf-8",
    )
    server = _trimcp_run(tmp_path, "slow.py", "--http", "--port", "0")
    processes.append(server)
    deadline = time.monotonic() + TIMEOUT
    while not (tmp_path / "importing").exists():
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.02)
    assert _stopped(server, signal.SIGINT) == 130
    assert "Traceback" not in _stderr(server)


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_a_broken_module_is_one_short_message_unless_debugging(
    tmp_path: Path, processes: list[ChildProcess], debug: bool
) -> None:
    (tmp_path / "broken.py").write_text("import json\n\nsettings = json.loads('{')\n")
    env = {"TRIMCP_DEBUG": "1"} if debug else {}
    server = _trimcp_run(tmp_path, "broken.py", "--http", "--port", "0", **env)
    processes.append(server)
    assert server.process.wait(timeout=TIMEOUT) == 1
    log = _stderr(server)
    assert "cannot serve broken.py\n  importing 'broken' raised JSONDecodeError" in log
    assert ("Traceback" in log) == debug
    if debug:
        assert 'broken.py", line 3, in <module>' in log


# --- Ctrl-C on a script's run_http() / run_stdio() --------------------------------------------

SCRIPT = DEMO.replace("server.run_stdio()", "{call}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("call", "ready"),
    [
        ("server.run_http(port=0)", "MCP over Streamable HTTP at"),
        # stdin: a pipe the script holds both ends of, so it never ends. run_stdio logs
        # nothing as it starts; a SIGINT before its receiver opens must be as quiet.
        ("r, w = os.pipe(); os.dup2(r, 0); Path('ready').touch(); server.run_stdio()", None),
    ],
)
def test_a_scripts_run_method_exits_130_on_ctrl_c_without_a_traceback(
    tmp_path: Path, processes: list[ChildProcess], call: str, ready: str | None
) -> None:
    script_text = "import os\nfrom pathlib import Path\n" + SCRIPT.format(call=call)
    (tmp_path / "script.py").write_text(script_text + "print('after the call')\n")
    script = ChildProcess([sys.executable, "script.py"], tmp_path, _env(tmp_path))
    processes.append(script)
    if ready:
        script.wait_for(ready, timeout=TIMEOUT)
    else:
        _wait_for_file(tmp_path / "ready")
    assert _stopped(script, signal.SIGINT) == 130
    log = _stderr(script)
    assert "Traceback" not in log
    assert "SIGINT received" in log


@pytest.mark.slow
def test_a_scripts_run_http_on_a_taken_port_exits_1(
    tmp_path: Path, processes: list[ChildProcess]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        (tmp_path / "script.py").write_text(SCRIPT.format(call=f"server.run_http(port={port})"))
        script = ChildProcess([sys.executable, "script.py"], tmp_path, _env(tmp_path))
        processes.append(script)
        assert script.process.wait(timeout=TIMEOUT) == 1
    log = _stderr(script)
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in log
    assert f"server.run_http(port={port + 1})" in log
    assert "Traceback" not in log


# --- --reload ---------------------------------------------------------------------------------


@pytest.mark.slow
async def test_reload_restarts_on_a_change_and_the_client_starts_a_new_session(
    tmp_path: Path, demo: Path, processes: list[ChildProcess]
) -> None:
    parent = _trimcp_run(tmp_path, "demo.py", "--reload", "--port", "0")
    processes.append(parent)
    seen: list[int] = []  # the servers: in groups of their own, out of the harness's reach
    try:
        url = parent.wait_for(SERVING, timeout=TIMEOUT).group(1)
        seen += _children(parent.pid)
        (first,) = seen
        with trio.fail_after(3 * TIMEOUT):
            async with open_http_client_stream(url) as stream, open_client_session(stream) as s:
                assert [tool.name for tool in await s.list_tools()] == ["add"]

                await trio.Path(demo).write_text(DEMO.replace("def add", "def plus"))
                await _wait_for_count(parent, SERVING, 2)
                assert "reloaded after change to demo.py" in parent.log()
                (second,) = _children(parent.pid)
                seen.append(second)
                assert second != first
                assert not _alive(first)
                # Same URL (same port); the old session is gone: 404, then a new one.
                assert [tool.name for tool in await s.list_tools()] == ["plus"]

                # A change that does not import: reported, and the parent waits for a fix.
                await trio.Path(demo).write_text(DEMO + "\nbroken = (\n")
                await _wait_for_count(parent, "the server exited with status 1; it starts again", 1)
                assert "'(' was never closed" in parent.log()
                await trio.Path(demo).write_text(DEMO)
                await _wait_for_count(parent, SERVING, 3)
                result = await s.call_tool("add", {"a": 1, "b": 2})
                assert result.content == ({"type": "text", "text": "3"},)
        seen += _children(parent.pid)
        assert _stopped(parent, signal.SIGINT) == 130
        assert not any(_alive(pid) for pid in seen)
        assert "Traceback" not in _stderr(parent)
    finally:
        for pid in {*seen, *_children(parent.pid)}:
            if _alive(pid) and str(tmp_path) in _command_line(pid):  # not a reused PID
                os.killpg(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux's /proc), e.g. the server under ``--reload``.

    Each thread lists its own: trio starts processes from a worker thread.
    """
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(FileNotFoundError):
            found += [int(word) for word in (task / "children").read_text().split()]
    return found


@pytest.mark.slow
def test_the_reloaded_server_stops_when_its_parent_is_killed(
    tmp_path: Path, demo: Path, processes: list[ChildProcess]
) -> None:
    # SIGKILL leaves the parent no time to stop its child: the child sees its stdin end.
    parent = _trimcp_run(tmp_path, "demo.py", "--reload", "--port", "0")
    processes.append(parent)
    parent.wait_for(SERVING, timeout=TIMEOUT)
    (child,) = _children(parent.pid)
    try:
        assert _stopped(parent, signal.SIGKILL) == -signal.SIGKILL
        deadline = time.monotonic() + TIMEOUT
        while _alive(child):
            assert time.monotonic() < deadline, "the server outlived its --reload parent"
            time.sleep(0.05)
    finally:
        if _alive(child) and str(tmp_path) in _command_line(child):
            os.killpg(child, signal.SIGKILL)
    assert "stdin closed (the --reload parent is gone): stopping" in _stderr(parent)


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except FileNotFoundError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes: it serves nothing.
    try:
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return status != "Z"


async def _wait_for_count(process: ChildProcess, pattern: str, count: int) -> None:
    """Wait (bounded) until ``pattern`` matched ``count`` stderr lines.

    Polls, and sleeps in trio between looks, so that the client's tasks keep running.
    """
    regex = re.compile(pattern)
    with trio.fail_after(TIMEOUT):
        while sum(1 for line in process.log().splitlines() if regex.search(line)) < count:
            assert process.process.poll() is None, process.log()
            await trio.sleep(0.05)


def _wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def _initialize_params() -> dict[str, object]:
    return {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }


def _add(a: int, b: int) -> dict[str, object]:
    return {"name": "add", "arguments": {"a": a, "b": b}}
