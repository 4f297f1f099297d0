"""SIGHUP on a real ``trimcp serve``: upstreams added, removed, changed; a session kept open.

``python -m trimcp serve --config <tmp toml>`` runs in a process group of its own, with HOME
and XDG_CONFIG_HOME in ``tmp_path`` (no user or project ``mcpServers`` file), ``[http]`` on
port 0 (the URL is read from its log) and three stdio upstreams in ``[upstreams]``
(``upstream_server.py``, whose ``pid`` tool answers its process id). A trimcp client session
over Streamable HTTP stays open while the file is edited (one upstream removed, one's args
changed, one added) and the daemon gets SIGHUP by PID: the session receives
``notifications/tools/list_changed`` and lists the new tool set, the unchanged upstream
answers from the same process, the changed one from a new one, and the removed one's process
is gone. SIGTERM by PID then stops everything: exit 0, no process of the group left.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import trio

from tests.daemon_process import DaemonProcess
from trimcp.client import (
    ClientHandlers,
    ClientSession,
    open_client_session,
    open_http_client_stream,
)

SCRIPT = Path(__file__).with_name("upstream_server.py")
REPO = Path(__file__).resolve().parents[2]
STOP_TIMEOUT = 10.0

pytestmark = pytest.mark.slow


def _write_config(path: Path, upstreams: dict[str, tuple[str, ...]]) -> None:
    # JSON strings and arrays are TOML's basic strings and arrays.
    tables = "".join(
        f"[upstreams.{name}]\n"
        f"command = {json.dumps([sys.executable, str(SCRIPT), *args])}\n"
        f"env = {{ PYTHONPATH = {json.dumps(str(REPO))} }}\n\n"
        for name, args in upstreams.items()
    )
    path.write_text(
        f"[application]\nstop_timeout = {STOP_TIMEOUT}\n\n"
        "[http]\nenabled = true\nport = 0\n\n"
        "[skills]\nenabled = false\n\n" + tables,
        encoding="utf-8",
    )


Daemon = DaemonProcess


def _gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether process ``pid`` has exited and been reaped by the daemon, within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _servers(names: set[str]) -> set[str]:
    return {name.partition("__")[0] for name in names}


async def _session(daemon: Daemon, url: str, config: Path) -> dict[str, int]:
    """Drive one session across the SIGHUP; return the PIDs seen."""
    changed = trio.Event()
    seen = 0

    def on_tools_changed() -> None:
        nonlocal changed, seen
        seen += 1
        changed.set()
        changed = trio.Event()

    async def wait_for_servers(session: ClientSession, wanted: set[str]) -> None:
        # Counted before listing: a list_changed that arrives while tools/list is in flight
        # may come with the list from before the change, so it must not be waited for again.
        while True:
            before = seen
            names = {tool.name for tool in await session.list_tools()}
            if _servers(names) == wanted:
                return
            while seen == before:
                await changed.wait()

    handlers = ClientHandlers(on_tools_changed=on_tools_changed)
    pids: dict[str, int] = {}
    with trio.fail_after(60):
        async with (
            open_http_client_stream(url) as stream,
            open_client_session(stream, handlers=handlers) as session,
        ):
            # The listener is up before the upstreams are: they come with list_changed.
            await wait_for_servers(session, {"keep", "drop", "edit"})
            for name in ("keep", "drop", "edit"):
                pids[name] = int((await session.call_tool(f"{name}__pid", {})).text)

            seen = 0
            _write_config(config, {"keep": (), "edit": ("--changed",), "new": ()})
            os.kill(daemon.process.pid, signal.SIGHUP)
            await wait_for_servers(session, {"keep", "edit", "new"})
            assert seen >= 1
            for name in ("keep", "edit", "new"):
                pids[f"{name} after"] = int((await session.call_tool(f"{name}__pid", {})).text)
    return pids


def test_sighup_adds_removes_and_restarts_upstreams_with_the_session_kept(
    tmp_path: Path,
) -> None:
    config = tmp_path / "sys_config.toml"
    _write_config(config, {"keep": (), "drop": (), "edit": ()})
    daemon = Daemon(tmp_path, config)
    try:
        url = daemon.wait_for(r"MCP over Streamable HTTP at (\S+)").group(1)
        pids = trio.run(_session, daemon, url, config)
        reloaded = daemon.wait_for(r"gateway reloaded: (.*)").group(1)
        assert reloaded == "added new; removed drop; restarted edit; unchanged keep"
        # The unchanged upstream kept its process; the changed one has a new one.
        assert pids["keep after"] == pids["keep"]
        assert pids["edit after"] != pids["edit"]
        assert pids["new after"] not in {pids["keep"], pids["drop"], pids["edit"]}
        assert _gone(pids["drop"])
        assert _gone(pids["edit"])
        # Stopped by PID, as a service manager would: exit 0, nothing of the group left.
        os.kill(daemon.process.pid, signal.SIGTERM)
        assert daemon.process.wait(timeout=STOP_TIMEOUT + 5) == 0
        deadline = time.monotonic() + 5
        while daemon.group_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not daemon.group_alive()
    finally:
        daemon.cleanup()
    log = daemon.log()
    assert "Traceback" not in log
    assert "SIGHUP: configuration reloaded from" in log
