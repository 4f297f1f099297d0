"""The one-shot host commands against real servers: ``python -m trimcp ...`` in a subprocess.

The TARGET kinds that need no mcpServers file: a URL (a trimcp server of this module, served
over Streamable HTTP on 127.0.0.1 and a free port by a process of its own) and a command
after ``--`` (the same server over stdio, launched by the command). A configured server
comes from an mcpServers file written by the test, which is how ``alwaysAllow`` is given.
Ctrl-C is a real SIGINT sent by PID to a ``trimcp call`` whose server (a hand-written stdio
server that records every message it gets) never answers, and the terminal output is read
through a real pseudo-terminal. Every command runs with HOME in the test's folder, so no
user configuration leaks in, and within a time limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pexpect
import pytest

import trimcp
from tests.daemon_process import ChildProcess

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

ROOT = Path(trimcp.__file__).resolve().parents[1]
#: Seconds any one command may take (most take one or two).
LIMIT = 60

DEMO = textwrap.dedent(
    '''
    """The demo server of tests/cli/test_host_commands.py: python demo.py [http]."""

    import sys
    from pathlib import Path

    import trio

    from trimcp.server import Completion, Context, MCPServer, ToolAnnotations

    server = MCPServer("demo", "1.0")


    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers ✓."""
        return a + b


    @server.tool()
    async def steps(count: int, ctx: Context) -> str:
        """Log a line and report progress at each of ``count`` steps."""
        for step in range(1, count + 1):
            await ctx.info(f"step {step} ✓")
            await ctx.report_progress(step, count, f"at step {step}")
        return f"{count} steps done"


    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def wipe(what: str = "all") -> str:
        """Say that everything was deleted."""
        return f"wiped {what}"


    @server.tool()
    def fails() -> str:
        """Always fail."""
        raise ValueError("no luck")


    @server.resource("demo://notes", mime_type="text/plain")
    def notes() -> str:
        return "✓ done"


    @server.resource("demo://items/{id}", mime_type="application/json")
    def item(id: str) -> dict[str, str]:
        return {"id": id}


    @server.prompt()
    def greet(name: str, city: str = "") -> str:
        """Greet someone."""
        return f"Hello {name}" + (f" from {city}" if city else "")


    @server.completion()
    async def complete(ref, argument, value, context_arguments):
        if argument == "city" and context_arguments.get("name") == "Ada":
            return ["London"]
        candidates = {"city": ["Paris", "Parma", "Oslo"], "id": ["1", "12", "2"]}
        return Completion(values=[c for c in candidates.get(argument, []) if c.startswith(value)])


    if __name__ == "__main__":
        if sys.argv[1:] == ["http"]:
            server.run_http(port=0)
        else:
            server.run_stdio()
    '''
)

# Speaks just enough MCP over stdio by hand to be called, and never answers tools/call: it
# writes each message it receives to the log file (argument 1) and touches the marker
# (argument 2) when the call arrives, so the test knows when to press Ctrl-C.
SILENT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    log, marker = open(sys.argv[1], "a"), Path(sys.argv[2])

    def answer(request, result):
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        log.write(line)
        log.flush()
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            answer(message, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "silent", "version": "1"},
            })
        elif method == "tools/list":
            answer(message, {"tools": [{"name": "hang", "inputSchema": {"type": "object"}}]})
        elif method == "tools/call":
            marker.touch()
    """
)


def environment(folder: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": str(ROOT),
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / ".config"),
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "PYTHONUNBUFFERED": "1",
    }


def trimcp_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp", *args],
        cwd=folder,
        env=environment(folder),
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host-commands")
    (path / "demo.py").write_text(DEMO, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def url(folder: Path) -> Iterator[str]:
    """The demo server over Streamable HTTP, in a process of its own (stopped by PID)."""
    server = ChildProcess(
        [sys.executable, str(folder / "demo.py"), "http"], folder, environment(folder)
    )
    try:
        yield server.wait_for(r"MCP over Streamable HTTP at (\S+)").group(1)
    finally:
        server.stop()


def demo_command(folder: Path) -> list[str]:
    return ["--", sys.executable, str(folder / "demo.py")]


# --- a URL TARGET ---------------------------------------------------------------------------------


def test_call_takes_key_value_arguments_and_the_qualified_name(folder: Path, url: str) -> None:
    added = trimcp_cli(folder, "call", url, "add", "a=1", "b=2")
    assert (added.returncode, added.stdout, added.stderr) == (0, "3\n", "")
    qualified = trimcp_cli(folder, "call", url, "mcp__127-0-0-1__add", '{"a": 2, "b": 3}')
    assert (qualified.returncode, qualified.stdout) == (0, "5\n"), qualified.stderr
    # Options may come anywhere among the words.
    (folder / "args.json").write_text('{"a": 40}')
    mixed = trimcp_cli(folder, "call", url, "add", "--arg-file", "args.json", "b=2", "--json")
    assert mixed.returncode == 0, mixed.stderr
    assert json.loads(mixed.stdout)["content"] == [{"type": "text", "text": "42"}]


def test_a_tool_error_exits_1(folder: Path, url: str) -> None:
    failed = trimcp_cli(folder, "call", url, "fails")
    assert failed.returncode == 1
    assert "no luck" in failed.stdout


def test_an_unknown_tool_gets_a_did_you_mean(folder: Path, url: str) -> None:
    result = trimcp_cli(folder, "call", url, "ad", "a=1")
    assert result.returncode == 1
    assert result.stderr == (
        '127-0-0-1 has no tool "ad"; did you mean "add"? (its tools: add, steps, wipe, fails)\n'
    )


def test_log_messages_and_progress_reach_stderr_as_plain_lines(folder: Path, url: str) -> None:
    result = trimcp_cli(folder, "call", url, "steps", "count=3")
    assert (result.returncode, result.stdout) == (0, "3 steps done\n"), result.stderr
    lines = result.stderr.splitlines()
    # Each kind in the order sent; a log line and a progress line may swap, since the
    # session delivers them on different paths. The last log line is not lost.
    assert [line for line in lines if line.startswith("[")] == [
        "[127-0-0-1] info: step 1 ✓",
        "[127-0-0-1] info: step 2 ✓",
        "[127-0-0-1] info: step 3 ✓",
    ]
    assert [line for line in lines if not line.startswith("[")] == [
        "progress 1/3 at step 1",
        "progress 2/3 at step 2",
        "progress 3/3 at step 3",
    ]


def test_a_destructive_tool_runs_only_when_allowed(folder: Path, url: str) -> None:
    refused = trimcp_cli(folder, "call", url, "wipe")
    assert refused.returncode == 1
    assert refused.stdout == ""
    lines = refused.stderr.splitlines()
    assert lines[0] == (
        '127-0-0-1 marks its tool "wipe" destructive: '
        "trimcp call runs it only when told to, with one of"
    )
    assert lines[1].split()[0] == "--yes"
    assert lines[2].split()[:2] == ["--allow", "wipe"]
    assert "alwaysAllow" not in refused.stderr  # no file defines a URL TARGET
    for allowed in (
        ["--yes"],
        ["-y"],
        ["--allow", "wipe"],
        ["--allow", "w*"],
        ["--allow", "mcp__*__wipe"],
    ):
        result = trimcp_cli(folder, "call", url, "wipe", "what=logs", *allowed)
        assert (result.returncode, result.stdout) == (0, "wiped logs\n"), (allowed, result.stderr)
    other = trimcp_cli(folder, "call", url, "wipe", "--allow", "add")
    assert other.returncode == 1
    assert "destructive" in other.stderr


def test_resources_lists_templates_and_read_keeps_non_ascii(folder: Path, url: str) -> None:
    listed = trimcp_cli(folder, "resources", url)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "SERVER     URI           NAME",
        "127-0-0-1  demo://notes  notes",
        "",
        "SERVER     URI TEMPLATE       NAME",
        "127-0-0-1  demo://items/{id}  item",
    ]
    as_json = trimcp_cli(folder, "resources", url, "--json")
    found = json.loads(as_json.stdout)
    assert [t["uriTemplate"] for t in found["resourceTemplates"]] == ["demo://items/{id}"]
    read = trimcp_cli(folder, "read", url, "demo://notes")
    assert (read.returncode, read.stdout) == (0, "✓ done\n"), read.stderr
    read_json = trimcp_cli(folder, "read", url, "demo://notes", "--json")
    assert '"text": "✓ done"' in read_json.stdout
    assert "\\u2713" not in read_json.stdout
    templated = trimcp_cli(folder, "read", url, "demo://items/7")
    assert json.loads(templated.stdout) == {"id": "7"}
    missing = trimcp_cli(folder, "read", url, "demo://nothing")
    assert missing.returncode == 1
    assert missing.stderr.startswith("127-0-0-1 answered with an error: ")


def test_tools_json_keeps_non_ascii(folder: Path, url: str) -> None:
    listed = trimcp_cli(folder, "tools", url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert '"description": "Add two integers ✓."' in listed.stdout
    assert "\\u2713" not in listed.stdout


def test_prompts_and_get_prompt(folder: Path, url: str) -> None:
    listed = trimcp_cli(folder, "prompts", url)
    assert listed.stdout.splitlines()[1].split() == [
        "127-0-0-1",
        "greet",
        "name",
        "[city]",
        "Greet",
        "someone.",
    ]
    got = trimcp_cli(folder, "get-prompt", url, "greet", "name=Ada", "city=Paris")
    assert (got.returncode, got.stdout) == (
        0,
        "# Greet someone.\nuser:\n  Hello Ada from Paris\n",
    ), got.stderr
    as_json = json.loads(
        trimcp_cli(folder, "get-prompt", url, "greet", "name=Zoë", "--json").stdout
    )
    assert as_json["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hello Zoë"}}
    ]
    missing = trimcp_cli(folder, "get-prompt", url, "greet", "city=Oslo")
    assert missing.returncode == 1
    assert missing.stderr == (
        f'prompt "greet" needs name: trimcp get-prompt {url} greet name=... [city=...]\n'
    )
    unknown = trimcp_cli(folder, "get-prompt", url, "gret")
    assert (
        unknown.stderr
        == '127-0-0-1 has no prompt "gret"; did you mean "greet"? (its prompts: greet)\n'
    )


def test_complete_a_prompt_argument_and_a_template_variable(folder: Path, url: str) -> None:
    cities = trimcp_cli(folder, "complete", url, "--prompt", "greet", "city", "Par")
    assert (cities.returncode, cities.stdout) == (0, "Paris\nParma\n"), cities.stderr
    context = trimcp_cli(
        folder, "complete", url, "--prompt", "greet", "city", "--context", "name=Ada"
    )
    assert context.stdout == "London\n"
    ids = trimcp_cli(
        folder, "complete", url, "--resource", "demo://items/{id}", "id", "1", "--json"
    )
    assert json.loads(ids.stdout)["values"] == ["1", "12"]
    wrong = trimcp_cli(folder, "complete", url, "--prompt", "greet", "cty")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith('prompt "greet" has no argument "cty"; did you mean "city"?')
    neither = trimcp_cli(folder, "complete", url, "city")
    assert neither.returncode == 2
    assert "one of the arguments --prompt --resource is required" in neither.stderr


def test_a_url_nobody_answers_is_reported(folder: Path) -> None:
    result = trimcp_cli(folder, "tools", "http://127.0.0.1:9/mcp", "--wait", "10")
    assert result.returncode == 1
    assert result.stderr.startswith("127-0-0-1: failed\n")
    assert "could not connect to http://127.0.0.1:9/mcp" in result.stderr


# --- a command TARGET and a configured one ------------------------------------------------------


def test_a_command_after_double_dash_is_the_target(folder: Path) -> None:
    listed = trimcp_cli(folder, "tools", *demo_command(folder))
    assert listed.returncode == 0, listed.stderr
    assert "mcp__demo__add" in listed.stdout
    called = trimcp_cli(folder, "call", "add", "a=20", "b=22", *demo_command(folder))
    assert (called.returncode, called.stdout) == (0, "42\n"), called.stderr
    both = trimcp_cli(folder, "tools", "demo", *demo_command(folder))
    assert both.returncode == 1
    assert "give either a TARGET ('demo') or a command after --, not both" in both.stderr


def test_the_entry_s_always_allow_lets_a_destructive_tool_run(folder: Path) -> None:
    demo = {"command": sys.executable, "args": [str(folder / "demo.py")]}
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    refused = trimcp_cli(folder, "call", "demo", "wipe", "--config", str(config))
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1].strip() == (
        f'"alwaysAllow": ["wipe"] in the entry of "demo" in {config} (named with --config)'
    )
    config.write_text(json.dumps({"mcpServers": {"demo": {**demo, "autoApprove": ["wipe"]}}}))
    allowed = trimcp_cli(folder, "call", "demo", "wipe", "--config", str(config))
    assert (allowed.returncode, allowed.stdout) == (0, "wiped all\n"), allowed.stderr
    typo = trimcp_cli(folder, "call", "dmeo", "wipe", "--config", str(config))
    assert typo.returncode == 1
    assert typo.stderr.startswith('no MCP server named "dmeo" is configured; did you mean "demo"?')


def test_a_python_file_or_module_is_the_target(folder: Path) -> None:
    # Served by ``python -m trimcp run TARGET --stdio`` in the folder the command runs in.
    if trimcp_cli(folder, "run", "--help").returncode != 0:
        pytest.skip("trimcp run is not a command in this checkout yet")
    (folder / "pkg").mkdir(exist_ok=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "app.py").write_text(
        "from trimcp.server import MCPServer\n"
        'server = MCPServer("app")\n'
        "@server.tool()\n"
        "def hi(name: str) -> str:\n"
        '    return f"hi {name}"\n'
    )
    listed = trimcp_cli(folder, "tools", "demo.py")
    assert listed.returncode == 0, listed.stderr
    assert "mcp__demo__add" in listed.stdout
    for target in ("demo.py", "demo.py:server", str(folder / "demo.py")):
        added = trimcp_cli(folder, "call", target, "add", "a=1", "b=2")
        assert (added.returncode, added.stdout) == (0, "3\n"), (target, added.stderr)
    module = trimcp_cli(folder, "call", "pkg.app:server", "hi", "name=Ada")
    assert (module.returncode, module.stdout) == (0, "hi Ada\n"), module.stderr
    wrong = trimcp_cli(folder, "call", "demo.py:nope", "add", "--wait", "20")
    assert wrong.returncode == 1
    assert "has no attribute 'nope'" in wrong.stderr
    missing = trimcp_cli(folder, "tools", "nothing.py")
    assert missing.returncode == 1
    assert missing.stderr.startswith("no such Python file: nothing.py")


# --- Ctrl-C -------------------------------------------------------------------------------------


def test_ctrl_c_cancels_the_call_upstream_and_exits_130(tmp_path: Path) -> None:
    (tmp_path / "silent.py").write_text(SILENT, encoding="utf-8")
    log, marker = tmp_path / "received.jsonl", tmp_path / "called"
    command = [sys.executable, "-m", "trimcp", "call", "hang", "--"]
    command += [sys.executable, str(tmp_path / "silent.py"), str(log), str(marker)]
    call = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=environment(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + LIMIT
        while not marker.exists():
            assert call.poll() is None, call.communicate()
            assert time.monotonic() < deadline, "the call never reached the server"
            time.sleep(0.05)
        os.kill(call.pid, signal.SIGINT)
        out, err = call.communicate(timeout=30)
    finally:
        if call.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(call.pid, signal.SIGKILL)
            call.wait(timeout=10)
    assert call.returncode == 130, err
    assert "Traceback" not in err
    assert err.endswith("interrupted\n")
    assert out == ""
    received = [json.loads(line) for line in log.read_text().splitlines()]
    [request] = [m for m in received if m.get("method") == "tools/call"]
    cancelled = [m for m in received if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [request["id"]]


# --- on a terminal --------------------------------------------------------------------------------


def run_in_terminal(folder: Path, *args: str) -> tuple[int, str]:
    """Run ``trimcp ARGS`` in a pseudo-terminal; return its status and all it wrote."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "trimcp", *args],
        cwd=str(folder),
        env=environment(folder),
        encoding="utf-8",
        timeout=LIMIT,
        dimensions=(24, 120),
    )
    try:
        child.expect(pexpect.EOF)
        written = child.before
    finally:
        child.close(force=True)
    assert child.exitstatus is not None
    return child.exitstatus, written


def test_on_a_terminal_progress_is_one_redrawn_bar_and_tables_are_rich(
    folder: Path, url: str
) -> None:
    status, written = run_in_terminal(folder, "call", url, "steps", "count=3")
    assert status == 0, written
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", written)
    assert "━" in plain
    assert "3/3 at step 3" in plain
    assert "progress 1/3" not in plain  # no plain lines on a terminal
    # The last log line came before the result, and is shown before it.
    assert plain.index("[127-0-0-1] info: step 3 ✓") < plain.index("3 steps done")
    assert plain.rstrip().endswith("3 steps done")
    status, written = run_in_terminal(folder, "tools", url)
    assert status == 0, written
    assert "\x1b[1m" in written  # the header is bold
    assert "─" in written  # and ruled
    assert "mcp__127-0-0-1__add" in written
