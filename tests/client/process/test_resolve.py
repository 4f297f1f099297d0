"""Finding a server's program, and the text of the errors when that fails."""

from __future__ import annotations

import errno
import os
import sys
from typing import TYPE_CHECKING

import pytest

from trimcp.client.process._launch_errors import not_found
from trimcp.client.process._resolve import resolve_command, runnable, spawn_error
from trimcp.client.process._text import LaunchContext, redact_arguments
from trimcp.errors import CommandNotExecutable, CommandNotFound, LaunchFailed, TransportBroken

if TYPE_CHECKING:
    from pathlib import Path

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX execute bits")

SOURCE = "/home/me/.config/trimcp/mcp.json (user config)"


def _context(*argv: str, platform: str = sys.platform) -> LaunchContext:
    return LaunchContext(server="files", source=SOURCE, argv=argv, platform=platform)


def _program(path: Path, *, executable: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755 if executable else 0o644)
    return path


@posix_only
def test_bare_name_is_searched_on_the_childs_path(tmp_path: Path) -> None:
    program = _program(tmp_path / "bin" / "my-server")
    resolved = resolve_command(
        _context("my-server", "--stdio"),
        environment={"PATH": f"{tmp_path / 'empty'}{os.pathsep}{tmp_path / 'bin'}"},
        cwd=None,
    )
    assert resolved.program == str(program)
    assert resolved.argv == (str(program), "--stdio")
    assert resolved.popen_command() == resolved.argv


def test_not_found_names_server_source_command_and_path(tmp_path: Path) -> None:
    bin_a, bin_b = tmp_path / "a", tmp_path / "b"
    search = os.pathsep.join([str(bin_a), str(bin_b), str(bin_a)])
    with pytest.raises(CommandNotFound) as caught:
        resolve_command(
            _context("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"),
            environment={"PATH": search},
            cwd=None,
        )
    error = caught.value
    assert isinstance(error, TransportBroken)
    assert error.server == "files"
    assert error.searched == (str(bin_a), str(bin_b))
    text = str(error)
    assert (
        text.splitlines()[0]
        == 'MCP server "files" could not be started: command "npx" was not found'
    )
    assert f"  config:   {SOURCE}" in text
    assert "  command:  npx -y @modelcontextprotocol/server-filesystem /tmp" in text
    assert f"  searched: {bin_a}\n            {bin_b}\n" in text
    assert '"npx" is not installed (it comes with Node.js)' in text
    assert "install Node.js: https://nodejs.org" in text
    assert "`command -v npx`" in text
    assert '"env_passthrough"' in text
    assert "shell profile" in text


def test_not_found_says_when_env_replaced_path() -> None:
    with pytest.raises(CommandNotFound) as caught:
        resolve_command(
            _context("uvx", "mcp-server-git"),
            environment={"PATH": "/nonexistent"},
            cwd=None,
            path_from_env=True,
        )
    text = str(caught.value)
    assert "the server's \"env\" sets PATH, which replaces trimcp's PATH here" in text
    assert '"uvx" is not installed (it comes with uv)' in text


def test_not_found_without_path_searches_the_default_path() -> None:
    with pytest.raises(CommandNotFound) as caught:
        resolve_command(_context("surely-not-a-program-x1"), environment={}, cwd=None)
    expected = [entry for entry in os.defpath.split(os.pathsep) if entry]
    assert list(caught.value.searched) == list(dict.fromkeys(expected))


def test_windows_not_found_hints() -> None:
    error = not_found(
        _context("npx", platform="win32"), searched=[r"C:\nodejs"], path_from_env=False
    )
    text = str(error)
    assert "`where npx`" in text
    assert '"npx.cmd"' in text
    assert "PATHEXT" in text
    assert "restart it" in text


@posix_only
def test_program_on_path_without_execute_bit(tmp_path: Path) -> None:
    program = _program(tmp_path / "my-server", executable=False)
    with pytest.raises(CommandNotExecutable) as caught:
        resolve_command(_context("my-server"), environment={"PATH": str(tmp_path)}, cwd=None)
    text = str(caught.value)
    assert f"permission denied running {program}" in text
    assert f"chmod +x {program}" in text
    assert '"command": "bash"' in text


@posix_only
def test_relative_command_starts_in_cwd(tmp_path: Path) -> None:
    program = _program(tmp_path / "tools" / "server.sh")
    resolved = resolve_command(
        _context("./tools/server.sh"), environment={"PATH": ""}, cwd=str(tmp_path)
    )
    assert resolved.program == str(program)


