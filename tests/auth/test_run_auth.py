"""``trimcp run --http --auth ...``: the command line's resource server, end to end.

A real ``trimcp run`` process serves a demo server with ``--auth`` keys pointing at an
in-test authorization server's JWKS; a request without a token gets 401 with the bearer
challenge, one with a token minted for this server is served, and one minted for another
server is refused.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path  # noqa: TC003  (pytest resolves fixture annotations)

import httpx
import pytest
import trio

from ._authserver import free_port, running_auth_server

pytestmark = pytest.mark.slow

DEMO = """\
from trimcp.server import MCPServer

server = MCPServer("demo")


@server.tool()
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def _wait_listening(url: str, process: trio.Process) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(300):
            assert process.returncode is None, "trimcp run exited"
            try:
                await client.get(url.replace("/mcp", "/.well-known/oauth-protected-resource"))
            except httpx.TransportError:
                await trio.sleep(0.05)
                continue
            return
    raise AssertionError("trimcp run did not listen")


async def test_run_with_auth_keys_checks_bearer_tokens(tmp_path: Path) -> None:
    (tmp_path / "demo.py").write_text(DEMO)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with trio.fail_after(60):
        async with running_auth_server(url) as authority:
            issuer = authority.issuer.url
            command = [sys.executable, "-m", "trimcp", "run", "demo.py", "--port", str(port)]
            for item in (
                "verifier=jwt",
                f"resource={url}",
                f"authorization_servers={issuer}",
                f"jwks_url={issuer}/jwks",
                "required_scopes=mcp",
            ):
                command += ["--auth", item]
            process = await trio.lowlevel.open_process(
                command, cwd=tmp_path, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                await _wait_listening(url, process)
                async with httpx.AsyncClient() as client:
                    refused = await client.post(url, json=INITIALIZE, headers=HEADERS)
                    assert refused.status_code == 401
                    challenge = refused.headers["www-authenticate"]
                    assert challenge.startswith("Bearer ")
                    assert "resource_metadata=" in challenge
                    assert 'scope="mcp"' in challenge
                    token = authority.issuer.token()
                    served = await client.post(
                        url,
                        json=INITIALIZE,
                        headers={**HEADERS, "authorization": f"Bearer {token}"},
                    )
                    assert served.status_code == 200
                    assert served.headers.get("mcp-session-id")
                    other = authority.issuer.token(aud="http://127.0.0.1:1/mcp")
                    wrong = await client.post(
                        url,
                        json=INITIALIZE,
                        headers={**HEADERS, "authorization": f"Bearer {other}"},
                    )
                    assert wrong.status_code == 401
                    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
            finally:
                process.terminate()
                with trio.move_on_after(10):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


@pytest.mark.parametrize("command", [["run", "demo.py", "--http"], ["skills", "--http"]])
def test_serving_beyond_loopback_without_auth_is_refused(
    tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "demo.py").write_text(DEMO)
    argv = [sys.executable, "-m", "trimcp", *command, "--host", "0.0.0.0", "--port", "0"]
    done = subprocess.run(
        argv, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "refusing to serve on 0.0.0.0 without authorization" in done.stderr
    assert "--allow-unauthenticated" in done.stderr
    assert "Traceback" not in done.stderr
