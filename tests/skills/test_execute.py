"""``run_command``: the allowlist, arguments without a shell, the working folder inside the
jail, the timeout killing the whole process group, the output cap, the sanitised
environment. The tests that run a program are ``slow`` (real processes)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import call, skills_client, text_of

PYTHON = sys.executable


async def run(client: Any, **arguments: Any) -> dict[str, Any]:
    result = await call(client, "run_command", **arguments)
    assert "Error in tool" not in text_of(result)
    return result


async def test_an_empty_allowlist_says_it_is_not_configured(jail_root: Path) -> None:
    async with skills_client(jail_root) as client:
        result = await run(client, command="echo", args=["hi"])
        listing: dict[str, Any] = await client.request("tools/list", {})
    assert result["isError"]
    assert "not configured" in text_of(result)
    (tool,) = [tool for tool in listing["tools"] if tool["name"] == "run_command"]
    assert "No command is allowed" in tool["description"]


async def test_commands_off_the_allowlist_are_refused(jail_root: Path) -> None:
    async with skills_client(jail_root, commands=("echo",)) as client:
        for command in ("sh", "/bin/sh", "bash", "ls", "echo ", "ECHO", "/bin/echo", "./echo"):
            result = await run(client, command=command, args=["-c", "touch pwned"])
            assert result["isError"], command
            assert "not an allowed command" in text_of(result)
            assert "allowed: echo" in text_of(result)
        listing: dict[str, Any] = await client.request("tools/list", {})
    assert not (jail_root / "pwned").exists()
    (tool,) = [tool for tool in listing["tools"] if tool["name"] == "run_command"]
    assert "Allowed commands: echo." in tool["description"]
    assert tool["annotations"] == {
        "title": "Run command",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }


async def test_a_name_is_not_found_through_relative_path_entries(
    jail_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A program the model could have written into the working folder is not found by name.
    script = jail_root / "mytool"
    script.write_text("#!/bin/sh\ntouch pwned\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "." + os.pathsep + os.environ.get("PATH", ""))
    async with skills_client(jail_root, commands=("mytool",)) as client:
        result = await run(client, command="mytool")
    assert result["isError"]
    assert "not found on PATH" in text_of(result)
    assert not (jail_root / "pwned").exists()


async def test_invalid_timeout_and_cwd_are_refused(jail_root: Path) -> None:
    outside = jail_root.parent / "outside"
    (jail_root / "file.txt").write_text("x")
    (jail_root / "out").symlink_to(outside)
    async with skills_client(jail_root, commands=("pwd",)) as client:
        assert "more than 0" in text_of(await run(client, command="pwd", timeout=0))
        for cwd in ("..", "../outside", str(outside), "out", "/", "../jail-x"):
            result = await run(client, command="pwd", cwd=cwd)
            assert result["isError"], cwd
            assert "outside the allowed folders" in text_of(result)
        result = await run(client, command="pwd", cwd="file.txt")
        assert result["isError"]
        result = await run(client, command="pwd", cwd="missing")
        assert result["isError"]


@pytest.mark.slow
async def test_arguments_are_not_shell_interpreted(jail_root: Path) -> None:
    arguments = ["hi", "; rm -rf .", "$HOME", "*", "`touch pwned`", "a b", "$(touch pwned)"]
    (jail_root / "keep.txt").write_text("keep")
    async with skills_client(jail_root, commands=("echo",)) as client:
        result = await run(client, command="echo", args=arguments)
    assert not result["isError"], text_of(result)
    structured = result["structuredContent"]
    assert structured["stdout"] == " ".join(arguments) + "\n"
    assert structured["exit_code"] == 0
    assert structured["timed_out"] is False
    assert structured["args"] == arguments
    text = text_of(result)
    assert text.splitlines()[1] == "exit code 0"
    assert "--- stdout (" in text
    assert "--- stderr (0 bytes) ---" in text
    assert (jail_root / "keep.txt").read_text() == "keep"
    assert not (jail_root / "pwned").exists()


@pytest.mark.slow
async def test_exit_code_stderr_stdin_and_cwd(jail_root: Path) -> None:
    (jail_root / "sub").mkdir()
    code = "import os, sys; print(os.getcwd()); print(sys.stdin.read()); sys.exit(3)"
    async with skills_client(jail_root, commands=(PYTHON,)) as client:
        result = await run(client, command=PYTHON, args=["-c", code], cwd="sub", stdin="piped")
        failing = await run(client, command=PYTHON, args=["-c", "import sys; sys.exit('bad')"])
    structured = result["structuredContent"]
    assert structured["exit_code"] == 3
    assert structured["cwd"] == "sub"
    assert structured["stdout"] == f"{jail_root / 'sub'}\npiped\n"
    assert "exit code 3" in text_of(result)
    assert failing["structuredContent"]["exit_code"] == 1
    assert failing["structuredContent"]["stderr"] == "bad\n"


@pytest.mark.slow
async def test_output_is_capped_and_the_cut_is_said(jail_root: Path) -> None:
    code = "import sys; sys.stdout.write('a' * 5000); sys.stderr.write('e' * 3000)"
    async with skills_client(jail_root, commands=(PYTHON,), max_result_bytes=1024) as client:
        result = await run(client, command=PYTHON, args=["-c", code])
    structured = result["structuredContent"]
    assert structured["stdout"] == "a" * 1024
    assert structured["stdout_bytes"] == 5000
    assert structured["stderr"] == "e" * 1024
    assert structured["stderr_bytes"] == 3000
    text = text_of(result)
    assert "--- stdout (first 1024 of 5000 bytes; the rest was cut at max_result_bytes) ---" in text
    assert "--- stderr (first 1024 of 3000 bytes;" in text


@pytest.mark.slow
async def test_the_environment_is_sanitised(
    jail_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIMCP_TEST_API_KEY", "sk-very-secret")
    monkeypatch.setenv("BASH_FUNC_x%%", "() { echo pwned; }")
    async with skills_client(jail_root, commands=("env",)) as client:
        result = await run(client, command="env")
    stdout = result["structuredContent"]["stdout"]
    assert "sk-very-secret" not in stdout
    assert "TRIMCP_TEST_API_KEY" not in stdout
    assert "BASH_FUNC" not in stdout
    names = {line.split("=", 1)[0] for line in stdout.splitlines() if "=" in line}
    assert "PATH" in names
    assert names <= {
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TERM",
        "USER",
        "TMPDIR",
        "LANG",
        "LANGUAGE",
    } | {name for name in names if name.startswith("LC_")}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie waits for its reaper; it runs no more


@pytest.mark.slow
async def test_a_timeout_kills_the_whole_process_group(jail_root: Path) -> None:
    # The shell starts a background sleep, prints its pid, then sleeps itself.
    script = "sleep 30 & echo $!; sleep 30"
    async with skills_client(jail_root, commands=("sh", "sleep"), command_timeout=0.5) as client:
        result = await run(client, command="sh", args=["-c", script])
        clamped = await run(client, command="sleep", args=["30"], timeout=1000)
    structured = result["structuredContent"]
    assert structured["timed_out"] is True
    assert structured["exit_code"] == -9
    text = text_of(result)
    assert "timed out after 0.5 s (the command_timeout of 0.5 s)" in text
    assert "exit code -9 (ended by SIGKILL)" in text
    background = int(structured["stdout"].split()[0])
    assert not _alive(background)
    assert clamped["structuredContent"]["timed_out"] is True
    assert "timed out after 0.5 s" in text_of(clamped)


@pytest.mark.slow
async def test_what_a_command_leaves_running_is_ended_with_it(jail_root: Path) -> None:
    async with skills_client(jail_root, commands=("sh",), command_timeout=10) as client:
        result = await run(client, command="sh", args=["-c", "sleep 30 & echo $!"])
    structured = result["structuredContent"]
    assert structured["timed_out"] is False
    assert structured["exit_code"] == 0
    assert not _alive(int(structured["stdout"].split()[0]))


async def test_a_relative_allowlist_entry_is_refused(jail_root: Path) -> None:
    script = jail_root / "tool.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    async with skills_client(jail_root, commands=("./tool.sh",)) as client:
        result = await run(client, command="./tool.sh")
    assert result["isError"]
    assert "neither a name nor an absolute path" in text_of(result)
