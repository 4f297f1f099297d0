"""``trimcp skills``: its flags over the ``[skills]`` table, its errors, serving, and the daemon.

The parser tests run in this process. The ``@pytest.mark.slow`` ones start real processes:
``python -m trimcp skills`` over stdio (driven by trimcp's own client) and over HTTP, stopped
with SIGINT/SIGTERM, and ``python -m trimcp serve`` serving ``[skills]`` on its HTTP
listener, stopped by PID.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trimcp.cli import main as trimcp_main
from trimcp.client import ClientConfig, ProcessSpec, open_client_session, open_server_process
from trimcp.config import (
    SKILL_CATEGORIES,
    HttpSettings,
    ServerSettings,
    SkillsSettings,
    SysConfig,
    load_config,
    validate_config,
)
from trimcp.daemon import daemon_children
from trimcp.skills import build_server
from trimcp.skills._command import _parser, main, settings_from
from trimcp.testing import open_in_memory_client
from trimcp.transports.http_client import open_http_client_stream

if TYPE_CHECKING:
    import argparse

# The tools of the categories that are off by default (MCP names from issue 12).
WRITE_AND_EXECUTE_TOOLS = {
    "write_file",
    "edit_file",
    "append_file",
    "make_directory",
    "move",
    "copy",
    "delete",
    "run_command",
}
STOP_TIMEOUT = 10.0
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in ``tmp_path`` with TRIMCP_CONFIG unset, so that no file is found by default."""
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _args(*argv: str) -> argparse.Namespace:
    return _parser().parse_args(argv)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _real(path: Path) -> str:
    return os.path.realpath(path)


# --- the flags over the file ------------------------------------------------------------------


def test_without_file_or_flags_the_working_directory_is_served_read_only(cwd: Path) -> None:
    settings = settings_from(SysConfig(), _args())
    assert settings.roots == (_real(cwd),)
    assert settings.enable == ("read", "search", "vcs")
    assert settings.commands == ()


def test_flags_override_the_file(cwd: Path) -> None:
    (cwd / "conf" / "proj").mkdir(parents=True)
    (cwd / "proj").mkdir()
    config_file = _write(
        cwd / "conf" / "sys_config.toml",
        """\
        [skills]
        roots = ["proj"]
        enable = ["read"]
        commands = ["make"]
        max_result_bytes = 4096
        """,
    )
    config = load_config(config_file)
    # Roots written in the file start at the file's folder...
    from_file = settings_from(config, _args())
    assert from_file.roots == (_real(cwd / "conf" / "proj"),)
    assert (from_file.enable, from_file.commands) == (("read",), ("make",))
    # ...roots on the command line at the working directory; every flag wins over the file.
    flags = settings_from(
        config,
        _args(
            "--root",
            "proj",
            "--root",
            str(cwd / "conf"),
            "--enable",
            "search,vcs",
            "--enable",
            "write",
            "--disable",
            "vcs",
            "--allow-command",
            "pytest",
            "--allow-command",
            "make",
        ),
    )
    assert flags.roots == (_real(cwd / "proj"), _real(cwd / "conf"))
    assert flags.enable == ("search", "write")
    assert flags.commands == ("make", "pytest")
    # What no flag names keeps the file's value.
    assert flags.max_result_bytes == 4096


def test_no_roots_in_a_file_means_the_working_directory_not_the_files_folder(cwd: Path) -> None:
    config = load_config(_write(cwd / "conf" / "sys_config.toml", "[skills]\nenabled = true\n"))
    assert settings_from(config, _args()).roots == (_real(cwd),)


