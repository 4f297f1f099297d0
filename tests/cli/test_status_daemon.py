"""``trimcp status``, ``reload`` and ``restart`` against a real ``trimcp serve``.

One daemon per test: ``python -m trimcp serve`` with ``[admin] enabled = true, port = 0``
(its admin URL read from its log), a 0600 token file, and one upstream MCP server (TINY,
below, a trimcp server over stdio that answers its own pid). The commands run as a person
runs them, ``python -m trimcp ...`` in a process of their own; ``--watch`` runs in a
pseudo-terminal and is stopped with Ctrl-C.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pexpect
import pytest

import trimcp
from tests.daemon_process import DaemonProcess

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.slow

ROOT = Path(trimcp.__file__).resolve().parents[1]
#: Seconds a command, or a state the daemon reaches, may take on a busy machine.
TIMEOUT = 30.0
TOKEN = "admin-token-for-tests"

TINY = '''
import os

from trimcp.server import MCPServer

server = MCPServer("tiny", "1.0")


@server.tool()
def pid() -> int:
    """This process's id."""
    return os.getpid()


if __name__ == "__main__":
    server.run_stdio()
'''


def _config(folder: Path, *upstreams: str) -> str:
    tables = "".join(
        f'[upstreams.{name}]\ncommand = "{sys.executable}"\nargs = ["{folder / "tiny.py"}"]\n\n'
        for name in upstreams
    )
    return (
        "[http]\nenabled = true\nport = 0\n\n[skills]\nenabled = false\n\n"
        '[admin]\nenabled = true\nport = 0\ntoken_file = "admin.token"\n\n' + tables
    )


class Daemon:
    """A running ``trimcp serve`` and the ``trimcp`` commands that ask it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.config = folder / "sys_config.toml"
        self.process = DaemonProcess(folder, self.config)
        found = self.process.wait_for(r"admin app listening at (http://\S+?)/?$")
        self.url = found[1].rstrip("/")
        self.env = {
            "PYTHONPATH": str(ROOT),
            "HOME": str(folder),
            "XDG_CONFIG_HOME": str(folder / "xdg"),
            "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        }

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """``python -m trimcp ARGV --config CONFIG --url URL``, as a person runs it."""
        command = [sys.executable, "-m", "trimcp", *argv, "--config", str(self.config)]
        return subprocess.run(
            [*command, "--url", self.url],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    def status(self) -> dict[str, object]:
        done = self.run("status", "--json")
        document: dict[str, object] = json.loads(done.stdout)
        return document

    def upstream(self, name: str) -> dict[str, object]:
        upstreams = self.status()["upstreams"]
        assert isinstance(upstreams, list)
        for item in upstreams:
            if item["name"] == name:
                return dict(item)
        raise AssertionError(f"no upstream {name} in {upstreams}")


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll a real process's state until ``condition`` holds (bounded)."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {TIMEOUT:g} s"
        time.sleep(0.1)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    (tmp_path / "tiny.py").write_text(TINY)
    token = tmp_path / "admin.token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    (tmp_path / "sys_config.toml").write_text(_config(tmp_path, "tiny"))
    running = Daemon(tmp_path)
    try:
        _wait_until(lambda: running.upstream("tiny")["state"] == "connected", "tiny connected")
        yield running
    finally:
        running.process.stop()


def test_status_draws_the_running_daemon(daemon: Daemon) -> None:
    done = daemon.run("status")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert re.fullmatch(
        rf"trimcp \S+ pid {daemon.process.pid} up [\d.]+ s healthy, ready", lines[0]
    ), lines[0]
    assert any(re.fullmatch(r"trimcp supervisor running restarts 0 .*", line) for line in lines)
    assert any(re.search(r"── admin worker running restarts 0", line) for line in lines)
    assert any(
        re.fullmatch(r"http http http://127\.0\.0\.1:\d+/mcp yes 0 0 .*", line) for line in lines
    )
    assert any(re.fullmatch(r"tiny connected \d+ 0 1 -", line) for line in lines), lines
    assert lines[-1].startswith("event store: 0 bytes of 32.0 MiB")


def test_status_json_is_the_admin_apps_document(daemon: Daemon) -> None:
    done = daemon.run("status", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    application = document["application"]
    assert (application["name"], application["pid"]) == ("trimcp", daemon.process.pid)
    assert document["health"] == {"healthy": True, "ready": True, "not_ready": []}
    assert [item["name"] for item in document["upstreams"]] == ["tiny"]


def test_reload_with_the_token_file_applies_the_new_upstreams(daemon: Daemon) -> None:
    daemon.config.write_text(_config(daemon.folder, "tiny", "second"))
    done = daemon.run("reload", "--token-file", str(daemon.folder / "admin.token"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"reloaded {daemon.config}\nupstreams added: second\nupstreams kept: tiny\n"
    )
    _wait_until(lambda: daemon.upstream("second")["state"] == "connected", "second connected")


def test_reload_with_a_wrong_token_is_refused_in_words(daemon: Daemon) -> None:
    wrong = daemon.folder / "wrong.token"
    wrong.write_text("not-the-token\n")
    wrong.chmod(0o600)
    done = daemon.run("reload", "--token-file", str(wrong))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(
        f"the admin app at {daemon.url} refused POST /reload with the token from --token-file"
        f" {wrong} (HTTP 401: "
    )
    assert "not-the-token" not in done.stderr


def test_restart_restarts_the_upstream_process(daemon: Daemon) -> None:
    before = daemon.upstream("tiny")["pid"]
    # The token of [admin] token_file in --config's file.
    done = daemon.run("restart", "tiny")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"restarted tiny: (connecting|connected)(, pid \d+)?\n", done.stdout)

    def restarted() -> bool:
        now = daemon.upstream("tiny")
        return now["state"] == "connected" and now["pid"] not in (None, before)

    _wait_until(restarted, "tiny connected again in a new process")
    unknown = daemon.run("restart", "nope")
    assert unknown.returncode == 1
    assert unknown.stderr == "no upstream named 'nope'; configured: tiny\n"


def test_watch_is_stopped_by_ctrl_c_with_130(daemon: Daemon) -> None:
    transcript = io.StringIO()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "trimcp", "status", "--watch", "0.3", "--url", daemon.url],
        cwd=str(daemon.folder),
        env={**daemon.env, "TERM": "xterm"},
        encoding="utf-8",
        timeout=TIMEOUT,
        dimensions=(60, 200),
    )
    child.logfile_read = transcript
    try:
        child.expect_exact("healthy")
        child.expect_exact("tiny")
        child.expect_exact("every 0.3 s; Ctrl-C to stop")  # the next picture
        child.sendintr()
        child.expect(pexpect.EOF)
        child.close()
    finally:
        if child.isalive():
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
    assert child.exitstatus == 130, (child.signalstatus, transcript.getvalue())
    assert "Traceback" not in transcript.getvalue()