def test_missing_relative_command_mentions_the_working_directory(tmp_path: Path) -> None:
    with pytest.raises(CommandNotFound) as caught:
        resolve_command(_context("bin/server"), environment={}, cwd=str(tmp_path))
    text = str(caught.value)
    assert f"the program {tmp_path / 'bin' / 'server'} does not exist" in text
    assert f"working directory ({tmp_path})" in text


@posix_only
def test_home_relative_command_uses_the_childs_home(tmp_path: Path) -> None:
    program = _program(tmp_path / "bin" / "server")
    resolved = resolve_command(
        _context("~/bin/server"), environment={"HOME": str(tmp_path)}, cwd=None
    )
    assert resolved.program == str(program)


def test_directory_is_not_a_program(tmp_path: Path) -> None:
    with pytest.raises(CommandNotExecutable) as caught:
        resolve_command(_context(str(tmp_path)), environment={}, cwd=None)
    assert f"{tmp_path} is a directory, not a program" in str(caught.value)


def test_missing_working_directory(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(LaunchFailed) as caught:
        resolve_command(_context(sys.executable), environment={}, cwd=str(missing))
    text = str(caught.value)
    assert "its working directory does not exist" in text
    assert f"  cwd:      {missing}" in text


def test_windows_batch_files_run_through_cmd() -> None:
    resolved = runnable(
        r"C:\Program Files\nodejs\npx.cmd",
        ["-y", "@scope/server name"],
        environment={"ComSpec": r"C:\Windows\system32\cmd.exe"},
        platform="win32",
    )
    assert resolved.argv == (
        r"C:\Windows\system32\cmd.exe",
        "/d",
        "/s",
        "/c",
        r"C:\Program Files\nodejs\npx.cmd",
        "-y",
        "@scope/server name",
    )
    assert resolved.popen_command() == (
        r"C:\Windows\system32\cmd.exe /d /s /c "
        r'""C:\Program Files\nodejs\npx.cmd" -y "@scope/server name""'
    )


def test_windows_batch_without_comspec_uses_systemroot() -> None:
    resolved = runnable(
        r"C:\x\run.BAT", [], environment={"SYSTEMROOT": r"C:\Win"}, platform="win32"
    )
    assert resolved.argv[0] == r"C:\Win\System32\cmd.exe"
    assert runnable("/usr/bin/run.cmd", [], environment={}, platform="linux").verbatim is None


def test_missing_interpreter_of_a_script(tmp_path: Path) -> None:
    script = tmp_path / "server"
    script.write_text("#!/usr/bin/env -S nodeq --experimental\nconsole.log(1)\n")
    context = _context(str(script))
    resolved = runnable(str(script), [], environment={}, platform=sys.platform)
    error = spawn_error(context, resolved, FileNotFoundError(errno.ENOENT, "No such file"))
    assert isinstance(error, CommandNotFound)
    text = str(error)
    assert '"nodeq", which runs its script, was not found' in text
    assert "  shebang:  #!/usr/bin/env -S nodeq --experimental" in text


def test_other_spawn_failures(tmp_path: Path) -> None:
    program = str(tmp_path / "prog")
    resolved = runnable(program, [], environment={}, platform=sys.platform)
    context = _context(program)
    denied = spawn_error(context, resolved, PermissionError(errno.EACCES, "Permission denied"))
    assert isinstance(denied, CommandNotExecutable)
    vanished = spawn_error(context, resolved, FileNotFoundError(errno.ENOENT, "gone"))
    assert isinstance(vanished, CommandNotFound)
    assert "does not exist" in str(vanished)
    format_error = spawn_error(context, resolved, OSError(errno.ENOEXEC, "Exec format error"))
    assert type(format_error) is LaunchFailed
    assert "could not be started: Exec format error" in str(format_error)
    assert "built for another CPU" in str(format_error)


def test_secret_looking_arguments_are_hidden() -> None:
    argv = ["server", "--token=abc", "--api-key", "k", "API_KEY=v", "-p", "8", "--authority=x"]
    assert redact_arguments(argv) == [
        "server",
        "--token=REDACTED",
        "--api-key",
        "REDACTED",
        "API_KEY=REDACTED",
        "-p",
        "8",
        "--authority=REDACTED",
    ]
    assert _context("docker", "run", "-e", "GITHUB_TOKEN=ghp_x").command_line() == (
        "docker run -e GITHUB_TOKEN=REDACTED"
    )


def test_command_line_stays_on_one_line() -> None:
    script = "import sys\n" + "x = 1\n" * 40
    line = _context("python3", "-c", script).command_line()
    assert "\n" not in line
    assert line.startswith("python3 -c 'import sys\\nx = 1\\n")
    assert line.endswith("... (131 more characters)'")
