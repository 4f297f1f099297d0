"""The ``trimcp`` command, run in-process through main() and once as a real process."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import trimcp
from trimcp.cli import main
from trimcp.cli._main import _apply_reload
from trimcp.config import validate_config

if TYPE_CHECKING:
    from collections.abc import Iterator

BROKEN = '[supervision]\nintensity = "three"\n'
SERVER_MODULE = 'from trimcp.server import MCPServer\n\nserver = MCPServer("checked", "2.0")\n'


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run each command in an empty directory, with TRIMCP_CONFIG unset and logging restored."""
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_check_ok_names_the_files_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main_file = write(tmp_path / "main.toml", 'include = ["more.toml"]\n')
    more = write(tmp_path / "more.toml", "[actors]\nmailbox_size = 3\n")
    assert main(["config", "check", str(main_file)]) == 0
    out, err = capsys.readouterr()
    first, second = out.splitlines()
    assert first == f"OK: configuration is valid; read {main_file}, {more}"
    assert second.startswith("OK: MCP servers configuration is valid")
    assert err == ""


def test_check_without_any_file_uses_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "check"]) == 0
    assert "every setting has its default" in capsys.readouterr().out


def test_check_reads_the_local_sys_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = write(tmp_path / "sys_config.toml", "")
    assert main(["config", "check"]) == 0
    assert str(local) in capsys.readouterr().out


def test_check_reads_the_file_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path / "env.toml", BROKEN)
    monkeypatch.setenv("TRIMCP_CONFIG", str(broken))
    assert main(["config", "check"]) == 1
    assert f"config error in {broken}" in capsys.readouterr().err


