"""The tables of the MCP listeners: defaults, values, the rules between them, key origins."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from typing import TYPE_CHECKING

import pytest

from trimcp.config import (
    HttpSettings,
    ServerSettings,
    SessionSettings,
    StdioSettings,
    SysConfig,
    WebSocketSettings,
    load_config,
    render_settings,
    setting_error,
    validate_config,
)
from trimcp.errors import ConfigError
from trimcp.http import HttpOptions
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE
from trimcp.sessions import SessionLimits, SessionOptions
from trimcp.transports import DEFAULT_WEBSOCKET_PATH, LOCALHOST

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def test_defaults_are_the_documented_values() -> None:
    config = SysConfig()
    assert config.server == ServerSettings(object="", path=())
    assert config.stdio == StdioSettings(enabled=False)
    assert config.sessions == SessionSettings(
        idle_timeout=1800.0,
        max_sessions=10_000,
        initialization_timeout=60.0,
        request_timeout=60.0,
        max_message_size=4 * 1024 * 1024,
    )
    assert (config.http.enabled, config.http.host, config.http.port) == (False, "127.0.0.1", 8000)
    assert config.websocket == WebSocketSettings(
        enabled=False,
        host="127.0.0.1",
        port=8001,
        path="/mcp/ws",
        allowed_hosts=LOCALHOST,
        allowed_origins=LOCALHOST,
    )


def test_defaults_agree_with_the_layers_that_use_them() -> None:
    http, sessions = HttpSettings(), SessionSettings()
    options = HttpOptions()
    for name in (
        "path",
        "json_response",
        "stateless",
        "max_body_size",
        "keepalive_interval",
        "retry_ms",
        "resumable",
        "max_events_per_stream",
        "event_ttl",
        "allowed_hosts",
        "allowed_origins",
    ):
        assert getattr(http, name) == getattr(options, name), name
    assert http.websocket_path == options.websocket_path == DEFAULT_WEBSOCKET_PATH
    limits, per_session = SessionLimits(), SessionOptions()
    assert (sessions.idle_timeout, sessions.max_sessions) == (
        limits.idle_timeout,
        limits.max_sessions,
    )
    assert sessions.initialization_timeout == per_session.initialization_timeout
    assert sessions.request_timeout == per_session.request_timeout
    assert sessions.max_message_size == per_session.max_message_size == DEFAULT_MAX_MESSAGE_SIZE


def test_listener_settings_round_trip_through_toml() -> None:
    config = SysConfig(
        server=ServerSettings(object="myapp.server:build", path=("src", "../lib")),
        http=HttpSettings(
            enabled=True,
            host="::1",
            port=0,
            websocket_path="",
            json_response=True,
            keepalive_interval=0.0,
            allowed_hosts=("mcp.example.com:443", "*"),
            allowed_origins=("https://app.example.com", "null"),
        ),
        websocket=WebSocketSettings(enabled=True, port=9001, path="/ws"),
        stdio=StdioSettings(enabled=True),
        sessions=SessionSettings(idle_timeout=math.inf, max_sessions=1, max_message_size=1024),
    )
    assert validate_config(tomllib.loads(render_settings(config))) == config


def test_empty_allowlists_and_infinite_timeouts_are_accepted() -> None:
    config = validate_config(
        {
            "http": {"allowed_hosts": [], "allowed_origins": []},
            "sessions": {"idle_timeout": math.inf, "initialization_timeout": math.inf},
        }
    )
    assert config.http.allowed_hosts == ()
    assert config.sessions.initialization_timeout == math.inf


_BAD_VALUES = [
    # (table, line, key path, start of expected, fix)
    ("http", "port = 70000", "http.port", "an integer from 0 to 65535 (the TCP port",
     "port = 8000  in the [http] table"),
    ("http", "port = -1", "http.port", "an integer from 0 to 65535", "port = 8000"),
    ("websocket", 'port = "8001"', "websocket.port", "an integer from 0 to 65535",
     "port = 8001  in the [websocket] table"),
    ("server", 'object = "myapp.server"', "server.object",
     'a string of the form "package.module:attribute", or "" for none',
     'object = "myapp.server:server"  in the [server] table'),
    ("server", 'object = ":server"', "server.object", "a string of the form",
     'object = "myapp.server:server"'),
    ("server", 'object = "myapp:"', "server.object", "a string of the form", "object = "),
    ("server", 'object = "my app:server"', "server.object", "a string of the form", "object = "),
    ("server", 'object = "myapp:server:x"', "server.object", "a string of the form", "object ="),
    ("server", 'path = [""]', "server.path", "an array of strings of non-empty folder names",
     'path = ["src"]'),
    ("server", 'path = "src"', "server.path", "an array of strings", 'path = ["src"]'),
    ("http", 'path = "mcp"', "http.path", 'a string starting with "/"', 'path = "/mcp"'),
    ("http", 'websocket_path = "ws"', "http.websocket_path",
     'a string starting with "/", or "" for none', 'websocket_path = "/mcp/ws"'),
    ("http", 'host = ""', "http.host", "a string that is not empty", 'host = "127.0.0.1"'),
    ("http", "enabled = 1", "http.enabled", "true or false", "enabled = false"),
    ("http", "max_body_size = 0", "http.max_body_size", "an integer >= 1", "max_body_size"),
    ("http", "keepalive_interval = -1", "http.keepalive_interval", "a number >= 0",
     "keepalive_interval = 15.0"),
    ("http", "retry_ms = -1", "http.retry_ms", "an integer >= 0", "retry_ms = 1000"),
    ("http", "event_ttl = 0", "http.event_ttl", "a number > 0", "event_ttl = 300.0"),
    ("http", "max_events_per_stream = 0", "http.max_events_per_stream", "an integer >= 1",
     "max_events_per_stream = 1000"),
    ("http", "allowed_hosts = [1]", "http.allowed_hosts[0]", "an array of strings",
     'allowed_hosts = ["localhost:*", "127.0.0.1:*", "[::1]:*"]'),
    ("sessions", "idle_timeout = 0", "sessions.idle_timeout", "a number > 0",
     "idle_timeout = 1800.0"),
    ("sessions", "max_sessions = 0", "sessions.max_sessions", "an integer >= 1",
     "max_sessions = 10000"),
    ("sessions", "request_timeout = -1.5", "sessions.request_timeout", "a number > 0",
     "request_timeout = 60.0"),
    ("sessions", "max_message_size = 0", "sessions.max_message_size", "an integer >= 1",
     "max_message_size = 4194304"),
    ("stdio", 'enabled = "yes"', "stdio.enabled", "true or false", "enabled = false"),
]  # fmt: skip


@pytest.mark.parametrize("case", _BAD_VALUES, ids=lambda case: case[1])
def test_bad_value_names_file_key_expected_and_a_fix(
    write_toml: Callable[[str, str], Path], case: tuple[str, str, str, str, str]
) -> None:
    table, line, key, expected, fix = case
    path = write_toml("sys_config.toml", f"[{table}]\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert (error.file, error.key) == (str(path), key)
    assert error.expected is not None
    assert error.expected.startswith(expected)
    assert f"  fix:      write e.g.  {fix}" in str(error)


@pytest.mark.parametrize(
    "tables",
    ["[http]\nenabled = true\n", "[websocket]\nenabled = true\n[stdio]\nenabled = true\n"],
)
def test_a_listener_without_a_server_object_is_valid(
    write_toml: Callable[[str, str], Path], tables: str
) -> None:
    # It serves the gateway over the [upstreams]/mcpServers servers (trimcp.daemon), which
    # this package does not read: nothing here can tell it would serve nothing.
    config = load_config(write_toml("sys_config.toml", tables))
    assert config.server.object == ""


def test_a_listener_with_a_server_is_accepted() -> None:
    config = validate_config({"server": {"object": "myapp:server"}, "http": {"enabled": True}})
    assert config.http.enabled


def test_key_problems_come_before_rules() -> None:
    # A wrong key hides the rules: they need a whole configuration to look at.
    with pytest.raises(ConfigError) as caught:
        validate_config({"http": {"enabled": True, "port": -1}})
    assert caught.value.key == "http.port"
    assert not str(caught.value).startswith("2 problems")


def test_websocket_path_must_differ_from_the_endpoint() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config({"http": {"path": "/mcp", "websocket_path": "/mcp"}})
    assert caught.value.key == "http.websocket_path"
    assert caught.value.expected == 'a path other than http.path (/mcp), or "" for no WebSocket'


def test_http_and_websocket_cannot_share_a_port() -> None:
    data: dict[str, object] = {
        "server": {"object": "myapp:server"},
        "http": {"enabled": True, "port": 9000},
        "websocket": {"enabled": True, "port": 9000},
    }
    with pytest.raises(ConfigError) as caught:
        validate_config(data)
    assert (caught.value.key, caught.value.given) == ("websocket.port", "9000 (an integer)")
    assert "port = 9001  in the [websocket] table" in str(caught.value)
    assert "serves WebSocket at http.websocket_path (/mcp/ws)" in str(caught.value)


@pytest.mark.parametrize(
    ("http_port", "websocket"),
    [
        (0, {"port": 0}),
        (9000, {"port": 9000, "host": "::1"}),
        (9000, {"port": 9001}),
        (9000, {"port": 9000, "enabled": False}),
    ],
)
def test_ports_that_do_not_clash(http_port: int, websocket: dict[str, object]) -> None:
    validate_config(
        {
            "server": {"object": "myapp:server"},
            "http": {"enabled": True, "port": http_port},
            "websocket": {"enabled": True, **websocket},
        }
    )


def test_every_broken_rule_is_reported() -> None:
    with pytest.raises(ConfigError, match=r"^2 problems") as caught:
        validate_config(
            {
                "http": {"enabled": True, "websocket_path": "/mcp"},
                "websocket": {"enabled": True, "port": 8000},
            }
        )
    assert caught.value.key == "http.websocket_path"


def test_file_of_names_the_file_that_set_a_key(write_toml: Callable[[str, str], Path]) -> None:
    main = write_toml("main.toml", 'include = ["conf.d/http.toml"]\n[http]\nport = 1\n')
    more = write_toml("conf.d/http.toml", '[http]\nallowed_hosts = ["a:*"]\n')
    config = load_config(main)
    assert config.file_of(("http", "allowed_hosts", 0)) == str(more)
    assert config.file_of(("http", "allowed_hosts")) == str(more)
    assert config.file_of(("http", "port")) == str(main)
    assert config.file_of(("websocket", "port")) == str(main)
    assert SysConfig().file_of(("http",)) == "built-in defaults"
    assert validate_config({}, file="given.toml").file_of(("http", "port")) == "given.toml"


def test_where_keys_came_from_does_not_affect_equality(
    write_toml: Callable[[str, str], Path],
) -> None:
    first = load_config(write_toml("a.toml", "[http]\nport = 1\n"))
    second = load_config(write_toml("b.toml", "[http]\nport = 1\n"))
    assert dataclasses.replace(first, sources=()) == dataclasses.replace(second, sources=())
    assert hash(dataclasses.replace(first, sources=())) == hash(
        dataclasses.replace(second, sources=())
    )
    assert "written_by" not in repr(first)
    assert "written_by" not in first.as_dict()


def test_setting_error_reads_like_the_validators() -> None:
    error = setting_error(
        "site.toml",
        ("http", "allowed_hosts", 2),
        given="a b",
        expected="a host pattern",
        fix="write e.g.  allowed_hosts = []",
        detail=("malformed host pattern 'a b'",),
    )
    assert (error.file, error.key, error.given) == (
        "site.toml",
        "http.allowed_hosts[2]",
        '"a b" (a string)',
    )
    assert str(error) == (
        "config error in site.toml\n"
        "  malformed host pattern 'a b'\n"
        "  key:      http.allowed_hosts[2]\n"
        '  given:    "a b" (a string)\n'
        "  expected: a host pattern\n"
        "  fix:      write e.g.  allowed_hosts = []"
    )
