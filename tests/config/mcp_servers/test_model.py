"""ServerConfig values: equality without the source, a stable fingerprint, and diff_configs."""

from __future__ import annotations

import dataclasses

import pytest

from trimcp.config.mcp_servers._model import (
    INLINE,
    ClientConfig,
    ConfigDiff,
    ConfigSource,
    ServerConfig,
    diff_configs,
)

USER = ConfigSource("/home/me/.config/trimcp/mcp.json", "user")
PROJECT = ConfigSource("/work/.mcp.json", "project")


def stdio(name: str = "everything", **changes: object) -> ServerConfig:
    server = ServerConfig(
        name=name,
        transport="stdio",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-everything"),
        env={"TOKEN": "${TOKEN}"},
        source=USER,
    )
    return dataclasses.replace(server, **changes)  # type: ignore[arg-type]


def test_defaults_are_the_documented_ones() -> None:
    server = ServerConfig(name="s", transport="http", url="https://example.com/mcp")
    assert server.enabled is True
    assert server.auto_connect is True
    assert server.startup_timeout == 30.0
    assert server.request_timeout == 60.0
    assert server.reset_timeout_on_progress is True
    assert server.max_request_timeout is None
    assert server.always_allow == ()
    assert server.source == INLINE
    assert dict(server.env) == {}
    assert dict(server.headers) == {}


def test_source_is_not_part_of_equality_or_fingerprint() -> None:
    moved = stdio(source=PROJECT)
    assert moved == stdio()
    assert hash(moved) == hash(stdio())
    assert moved.fingerprint() == stdio().fingerprint()


def test_env_order_does_not_matter() -> None:
    one = stdio(env={"A": "1", "B": "2"})
    other = stdio(env={"B": "2", "A": "1"})
    assert one == other
    assert one.fingerprint() == other.fingerprint()


@pytest.mark.parametrize(
    "change",
    [
        {"command": "uvx"},
        {"args": ("-y",)},
        {"env": {"TOKEN": "other"}},
        {"env_passthrough": ("HOME",)},
        {"cwd": "/srv"},
        {"enabled": False},
        {"auto_connect": False},
        {"request_timeout": 61.0},
        {"startup_timeout": 5.0},
        {"reset_timeout_on_progress": False},
        {"max_request_timeout": 600.0},
        {"always_allow": ("read_file",)},
        {"name": "other"},
    ],
)
def test_any_field_but_source_changes_the_fingerprint(change: dict[str, object]) -> None:
    changed = dataclasses.replace(stdio(), **change)  # type: ignore[arg-type]
    assert changed != stdio()
    assert changed.fingerprint() != stdio().fingerprint()


def test_fingerprint_is_a_stable_hex_digest() -> None:
    assert stdio().fingerprint() == stdio().fingerprint()
    assert len(stdio().fingerprint()) == 64
    int(stdio().fingerprint(), 16)


def test_caller_dicts_are_copied_and_read_only() -> None:
    env = {"A": "1"}
    server = stdio(env=env)
    env["A"] = "changed"
    assert server.env["A"] == "1"
    with pytest.raises(TypeError):
        server.env["A"] = "x"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        server.command = "x"  # type: ignore[misc]


def test_definition_is_plain_json_ready() -> None:
    definition = stdio().definition()
    assert definition["args"] == ["-y", "@modelcontextprotocol/server-everything"]
    assert definition["env"] == {"TOKEN": "${TOKEN}"}
    assert "name" not in definition
    assert "source" not in definition


def test_source_describes_file_and_layer() -> None:
    assert USER.describe() == "/home/me/.config/trimcp/mcp.json (user config)"
    assert PROJECT.describe() == "/work/.mcp.json (project config)"
    assert INLINE.describe() == "<inline> (given in code)"
    assert ConfigSource("/a.json", "explicit").describe() == "/a.json (named with --config)"


def test_diff_sorts_every_name_into_one_set() -> None:
    old = {"same": stdio("same"), "edited": stdio("edited"), "gone": stdio("gone")}
    new = {
        "same": stdio("same", source=PROJECT),
        "edited": stdio("edited", args=("--verbose",)),
        "fresh": stdio("fresh"),
    }
    assert diff_configs(old, new) == ConfigDiff(
        added=frozenset({"fresh"}),
        removed=frozenset({"gone"}),
        changed=frozenset({"edited"}),
        unchanged=frozenset({"same"}),
    )


def test_diff_accepts_client_configs() -> None:
    old = ClientConfig({"a": stdio("a")})
    new = ClientConfig({"a": stdio("a", enabled=False)})
    diff = diff_configs(old, new)
    assert diff.changed == {"a"}
    assert diff.added == diff.removed == diff.unchanged == frozenset()


def test_diff_of_empty_configs_is_empty() -> None:
    assert diff_configs({}, {}) == ConfigDiff(frozenset(), frozenset(), frozenset(), frozenset())


def test_repr_and_shown_hide_env_and_header_values_but_keep_their_names() -> None:
    # After expansion the values are the credentials themselves: a log line or a traceback
    # that prints the config must not carry them.
    server = ServerConfig(
        name="api",
        transport="http",
        url="https://api.example/mcp",
        headers={"Authorization": "Bearer sk-header-secret"},
    )
    launched = stdio(env={"API_KEY": "sk-env-secret", "DEBUG": "1"})
    for config in (server, launched):
        for text in (repr(config), str(config), repr(ClientConfig({"x": config}))):
            assert "sk-" not in text
            assert "***" in text
    assert "'Authorization': '***'" in repr(server)
    assert "'API_KEY': '***'" in repr(launched)
    assert "url='https://api.example/mcp'" in repr(server)
    shown = launched.shown()
    assert shown["env"] == {"API_KEY": "***", "DEBUG": "***"}
    assert shown["command"] == "npx"
    # The real values are still there for the connector and the fingerprint.
    assert launched.env["API_KEY"] == "sk-env-secret"
    assert launched.definition()["env"] == {"API_KEY": "sk-env-secret", "DEBUG": "1"}