def test_check_broken_prints_the_error_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path / "broken.toml", BROKEN)
    assert main(["config", "check", str(broken)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"config error in {broken}\n")
    assert "  key:      supervision.intensity\n" in err
    assert '  given:    "three" (a string)\n' in err


def test_check_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = write(tmp_path / "broken.toml", "[supervision\n")
    assert main(["config", "check", str(broken)]) == 1
    assert "line 1, column 13" in capsys.readouterr().err


def test_show_prints_toml_that_loads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "c.toml", '[logging]\nlevel = "debug"\n')
    assert main(["config", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# the configuration in effect (read: {path})\n")
    assert validate_config(tomllib.loads(out)) == validate_config({"logging": {"level": "DEBUG"}})


def test_show_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "c.toml", "[actors]\nmailbox_size = 2\n")
    assert main(["config", "show", "--json", str(path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["sources"] == [str(path)]
    assert shown["actors"] == {"mailbox_size": 2, "call_timeout": 5.0}


def test_show_broken_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = write(tmp_path / "broken.toml", BROKEN)
    assert main(["config", "show", str(broken)]) == 1
    assert "supervision.intensity" in capsys.readouterr().err


def test_serve_with_a_broken_config_fails_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path / "broken.toml", BROKEN)
    assert main(["serve", "--config", str(broken)]) == 1
    assert f"config error in {broken}" in capsys.readouterr().err


def test_check_reports_a_malformed_host_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "c.toml", '[http]\nallowed_hosts = ["localhost:*", "a b:*"]\n')
    assert main(["config", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"config error in {path}\n")
    assert "  key:      http.allowed_hosts[1]\n" in err
    assert "malformed host pattern 'a b:*'" in err


def test_check_accepts_a_listener_without_a_server_object(tmp_path: Path) -> None:
    # It serves the gateway over the upstreams (trimcp.daemon).
    path = write(tmp_path / "c.toml", "[http]\nenabled = true\n")
    assert main(["config", "check", str(path)]) == 0


def test_show_json_has_the_listener_tables_and_no_key_origins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "c.toml", "[http]\nport = 9000\n")
    assert main(["config", "show", "--json", str(path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert "written_by" not in shown
    assert shown["http"]["port"] == 9000
    assert shown["http"]["allowed_hosts"] == ["localhost:*", "127.0.0.1:*", "[::1]:*"]
    assert shown["stdio"] == {"enabled": False}


def test_serve_with_a_server_it_cannot_load_fails_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "c.toml", '[server]\nobject = "no_such_module_here:server"\n')
    assert main(["serve", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"config error in {path}\n" in err
    assert "  key:      server.object\n" in err
    assert "no module named 'no_such_module_here'" in err


async def test_a_reload_applies_logging_and_says_listeners_are_not_rebound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = validate_config({"http": {"port": 9000}})
    reloaded = validate_config({"logging": {"level": "debug"}, "http": {"port": 9001}})
    caplog.set_level(logging.INFO, logger="trimcp.cli")
    await _apply_reload(started, None, object(), reloaded)
    assert logging.getLogger().level == logging.DEBUG
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "SIGHUP: changes to [http] take effect only when trimcp serve restarts"),
        (
            "INFO",
            "SIGHUP: applied [logging] and application.stop_timeout; listeners are not rebound",
        ),
    ]


class _BrokenDaemon:
    async def reload(self, config: object) -> None:
        raise RuntimeError("boom")


async def test_a_reload_that_fails_is_logged_and_the_daemon_carries_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # _apply_reload runs in the signal handler's task: raising there would stop the daemon.
    config = validate_config({})
    caplog.set_level(logging.INFO, logger="trimcp.cli")
    await _apply_reload(config, _BrokenDaemon(), object(), config)  # type: ignore[arg-type]
    assert "SIGHUP: reloading the upstream MCP servers failed" in caplog.text
    assert "RuntimeError: boom" in caplog.text


def test_usage_errors_exit_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["config"], ["config", "frobnicate"], ["serve", "extra"]):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 2
    assert "usage: trimcp" in capsys.readouterr().err


@pytest.mark.slow
def test_python_m_trimcp_config_check_broken(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.toml", BROKEN)
    # Point the child at this checkout even when trimcp is not installed.
    package_root = str(Path(trimcp.__file__).resolve().parents[1])
    result = subprocess.run(
        [sys.executable, "-m", "trimcp", "config", "check", "broken.toml"],
        cwd=tmp_path,
        env={"PYTHONPATH": package_root, "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"config error in {broken}\n")
    assert "key:      supervision.intensity" in result.stderr


@pytest.mark.slow
def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    # `trimcp config show | head -c 0`: the reader has closed the pipe before the first write.
    command = [sys.executable, "-m", "trimcp", "config", "show", "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        process.stdout.close()
        assert process.stderr is not None
        stderr = process.stderr.read()
        process.wait(timeout=60)
    assert b"Traceback" not in stderr
    assert b"Exception ignored" not in stderr
    assert process.returncode == 1


# --- config check imports the [server] object and warns about what would not run ----------


@pytest.fixture
def module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[str]:
    """A fresh module name for a file in tmp_path; sys.path, sys.modules and HOME restored."""
    monkeypatch.setattr(sys, "path", sys.path[:])
    monkeypatch.setenv("HOME", str(tmp_path))  # no user mcpServers file
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    name = f"check_{request.node.name.replace('-', '_')}_{id(request)}"
    yield name
    sys.modules.pop(name, None)


def _served(name: str, listener: str = "[stdio]\nenabled = true\n") -> str:
    return f'[server]\nobject = "{name}:server"\npath = ["."]\n{listener}'


def test_check_imports_the_server_object_as_serve_will(
    tmp_path: Path, module_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / f"{module_name}.py", SERVER_MODULE)
    path = write(tmp_path / "c.toml", _served(module_name))
    assert main(["config", "check", str(path)]) == 0
    out, err = capsys.readouterr()
    assert f"OK: [server] object = {module_name}:server imports: checked 2.0\n" in out
    assert err == ""


def test_check_reports_a_server_object_that_fails_to_import(
    tmp_path: Path, module_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / f"{module_name}.py", "import json\nsettings = json.loads('{')\n")
    path = write(tmp_path / "c.toml", _served(module_name))
    assert main(["config", "check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"config error in {path}\n")
    assert "  key:      server.object\n" in err
    assert f"importing '{module_name}' raised JSONDecodeError" in err
    assert f"at {tmp_path / module_name}.py:2\n" in err


def test_check_warns_when_no_listener_serves_the_server(
    tmp_path: Path, module_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / f"{module_name}.py", SERVER_MODULE)
    path = write(tmp_path / "c.toml", _served(module_name, listener=""))
    assert main(["config", "check", str(path)]) == 0  # a warning, not an error
    err = capsys.readouterr().err
    assert err == (
        f"warning: [server] object = {module_name}:server would be loaded but not served: no"
        f" listener is enabled; enable [http], [websocket] or [stdio] in {path}, or run  trimcp"
        " serve --stdio\n"
    )


def test_check_warns_about_upstream_commands_that_are_not_found(
    tmp_path: Path, module_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    del module_name  # for its HOME: no user mcpServers file
    servers = {
        "ghost": {"command": "no-such-program-here-xyz", "args": ["--serve"]},
        "relative": {"command": "./bin/missing.sh"},
        "python": {"command": sys.executable, "args": ["-V"]},
        "off": {"command": "no-such-program-either", "enabled": False},
    }
    mcp = write(tmp_path / "mcp.json", json.dumps({"mcpServers": servers}))
    assert main(["config", "check", "--config", str(mcp)]) == 0
    out, err = capsys.readouterr()
    assert "OK: MCP servers configuration is valid" in out
    warnings = err.splitlines()
    assert len(warnings) == 2, err
    source = f"{mcp} (named with --config)"
    assert warnings[0].startswith(
        f'warning: upstream "ghost" ({source}): command "no-such-program-here-xyz" is not found'
        " on PATH ("
    )
    assert warnings[0].endswith('; install it, or write its full path in "command"')
    assert warnings[1] == (
        f'warning: upstream "relative" ({source}): command "./bin/missing.sh" is not an'
        f" executable file ({tmp_path / 'bin' / 'missing.sh'})"
    )
