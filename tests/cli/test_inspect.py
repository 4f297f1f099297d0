"""``trimcp inspect``: the report's text forms, and the command against real servers.

The servers are small files written into the test's folder: an MCPServer with tools (more
than one page of them), a resource, a template and a prompt, run over stdio by its own
script; and a hand-written stdio server that fails one listing. Each command runs as
``python -m trimcp inspect`` in its own process group, with HOME in the test's folder, and
whatever is left of the group is killed by its PID when it returns.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import trimcp
from trimcp.cli._inspect_view import render_text, render_tree, schema_summary
from trimcp.protocol import JsonObject, ServerCapabilities, server_capabilities_to_wire

ROOT = Path(trimcp.__file__).resolve().parents[1]

DEMO = '''
"""A small server to inspect."""
from typing import TypedDict

from trimcp.server import MCPServer, ToolAnnotations

server = MCPServer("démo", "1.2.3", instructions="Say héllo first.", page_size=2)


class Sum(TypedDict):
    total: int


@server.tool(annotations=ToolAnnotations(read_only_hint=True, title="Adder"))
async def add(a: int, b: int = 0) -> Sum:
    """Add two numbers."""
    return {"total": a + b}


@server.tool()
async def echo(text: str) -> str:
    """Echo the text back, naïvely."""
    return text


@server.tool()
async def shout(text: str) -> str:
    """Shout it."""
    return text.upper()


@server.resource("note://welcome", mime_type="text/plain", description="A greeting.")
def welcome() -> str:
    return "héllo"


@server.resource("note://{name}", description="A note by name.")
def note(name: str) -> str:
    return name


@server.prompt(description="Greet someone.")
def greet(name: str, style: str = "warm") -> str:
    return f"Hello {name}"
'''

DEMO_STDIO = "from demo import server\nserver.run_stdio()\n"

# Answers initialize and the listings by hand; prompts/list fails with a JSON-RPC error.
BROKEN_PROMPTS = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, answer = message["method"], None
    if method == "initialize":
        answer = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}, "prompts": {}},
                  "serverInfo": {"name": "half", "version": "0"}}
    elif method == "tools/list":
        cursor = (message.get("params") or {}).get("cursor")
        page = {"tools": [{"name": "second", "inputSchema": {"type": "object"}}]}
        if cursor is None:
            page = {"tools": [{"name": "first", "inputSchema": {"type": "object"}}],
                    "nextCursor": "page-2"}
        answer = page
    if answer is None:
        reply = {"jsonrpc": "2.0", "id": message["id"],
                 "error": {"code": -32603, "message": "prompts are broken today"}}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
    print(json.dumps(reply), flush=True)
"""


def write_demo(folder: Path) -> None:
    (folder / "demo.py").write_text(DEMO, encoding="utf-8")
    (folder / "demo_stdio.py").write_text(DEMO_STDIO)


