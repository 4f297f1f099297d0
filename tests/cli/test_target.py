"""TARGET classification (``trimcp.cli._target``)."""

from __future__ import annotations

import sys
from pathlib import Path  # noqa: TC003  (pytest resolves fixture annotations)

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.cli._target import parse_target
from trimcp.errors import ConfigError


def test_a_plain_word_is_a_configured_server() -> None:
    target = parse_target("demo")
    assert (target.kind, target.name) == ("configured", "demo")
    with pytest.raises(ValueError, match="configured server"):
        target.server_config()


def test_a_python_file_runs_under_this_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my demo.py").write_text("")
    monkeypatch.chdir(tmp_path)
    target = parse_target("my demo.py")
    assert target.kind == "file"
    assert target.name == "my-demo"
    assert target.path == tmp_path / "my demo.py"
    config = target.server_config()
    assert config.command == sys.executable
    assert config.args == ("-m", "trimcp", "run", str(tmp_path / "my demo.py"), "--stdio")
    assert config.cwd == str(tmp_path)
    named = parse_target("my demo.py:app")
    assert (named.name, named.attribute) == ("app", "app")
    assert named.run_spec() == f"{tmp_path / 'my demo.py'}:app"


def test_a_missing_file_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"no such Python file: nope\.py \(looked in"):
        parse_target("nope.py")


def test_after_the_colon_comes_a_name(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("")
    with pytest.raises(ConfigError, match="name of the server object"):
        parse_target(f"{tmp_path / 's.py'}:1x")


def test_module_url_and_command() -> None:
    module = parse_target("myapp.server:build")
    assert (module.kind, module.name, module.attribute) == ("module", "server", "build")
    assert module.server_config().args[-2:] == ("myapp.server:build", "--stdio")
    url = parse_target("http://127.0.0.1:8000/mcp")
    assert (url.kind, url.name, url.server_config().transport) == ("url", "127-0-0-1", "http")
    assert parse_target("ws://localhost/x").server_config().transport == "websocket"
    command = parse_target(None, ["node", "/srv/my__server.js", "--flag"])
    assert (command.kind, command.name) == ("command", "my_server")
    assert parse_target(None, ["npx", "-y", "@scope/server-x"]).name == "server-x"
    assert parse_target(None, ["/usr/bin/my-server", "--port", "1"]).name == "my-server"
    config = command.server_config()
    assert (config.command, config.args) == ("node", ("/srv/my__server.js", "--flag"))


def test_target_and_command_or_neither_is_refused() -> None:
    with pytest.raises(ConfigError, match="not both"):
        parse_target("demo", ["node", "x.js"])
    with pytest.raises(ConfigError, match="no TARGET"):
        parse_target(None)


@given(st.text(max_size=40))
def test_any_text_is_classified_or_refused_clearly(text: str) -> None:
    try:
        target = parse_target(text)
    except ConfigError as exc:
        message = str(exc)
        assert message  # a message, never an empty error
        return
    assert target.name
    assert "__" not in target.name or target.kind == "configured"
