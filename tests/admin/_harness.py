"""A daemon built as ``trimcp serve`` builds it, run in the test's own trio run, on 127.0.0.1.

``open_daemon`` writes a ``sys_config.toml`` to ``tmp_path`` (HTTP on port 0, the admin app on
port 0, no built-in tools, the upstreams given), builds the daemon with ``build_daemon`` and
runs it under ``open_application`` with the reload hooks ``trimcp serve`` gives
``run_application``, so ``POST /reload`` does what SIGHUP does. The admin app's and the MCP
endpoint's real URLs come from the running children.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import trio

from trimcp.client import ClientConfig, ServerConfig
from trimcp.config import SysConfig, load_config
from trimcp.daemon import Daemon, build_daemon, check_config
from trimcp.supervision import Application, open_application, which_children

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO / "tests" / "gateway" / "upstream_server.py"
TOKEN = "test-admin-token-7d1f0c9a"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def initialize(client: str = "admin-test") -> dict[str, object]:
    """An ``initialize`` request from a client called ``client`` (version 1.2)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1.2"},
        },
    }


def tiny(name: str = "tiny") -> ServerConfig:
    """The tiny stdio upstream of the gateway tests (a real Python process)."""
    return ServerConfig(
        name=name,
        transport="stdio",
        command=sys.executable,
        args=(str(UPSTREAM),),
        env={"PYTHONPATH": str(REPO)},
    )


def config_text(admin: str = f'token = "{TOKEN}"', extra: str = "") -> str:
    """A sys_config.toml: HTTP and the admin app on free ports, no built-in tools."""
    return (
        "[http]\nenabled = true\nport = 0\n\n[skills]\nenabled = false\n\n"
        f"[admin]\nenabled = true\nport = 0\n{admin}\n\n{extra}"
    )


@dataclass
class Running:
    """A running daemon: its application, its parts, and where to reach it."""

    app: Application
    daemon: Daemon
    admin_url: str
    mcp_url: str
    path: Path

    def client(self) -> httpx.AsyncClient:
        """An HTTP client for the admin app."""
        return httpx.AsyncClient(base_url=self.admin_url, timeout=10)

    async def open_session(self, client: httpx.AsyncClient, name: str = "admin-test") -> str:
        """Initialize one MCP session over HTTP; return its id."""
        body = initialize(name)
        answer = await client.post(self.mcp_url, json=body, headers=MCP_HEADERS)
        assert answer.status_code == 200, answer.text
        return answer.headers["mcp-session-id"]


def load(path: Path) -> SysConfig:
    """Load and check ``path`` as ``trimcp serve`` does on SIGHUP."""
    config = load_config(path)
    check_config(config)
    return config


@contextlib.asynccontextmanager
async def open_daemon(
    tmp_path: Path,
    text: str | None = None,
    *,
    upstreams: dict[str, ServerConfig] | None = None,
) -> AsyncIterator[Running]:
    """Run the daemon of ``text`` (default ``config_text()``) until the block ends."""
    path = tmp_path / "sys_config.toml"
    path.write_text(text if text is not None else config_text())
    config = load(path)
    fixed = ClientConfig(servers=upstreams or {})
    daemon = build_daemon(config, upstreams=fixed)

    async def on_reload(app: Application, new: SysConfig) -> object:
        return await daemon.reload(new)

    async with open_application(
        config, children=daemon.children, reload_config=lambda: load(path), on_reload=on_reload
    ) as app:
        children = {info.id: info.value for info in await which_children(app.supervisor)}
        admin_urls = children["admin"]
        assert isinstance(admin_urls, list)
        targets = daemon.admin
        assert targets is not None
        (http,) = [w for w in targets.listeners if w.name == "http"]
        yield Running(app, daemon, admin_urls[0], http.address, path)
        app.request_stop()


async def wait_for_upstream(
    running: Running, name: str, state: str, *, not_pids: tuple[object, ...] = ()
) -> dict[str, object]:
    """Poll /status (bounded) until upstream ``name`` is in ``state``; return its entry.

    With ``not_pids``, wait for a live process other than those (a connected upstream whose
    process died a moment ago still reads connected, with no pid, until its connection
    notices).
    """
    async with running.client() as client:
        with trio.fail_after(20):
            while True:
                status = (await client.get("/status")).json()
                for entry in status["upstreams"]:
                    pid = entry["pid"]
                    fresh = not not_pids or (isinstance(pid, int) and pid not in not_pids)
                    if entry["name"] == name and entry["state"] == state and fresh:
                        return dict(entry)
                await trio.sleep(0.05)
