"""The dashboard: rendered by the admin app, loaded by a real headless browser, escaped."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.admin._dashboard import render_dashboard
from trimcp.client import ServerConfig

from ._harness import open_daemon

if TYPE_CHECKING:
    from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HOSTILE = "<script>alert('x')</script>"


async def _dump_dom(url: str, tmp_path: Path) -> str:
    """The DOM of ``url`` once loaded, as headless chromium prints it."""
    command = [
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'chromium'}",
        "--dump-dom",
        url,
    ]
    with trio.fail_after(60):
        done = await trio.run_process(command, capture_stdout=True, capture_stderr=True)
    return done.stdout.decode()


def test_render_escapes_everything() -> None:
    page = render_dashboard(
        {
            "application": {"name": HOSTILE, "version": "1"},
            "health": {"ready": False, "not_ready": [f"upstream {HOSTILE}: failed"]},
            "tree": {"id": HOSTILE, "kind": "supervisor", "state": "running", "children": []},
            "listeners": [],
            "upstreams": [{"name": HOSTILE, "state": "failed", "last_error": HOSTILE}],
            "sessions": [{"client": HOSTILE, "mailbox": {"length": 0}}],
            "sessions_total": 1,
        },
        2.0,
    )
    assert HOSTILE not in page
    assert page.count("<script>") == 1  # the page's own
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "const every = 2.0 * 1000;" in page


@pytest.mark.slow
async def test_headless_browser_shows_tree_upstreams_and_sessions(tmp_path: Path) -> None:
    hostile = ServerConfig(
        name=HOSTILE, transport="stdio", command=f"/nonexistent/{HOSTILE}", args=()
    )
    async with (
        open_daemon(tmp_path, upstreams={HOSTILE: hostile}) as running,
        running.client() as client,
    ):
        for _ in range(3):
            await running.open_session(client, name="dash-client")
        with trio.fail_after(20):
            while True:  # it fails at once: the command does not exist
                if (await client.get("/readyz")).status_code == 503:
                    break
                await trio.sleep(0.02)
        dom = await _dump_dom(running.admin_url, tmp_path)
    assert "Supervision tree" in dom
    for node in ("trimcp", "gateway", "http", "session-manager", "sessions", "admin"):
        assert f'<span class="id">{node} </span>' in dom, node
    assert '<span id="sessions-total">3</span>' in dom
    assert "dash-client 1.2" in dom
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in dom  # the name, shown as text
    assert dom.count("<script>") == 1  # the page's own, none from the upstream
    assert "not ready: upstream &lt;script&gt;" in dom
