"""``trimcp serve``'s listeners with an ``[auth]`` table: the daemon passes it to HTTP."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import httpx
import pytest
import trio

from tests.auth._authserver import free_port
from tests.auth._issuer import Issuer, rsa_key
from tests.http._client import INITIALIZE, post
from trimcp.client import ClientConfig
from trimcp.config import load_config
from trimcp.daemon import build_daemon
from trimcp.errors import ConfigError
from trimcp.supervision import open_application

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

ISSUER = "https://auth.example.com"


async def test_the_daemons_http_listener_checks_tokens_as_auth_says(tmp_path: Path) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    (tmp_path / "issuer.pem").write_bytes(rsa_key().as_pem(private=False))
    path = tmp_path / "sys_config.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            [http]
            enabled = true
            port = {port}

            [auth]
            verifier = "jwt"
            resource = "{resource}"
            authorization_servers = ["{ISSUER}"]
            public_key_file = "issuer.pem"
            required_scopes = ["mcp"]
            """
        )
    )
    config = load_config(path)
    daemon = build_daemon(config, upstreams=ClientConfig(servers={}))
    issuer = Issuer(url=ISSUER, resource=resource)
    async with (
        open_application(config, children=daemon.children),
        httpx.AsyncClient(timeout=10) as client,
    ):
        with trio.fail_after(20):
            refused = await post(client, resource, INITIALIZE)
            assert refused.status == 401
            assert (
                f"{resource.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp"
                in (refused.headers["www-authenticate"])
            )
            token = issuer.token()
            accepted = await post(
                client, resource, INITIALIZE, headers={"authorization": f"Bearer {token}"}
            )
            assert accepted.status == 200
            assert "result" in accepted.messages[0]
            metadata = await client.get(
                resource.replace("/mcp", "/.well-known/oauth-protected-resource")
            )
            assert metadata.json()["authorization_servers"] == [ISSUER]


def test_serve_refuses_a_public_listener_without_auth(tmp_path: Path) -> None:
    path = tmp_path / "sys_config.toml"
    path.write_text('[http]\nenabled = true\nhost = "0.0.0.0"\nport = 0\n')
    with pytest.raises(ConfigError) as caught:
        build_daemon(load_config(path), upstreams=ClientConfig(servers={}))
    assert "key:      http.host" in str(caught.value)
    assert "allow_unauthenticated = true" in str(caught.value)
