"""``trimcp login`` / ``trimcp logout`` as a user runs them, against a protected server.

In-process: an authorization server that approves at once and an MCP server behind a
bearer gate (``tests/auth/client``), on 127.0.0.1. The commands run as subprocesses with
their own ``XDG_CONFIG_HOME``: ``login --no-browser`` prints the sign-in URL, which the
test opens as a browser would (following the redirects back to the command's loopback
listener); later commands use the kept tokens without signing in again; ``logout`` forgets
them, and a command then says to log in.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path  # noqa: TC003  (pytest resolves fixture annotations)

import httpx
import pytest
import trio

from tests.auth.client._protected import running

pytestmark = pytest.mark.slow

LIMIT = 60


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(home / "xdg")
    env["HOME"] = str(home)
    env.pop("TRIMCP_CONFIG", None)
    return env


async def _trimcp(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return await trio.run_process(
        [sys.executable, "-m", "trimcp", *args, "--config", str(home / "mcp.json")],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env=_env(home),
        cwd=home,
    )


async def _login(home: Path) -> tuple[int, str, str]:
    """Run ``trimcp login remote --no-browser`` and open the URL it prints."""
    config = str(home / "mcp.json")
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "trimcp", "login", "remote", "--no-browser", "--config", config],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(home),
        cwd=home,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    err = b""
    try:
        while b"\n  http" not in err or not err.endswith(b"\n"):
            chunk = await process.stderr.receive_some(4096)
            assert chunk, f"login ended without a URL: {err!r}"
            err += chunk
        url = err.decode().split("\n  ", 1)[1].split()[0]
        async with httpx.AsyncClient(follow_redirects=True) as browser:
            page = await browser.get(url)  # the authorization server approves at once
        assert page.status_code == 200
        out = b""
        while chunk := await process.stdout.receive_some(4096):
            out += chunk
        while chunk := await process.stderr.receive_some(4096):
            err += chunk
        status = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return status, out.decode(), err.decode()


async def test_login_keeps_tokens_later_commands_use_them_and_logout_forgets(
    tmp_path: Path,
) -> None:
    with trio.fail_after(LIMIT):
        async with running() as gate:
            servers = {"mcpServers": {"remote": {"url": gate.url, "auth": "oauth"}}}
            (tmp_path / "mcp.json").write_text(json.dumps(servers))

            status, out, err = await _login(tmp_path)
            assert status == 0, err
            assert "signed in to remote" in out
            assert "Traceback" not in err
            tokens = tmp_path / "xdg" / "trimcp" / "tokens"
            (kept,) = list(tokens.iterdir())
            assert stat.S_IMODE(kept.stat().st_mode) == 0o600
            assert len(gate.authority.authorize_queries) == 1  # one sign-in, in the "browser"

            # A later command signs in with nothing: the kept tokens are used.
            sign_ins = len(gate.authority.authorize_queries)
            listed = await _trimcp(tmp_path, "tools", "remote", "--json")
            assert listed.returncode == 0, listed.stderr.decode()
            assert any(tool["tool"] == "echo" for tool in json.loads(listed.stdout))
            assert len(gate.authority.authorize_queries) == sign_ins

            done = await _trimcp(tmp_path, "logout", "remote")
            assert done.returncode == 0, done.stderr.decode()
            assert b"signed out of remote" in done.stdout
            assert not list(tokens.iterdir())

            refused = await _trimcp(tmp_path, "tools", "remote", "--wait", "10")
            assert refused.returncode == 1
            assert b"trimcp login remote" in refused.stderr
            # Not retried: only a sign-in cures it (SignInRequired is permanent).
            assert b"not retried" in refused.stderr, refused.stderr
            assert b"Traceback" not in refused.stderr


async def test_login_refuses_a_server_without_oauth(tmp_path: Path) -> None:
    servers = {"mcpServers": {"plain": {"url": "http://127.0.0.1:9/mcp"}}}
    (tmp_path / "mcp.json").write_text(json.dumps(servers))
    done = await _trimcp(tmp_path, "login", "plain")
    assert done.returncode == 1
    assert b'has no sign-in to do: its entry has no "auth": "oauth"' in done.stderr
    nothing = await _trimcp(tmp_path, "logout", "plain")
    assert nothing.returncode == 1
    assert b"has no sign-in to forget" in nothing.stderr
    unknown = await _trimcp(tmp_path, "logout", "plian")
    assert unknown.returncode == 1
    assert b'did you mean "plain"' in unknown.stderr
