"""The ``[auth]`` table: checked keys, rules between them, what needs the world, the listeners."""

from __future__ import annotations

import logging
import textwrap
from typing import TYPE_CHECKING

import pytest

from tests.auth._issuer import rsa_key
from trimcp.auth import (
    IntrospectionVerifier,
    JwtVerifier,
    ResourceServer,
    check_exposure,
    is_loopback,
    resource_server_from_config,
)
from trimcp.cli import main
from trimcp.config import SysConfig, load_config, validate_config
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

JWT = """
[auth]
verifier = "jwt"
resource = "https://mcp.example.com/mcp"
authorization_servers = ["https://auth.example.com"]
jwks_url = "https://auth.example.com/jwks"
required_scopes = ["mcp"]
tool_scopes = ["delete_*=files:write", "run_command=exec"]
"""


def config_of(text: str) -> SysConfig:
    import tomllib

    return validate_config(tomllib.loads(textwrap.dedent(text)), file="sys_config.toml")


def test_auth_is_off_by_default() -> None:
    assert SysConfig().auth.verifier == "none"
    assert resource_server_from_config(SysConfig()) is None


def test_a_jwt_table_builds_the_resource_server() -> None:
    server = resource_server_from_config(config_of(JWT))
    assert isinstance(server, ResourceServer)
    assert isinstance(server.verifier, JwtVerifier)
    assert server.verifier.algorithms == ("RS256", "ES256")
    assert server.metadata.url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    # scopes_supported unset: every scope the table names.
    assert server.metadata.scopes_supported == ("mcp", "files:write", "exec")
    assert server.scopes.for_operation("tool", "delete_x") == ("mcp", "files:write")
    assert server.verifier.policy.issuers == ("https://auth.example.com",)
    assert server.verifier.policy.audiences == ("https://mcp.example.com/mcp",)


@pytest.mark.parametrize(
    ("table", "key", "words"),
    [
        ('verifier = "oauth"', "auth.verifier", 'one of "none", "jwt", "introspection"'),
        ('algorithms = ["none"]', "auth.algorithms[0]", '"RS256"'),
        ('resource = "http://mcp.example.com/mcp"', "auth.resource", "https:// URL"),
        ('authorization_servers = [""]', "auth.authorization_servers", "https:// URLs"),
        ('required_scopes = ["a b"]', "auth.required_scopes", "no spaces"),
        ('tool_scopes = ["delete_*"]', "auth.tool_scopes", '"pattern=scope1 scope2"'),
        ('shared_secret_env = "not a name"', "auth.shared_secret_env", "environment variable"),
        ("leeway = 3600", "auth.leeway", "from 0 to 300"),
        ("introspection_cache_size = 0", "auth.introspection_cache_size", ">= 1"),
        (
            "jwks_refres_interval = 3",
            "auth.jwks_refres_interval",
            'did you mean "jwks_refresh_interval"',
        ),
    ],
)
def test_a_bad_key_names_itself_and_what_was_expected(table: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_of(f"[auth]\n{table}\n")
    message = str(caught.value)
    assert f"key:      {key}" in message
    assert words in message


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        (
            '[auth]\nverifier = "jwt"\njwks_url = "https://a.example/jwks"',
            "auth.resource",
            "canonical URL",
        ),
        (
            JWT.replace('authorization_servers = ["https://auth.example.com"]\n', ""),
            "auth.authorization_servers",
            "at least one authorization server",
        ),
        (JWT.replace("jwks_url", "# jwks_url"), "auth.jwks_url", "exactly one key source"),
        (JWT + 'public_key_file = "k.pem"\n', "auth.public_key_file", "both jwks_url and"),
        (JWT + 'algorithms = ["HS256"]\n', "auth.algorithms", "no HS* algorithm with jwks_url"),
        (
            JWT.replace('jwks_url = "https://auth.example.com/jwks"', 'shared_secret_env = "S"')
            + 'algorithms = ["RS256"]\n',
            "auth.algorithms",
            "HS256, HS384 or HS512 only",
        ),
        (
            JWT + 'introspection_url = "https://a.example/i"\n',
            "auth.introspection_url",
            'no introspection_url with verifier = "jwt"',
        ),
        ('[auth]\njwks_url = "https://a.example/jwks"', "auth.jwks_url", 'verifier = "none"'),
        (
            JWT.replace('"jwt"', '"introspection"').replace("jwks_url", "# jwks_url"),
            "auth.introspection_url",
            "introspection needs introspection_url, client_id, client_secret_env",
        ),
        (
            JWT + "jwks_refresh_interval = 600.0\n",
            "auth.jwks_refresh_interval",
            "at most jwks_max_age",
        ),
    ],
)
def test_keys_that_do_not_fit_together_are_reported(text: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_of(text)
    message = str(caught.value)
    assert f"key:      {key}" in message, message
    assert words in message, message


def test_a_missing_secret_variable_says_which_and_how_to_set_it() -> None:
    config = config_of(
        JWT.replace('jwks_url = "https://auth.example.com/jwks"', 'shared_secret_env = "MY_SECRET"')
    )
    with pytest.raises(ConfigError) as caught:
        resource_server_from_config(config, environ={})
    assert "MY_SECRET is not set" in str(caught.value)
    assert "export MY_SECRET=" in str(caught.value)
    with pytest.raises(ConfigError, match="at least 32 bytes"):
        resource_server_from_config(config, environ={"MY_SECRET": "short"})
    server = resource_server_from_config(config, environ={"MY_SECRET": "x" * 40})
    assert isinstance(server, ResourceServer)
    assert server.verifier.algorithms == ("HS256",)  # type: ignore[attr-defined]


def test_the_introspection_secret_comes_from_the_environment() -> None:
    config = config_of(
        JWT.replace('"jwt"', '"introspection"').replace(
            'jwks_url = "https://auth.example.com/jwks"',
            'introspection_url = "https://auth.example.com/introspect"\nclient_id = "rs"\n'
            'client_secret_env = "RS_SECRET"\nclient_auth = "client_secret_post"',
        )
    )
    with pytest.raises(ConfigError, match="RS_SECRET is not set"):
        resource_server_from_config(config, environ={})
    server = resource_server_from_config(config, environ={"RS_SECRET": "s"})
    assert isinstance(server.verifier, IntrospectionVerifier)  # type: ignore[union-attr]


def test_a_pem_key_file_is_read_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "issuer.pem").write_bytes(rsa_key().as_pem(private=False))
    text = JWT.replace(
        'jwks_url = "https://auth.example.com/jwks"', 'public_key_file = "keys/issuer.pem"'
    )
    path = tmp_path / "sys_config.toml"
    path.write_text(textwrap.dedent(text))
    server = resource_server_from_config(load_config(path))
    assert isinstance(server, ResourceServer)
    (tmp_path / "keys" / "issuer.pem").write_text("not a key")
    with pytest.raises(ConfigError) as caught:
        resource_server_from_config(load_config(path))
    assert "a PEM public key" in str(caught.value)
    (tmp_path / "keys" / "issuer.pem").unlink()
    with pytest.raises(ConfigError) as caught:
        resource_server_from_config(load_config(path))
    assert f"cannot read {tmp_path / 'keys' / 'issuer.pem'}" in str(caught.value)
    assert f"config error in {path}" in str(caught.value)


