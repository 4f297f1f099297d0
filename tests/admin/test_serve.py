"""``trimcp serve`` with ``[admin] enabled``: a real daemon process, its admin URL from its log."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.daemon_process import DaemonProcess

from ._harness import REPO, TOKEN, UPSTREAM, initialize

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def test_trimcp_serve_with_the_admin_app(tmp_path: Path) -> None:
    token_file = tmp_path / "admin.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    config = tmp_path / "sys_config.toml"
    config.write_text(
        '[logging]\nlevel = "DEBUG"\nrequests = true\n\n'
        "[http]\nenabled = true\nport = 0\n\n[skills]\nenabled = false\n\n"
        '[admin]\nenabled = true\nport = 0\ntoken_file = "admin.token"\n'
    )
    daemon = DaemonProcess(tmp_path, config)
    try:
        admin = daemon.wait_for(r"admin app listening at (http://\S+/)").group(1)
        mcp = daemon.wait_for(r"MCP over Streamable HTTP at (http://\S+)").group(1)
        with httpx.Client(timeout=10) as client:
            answer = client.post(
                mcp, json=initialize(), headers={"Accept": "application/json, text/event-stream"}
            )
            assert answer.status_code == 200
            status = client.get(admin + "status").json()
            assert status["application"]["pid"] == daemon.pid
            assert status["sessions_total"] == 1
            assert status["listeners"][0]["address"] == mcp
            assert client.get(mcp.removesuffix("/mcp") + "/status").status_code == 404
            wrong = client.post(admin + "reload", headers={"Authorization": "Bearer wrong"})
            assert wrong.status_code == 401
            reload = client.post(admin + "reload", headers={"Authorization": f"Bearer {TOKEN}"})
            assert reload.status_code == 200
            assert reload.json()["sources"] == [str(config)]
            daemon.wait_for(r"admin: reloading the configuration")
            # An upstream added to the file is started by the next reload, and reported.
            with config.open("a") as file:
                file.write(
                    f'\n[upstreams.tiny]\ncommand = "{sys.executable}"\n'
                    f'args = ["{UPSTREAM}"]\nenv = {{ PYTHONPATH = "{REPO}" }}\n'
                )
            added = client.post(admin + "reload", headers={"Authorization": f"Bearer {TOKEN}"})
            assert added.status_code == 200
            assert added.json()["upstreams"]["added"] == ["tiny"]
            assert added.json()["restart_needed"] == []
            (tiny,) = client.get(admin + "status").json()["upstreams"]
            assert tiny["name"] == "tiny"
        os.kill(daemon.pid, 0)
    finally:
        daemon.stop()
    log = daemon.log()
    assert "DEBUG" in log
    assert TOKEN not in log
