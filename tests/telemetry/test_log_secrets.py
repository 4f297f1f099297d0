"""A real ``trimcp serve`` at DEBUG, JSON lines: no token, header or env value in its log.

The daemon checks bearer tokens (``[auth]``, a key file trusted for a test issuer) and
fronts two upstreams: a stdio process whose ``env`` holds a secret, and a Streamable HTTP
server reached with an ``Authorization`` header from ``headers``. Real requests carry real
tokens (and a forged one); then every secret string is looked for in the daemon's stderr.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from tests.auth._authserver import free_port
from tests.auth._issuer import Issuer, rsa_key
from tests.daemon_process import ChildProcess, DaemonProcess
from trimcp.client import ClientSessionOptions, open_client_session
from trimcp.errors import TrimcpError
from trimcp.transports.http_client import open_http_client_stream

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("traced_upstream.py")
REPO = Path(__file__).resolve().parents[2]
ISSUER = "https://auth.example.com"
ENV_SECRET = "env-secret-7f3a9c1e5b"
HEADER_SECRET = "header-secret-2d8e4b6a0c"


def config_text(port: int, upstream_port: int) -> str:
    resource = f"http://127.0.0.1:{port}/mcp"
    return textwrap.dedent(
        f"""
        [logging]
        level = "DEBUG"
        format = "json"
        requests = true

        [http]
        enabled = true
        port = {port}

        [auth]
        verifier = "jwt"
        resource = "{resource}"
        authorization_servers = ["{ISSUER}"]
        public_key_file = "issuer.pem"
        required_scopes = ["mcp"]

        [upstreams.local]
        command = {json.dumps(sys.executable)}
        args = [{json.dumps(str(SCRIPT))}]
        env = {{ PYTHONPATH = {json.dumps(str(REPO))}, TRACED_SECRET = "{ENV_SECRET}" }}

        [upstreams.remote]
        url = "http://127.0.0.1:{upstream_port}/mcp"
        headers = {{ Authorization = "Bearer {HEADER_SECRET}" }}
        """
    )


@pytest.fixture
def upstream_port(tmp_path: Path) -> Iterator[int]:
    """A Streamable HTTP upstream process on a free port."""
    port = free_port()
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    child = ChildProcess([sys.executable, str(SCRIPT), "--http", str(port)], tmp_path, env)
    try:
        child.wait_for(rf"127\.0\.0\.1:{port}")
        yield port
    finally:
        child.stop()


async def call_with(url: str, token: str, era: str) -> list[str]:
    """Call both upstreams' tool with ``token``; return the answers."""
    async with (
        open_http_client_stream(url, headers={"Authorization": f"Bearer {token}"}) as stream,
        open_client_session(stream, options=ClientSessionOptions(protocol_version=era)) as client,
    ):
        names = {tool.name for tool in await client.list_tools()}
        assert {"local__traceparent", "remote__traceparent"} <= names
        return [
            (await client.call_tool(name, {})).text
            for name in ("local__traceparent", "remote__traceparent")
        ]


async def test_no_secret_reaches_the_debug_log(tmp_path: Path, upstream_port: int) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    key = rsa_key()
    (tmp_path / "issuer.pem").write_bytes(key.as_pem(private=False))
    config = tmp_path / "sys_config.toml"
    config.write_text(config_text(port, upstream_port))
    issuer = Issuer(url=ISSUER, resource=url)
    tokens = [issuer.token(), issuer.token(sub="bob")]
    forged = tokens[0][:-8] + "AAAAAAAA"
    daemon = DaemonProcess(tmp_path, config)
    try:
        daemon.wait_for("MCP over Streamable HTTP")
        daemon.wait_for("MCP server 'local' connected")
        daemon.wait_for("MCP server 'remote' connected")
        with trio.fail_after(30):
            for token, era in zip(tokens, ("2025-11-25", "2026-07-28"), strict=True):
                await call_with(url, token, era)
            with pytest.raises(TrimcpError):
                await call_with(url, forged, "2025-11-25")
        daemon.wait_for('"logger": "trimcp.requests"')
    finally:
        daemon.stop()
    log = daemon.log()
    assert '"tool": "local__traceparent"' in log  # the request lines were written
    assert '"level": "DEBUG"' in log
    secrets = [ENV_SECRET, HEADER_SECRET, *tokens, forged]
    # A JWT's signature alone is as good as a leak of the token.
    secrets += [token.rsplit(".", 1)[1] for token in tokens]
    leaked = [secret for secret in secrets if secret in log]
    assert not leaked, f"secrets in the log: {leaked}"
