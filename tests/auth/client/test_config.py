"""``mcpServers`` entries with ``auth``: parsing, secrets never shown, expansion, and the
``auth_for`` / ``login`` / ``logout`` functions over a configured server."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio
from joserfc.jwk import ECKey

from trimcp.auth.client import (
    ClientCredentials,
    LoopbackBrowser,
    MemoryTokenStore,
    OAuth,
    StoredAuth,
    auth_for,
    follow_redirects,
    login,
    logout,
)
from trimcp.config.mcp_servers import (
    ClientCredentialsSettings,
    OAuthSettings,
    ServerConfig,
    client_config_from_mapping,
    expand_server,
)
from trimcp.errors import ConfigError

from ._protected import running

if TYPE_CHECKING:
    from pathlib import Path


def entry(auth: object, **more: object) -> ServerConfig:
    data = {"mcpServers": {"notes": {"url": "https://mcp.example.com/mcp", "auth": auth, **more}}}
    return client_config_from_mapping(data, environ={"SECRET": "s3cr3t", "KEY": "pem"}).servers[
        "notes"
    ]


def problems(auth: object, **more: object) -> str:
    with pytest.raises(ConfigError) as caught:
        entry(auth, **more)
    return str(caught.value)


def test_oauth_in_its_short_and_long_forms() -> None:
    assert entry("oauth").auth == OAuthSettings()
    assert entry("OAuth").auth == OAuthSettings()
    long = entry(
        {
            "type": "oauth",
            "clientId": "trimcp",
            "client_secret": "${SECRET}",
            "scopes": "files:read files:write",
            "client_metadata_url": "https://client.example/trimcp.json",
        }
    )
    assert long.auth == OAuthSettings(
        client_id="trimcp",
        client_secret="${SECRET}",  # kept raw until connect time
        scopes=("files:read", "files:write"),
        client_metadata_url="https://client.example/trimcp.json",
    )
    expanded = expand_server(long, {"SECRET": "s3cr3t"})
    assert isinstance(expanded.auth, OAuthSettings)
    assert expanded.auth.client_secret == "s3cr3t"


def test_client_credentials() -> None:
    config = entry(
        {"type": "client_credentials", "client_id": "robot", "privateKey": "${KEY}",
         "signing_algorithm": "RS256", "scope": ["a"]}
    )  # fmt: skip
    assert config.auth == ClientCredentialsSettings(
        client_id="robot", private_key="${KEY}", signing_algorithm="RS256", scopes=("a",)
    )


def test_secrets_are_never_shown() -> None:
    config = entry({"type": "oauth", "client_id": "c", "client_secret": "hunter2-secret"})
    assert "hunter2" not in repr(config)
    assert "hunter2" not in json.dumps(config.shown())
    assert config.shown()["auth"] == {
        "type": "oauth",
        "client_id": "c",
        "client_secret": "***",
        "scopes": [],
        "client_metadata_url": None,
    }
    # Comparing and fingerprints see the real value: a changed secret is a changed entry.
    other = entry({"type": "oauth", "client_id": "c", "client_secret": "other"})
    assert config != other
    assert config.fingerprint() != other.fingerprint()
    text = problems({"type": "oauth", "client_id": "c", "client_secret": 12345678})
    assert "12345678" not in text


@pytest.mark.parametrize(
    ("auth", "words"),
    [
        ("basic", '"oauth"'),
        ("client_credentials", "client_id"),
        (True, '"auth": "oauth"'),
        ({"client_id": "c"}, '"type": "oauth"'),
        ({"type": "saml"}, "client_credentials"),
        ({"type": "oauth", "client_secret": "x"}, "client id the secret belongs to"),
        ({"type": "oauth", "clientid": "x"}, "auth.clientid"),
        ({"type": "oauth", "client_metadata_url": "http://c.example/x"}, "https URL with a path"),
        ({"type": "oauth", "private_key": "x"}, "a field of client credentials"),
        ({"type": "oauth", "scopes": [1]}, "an array of scope names"),
        ({"type": "client_credentials", "client_secret": "x"}, "auth.client_id"),
        ({"type": "client_credentials", "client_id": "r"}, "exactly one of"),
        (
            {"type": "client_credentials", "client_id": "r", "client_secret": "x",
             "private_key": "y"},
            "exactly one of",
        ),
        (
            {"type": "client_credentials", "client_id": "r", "private_key": "y",
             "signing_algorithm": "HS256"},
            "ES256",
        ),
    ],
)  # fmt: skip
def test_mistakes_are_reported_with_a_fix(auth: object, words: str) -> None:
    assert words in problems(auth)


def test_auth_for_a_launched_server_is_a_warning_and_unused() -> None:
    data = {"mcpServers": {"local": {"command": "server", "auth": "oauth"}}}
    config = client_config_from_mapping(data)
    assert auth_for(config.servers["local"]) is None
    assert any(problem.field == "auth" for problem in config.warnings)


def test_auth_for_builds_the_objects(tmp_path: Path) -> None:
    assert isinstance(auth_for(entry("oauth")), OAuth)
    assert auth_for(entry("oauth", transport="sse")) is not None
    plain = {"mcpServers": {"n": {"url": "https://mcp.example.com/mcp"}}}
    assert auth_for(client_config_from_mapping(plain).servers["n"]) is None
    pem = ECKey.generate_key("P-256").as_pem(private=True).decode()
    key_file = tmp_path / "key.pem"
    key_file.write_text(pem)
    settings: dict[str, Any] = {
        "type": "client_credentials", "client_id": "r", "private_key_file": str(key_file),
    }  # fmt: skip
    assert isinstance(auth_for(entry(settings)), ClientCredentials)
    settings["private_key_file"] = str(tmp_path / "missing.pem")
    with pytest.raises(ConfigError, match=r"cannot read auth\.private_key_file"):
        auth_for(entry(settings))


@pytest.mark.slow
async def test_login_then_logout() -> None:
    store = MemoryTokenStore()
    async with running(challenge_scope=("notes:read",)) as gate:
        data = {"mcpServers": {"notes": {"url": gate.url, "auth": "oauth"}}}
        config = client_config_from_mapping(data).servers["notes"]
        browser = LoopbackBrowser(opener=follow_redirects, timeout=10)
        with trio.fail_after(20):
            tokens = await login(config, browser=browser, store=store)
        assert tokens.scopes == ("notes:read",)  # from the probe's challenge
        record = await store.load("notes")
        assert isinstance(record, StoredAuth)
        assert record.tokens == tokens
        assert gate.authority.count("GET /authorize") == 1
        await logout(config, store=store)
        assert await store.load("notes") is None


async def test_login_needs_oauth_in_the_entry() -> None:
    config = entry({"type": "client_credentials", "client_id": "r", "client_secret": "x"})
    with pytest.raises(ConfigError, match="client credentials"):
        await login(config, store=MemoryTokenStore())
