"""Explaining a server's exit, and keeping the last lines of its stderr (both pure)."""

from __future__ import annotations

import pytest

from trimcp.client.process._exit import ExitFacts, exit_error, signal_name
from trimcp.client.process._stderr import MAX_LINE_BYTES, StderrTail, clean_line
from trimcp.client.process._text import LaunchContext
from trimcp.errors import ServerExited, TransportBroken


def _context(*argv: str, platform: str = "linux") -> LaunchContext:
    return LaunchContext(
        server="git", source="/p/.mcp.json (project config)", argv=argv, platform=platform
    )


def test_exit_during_start_names_code_stderr_causes_and_fixes() -> None:
    error = exit_error(
        _context("uvx", "mcp-server-git", "--repo", "/src"),
        ExitFacts(
            returncode=2,
            stderr=(
                "Traceback (most recent call last):",
                "ModuleNotFoundError: No module named 'x'",
            ),
            stderr_total=2,
            during="start",
        ),
    )
    assert isinstance(error, ServerExited)
    assert isinstance(error, TransportBroken)
    assert (error.returncode, error.signal, error.during) == (2, None, "start")
    assert error.command == ("uvx", "mcp-server-git", "--repo", "/src")
    assert str(error) == "\n".join(
        [
            'MCP server "git" exited while starting with exit code 2',
            "  config:   /p/.mcp.json (project config)",
            "  command:  uvx mcp-server-git --repo /src",
            "  exit:     code 2",
            "  stderr (2 lines):",
            "    | Traceback (most recent call last):",
            "    | ModuleNotFoundError: No module named 'x'",
            "  likely causes:",
            "    - it failed while starting: a missing dependency, a wrong argument, or an "
            "unsupported runtime version; its stderr usually says which",
            "    - uvx may have failed to fetch the server: offline, behind a proxy, or a "
            "misspelt package or image name",
            "    - it needs an environment variable (an API key, a config path) that it did not "
            "get: servers start with only a few of trimcp's variables (PATH, HOME, ...)",
            "  how to fix:",
            "    - run the command line above in a terminal to see its whole output",
            '    - list variables it needs from trimcp\'s environment in "env_passthrough", or '
            'set them in "env"',
        ]
    )


def test_killed_while_in_use() -> None:
    error = exit_error(
        _context("node", "server.js"),
        ExitFacts(returncode=-9, stderr=("x",) * 50, stderr_total=1234, during="operation"),
    )
    text = str(error)
    assert error.signal == "SIGKILL"
    assert text.startswith('MCP server "git" was stopped by SIGKILL while in use\n')
    assert "  exit:     killed by signal SIGKILL (exit status -9)" in text
    assert "  stderr (last 50 of 1234 lines):" in text
    assert "out-of-memory killer" in text
    assert "give it more memory" in text


@pytest.mark.parametrize(
    ("returncode", "during", "phrase"),
    [
        (0, "start", "it needs an argument to serve over stdio"),
        (0, "operation", "it ended on its own without an error"),
        (127, "start", "127 means that"),
        (126, "operation", "126 means permission denied"),
        (1, "operation", "it crashed while in use"),
        (-11, "operation", "it crashed (SIGSEGV)"),
        (-15, "start", "something else stopped it (SIGTERM)"),
    ],
)
def test_causes_follow_the_exit_status(returncode: int, during: str, phrase: str) -> None:
    facts = ExitFacts(returncode=returncode, during="start" if during == "start" else "operation")
    assert phrase in str(exit_error(_context("server"), facts))


def test_no_stderr_and_still_running() -> None:
    text = str(exit_error(_context("server"), ExitFacts(returncode=None, pipe="input")))
    assert "closed its standard input while starting, without exiting" in text
    assert "  exit:     still running; it closed its standard input" in text
    assert "  stderr:   (it wrote nothing to stderr)" in text
    assert ", or make it log to stderr" in text


def test_windows_status_codes() -> None:
    context = _context("server.exe", platform="win32")
    text = str(exit_error(context, ExitFacts(returncode=0xC0000005, during="operation")))
    assert "exit code 0xC0000005" in text
    assert "an access violation" in text
    assert signal_name(-9, "win32") is None


def test_signal_names() -> None:
    assert signal_name(-15, "linux") == "SIGTERM"
    assert signal_name(3, "linux") is None
    assert signal_name(None, "linux") is None
    assert signal_name(-200, "linux") == "signal 200"


def test_stderr_tail_keeps_the_last_lines() -> None:
    tail = StderrTail(3)
    assert tail.feed(b"one\ntwo\r\nthr") == [b"one", b"two"]
    assert tail.lines() == ("one", "two", "thr")
    tail.feed(b"ee\nfour\nfive\n")
    assert tail.lines() == ("three", "four", "five")
    assert tail.total == 5
    assert tail.feed_eof() == []


def test_stderr_tail_cuts_long_lines_and_finishes_at_eof() -> None:
    tail = StderrTail(2)
    tail.feed(b"a" * (MAX_LINE_BYTES - 1))
    tail.feed(b"b" * 100)
    tail.feed(b"c" * 1000)
    (line,) = tail.feed_eof()
    assert line == b"a" * (MAX_LINE_BYTES - 1) + b"b ... (1099 more bytes)"
    assert tail.total == 1


def test_clean_line_drops_escapes_and_keeps_the_last_redraw() -> None:
    assert clean_line(b"\x1b[31mError:\x1b[0m bad \xff") == "Error: bad \ufffd"
    assert clean_line(b"10%\r50%\r100%\r") == "100%"
    assert clean_line(b"\x1b]0;title\x07ok\tdone\x00") == "ok\tdone"


def test_stderr_tail_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="size"):
        StderrTail(0)
