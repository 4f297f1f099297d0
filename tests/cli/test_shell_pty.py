"""``trimcp shell`` as a person at a keyboard uses it: a pseudo-terminal over a real server.

Each test writes DESK (a small MCP server, below) and an mcpServers file naming it into a
tmp folder, points HOME there (the history file, no user configuration) and runs ``python
-m trimcp shell`` in a pseudo-terminal with pexpect: keys are sent as a terminal sends them
(Tab, Ctrl-C as SIGINT from the terminal, Ctrl-D, the Up arrow's escape sequence) and the
screen output is read back. The server leaves marker files where a test must know what
happened on its side (a call started, a call was cancelled). Every expectation has a
timeout, and a shell still running at the end is killed by its process id.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pexpect
import pytest

import trimcp

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ROOT = Path(trimcp.__file__).resolve().parents[1]
PROMPT = "mcp> "
#: Seconds one expectation may take (a busy machine starts Python slowly).
TIMEOUT = 30.0

pytestmark = pytest.mark.slow

DESK = '''
import os
from pathlib import Path

import trio

from trimcp.server import Completion, Context, MCPServer, PromptRef, ToolAnnotations

server = MCPServer("desk", "1.0")


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def write_note(path: str, text: str) -> str:
    """Write text to the file at path, replacing what was there."""
    Path(path).write_text(text)
    return f"wrote {len(text)} characters"


@server.tool()
def greet(name: str, greeting: str = "hello", times: int = 1) -> str:
    """Greet someone, times times."""
    return " ".join([f"{greeting}, {name}!"] * times)


@server.tool()
def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Log each step and report it as progress, then say so."""
    for step in range(1, steps + 1):
        await ctx.info(f"step {step} of {steps}")
        await ctx.report_progress(step, steps, f"step {step}")
        await trio.sleep(0.1)
    return f"counted {steps}"


@server.tool()
async def remind(text: str, after: float, ctx: Context) -> str:
    """Answer now; log text after seconds, when the call is long over."""
    session = ctx.session

    async def later() -> None:
        await trio.sleep(after)
        await session.log("notice", text)

    session.start_soon(later)
    return "will remind"


@server.tool()
async def wait(marker: str) -> str:
    """Touch marker.started, wait forever; touch marker.cancelled when cancelled."""
    Path(marker + ".started").touch()
    try:
        await trio.sleep_forever()
    except trio.Cancelled:
        Path(marker + ".cancelled").touch()
        raise
    return "never"


@server.resource("desk://readme", mime_type="text/plain")
def readme() -> str:
    """The desk's readme."""
    return "Everything on this desk is tidy."


@server.resource("desk://logo", mime_type="image/png")
def logo() -> bytes:
    """Sixteen bytes that are not text."""
    return bytes(range(16))


@server.resource("desk://notes/{day}", mime_type="text/plain")
def notes(day: str) -> str:
    """The notes of one day."""
    return f"notes of {day}"


@server.prompt()
def review(language: str, focus: str) -> str:
    """Review some code.

    Args:
        language: the programming language
        focus: what to look at
    """
    return f"Review this {language} code, looking at {focus}."


@server.completion()
async def complete(ref, argument, value, context_arguments) -> Completion:
    if isinstance(ref, PromptRef):
        candidates = {"language": ["python", "perl", "rust"], "focus": ["speed", "safety"]}
    else:
        candidates = {"day": ["monday", "tuesday"]}
    found = [c for c in candidates.get(argument, []) if c.startswith(value)]
    return Completion(values=found, total=len(found), has_more=False)


