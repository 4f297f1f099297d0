"""The host commands as a user runs them: ``python -m trimcp ...`` against real servers.

Each test writes an ``mcpServers`` file naming examples/everything_server.py over stdio (and
sometimes a server whose command does not exist), and runs the command in a subprocess
with HOME pointed at an empty folder, so no user configuration leaks in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import trimcp

ROOT = Path(trimcp.__file__).resolve().parents[1]
EVERYTHING = str(ROOT / "examples" / "everything_server.py")

pytestmark = pytest.mark.slow


def write_config(folder: Path, **extra: dict[str, object]) -> Path:
    servers: dict[str, object] = {
        "everything": {"command": sys.executable, "args": [EVERYTHING, "--transport", "stdio"]},
        **extra,
    }
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def trimcp_cli(
    folder: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / ".config"),
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "trimcp", *args],
        cwd=folder,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_servers_shows_a_table_and_explains_a_broken_one(tmp_path: Path) -> None:
    config = write_config(tmp_path, ghost={"command": "no-such-mcp-server"})
    result = trimcp_cli(tmp_path, "servers", "--config", str(config))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "SERVER",
        "TRANSPORT",
        "STATE",
        "TOOLS",
        "RESOURCES",
        "PROMPTS",
        "RESTARTS",
        "PROBLEM",
    ]
    everything = next(line for line in lines if line.startswith("everything"))
    assert "connected" in everything
    ghost = next(line for line in lines if line.startswith("ghost"))
    assert "failed" in ghost
    assert 'command "no-such-mcp-server" was not found' in ghost
    # Not retried: the same command would be missing again.
    assert ghost.split()[2:7] == ["failed", "0", "0", "0", "0"]


def test_servers_reports_a_server_that_exits_during_every_start_as_failed(
    tmp_path: Path,
) -> None:
    dies = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"dies": dies}}))
    result = trimcp_cli(tmp_path, "servers", "--config", str(config))
    assert result.returncode == 1, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("dies"))
    # Started, exited, started again once (the commands' restart intensity), exited: failed.
    assert row.split()[2:7] == ["failed", "0", "0", "0", "1"]
    assert 'MCP server "dies" exited while starting with exit code 3' in row


def test_a_server_still_starting_when_the_wait_ends_is_not_called_failed(
    tmp_path: Path,
) -> None:
    # Reads its stdin to the end and never answers initialize (startup_timeout is 30 s).
    silent = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"silent": silent}}))
    listed = trimcp_cli(tmp_path, "servers", "--wait", "0.5", "--config", str(config))
    assert listed.returncode == 1, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("silent"))
    assert row.split()[2] == "connecting"
    assert "still starting after 0.5 s" in row
    tools = trimcp_cli(tmp_path, "tools", "silent", "--wait", "0.5", "--config", str(config))
    assert tools.returncode == 1
    assert "silent: still starting\n  still starting after 0.5 s" in tools.stderr


def test_tools_lists_and_exports(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    listed = trimcp_cli(tmp_path, "tools", "everything", "--config", str(config))
    assert listed.returncode == 0, listed.stderr
    assert "mcp__everything__echo" in listed.stdout
    exported = trimcp_cli(tmp_path, "tools", "--export", "anthropic", "--config", str(config))
    assert exported.returncode == 0, exported.stderr
    tools = json.loads(exported.stdout)
    echo = next(tool for tool in tools if tool["name"] == "mcp__everything__echo")
    assert echo["input_schema"]["properties"]["text"]["type"] == "string"


def test_call_prints_the_result_and_progress(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    echoed = trimcp_cli(
        tmp_path, "call", "everything", "echo", '{"text": "hello there"}', "--config", str(config)
    )
    assert (echoed.returncode, echoed.stdout.strip()) == (0, "hello there"), echoed.stderr
    progress = trimcp_cli(
        tmp_path, "call", "everything", "test_tool_with_progress", "--config", str(config)
    )
    assert progress.returncode == 0, progress.stderr
    assert "progress " in progress.stderr


def test_call_with_bad_json_says_what_to_type(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    result = trimcp_cli(
        tmp_path, "call", "everything", "echo", "{text: hi}", "--config", str(config)
    )
    assert result.returncode == 1
    assert "the arguments are not valid JSON" in result.stderr
    assert "write key=value pairs (a=1 name=Ada) or one JSON object" in result.stderr


def test_config_check_shows_the_friendly_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"gh": {"command": ["npx", "-y", "server-github"]}}}')
    result = trimcp_cli(tmp_path, "config", "check", "--config", str(broken))
    assert result.returncode == 1
    assert str(broken) in result.stderr
    assert 'server:   "gh"' in result.stderr
    assert "args" in result.stderr
    good = trimcp_cli(tmp_path, "config", "check", "--config", str(write_config(tmp_path)))
    assert good.returncode == 0, good.stderr
    assert "servers: everything" in good.stdout


def test_no_configured_servers_is_explained(tmp_path: Path) -> None:
    result = trimcp_cli(tmp_path, "servers")
    assert result.returncode == 1
    assert "no MCP servers are configured" in result.stderr


def test_the_shell_drives_servers_by_hand(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    commands = "\n".join(
        [
            "/mcp",
            "/mcp tools everything",
            '/mcp call mcp__everything__echo {"text": "from the shell"}',
            '/mcp call everything echo {"text": "two words"}',
            "/mcp disconnect everything",
            "/mcp",
            "/mcp connect everything",
            "/mcp reload",
            "/mcp nonsense",
            "/help",
            "/quit",
        ]
    )
    result = trimcp_cli(tmp_path, "shell", "--config", str(config), stdin=commands + "\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "everything: connected" in out
    assert "mcp__everything__echo" in out
    assert "from the shell" in out
    assert "two words" in out
    assert "everything: disconnected" in out
    assert "everything: stopped" in out
    assert "unchanged: everything" in out
    assert "unknown /mcp action 'nonsense'" in out
    assert "/mcp call TOOL" in out


def test_listings_exit_1_when_a_server_is_down(tmp_path: Path) -> None:
    # Every listing says so in its exit status when it could not ask every server.
    config = write_config(tmp_path, ghost={"command": "no-such-mcp-server"})
    for command in ("tools", "resources", "prompts"):
        listed = trimcp_cli(tmp_path, command, "--config", str(config))
        assert listed.returncode == 1, (command, listed.stderr)
        assert "everything" in listed.stdout or command == "tools", command
        assert 'command "no-such-mcp-server" was not found' in listed.stderr, command


def test_servers_says_why_a_failed_server_gave_up_and_never_prints_env_values(
    tmp_path: Path,
) -> None:
    exits = "import sys; sys.stderr.write('boom: no database\\n'); sys.exit(3)"
    dies = {
        "command": sys.executable,
        "args": ["-c", exits],
        "env": {"API_KEY": "sk-cli-secret-41"},
    }
    remote = {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer sk-cli-h"}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"dies": dies, "remote": remote}}))

    table = trimcp_cli(tmp_path, "servers", "--config", str(config))
    assert table.returncode == 1, table.stderr
    row = next(line for line in table.stdout.splitlines() if line.startswith("dies"))
    assert row.split()[2] == "failed"
    assert "restart intensity exceeded" in row
    assert "exit code 3, stderr: boom: no database" in row

    listing = trimcp_cli(tmp_path, "servers", "--json", "--config", str(config))
    assert listing.returncode == 1, listing.stderr
    found = {entry["name"]: entry for entry in json.loads(listing.stdout)}
    entry = found["dies"]
    assert (entry["state"], entry["exit_code"], entry["attempt"]) == ("failed", 3, 2)
    assert entry["stderr_tail"] == ["boom: no database"]
    assert entry["failure"].startswith("restart intensity exceeded")
    # The names of the variables and headers are shown, their values never.
    assert entry["config"]["env"] == {"API_KEY": "***"}
    assert found["remote"]["config"]["headers"] == {"Authorization": "***"}
    for result in (table, listing):
        for secret in ("sk-cli-secret-41", "sk-cli-h"):
            assert secret not in result.stdout
            assert secret not in result.stderr