def test_a_resource_not_in_canonical_form_is_refused_with_the_form_to_write() -> None:
    config = config_of(JWT.replace("https://mcp.example.com/mcp", "https://MCP.example.com/mcp/"))
    with pytest.raises(ConfigError, match=r"'https://mcp\.example\.com/mcp'"):
        resource_server_from_config(config)


# --- which listeners may start ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("mcp.example.com", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_public_listener_without_auth_is_refused_with_the_ways_out() -> None:
    config = config_of('[http]\nenabled = true\nhost = "0.0.0.0"\n')
    with pytest.raises(ConfigError) as caught:
        check_exposure(config)
    message = str(caught.value)
    assert "key:      http.host" in message
    assert "every tool is open to whoever reaches the port" in message
    assert "turn on [auth]" in message
    assert "allow_unauthenticated = true" in message
    check_exposure(
        config_of(
            '[http]\nenabled = true\nhost = "0.0.0.0"\n[auth]\nallow_unauthenticated = true\n'
        )
    )
    check_exposure(config_of(JWT + '[http]\nenabled = true\nhost = "0.0.0.0"\n'))
    check_exposure(config_of('[http]\nenabled = false\nhost = "0.0.0.0"\n'))
    with pytest.raises(ConfigError, match=r"websocket\.host"):
        check_exposure(config_of('[websocket]\nenabled = true\nhost = "10.0.0.1"\n'))


def test_the_websocket_listener_of_its_own_is_refused_with_auth_on() -> None:
    with pytest.raises(ConfigError) as caught:
        check_exposure(config_of(JWT + "[websocket]\nenabled = true\n"))
    assert "key:      websocket.enabled" in str(caught.value)
    assert "http.websocket_path" in str(caught.value)


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("isolated")
def test_config_check_reports_auth_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exposed = tmp_path / "exposed.toml"
    exposed.write_text('[http]\nenabled = true\nhost = "0.0.0.0"\n')
    assert main(["config", "check", str(exposed)]) == 1
    assert "key:      http.host" in capsys.readouterr().err
    missing = tmp_path / "missing.toml"
    missing.write_text(
        JWT.replace('jwks_url = "https://auth.example.com/jwks"', 'public_key_file = "nope.pem"')
    )
    assert main(["config", "check", str(missing)]) == 1
    assert "key:      auth.public_key_file" in capsys.readouterr().err
    good = tmp_path / "good.toml"
    good.write_text(JWT + '[http]\nenabled = true\nhost = "0.0.0.0"\n')
    assert main(["config", "check", str(good)]) == 0
