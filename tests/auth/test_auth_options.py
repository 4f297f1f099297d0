"""``--auth`` / ``--auth-file`` / ``--allow-unauthenticated`` (``trimcp._auth_options``)."""

from __future__ import annotations

import argparse
from pathlib import Path  # noqa: TC003  (pytest resolves fixture annotations)

import pytest

from trimcp._auth_options import add_auth_options, resource_server_from_args
from trimcp.auth import ResourceServer
from trimcp.errors import ConfigError

JWT = [
    "verifier=jwt",
    "resource=http://127.0.0.1:8000/mcp",
    "authorization_servers=http://127.0.0.1:9000",
    "jwks_url=http://127.0.0.1:9000/jwks",
]


def _args(*words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_auth_options(parser)
    return parser.parse_args(list(words))


def _auth(*items: str) -> list[str]:
    return [word for item in items for word in ("--auth", item)]


def test_no_auth_on_loopback_is_no_resource_server() -> None:
    assert resource_server_from_args(_args(), "127.0.0.1") is None
    assert resource_server_from_args(_args(), "localhost") is None


def test_no_auth_elsewhere_is_refused_unless_meant() -> None:
    with pytest.raises(ConfigError, match=r"refusing to serve on 0\.0\.0\.0 without auth"):
        resource_server_from_args(_args(), "0.0.0.0")
    assert resource_server_from_args(_args("--allow-unauthenticated"), "0.0.0.0") is None


def test_keys_build_the_resource_server_serve_would() -> None:
    args = _args(*_auth(*JWT, "required_scopes=mcp", "required_scopes=files:read", "leeway=5"))
    server = resource_server_from_args(args, "0.0.0.0")
    assert isinstance(server, ResourceServer)
    assert server.metadata.resource == "http://127.0.0.1:8000/mcp"
    assert set(server.metadata.scopes_supported or ()) >= {"mcp", "files:read"}


def test_a_file_then_keys_on_top(tmp_path: Path) -> None:
    path = tmp_path / "sys_config.toml"
    lines = [f"{item.split('=', 1)[0]} = {item.split('=', 1)[1]!r}" for item in JWT[:2]]
    path.write_text(
        "[auth]\n" + "\n".join(lines).replace("'", '"') + "\n"
        'authorization_servers = ["http://127.0.0.1:9000"]\n'
    )
    args = _args("--auth-file", str(path), *_auth(JWT[3]))
    server = resource_server_from_args(args, "127.0.0.1")
    assert isinstance(server, ResourceServer)


def test_mistakes_are_explained(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not KEY=VALUE"):
        resource_server_from_args(_args(*_auth("verifier")), "127.0.0.1")
    with pytest.raises(ConfigError, match="verifier"):
        resource_server_from_args(_args(*_auth("verifier=magic")), "127.0.0.1")
    with pytest.raises(ConfigError, match="verifer"):
        resource_server_from_args(_args(*_auth("verifer=jwt")), "127.0.0.1")
    with pytest.raises(ConfigError, match="cannot read --auth-file"):
        resource_server_from_args(_args("--auth-file", str(tmp_path / "no.toml")), "127.0.0.1")
    (tmp_path / "empty.toml").write_text("[http]\nport = 1\n")
    with pytest.raises(ConfigError, match=r"has no \[auth\] table"):
        resource_server_from_args(_args("--auth-file", str(tmp_path / "empty.toml")), "::1")


def test_over_stdio_auth_is_refused_and_none_is_nothing() -> None:
    assert resource_server_from_args(_args(), "0.0.0.0", http=False) is None
    with pytest.raises(ConfigError, match="--auth applies to --http only"):
        resource_server_from_args(_args(*_auth(*JWT)), "127.0.0.1", http=False)


def test_an_allowed_unauthenticated_listener_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert resource_server_from_args(_args("--allow-unauthenticated"), "0.0.0.0") is None
    assert "listening on 0.0.0.0 without authorization" in caplog.text
    caplog.clear()
    assert resource_server_from_args(_args("--allow-unauthenticated"), "127.0.0.1") is None
    assert caplog.text == ""