server.run_stdio()
'''


class Shell:
    """One ``trimcp shell`` in a pseudo-terminal, and everything it wrote."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.transcript = io.StringIO()
        env = {
            "PYTHONPATH": str(ROOT),
            "HOME": str(folder),
            "XDG_CONFIG_HOME": str(folder / ".config"),
            "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
            "TERM": "xterm",
            "INPUTRC": str(folder / "inputrc"),  # none of the machine's key bindings
        }
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "trimcp", "shell", "--config", str(folder / "mcp.json")],
            cwd=str(folder),
            env=env,
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(40, 200),
        )
        self.child.logfile_read = self.transcript
        self.expect("desk: connected")
        self.expect(PROMPT)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def expect(self, text: str, timeout: float = TIMEOUT) -> str:
        """Wait for ``text`` (at most ``timeout`` s); return what came before it (since the
        last expectation)."""
        self.child.expect_exact(text, timeout=timeout)
        return str(self.child.before)

    def run(self, line: str, answer: str, timeout: float = TIMEOUT) -> str:
        """Type ``line`` and Enter, wait for ``answer`` (at most ``timeout`` s) and the next
        prompt; return the output."""
        self.send(line + "\r")
        before = self.expect(answer, timeout)
        self.expect(PROMPT)
        return before

    def leave(self) -> int:
        """Ctrl-D at an empty prompt; return the exit status."""
        self.send("\x04")
        self.child.expect(pexpect.EOF)
        self.child.close()
        assert self.child.exitstatus is not None, self.child.signalstatus
        return int(self.child.exitstatus)

    def kill(self) -> None:
        if self.child.isalive():
            os.kill(self.child.pid, signal.SIGKILL)
            self.child.wait()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.05)


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """A folder with DESK and an mcpServers file that names it ``desk``."""
    (tmp_path / "desk.py").write_text(DESK)
    (tmp_path / "inputrc").write_text("")
    servers = {"desk": {"command": sys.executable, "args": [str(tmp_path / "desk.py")]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return tmp_path


@pytest.fixture
def open_shell(desk: Path) -> Iterator[Callable[[], Shell]]:
    """Start shells in ``desk``; at the end, kill those still running and check the output."""
    shells: list[Shell] = []

    def start() -> Shell:
        shells.append(Shell(desk))
        return shells[-1]

    yield start
    for shell in shells:
        shell.kill()
    for shell in shells:
        assert "Traceback" not in shell.transcript.getvalue()


def test_tab_completes_commands_servers_tools_keys_uris_and_prompts(
    open_shell: Callable[[], Shell],
) -> None:
    shell = open_shell()
    shell.send("/mcp too\t")
    shell.expect("/mcp tools ")
    shell.send("d\t")
    shell.expect("desk ")
    shell.run("", "mcp__desk__write_note")
    # The qualified name, then an argument key from the tool's input schema.
    shell.send("/mcp call mcp__desk__gr\t")
    shell.expect("mcp__desk__greet ")
    shell.send("na\t")
    shell.expect("name=")
    shell.run("Ada", "hello, Ada!")
    # SERVER TOOL: the server's own tool names, then the keys not given yet.
    shell.send("/mcp call desk gr\t")
    shell.expect("greet ")
    shell.send("name=Bo ti\t")
    shell.expect("times=")
    shell.run("2", "hello, Bo! hello, Bo!")
    shell.send("/mcp read desk://r\t")
    shell.expect("desk://readme ")
    shell.run("", "Everything on this desk is tidy.")
    shell.send("/mcp prompt rev\t")
    shell.expect("review ")
    shell.send("lang\t")
    shell.expect("language=")
    shell.run("rust focus=speed", "user:\r\n  Review this rust code, looking at speed.")


def test_read_prompt_and_complete(open_shell: Callable[[], Shell]) -> None:
    shell = open_shell()
    shell.run("/mcp read desk://readme", "Everything on this desk is tidy.")
    shell.run("/mcp read desk://logo", "[image/png, 16 bytes]")
    # A URI no server lists, which a template of desk's matches.
    shell.run("/mcp read desk://notes/friday", "notes of friday")
    shell.run(
        '/mcp prompt review language=rust focus="error handling"',
        "user:\r\n  Review this rust code, looking at error handling.",
    )
    completed = shell.run("/mcp complete review language=p", "perl")
    assert "python" in completed
    assert "rust" not in completed
    shell.run("/mcp complete desk://notes/{day} day=t", "tuesday")
    shell.run("/mcp read desk://nowhere", "no connected server lists desk://nowhere")
    shell.run("/help", "/mcp complete [SERVER] PROMPT|TEMPLATE ARG=PREFIX")


def test_a_call_takes_key_value_words_or_one_json_object(open_shell: Callable[[], Shell]) -> None:
    shell = open_shell()
    shell.run('/mcp call desk greet name="Ada Lovelace" times=2', "hello, Ada Lovelace! hello,")
    shell.run('/mcp call mcp__desk__greet {"name": "Bo", "greeting": "hi"}', "hi, Bo!")
    shell.run("/mcp call desk greet Ada", "'Ada' is not key=value")


def test_logs_and_progress_are_shown_while_a_call_runs(open_shell: Callable[[], Shell]) -> None:
    shell = open_shell()
    shell.send("/mcp call desk count steps=3\r")
    shell.expect("\n")  # the line typed
    # Log lines and progress come by different ways (a notification task, the call's own
    # task): their order on the screen may vary, not what is there.
    during = shell.expect("counted 3")
    shell.expect(PROMPT)
    logs = [f"[desk] info: step {step} of 3\r\n" for step in (1, 2, 3)]
    assert all(line in during for line in logs), during
    assert all(f"{step}/3 step {step}" in during for step in (1, 2, 3)), during
    # One progress line redrawn in place: once the log lines are taken out, at most the
    # newline the bar ends with before it is erased, where one per update would be three.
    for line in logs:
        during = during.replace(line, "")
    assert during.count("\n") <= 1, during
    assert during.endswith("\x1b[2K")  # erased before the answer (ANSI "erase line")
    assert "progress 1/3" not in shell.transcript.getvalue()  # the plain, line-per-update form


@pytest.mark.xfail(
    strict=True,
    reason="the shell speaks 2026-07-28 to trimcp servers, and that revision has no log "
    "message outside a request (the tool's later session.log needs a session): the shell's "
    "redraw above the prompt is reached only with 2025-11-25 servers now",
)
def test_a_log_message_while_the_prompt_waits_goes_above_it(
    open_shell: Callable[[], Shell],
) -> None:
    shell = open_shell()
    # Bounded tighter than the default: this is where the known limitation shows (the
    # tool's answer is an error, at once).
    shell.run("/mcp call desk remind text=tea after=2", "will remind", timeout=10)
    shell.send("/mcp to")
    shell.expect("[desk] notice: tea", timeout=10)  # due 2 s after the call
    # The prompt is drawn again with what was typed, and typing goes on from there.
    shell.expect(PROMPT + "/mcp to")
    shell.run("ols", "mcp__desk__greet")


def test_a_destructive_tool_is_asked_about(desk: Path, open_shell: Callable[[], Shell]) -> None:
    note = desk / "note.txt"
    shell = open_shell()
    question = (
        "mcp__desk__write_note is marked destructive; run it? "
        "[y]es / [n]o / [a]lways for this tool in this session "
    )
    call = f"/mcp call desk write_note path={note} text="
    shell.send(call + "one\r")
    shell.expect(question)
    shell.run("n", "calling 'mcp__desk__write_note' was refused")
    assert not note.exists()
    shell.send(call + "two\r")
    shell.expect(question)
    shell.run("y", "wrote 3 characters")
    assert note.read_text() == "two"
    shell.send(call + "three\r")
    shell.expect(question)
    shell.run("a", "wrote 5 characters")
    assert note.read_text() == "three"
    # "always": not asked again in this session.
    output = shell.run(call + "four", "wrote 4 characters")
    assert "run it?" not in output
    assert note.read_text() == "four"


def test_ctrl_c_cancels_the_call_upstream_and_prompts_again(
    desk: Path, open_shell: Callable[[], Shell]
) -> None:
    marker = desk / "wait"
    shell = open_shell()
    shell.send(f"/mcp call desk wait marker={marker}\r")
    wait_until(Path(f"{marker}.started").exists, "the call reached the server")
    shell.child.sendintr()
    shell.expect("cancelled")
    shell.expect(PROMPT)
    # The server heard notifications/cancelled: its handler was cancelled.
    wait_until(Path(f"{marker}.cancelled").exists, "the server cancelled the call")
    # The session and the server are still there.
    shell.run("/mcp call desk greet name=again", "hello, again!")


def test_ctrl_c_at_the_prompt_clears_the_line(open_shell: Callable[[], Shell]) -> None:
    shell = open_shell()
    shell.send("/mcp nonsense")
    shell.expect("/mcp nonsense")
    shell.child.sendintr()
    shell.expect("^C")
    shell.expect(PROMPT)
    output = shell.run("/mcp tools", "mcp__desk__greet")
    assert "unknown" not in output


def test_ctrl_d_leaves_with_status_0_and_stops_the_server(
    open_shell: Callable[[], Shell],
) -> None:
    shell = open_shell()
    shell.send("/mcp call desk pid\r")
    shell.expect("\n")  # the echoed line
    server = int(shell.expect("\r\n").strip())
    shell.expect(PROMPT)
    assert shell.leave() == 0

    def gone() -> bool:
        try:
            os.kill(server, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, "the server stopped")


def test_history_is_recalled_with_the_up_arrow_in_the_next_run(
    desk: Path, open_shell: Callable[[], Shell]
) -> None:
    first = open_shell()
    first.run("/mcp call desk greet name=History", "hello, History!")
    assert first.leave() == 0
    assert "/mcp call desk greet name=History" in (desk / ".trimcp_history").read_text()
    second = open_shell()
    second.send("\x1b[A")
    second.expect("/mcp call desk greet name=History")
    second.run("", "hello, History!")
