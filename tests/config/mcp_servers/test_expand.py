"""${VAR} expansion: the rules, expand_server at connect time, and warnings at load time."""

from __future__ import annotations

import dataclasses

import pytest

from trimcp.config.mcp_servers._expand import (
    Reference,
    expand,
    expand_server,
    malformed,
    references,
)
from trimcp.config.mcp_servers._files import client_config_from_mapping
from trimcp.config.mcp_servers._model import ConfigSource, ServerConfig
from trimcp.errors import ConfigError

ENV = {"HOME": "/home/me", "TOKEN": "s3cr3t", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("plain", "plain"),
        ("${HOME}/bin", "/home/me/bin"),
        ("${env:HOME}", "/home/me"),
        ("a${TOKEN}b${TOKEN}", "as3cr3tbs3cr3t"),
        ("${UNSET:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),  # :- as in a POSIX shell: unset or empty
        ("${HOME:-fallback}", "/home/me"),
        ("${UNSET:-}", ""),
        ("${UNSET:-a:-b}", "a:-b"),
        ("${UNSET:-$HOME}", "$HOME"),  # defaults are literal
        ("$${HOME}", "${HOME}"),  # the escape
        ("$$${HOME}", "$${HOME}"),  # scanned left to right: "$", then the escape
        ("$HOME", "$HOME"),  # bare $NAME is literal
        ("pa$$word", "pa$$word"),
        ("${1X} ${A-b} ${} ${OPEN", "${1X} ${A-b} ${} ${OPEN"),  # malformed stays
        ("${EMPTY}", ""),
    ],
)
def test_expansion_rules(text: str, expanded: str) -> None:
    assert expand(text, ENV) == (expanded, ())


def test_unset_without_default_is_reported_once_each() -> None:
    assert expand("${A}-${B}-${A}", {}) == ("--", ("A", "B"))


def test_references_and_malformed() -> None:
    text = "${A} ${B:-x} $${C} ${env:D} ${1X} ${OPEN"
    assert references(text) == (
        Reference("A", None),
        Reference("B", "x"),
        Reference("D", None),
    )
    assert malformed(text) == ("${1X}", "${OPEN")


def server(**changes: object) -> ServerConfig:
    base = ServerConfig(
        name="s",
        transport="stdio",
        command="${HOME}/bin/srv",
        args=("--token", "${TOKEN}", "$${LITERAL}"),
        env={"KEY": "${TOKEN}", "DIR": "${DATA_DIR:-/var/data}"},
        cwd="~/work",
        source=ConfigSource("/etc/trimcp/mcp.json", "explicit"),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_expand_server_expands_every_field_and_keeps_the_raw_one() -> None:
    raw = server()
    expanded = expand_server(raw, ENV)
    assert expanded.command == "/home/me/bin/srv"
    assert expanded.args == ("--token", "s3cr3t", "${LITERAL}")
    assert dict(expanded.env) == {"KEY": "s3cr3t", "DIR": "/var/data"}
    assert expanded.cwd == "/home/me/work"
    assert raw.command == "${HOME}/bin/srv"


def test_expand_server_url_and_headers() -> None:
    raw = ServerConfig(
        name="r",
        transport="http",
        url="${BASE:-https://example.com}/mcp",
        headers={"Authorization": "Bearer ${TOKEN}"},
    )
    expanded = expand_server(raw, ENV)
    assert expanded.url == "https://example.com/mcp"
    assert dict(expanded.headers) == {"Authorization": "Bearer s3cr3t"}


def test_relative_cwd_starts_at_the_config_files_folder() -> None:
    assert expand_server(server(cwd="tools/../srv"), ENV).cwd == "/etc/trimcp/srv"
    assert expand_server(server(cwd="/abs"), ENV).cwd == "/abs"
    inline = server(cwd="rel", source=ConfigSource(None, "inline"))
    assert expand_server(inline, ENV).cwd == "rel"


def test_unset_variables_are_an_error_at_connect_time() -> None:
    with pytest.raises(ConfigError) as caught:
        expand_server(server(), {"HOME": "/h"})
    text = str(caught.value)
    assert text.startswith("2 errors in the MCP server configuration:")
    assert "field:    args[1]" in text
    assert "field:    env.KEY" in text
    assert "expected: the environment variable TOKEN to be set (it is not set now)" in text
    assert "or give a default: ${TOKEN:-value}" in text
    assert caught.value.key == "s.args[1]"


def test_url_checked_again_after_expansion_without_quoting_it() -> None:
    raw = ServerConfig(name="r", transport="http", url="${BASE}/mcp?key=${TOKEN}")
    with pytest.raises(ConfigError) as caught:
        expand_server(raw, {"BASE": "ftp://h", "TOKEN": "s3cr3t"})
    text = str(caught.value)
    assert "after expansion the scheme is 'ftp' and the host 'h'" in text
    assert "expected: an http:// or https:// URL with a host, for the http transport" in text
    assert 'set "transport": "websocket" if the URL is right' in text
    assert "s3cr3t" not in text


def test_websocket_url_from_a_variable() -> None:
    raw = ServerConfig(name="r", transport="websocket", url="${WS}")
    assert expand_server(raw, {"WS": "wss://h/ws"}).url == "wss://h/ws"
    with pytest.raises(ConfigError, match="a ws:// or wss:// URL with a host"):
        expand_server(raw, {"WS": "https://h/ws"})


def test_load_warns_about_unset_variables_of_enabled_servers() -> None:
    config = client_config_from_mapping(
        {
            "mcpServers": {
                "on": {"command": "x", "env": {"K": "${MISSING}", "D": "${OTHER:-d}"}},
                "off": {"command": "x", "args": ["${MISSING}"], "enabled": False},
            }
        },
        environ={},
    )
    (warning,) = config.warnings
    assert (warning.server, warning.field, warning.severity) == ("on", "env.K", "warning")
    assert "MISSING" in warning.render()


def test_load_does_not_warn_when_the_variable_is_set() -> None:
    config = client_config_from_mapping(
        {"mcpServers": {"s": {"command": "${TOOL}"}}}, environ={"TOOL": "npx"}
    )
    assert config.warnings == ()
    assert config.servers["s"].command == "${TOOL}"