@pytest.mark.parametrize(
    ("argv", "enable"),
    [
        (["--enable", "vcs,read"], ("read", "vcs")),
        (["--enable", " Read , SEARCH ,,vcs "], ("read", "search", "vcs")),
        (["--enable", "read", "--enable", "read,execute"], ("read", "execute")),
        (["--disable", "vcs"], ("read", "search")),
        (["--enable", "write,execute", "--disable", "execute"], ("write",)),
    ],
)
def test_enable_and_disable(cwd: Path, argv: list[str], enable: tuple[str, ...]) -> None:
    assert settings_from(SysConfig(), _args(*argv)).enable == enable


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--enable", "wirte"],
            "argument --enable: unknown category 'wirte' (did you mean 'write'?); the"
            " categories are read, search, vcs, write, execute",
        ),
        (
            ["--disable", "read,shell"],
            "argument --disable: unknown category 'shell'; the categories are read,",
        ),
        (["--enable", ","], "argument --enable: name at least one category, from read,"),
        (["--disable", "read,search,vcs"], "no tool category is left enabled; name some"),
        (
            ["--port", "70000"],
            "argument --port: '70000' is not a port: give an integer from 0 to 65535 (0 picks"
            " a free one)",
        ),
        (["--port", "http"], "argument --port: 'http' is not a port"),
        (["--host", " "], "argument --host: give an address to bind"),
        (["--allow-command", ""], "argument --allow-command: give an executable's name"),
        (["--log-level", "loud"], "argument --log-level: invalid choice: 'LOUD'"),
        (["--root", "missing"], "--root: the root folder 'missing'"),
        (["--verbose"], "unrecognized arguments: --verbose"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    cwd: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: trimcp skills ")
    assert f"trimcp skills: error: {message}" in err
    assert "Traceback" not in err


def test_the_command_line_reaches_the_skills_parser(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        trimcp_main(["skills", "--port", "-1"])
    assert caught.value.code == 2
    assert "trimcp skills: error: argument --port: '-1' is not a port" in capsys.readouterr().err
    with pytest.raises(SystemExit) as caught:
        trimcp_main(["skills", "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: trimcp skills ")
    for flag in ("--root", "--enable", "--disable", "--config", "--http", "--allow-command"):
        assert flag in out


def test_a_missing_root_in_the_file_is_a_config_error(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cwd / "proj").mkdir()
    config_file = _write(cwd / "c.toml", '[skills]\nroots = ["proj", "gone"]\n')
    assert main(["--config", str(config_file)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"config error in {config_file}\n")
    assert "  key:      skills.roots[1]\n" in err
    assert '  given:    "gone" (a string)\n' in err
    assert f"  expected: an existing folder (a relative one starts at {cwd})\n" in err


def test_config_check_reports_a_missing_root_when_skills_is_enabled(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file = _write(cwd / "c.toml", '[skills]\nenabled = true\nroots = ["gone"]\n')
    assert trimcp_main(["config", "check", str(config_file)]) == 1
    err = capsys.readouterr().err
    assert f"config error in {config_file}\n" in err
    assert "  key:      skills.roots[0]\n" in err


def test_the_documented_host_entry_and_daemon_table_are_what_the_command_accepts() -> None:
    reference = (REPO / "docs" / "skills.md").read_text(encoding="utf-8")
    section = reference.split("\n## In a desktop host\n", 1)[1].split("\n## ", 1)[0]
    blocks = dict(re.findall(r"```(json|toml)\n(.*?)```", section, re.DOTALL))
    server = json.loads(blocks["json"])["mcpServers"]["files"]
    assert server["command"] == "<absolute path>/trimcp"
    assert server["args"][0] == "skills"
    assert _parser().parse_args(server["args"][1:]).root == ["/path/to/project"]
    config = validate_config(tomllib.loads(blocks["toml"]))
    assert config.skills.enabled
    assert config.http.enabled
    assert not config.server.object


async def test_the_reference_documents_every_tool_and_argument(tmp_path: Path) -> None:
    reference = await trio.Path(REPO / "docs" / "skills.md").read_text(encoding="utf-8")
    settings = SkillsSettings(roots=(str(tmp_path),), enable=SKILL_CATEGORIES, commands=("ls",))
    async with open_in_memory_client(build_server(settings)) as client:
        listed: dict[str, Any] = await client.request("tools/list", {})
    missing: list[str] = []
    for tool in listed["tools"]:
        heading = f"\n#### `{tool['name']}`\n"
        if heading not in reference:
            missing.append(tool["name"])
            continue
        section = re.split(r"\n###", reference.split(heading, 1)[1], maxsplit=1)[0]
        missing.extend(
            f"{tool['name']}({argument})"
            for argument in tool["inputSchema"].get("properties", {})
            if f"| `{argument}` |" not in section
        )
    assert not missing, f"docs/skills.md does not document {missing}"


# --- the daemon, in this process --------------------------------------------------------------


def test_skills_enabled_is_a_backend_of_the_gateway(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = validate_config(
        {"skills": {"enabled": True, "roots": [str(tmp_path)]}, "http": {"enabled": True}}
    )
    with caplog.at_level("INFO", logger="trimcp.daemon"):
        children = daemon_children(config, upstreams=ClientConfig(servers={}))
    assert [child.id for child in children] == ["gateway", "http"]
    assert "(the gateway) over http" in caplog.text
    assert f"skills (the built-in tools; they can read {tmp_path})" in caplog.text


def test_a_named_server_and_skills_are_both_backends(caplog: pytest.LogCaptureFixture) -> None:
    config = SysConfig(
        server=ServerSettings(object="examples.everything_server:build_server", path=(str(REPO),)),
        skills=SkillsSettings(enabled=True),
        http=HttpSettings(enabled=True),
    )
    with caplog.at_level("INFO", logger="trimcp.daemon"):
        children = daemon_children(config, upstreams=ClientConfig(servers={}))
    assert [child.id for child in children] == ["gateway", "http"]
    assert "backends: trimcp-everything ([server] object" in caplog.text
    assert "; skills (the built-in tools" in caplog.text


# --- real processes ---------------------------------------------------------------------------


async def _in_process_tool_names(root: Path) -> set[str]:
    """The tools a skills server with the default categories offers, asked in this process."""
    server = build_server(SkillsSettings(roots=(str(root),)))
    async with open_in_memory_client(server) as client:
        listed: dict[str, Any] = await client.request("tools/list", {})
    return {tool["name"] for tool in listed["tools"]}


async def _list_over_http(url: str) -> tuple[str, str | None, set[str]]:
    with trio.fail_after(20):
        async with open_http_client_stream(url) as stream, open_client_session(stream) as session:
            tools = await session.list_tools()
            return session.server_info.name, session.instructions, {tool.name for tool in tools}


def _skills_process(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if key != "TRIMCP_CONFIG"}
    return subprocess.Popen(
        [sys.executable, "-m", "trimcp", "skills", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen[str], needle: str) -> list[str]:
    assert process.stderr is not None
    lines: list[str] = []
    for line in process.stderr:
        lines.append(line)
        if needle in line:
            return lines
    pytest.fail(f"{needle!r} never appeared; stderr was:\n{''.join(lines)}")


def _url(line: str, needle: str) -> str:
    match = re.search(re.escape(needle) + r"(\S+)", line)
    assert match is not None, line
    return match.group(1)


def _stopped(process: subprocess.Popen[str], signum: int) -> tuple[str, str]:
    """Send ``signum``; return stdout and the rest of stderr once the process exited in time."""
    started = time.monotonic()
    process.send_signal(signum)
    try:
        out, err = process.communicate(timeout=STOP_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert time.monotonic() - started < STOP_TIMEOUT
    return out, err


@pytest.mark.slow
def test_the_config_commands_do_not_import_the_tools() -> None:
    code = (
        "import sys, trimcp.cli._main\n"
        "trimcp.cli._main._parser().parse_args(['config', 'show'])\n"
        "print(sorted(name for name in sys.modules if name.startswith('trimcp.skills')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout == "[]\n"


@pytest.mark.slow
async def test_stdio_serves_the_default_categories(jail_root: Path, tmp_path: Path) -> None:
    spec = ProcessSpec(
        name="skills",
        command=sys.executable,
        args=("-m", "trimcp", "skills", "--root", str(jail_root)),
        cwd=str(tmp_path),
    )
    with trio.fail_after(30):
        async with open_server_process(spec) as stream, open_client_session(stream) as session:
            assert session.server_info.name == "trimcp-skills"
            assert session.instructions is not None
            assert _real(jail_root) in session.instructions
            names = {tool.name for tool in await session.list_tools()}
    assert names == await _in_process_tool_names(jail_root)
    assert not names & WRITE_AND_EXECUTE_TOOLS


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_stdio_quietly(jail_root: Path, tmp_path: Path, signum: int) -> None:
    process = _skills_process("--root", str(jail_root), cwd=tmp_path)
    try:
        _wait_for_line(process, "over stdio")
        out, err = _stopped(process, signum)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert out == ""
    assert "Traceback" not in err
    assert f"{signal.Signals(signum).name} received: stopping" in err


@pytest.mark.slow
def test_http_lists_tools_and_ctrl_c_stops_it(jail_root: Path, tmp_path: Path) -> None:
    needle = "trimcp skills: MCP over Streamable HTTP at "
    process = _skills_process("--root", str(jail_root), "--http", "--port", "0", cwd=tmp_path)
    try:
        url = _url(_wait_for_line(process, needle)[-1], needle)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        name, instructions, names = trio.run(_list_over_http, url)
        out, err = _stopped(process, signal.SIGINT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert name == "trimcp-skills"
    assert instructions is not None
    assert _real(jail_root) in instructions
    assert names == trio.run(_in_process_tool_names, jail_root)
    assert process.returncode == 0, err
    assert out == ""
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_taken_port_is_one_line_and_status_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _skills_process("--http", "--port", str(port), cwd=tmp_path)
        _, err = process.communicate(timeout=STOP_TIMEOUT)
    assert process.returncode == 1
    assert f"trimcp skills: cannot listen on 127.0.0.1:{port}: " in err
    assert err.count("cannot listen on") == 1  # said once, not once per layer
    assert "choose another with --port" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_trimcp_serve_serves_skills_over_http(jail_root: Path, tmp_path: Path) -> None:
    config_file = _write(
        tmp_path / "sys_config.toml",
        f"""\
        [application]
        stop_timeout = {STOP_TIMEOUT}

        [skills]
        enabled = true
        roots = ["{jail_root.name}"]

        [http]
        enabled = true
        port = 0
        """,
    )
    needle = "MCP over Streamable HTTP at "
    # No user or project mcpServers files: the gateway serves the built-in tools alone.
    env = {key: value for key, value in os.environ.items() if key != "TRIMCP_CONFIG"}
    env |= {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    process = subprocess.Popen(
        [sys.executable, "-m", "trimcp", "serve", "--config", str(config_file)],
        cwd=tmp_path / "outside",
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _wait_for_line(process, needle)
        url = _url(lines[-1], needle)
        name, instructions, names = trio.run(_list_over_http, url)
        # Stopped by its PID, as a service manager would.
        started = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        _, rest = process.communicate(timeout=STOP_TIMEOUT + 5)
        assert time.monotonic() - started < STOP_TIMEOUT
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    log = "".join(lines) + rest
    # The daemon serves the gateway, with the built-in tools as its "skills" backend.
    assert "(the gateway)" in log
    assert name == "trimcp"
    assert instructions is None
    # The root is relative to the file's folder, not to the daemon's working directory; the
    # start-up log names it.
    assert _real(jail_root) in log
    expected = trio.run(_in_process_tool_names, jail_root)
    assert names == {f"skills__{tool}" for tool in expected}
    assert process.returncode == 0, rest
    assert "application trimcp stopped" in rest