def trimcp_inspect(
    folder: Path, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m trimcp inspect ARGS`` in ``folder``; kill what is left of its group."""
    process = subprocess.Popen(
        [sys.executable, "-m", "trimcp", "inspect", *args],
        cwd=folder,
        env=_environment(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        _stop_group(process)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _environment(folder: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": str(ROOT),
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / ".config"),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin",
    }


def _stop_group(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (and been reaped) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


# --- the report as text -------------------------------------------------------------------------

REPORT: JsonObject = {
    "server": {"name": "démo", "version": "1.0", "title": "Demo [bold]x[/bold]"},
    "protocolVersion": "2025-11-25",
    "instructions": "Line one.\nLine two.",
    "capabilities": {"tools": {"listChanged": True}, "logging": {}},
    "tools": [
        {
            "name": "add",
            "description": "Add.\nMore text.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "mode": {"enum": ["x", "y"]},
                },
                "required": ["a"],
            },
            "outputSchema": {"type": "object", "properties": {"total": {"type": "number"}}},
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
        }
    ],
    "resources": [{"uri": "note://a", "name": "a", "mimeType": "text/plain"}],
    "resourceTemplates": [{"uriTemplate": "note://{n}", "name": "n"}],
    "prompts": [
        {
            "name": "greet",
            "arguments": [{"name": "who", "required": True, "description": "the one"}],
        }
    ],
}


def test_the_text_form_summarises_every_section() -> None:
    text = render_text(REPORT)
    assert text.splitlines()[:3] == [
        "démo 1.0 (Demo [bold]x[/bold])",
        "  protocol 2025-11-25",
        "Instructions",
    ]
    assert "Capabilities\n  tools (listChanged)\n  logging\n" in text
    assert "Tools (1)\n  add - Add.\n" in text
    assert '    input: a: integer*, tags: array of string, mode: "x" | "y"\n' in text
    assert "    output: total: number\n" in text
    assert "    annotations: readOnlyHint=true, openWorldHint=false\n" in text
    assert "Resources (1)\n  note://a  a  [text/plain]\n" in text
    assert "Resource templates (1)\n  note://{n}  n\n" in text
    assert "Prompts (1)\n  greet\n    argument who* - the one\n" in text


def test_the_tree_shows_the_same_and_no_server_markup() -> None:
    from rich.console import Console

    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system=None, width=120).print(render_tree(REPORT))
    shown = out.getvalue()
    assert "démo 1.0 (Demo [bold]x[/bold])" in shown  # the server's text, not rich markup
    lines = (
        "protocol 2025-11-25",
        "Tools (1)",
        "add - Add.",
        "input: a: integer*",
        "who* - the one",
    )
    for line in lines:
        assert line in shown


def test_schema_summaries() -> None:
    assert schema_summary({"type": "object", "properties": {}}) == "(no arguments)"
    assert schema_summary(None) == "(none)"
    assert schema_summary({"type": "string"}) == "string"
    nested: JsonObject = {
        "type": "object",
        "properties": {
            "x": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "y": {"$ref": "#/$defs/Point"},
            "z": {"type": ["string", "number"]},
            "c": {"const": 3},
            "w": {},
        },
    }
    assert schema_summary(nested) == "x: integer | null, y: Point, z: string | number, c: 3, w: any"


def test_capabilities_in_their_wire_shape() -> None:
    declared = ServerCapabilities(
        tools=True,
        resources=True,
        resources_subscribe=True,
        completions=True,
        tasks=True,
        tasks_cancel=True,
        tasks_tools_call=True,
        experimental={"x": {}},
    )
    assert server_capabilities_to_wire(declared) == {
        "resources": {"subscribe": True},
        "tools": {},
        "completions": {},
        "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}},
        "experimental": {"x": {}},
    }


# --- against real servers -----------------------------------------------------------------------


@pytest.mark.slow
def test_inspect_reports_everything_a_server_offers(tmp_path: Path) -> None:
    write_demo(tmp_path)
    done = trimcp_inspect(tmp_path, "--json", "--", sys.executable, "demo_stdio.py")
    assert done.returncode == 0, done.stderr
    assert '"name": "démo"' in done.stdout  # non-ASCII as is, not \u00e9
    report = json.loads(done.stdout)
    assert report["server"] == {"name": "démo", "version": "1.2.3"}
    assert report["instructions"] == "Say héllo first."
    assert report["protocolVersion"] == "2026-07-28"
    assert report["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert "prompts" in report["capabilities"]
    # page_size=2: the third tool is on the second page.
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert sorted(tools) == ["add", "echo", "shout"]
    add = tools["add"]
    assert add["inputSchema"]["required"] == ["a"]
    assert add["outputSchema"]["properties"] == {"total": {"type": "integer"}}
    assert add["annotations"] == {"title": "Adder", "readOnlyHint": True}
    assert report["resources"] == [
        {
            "uri": "note://welcome",
            "name": "welcome",
            "description": "A greeting.",
            "mimeType": "text/plain",
        }
    ]
    [template] = report["resourceTemplates"]
    assert template["uriTemplate"] == "note://{name}"
    [prompt] = report["prompts"]
    assert prompt["name"] == "greet"
    assert [(a["name"], a.get("required", False)) for a in prompt["arguments"]] == [
        ("name", True),
        ("style", False),
    ]
    assert "errors" not in report


@pytest.mark.slow
def test_inspect_prints_a_summary_and_reads_configured_servers(tmp_path: Path) -> None:
    write_demo(tmp_path)
    config = tmp_path / "servers.json"
    demo = {"command": sys.executable, "args": ["demo_stdio.py"], "cwd": str(tmp_path)}
    config.write_text(json.dumps({"mcpServers": {"demo": demo}}))
    done = trimcp_inspect(tmp_path, "demo", "--config", str(config))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "démo 1.2.3"
    assert "Tools (3)" in lines
    assert "  add - Add two numbers." in lines
    assert "    input: a: integer*, b: integer" in lines
    assert "  note://welcome  welcome - A greeting.  [text/plain]" in lines
    assert "    argument name*" in lines

    missing = trimcp_inspect(tmp_path, "dmeo", "--config", str(config))
    assert missing.returncode == 1
    assert 'no MCP server named "dmeo" is configured' in missing.stderr
    assert 'did you mean "demo"?' in missing.stderr
    assert missing.stdout == ""


@pytest.mark.slow
def test_a_failed_listing_is_reported_with_the_rest(tmp_path: Path) -> None:
    (tmp_path / "half.py").write_text(BROKEN_PROMPTS)
    done = trimcp_inspect(tmp_path, "--json", "--", sys.executable, "half.py")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert [tool["name"] for tool in report["tools"]] == ["first", "second"]  # both pages
    assert report["prompts"] == []
    assert "prompts are broken today" in report["errors"]["prompts"]
    assert "listing prompts failed: " in done.stderr


@pytest.mark.slow
def test_servers_that_cannot_start_are_explained(tmp_path: Path) -> None:
    missing = trimcp_inspect(tmp_path, "--", "no-such-mcp-server")
    assert missing.returncode == 1
    assert 'command "no-such-mcp-server" was not found' in missing.stderr
    assert "Traceback" not in missing.stderr
    crash = "import sys; print('no config here', file=sys.stderr); sys.exit(3)"
    exited = trimcp_inspect(tmp_path, "--", sys.executable, "-c", crash)
    assert exited.returncode == 1
    assert "exited while starting with exit code 3" in exited.stderr
    assert "no config here" in exited.stderr
    neither = trimcp_inspect(tmp_path)
    assert neither.returncode == 1
    assert "no TARGET" in neither.stderr


@pytest.mark.slow
def test_ctrl_c_stops_the_server_and_exits_130(tmp_path: Path) -> None:
    # A server that never answers initialize; it writes its PID once it runs.
    silent = "import os, sys; open('pid', 'w').write(str(os.getpid())); sys.stdin.read()"
    process = subprocess.Popen(
        [sys.executable, "-m", "trimcp", "inspect", "--", sys.executable, "-c", silent],
        cwd=tmp_path,
        env=_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
            assert time.monotonic() < deadline, "the server never started"
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        server = int((tmp_path / "pid").read_text())
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        _stop_group(process)
    assert process.returncode == 130
    assert err == "trimcp inspect: interrupted\n"
    assert out == ""
    # Ctrl-C reached inspect alone (its own session); it stopped the server on the way out.
    assert _gone(server)


@pytest.mark.slow
def test_inspect_a_python_file(tmp_path: Path) -> None:
    write_demo(tmp_path)
    done = trimcp_inspect(tmp_path, "demo.py", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["server"]["name"] == "démo"
    assert sorted(tool["name"] for tool in report["tools"]) == ["add", "echo", "shout"]
