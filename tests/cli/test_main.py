"""The ``trimcp`` parser: ``--version``, and the answer to a command it does not know."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.cli import main
from trimcp.cli._main import _build_parser

COMMANDS = set(_build_parser()[1][""])


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    return err.splitlines()[-1]


def test_version_is_the_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"trimcp {importlib.metadata.version('trimcp')}\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tols"], 'trimcp: error: unknown command "tols"; did you mean "tools"?'),
        (["serv"], 'trimcp: error: unknown command "serv"; did you mean "serve" or "servers"?'),
        (
            ["config", "chek"],
            'trimcp: error: unknown action "chek" for trimcp config; did you mean "check"?',
        ),
        (
            ["demo.py"],
            'trimcp: error: unknown command "demo.py"; did you mean "trimcp run demo.py"?',
        ),
        (
            ["myapp.server:app"],
            'trimcp: error: unknown command "myapp.server:app"; did you mean "trimcp run'
            ' myapp.server:app"?',
        ),
    ],
)
def test_an_unknown_command_gets_the_closest_names(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _usage_error(argv, capsys) == message


def test_a_command_like_no_other_gets_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    message = _usage_error(["zzzzqqq"], capsys)
    assert message.startswith('trimcp: error: unknown command "zzzzqqq"; choose one of: config,')
    assert all(name in message for name in COMMANDS)


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
        lambda word: not word.startswith("-") and word not in COMMANDS
    )
)
def test_any_other_first_word_is_a_usage_error_naming_it(word: str) -> None:
    with pytest.raises(SystemExit) as caught:
        main([word])
    assert caught.value.code == 2


@pytest.mark.parametrize("command", sorted(COMMANDS - {"skills"}))
def test_every_command_name_is_accepted(command: str) -> None:
    # --help: every command parses its own name and stops there, with status 0.
    with pytest.raises(SystemExit) as caught:
        main([command, "--help"])
    assert caught.value.code == 0


def test_the_help_says_which_file_config_names(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["serve", "--help"], ["config", "show", "--help"], ["config", "check", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
    text = " ".join(capsys.readouterr().out.split())
    assert text.count("the sys_config.toml to read (default: $TRIMCP_CONFIG, else") == 3
    assert "--config MCPFILE an MCP servers file (mcpServers JSON, TOML or YAML)" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert "--config names a sys_config.toml for serve and skills, and an MCP servers file" in top


@pytest.mark.slow
def test_python_m_trimcp_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trimcp", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, f"trimcp {importlib.metadata.version('trimcp')}\n")
