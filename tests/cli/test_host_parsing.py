"""The host commands' command lines and the answers given before any server is started.

``trimcp.cli.main`` runs in-process here: every case ends before a ``ConnectionManager``
exists (usage errors, a TARGET that names nothing, arguments that do not parse), so no
process is started. The commands against real servers are in ``test_host_commands.py``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from trimcp.cli import main
from trimcp.cli._requests import _permissions, _refusal, _template_variables
from trimcp.client import CallRequest, ConfigSource, HostTool
from trimcp.errors import ToolCallDenied

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def no_user_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user, project or sys_config file but the test's own."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


def config_file(folder: Path) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"everything": {"command": "x"}}}))
    return path


def test_help_shows_the_usage_and_the_kinds_of_target(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["call", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: trimcp call TARGET TOOL [KEY=VALUE ... | JSON]")
    assert "trimcp call TOOL [KEY=VALUE ...] -- COMMAND [ARGS ...]" in out
    assert "TARGET is one of:" in out
    assert "--allow GLOB" in out


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["call"], "TARGET is missing"),
        (["call", "demo"], "TOOL is missing"),
        (["call", "--", "node", "server.js"], "TOOL is missing"),
        (["read", "demo"], "URI is missing"),
        (["read", "demo", "a://b", "c://d"], "unexpected 'c://d'"),
        (["complete", "demo", "--prompt", "p"], "ARGUMENT is missing"),
        (["complete", "demo", "--prompt", "p", "--resource", "r", "x"], "not allowed with"),
        (["tools", "a", "b"], "unexpected 'b'"),
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: trimcp {argv[0]}")
    assert error in err


def test_a_target_and_a_command_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "demo", "--", "node", "server.js"]) == 1
    assert capsys.readouterr().err == (
        "give either a TARGET ('demo') or a command after --, not both\n"
    )


def test_an_unknown_server_gets_a_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_file(tmp_path)
    assert main(["tools", "evrything", "--config", str(path)]) == 1
    assert capsys.readouterr().err == (
        'no MCP server named "evrything" is configured; did you mean "everything"? '
        f"(configured: everything; read {path} (named with --config))\n"
    )


def test_with_nothing_configured_a_name_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "demo", "add"]) == 1
    err = capsys.readouterr().err
    assert err.startswith('no MCP server named "demo": no MCP servers are configured')
    assert "a file.py, a module:name, a URL, or a command after --" in err


def test_arguments_are_checked_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_file(tmp_path)
    assert main(["call", "everything", "echo", "text", "--config", str(path)]) == 1
    assert capsys.readouterr().err.startswith("'text' is not key=value")
    assert main(["get-prompt", "everything", "p", "a=1", "a=2", "--config", str(path)]) == 1
    assert "'a' is given twice" in capsys.readouterr().err
    assert main(["complete", "everything", "--prompt", "p", "x", "--context", "k"]) == 1
    assert "'k' is not key=value" in capsys.readouterr().err


def test_template_variables_follow_rfc_6570() -> None:
    assert _template_variables("demo://items/{id}") == ["id"]
    assert _template_variables("file:///{+path}{?q,page}{#frag}") == ["path", "q", "page", "frag"]
    assert _template_variables("x://{list*}/{name:3}") == ["list", "name"]
    assert _template_variables("x://static") == []


def call(tool: str, server: str = "demo") -> CallRequest:
    return CallRequest(
        qualified_name=f"mcp__{server}__{tool}", server=server, tool=tool, arguments={}
    )


async def test_yes_and_allow_globs_answer_the_permission_question() -> None:
    yes = _permissions(True, []).ask
    assert yes is not None
    assert await yes(call("wipe"))
    allow = _permissions(False, ["delete_*", "mcp__demo__wipe"]).ask
    assert allow is not None
    assert await allow(call("delete_file"))
    assert await allow(call("wipe"))
    assert not await allow(call("wipe", server="other"))
    assert not await allow(call("drop"))
    nothing = _permissions(False, []).ask
    assert nothing is not None
    assert not await nothing(call("wipe"))


def tool(name: str, annotations: dict[str, object] | None) -> HostTool:
    return HostTool(
        qualified_name=f"mcp__demo__{name}",
        server="demo",
        name=name,
        title=None,
        description="",
        input_schema={"type": "object"},
        annotations=annotations,
    )


def test_a_refusal_lists_every_way_to_allow_the_call() -> None:
    denied = ToolCallDenied("calling 'mcp__demo__wipe' was refused: ...")
    project = ConfigSource("/work/.mcp.json", "project")
    text = _refusal(tool("wipe", {"destructiveHint": True}), denied, project)
    assert text.splitlines() == [
        'demo marks its tool "wipe" destructive: trimcp call runs it only when told to, '
        "with one of",
        "  --yes                       (this call, whatever the tool is)",
        "  --allow wipe                (this tool; a glob, such as --allow 'wipe*', too)",
        '  "alwaysAllow": ["wipe"] in the entry of "demo" in /work/.mcp.json (project config)',
    ]
    upstreams = ConfigSource("/etc/trimcp/sys_config.toml", "sys_config")
    marked = _refusal(tool("wipe", None), denied, upstreams).splitlines()
    # Refused by a rule, not by the server's hint: the refusal itself is the first line.
    assert marked[0].startswith("calling 'mcp__demo__wipe' was refused: ...: trimcp call")
    assert marked[-1] == (
        '  always_allow = ["wipe"] in [upstreams.demo] of /etc/trimcp/sys_config.toml'
    )
    assert len(_refusal(tool("wipe", None), denied, None).splitlines()) == 3
