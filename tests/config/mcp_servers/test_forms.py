"""Every accepted way of writing a server: mcpServers, servers, upstreams; JSON, TOML, YAML."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import pytest

from trimcp.config.mcp_servers._files import client_config_from_mapping, load_client_config
from trimcp.config.mcp_servers._model import ConfigSource, ServerConfig

if TYPE_CHECKING:
    from pathlib import Path

    from trimcp.config.mcp_servers._model import ClientConfig

ENV = {"TOKEN": "t", "HOME": "/home/me"}


def load(tmp_path: Path, name: str, text: str) -> ClientConfig:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_client_config([path], environ=ENV, cwd=tmp_path)


def only(config: ClientConfig) -> ServerConfig:
    (server,) = config.servers.values()
    return server


def test_mcp_servers_json(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "mcp.json",
        """
        {"mcpServers": {"everything": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-everything"],
            "env": {"TOKEN": "${TOKEN}"},
            "cwd": "/srv",
            "env_passthrough": ["AWS_PROFILE"]
        }}}
        """,
    )
    server = config.servers["everything"]
    assert server.transport == "stdio"
    assert server.command == "npx"
    assert server.args == ("-y", "@modelcontextprotocol/server-everything")
    assert dict(server.env) == {"TOKEN": "${TOKEN}"}  # raw: expanded only at connect time
    assert server.cwd == "/srv"
    assert server.env_passthrough == ("AWS_PROFILE",)
    assert server.source == ConfigSource(str(tmp_path / "mcp.json"), "explicit")
    assert config.sources == (server.source,)
    assert config.warnings == ()


def test_servers_form_takes_command_as_one_array(tmp_path: Path) -> None:
    server = only(
        load(tmp_path, "mcp.json", '{"servers": {"s": {"command": ["uvx", "srv", "-v"]}}}')
    )
    assert (server.command, server.args) == ("uvx", ("srv", "-v"))


def test_both_forms_give_equal_definitions(tmp_path: Path) -> None:
    array = only(load(tmp_path, "a.json", '{"servers": {"s": {"command": ["uvx", "srv"]}}}'))
    split = only(
        load(tmp_path, "b.json", '{"mcpServers": {"s": {"command": "uvx", "args": ["srv"]}}}')
    )
    assert array == split


def test_servers_form_also_takes_vs_code_string_command(tmp_path: Path) -> None:
    server = only(
        load(
            tmp_path,
            "mcp.json",
            '{"servers": {"s": {"type": "stdio", "command": "node", "args": ["srv.js"]}}}',
        )
    )
    assert (server.transport, server.command, server.args) == ("stdio", "node", ("srv.js",))


def test_toml_upstreams_in_a_sys_config_style_file(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "sys_config.toml",
        """
        [http]
        port = 8000

        [upstreams.everything]
        command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
        request_timeout = 120

        [upstreams.remote]
        url = "https://example.com/mcp"
        headers = { Authorization = "Bearer ${TOKEN}" }
        """,
    )
    assert list(config.servers) == ["everything", "remote"]
    assert config.servers["everything"].request_timeout == 120.0
    assert config.servers["remote"].transport == "http"
    assert dict(config.servers["remote"].headers) == {"Authorization": "Bearer ${TOKEN}"}


def test_toml_mcp_servers(tmp_path: Path) -> None:
    server = only(
        load(
            tmp_path,
            "mcp.toml",
            """
            [mcpServers.fs]
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
            """,
        )
    )
    assert server.args[-1] == "/tmp"


def test_yaml(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    config = load(
        tmp_path,
        "mcp.yaml",
        """
        # comments are fine here
        mcpServers:
          fs:
            command: npx
            args: [-y, "@modelcontextprotocol/server-filesystem"]
            env:
              DEBUG: "yes"
          remote:
            url: wss://example.com/ws
        """,
    )
    assert config.servers["fs"].env["DEBUG"] == "yes"
    assert config.servers["remote"].transport == "websocket"


def test_yml_suffix_is_yaml(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    assert only(load(tmp_path, "mcp.yml", "servers:\n  s:\n    command: [uvx, s]\n")).args == ("s",)


@pytest.mark.parametrize(
    ("entry", "transport"),
    [
        ({"command": "x"}, "stdio"),
        ({"url": "http://localhost:8000/mcp"}, "http"),
        ({"url": "https://example.com/mcp"}, "http"),
        ({"url": "ws://localhost/ws"}, "websocket"),
        ({"url": "WSS://example.com/ws"}, "websocket"),
        ({"url": "https://example.com/sse", "type": "sse"}, "http"),
        ({"url": "https://example.com/mcp", "transport": "streamable-http"}, "http"),
        ({"url": "https://example.com/mcp", "type": "streamableHttp"}, "http"),
        ({"url": "https://example.com/mcp", "type": "HTTP"}, "http"),
        ({"url": "wss://example.com/ws", "transport": "ws"}, "websocket"),
        ({"command": "x", "type": "stdio"}, "stdio"),
        ({"url": "${BASE_URL}/mcp"}, "http"),
        ({"url": "${BASE_URL}/ws", "transport": "websocket"}, "websocket"),
        ({"serverUrl": "https://example.com/mcp"}, "http"),
        ({"httpUrl": "https://example.com/mcp"}, "http"),
    ],
)
def test_transport_is_inferred_and_spellings_normalised(
    entry: dict[str, object], transport: str
) -> None:
    config = client_config_from_mapping({"mcpServers": {"s": entry}}, environ={"BASE_URL": "x"})
    assert config.servers["s"].transport == transport


def test_camel_case_spellings_and_timeouts() -> None:
    config = client_config_from_mapping(
        {
            "mcpServers": {
                "s": {
                    "url": "https://example.com/mcp",
                    "autoConnect": False,
                    "startupTimeout": 5,
                    "requestTimeout": 90.5,
                    "resetTimeoutOnProgress": False,
                    "maxRequestTimeout": 600,
                }
            }
        },
        environ={},
    )
    server = config.servers["s"]
    assert server.auto_connect is False
    assert (server.startup_timeout, server.request_timeout) == (5.0, 90.5)
    assert server.reset_timeout_on_progress is False
    assert server.max_request_timeout == 600.0


def test_max_request_timeout_may_be_null() -> None:
    entry = {"command": "x", "max_request_timeout": None}
    config = client_config_from_mapping({"mcpServers": {"s": entry}}, environ={})
    assert config.servers["s"].max_request_timeout is None


@pytest.mark.parametrize(
    ("flags", "enabled"),
    [
        ({}, True),
        ({"enabled": False}, False),
        ({"disabled": True}, False),
        ({"disabled": False}, True),
    ],
)
def test_enabled_and_disabled(flags: dict[str, object], enabled: bool) -> None:
    config = client_config_from_mapping(
        {"mcpServers": {"s": {"command": "x", **flags}}}, environ={}
    )
    assert config.servers["s"].enabled is enabled


def test_empty_files_and_tables_define_nothing(tmp_path: Path) -> None:
    assert load(tmp_path, "a.json", "{}").servers == {}
    assert load(tmp_path, "b.json", '{"mcpServers": {}}').servers == {}
    assert load(tmp_path, "c.toml", "").servers == {}


def test_schema_key_is_ignored(tmp_path: Path) -> None:
    text = json.dumps(
        {"$schema": "https://example.com/s.json", "mcpServers": {"s": {"command": "x"}}}
    )
    config = load(tmp_path, "mcp.json", text)
    assert list(config.servers) == ["s"]
    assert config.warnings == ()


def test_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'\xef\xbb\xbf{"mcpServers": {"s": {"command": "x"}}}')
    assert list(load_client_config([path], environ={}).servers) == ["s"]


def test_servers_keep_the_order_written(tmp_path: Path) -> None:
    names = ["zeta", "alpha", "mid"]
    text = json.dumps({"mcpServers": {name: {"command": "x"} for name in names}})
    assert list(load(tmp_path, "mcp.json", text).servers) == names


def test_other_hosts_keys_are_ignored_with_a_warning() -> None:
    entry = {"command": "x", "disabledTools": ["rm"], "timeout": 30, "description": "d"}
    config = client_config_from_mapping({"mcpServers": {"s": entry}}, environ={})
    assert config.servers["s"].command == "x"
    fields = [warning.field for warning in config.warnings]
    assert fields == ["disabledTools", "timeout", "description"]
    assert all(warning.severity == "warning" for warning in config.warnings)
    assert "request_timeout" in config.warnings[1].fix


@pytest.mark.parametrize("key", ["alwaysAllow", "autoApprove", "always_allow"])
def test_other_hosts_always_allow_lists_are_read(key: str) -> None:
    entry = {"command": "x", key: ["read_file", "delete_file"]}
    config = client_config_from_mapping({"mcpServers": {"s": entry}}, environ={})
    assert config.servers["s"].always_allow == ("read_file", "delete_file")
    assert config.warnings == ()
    assert ServerConfig(name="s", transport="stdio", command="x").always_allow == ()


def test_always_allow_in_upstreams_toml(tmp_path: Path) -> None:
    server = only(
        load(
            tmp_path,
            "sys_config.toml",
            """
            [upstreams.fs]
            command = ["npx", "-y", "server-filesystem"]
            always_allow = ["read_file"]
            """,
        )
    )
    assert server.always_allow == ("read_file",)
