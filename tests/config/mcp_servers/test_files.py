"""Which files are read, in which layer, and how they merge."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from trimcp.config.mcp_servers._files import (
    default_config_sources,
    inspect_client_config,
    load_client_config,
    project_config_candidates,
    user_config_candidates,
)
from trimcp.config.mcp_servers._model import ConfigSource
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def write(path: Path, servers: dict[str, object], section: str = "mcpServers") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({section: servers}), encoding="utf-8")
    return path


def test_user_candidates_honour_xdg_config_home(home: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    candidates = user_config_candidates(environ={"XDG_CONFIG_HOME": str(xdg)}, home=home)
    assert candidates[:4] == tuple(
        xdg / "trimcp" / name for name in ("mcp.json", "mcp.toml", "mcp.yaml", "mcp.yml")
    )
    assert candidates[4] == home / ".trimcp" / "mcp.json"


@pytest.mark.parametrize("xdg", ["", "relative/path"])
def test_unset_or_relative_xdg_means_dot_config(home: Path, xdg: str) -> None:
    candidates = user_config_candidates(environ={"XDG_CONFIG_HOME": xdg}, home=home)
    assert candidates[0] == home / ".config" / "trimcp" / "mcp.json"


def test_project_candidates(project: Path) -> None:
    assert project_config_candidates(project) == (project / ".mcp.json", project / "mcp.json")


def test_no_files_no_servers(home: Path, project: Path) -> None:
    config = load_client_config(environ={}, home=home, cwd=project)
    assert config.servers == {}
    assert config.sources == ()


def test_first_existing_user_file_wins(home: Path, project: Path) -> None:
    write(home / ".trimcp" / "mcp.json", {"dot": {"command": "x"}})
    assert list(load_client_config(environ={}, home=home, cwd=project).servers) == ["dot"]
    toml = home / ".config" / "trimcp" / "mcp.toml"
    toml.parent.mkdir(parents=True)
    toml.write_text('[mcpServers.xdg]\ncommand = "x"\n', encoding="utf-8")
    config = load_client_config(environ={}, home=home, cwd=project)
    assert list(config.servers) == ["xdg"]
    assert config.sources == (ConfigSource(str(toml), "user"),)


def test_dot_mcp_json_is_preferred_in_the_project(home: Path, project: Path) -> None:
    write(project / "mcp.json", {"plain": {"command": "x"}})
    write(project / ".mcp.json", {"dotted": {"command": "x"}})
    sources = default_config_sources(environ={}, home=home, cwd=project)
    assert sources == (ConfigSource(str(project / ".mcp.json"), "project"),)


def test_project_overrides_user_by_whole_entry(home: Path, project: Path) -> None:
    user_file = write(
        home / ".config" / "trimcp" / "mcp.json",
        {
            "shared": {"command": "old", "env": {"A": "1"}, "request_timeout": 5},
            "user_only": {"command": "u"},
        },
    )
    project_file = write(
        project / ".mcp.json", {"shared": {"command": "new"}, "project_only": {"command": "p"}}
    )
    config = load_client_config(environ={}, home=home, cwd=project)
    assert list(config.servers) == ["shared", "user_only", "project_only"]
    shared = config.servers["shared"]
    assert shared.command == "new"
    assert dict(shared.env) == {}  # not merged field by field
    assert shared.request_timeout == 60.0
    assert shared.source == ConfigSource(str(project_file), "project")
    assert config.servers["user_only"].source == ConfigSource(str(user_file), "user")
    assert config.sources == (
        ConfigSource(str(user_file), "user"),
        ConfigSource(str(project_file), "project"),
    )


def test_explicit_paths_replace_the_defaults_and_later_wins(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write(home / ".config" / "trimcp" / "mcp.json", {"user": {"command": "x"}})
    write(project / ".mcp.json", {"proj": {"command": "x"}})
    first = write(tmp_path / "a.json", {"s": {"command": "first"}, "a": {"command": "x"}})
    second = tmp_path / "b.toml"
    second.write_text('[upstreams.s]\ncommand = ["second"]\n', encoding="utf-8")
    config = load_client_config([first, "../b.toml"], environ={}, home=home, cwd=project)
    assert list(config.servers) == ["s", "a"]
    assert config.servers["s"].command == "second"
    assert config.servers["s"].source == ConfigSource(str(second), "explicit")


def test_sys_config_layer_comes_first_and_its_other_tables_are_ignored(
    home: Path, project: Path, tmp_path: Path
) -> None:
    sys_config = tmp_path / "sys_config.toml"
    sys_config.write_text(
        '[supervision]\nintensity = 3\n\n[upstreams.s]\ncommand = ["daemon"]\n'
        '\n[upstreams.keep]\nurl = "https://h/"\n',
        encoding="utf-8",
    )
    write(project / ".mcp.json", {"s": {"command": "project"}})
    config = load_client_config(sys_config=sys_config, environ={}, home=home, cwd=project)
    assert config.servers["s"].command == "project"
    assert config.servers["keep"].source == ConfigSource(str(sys_config), "sys_config")


def test_sys_config_without_upstreams_defines_nothing(tmp_path: Path) -> None:
    sys_config = tmp_path / "sys_config.toml"
    sys_config.write_text("[supervision]\nintensity = 3\n", encoding="utf-8")
    assert load_client_config([], sys_config=sys_config, environ={}).servers == {}


def test_a_later_file_can_switch_a_server_off(home: Path, project: Path) -> None:
    write(home / ".config" / "trimcp" / "mcp.json", {"github": {"command": "gh", "args": ["mcp"]}})
    write(project / ".mcp.json", {"github": {"enabled": False}, "other": {"autoConnect": False}})
    report = inspect_client_config(environ={}, home=home, cwd=project)
    github = report.config.servers["github"]
    assert (github.command, github.args, github.enabled) == ("gh", ("mcp",), False)
    assert github.source.layer == "user"
    (error,) = report.errors
    assert error.server == "other"
    assert "no transport configured" in error.render()
    assert "no earlier file defines it" in error.render()


def test_a_switch_with_disabled_and_auto_connect(home: Path, project: Path) -> None:
    write(home / ".config" / "trimcp" / "mcp.json", {"s": {"command": "x", "enabled": False}})
    write(project / ".mcp.json", {"s": {"disabled": False, "auto_connect": False}})
    server = load_client_config(environ={}, home=home, cwd=project).servers["s"]
    assert (server.enabled, server.auto_connect) == (True, False)


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as caught:
        load_client_config([path], environ={})
    text = str(caught.value)
    assert f"config error in {path} (named with --config)" in text
    assert "cannot read the file: No such file or directory" in text
    assert "check the path given with --config" in text


def test_problems_of_every_file_are_collected(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    bad = write(tmp_path / "bad.json", {"s": {"command": 1}})
    good = write(tmp_path / "good.json", {"g": {"command": "x"}})
    report = inspect_client_config([broken, bad, good, tmp_path / "missing.json"], environ={})
    assert [error.source.path for error in report.errors] == [
        str(broken),
        str(bad),
        str(tmp_path / "missing.json"),
    ]
    assert list(report.config.servers) == ["g"]  # what did load, for `config check`
    assert report.render().startswith("3 errors in the MCP server configuration:")


def test_report_without_problems(tmp_path: Path) -> None:
    report = inspect_client_config(
        [write(tmp_path / "a.json", {"s": {"command": "x"}})], environ={}
    )
    assert report.ok
    assert report.render() == ""
    assert report.raise_for_errors() is report.config
