"""Running one page's blocks in order, as a reader would in one terminal and one folder.

Each page gets a work folder that looks like the top of a trimcp checkout without the
package (``examples/*.py`` and ``sys_config.toml`` are copied in), a HOME of its own inside
it (so no user file is read or written: mcpServers files, Claude Desktop's configuration),
and two free ports that stand for the 8000 and 8001 the docs show: every ``8000`` and
``8001`` in a block, its expected output and the copied sys_config.toml is replaced by the
page's port before anything runs. Shell variables set by one command are seen by the next
(``set -a`` and a state file), as in one shell session. Everything listens on 127.0.0.1.

Every process is started in its own process group; a foreground command's group is killed
when it returns (whatever it left behind goes with it) or when it times out, and background
blocks are stopped by PID (SIGTERM to the group, SIGKILL 15 s later) when the page is done.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from tests.docs._blocks import REPO, Block, console_commands
from tests.docs._match import contains, matches

if TYPE_CHECKING:
    from pathlib import Path

#: Seconds one command, script or test file may run.
COMMAND_TIMEOUT = 120.0
#: Seconds a background block has to be ready (its ports open, its output shown).
READY_TIMEOUT = 60.0
#: Seconds a background block has to exit after SIGTERM before it is killed.
STOP_TIMEOUT = 15.0
#: The ports the docs show, each replaced by a free one per page.
DOC_PORTS = (8000, 8001)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def _kill_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


@dataclass
class _Background:
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    path: Path

    def output(self) -> list[str]:
        return self.path.read_text(encoding="utf-8", errors="replace").splitlines()


@dataclass
class PageRun:
    """The blocks of one page, run in order in ``root`` (module docstring)."""

    blocks: list[Block]
    root: Path
    failures: list[str] = field(default_factory=list)
    _background: list[_Background] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ports = {port: free_port() for port in DOC_PORTS}
        self.work = self.root / "work"
        self.scripts = self.root / "blocks"
        self.state = self.root / "shell-state"
        for folder in (self.work / "examples", self.work / "home" / ".config", self.scripts):
            folder.mkdir(parents=True)
        for example in (REPO / "examples").glob("*.py"):
            shutil.copy(example, self.work / "examples" / example.name)
        bundled = (REPO / "sys_config.toml").read_text(encoding="utf-8")
        (self.work / "sys_config.toml").write_text(self.substitute(bundled), encoding="utf-8")
        self.state.write_text("", encoding="utf-8")
        self.env = self._environment()

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("TRIMCP_CONFIG", "PYTHONPATH")}
        home = self.work / "home"
        env |= {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            # The interpreter running the tests comes first: its python, pip and trimcp.
            "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
            # The work folder (the modules blocks wrote), then this checkout's trimcp, whatever
            # the environment has installed: the docs are tested against the code beside them.
            "PYTHONPATH": os.pathsep.join([str(self.work), str(REPO)]),
            "PYTHONUNBUFFERED": "1",
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "TERM": "dumb",
        }
        return env

    def substitute(self, text: str) -> str:
        """``text`` with the docs' ports replaced by this page's."""
        return re.sub(r"(?<![\d.])(8000|8001)(?!\d)", lambda m: str(self.ports[int(m[1])]), text)

    # --- the page ----------------------------------------------------------------------------

    def run(self) -> None:
        """Run every block in order; failures are collected, background blocks stopped."""
        try:
            for block in self.blocks:
                runner = getattr(self, f"_run_{block.language}", None)
                if runner is not None and block.marks.skip is None:
                    runner(block)
        finally:
            self._stop_background()

    def _fail(self, block: Block, what: str, output: str = "") -> None:
        shown = "\n".join(f"    {line}" for line in output.splitlines()[-60:])
        self.failures.append(f"{block.where}: {what}" + (f"\n  output:\n{shown}" if shown else ""))

    def _write(self, block: Block) -> Path | None:
        if block.marks.file is None:
            return None
        path = self.work / block.marks.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.substitute(block.text), encoding="utf-8")
        return path

    def _run_toml(self, block: Block) -> None:
        self._write(block)  # checked by the fast tests; written for the commands after it

    _run_json = _run_toml
    _run_text = _run_toml  # a data file a later command reads (text blocks are not run)

    def _run_python(self, block: Block) -> None:
        source = self.substitute(block.text)
        if self._write(block) is not None:
            try:
                compile(source, block.marks.file or "<block>", "exec")
            except SyntaxError as exc:
                self._fail(block, f"does not compile: {exc}")
            return
        name = f"{'test_' if block.marks.pytest else ''}block_{block.line}.py"
        script = self.scripts / name
        script.write_text(source, encoding="utf-8")
        if block.marks.background:
            self._start(block, [sys.executable, str(script)], source, [])
            return
        command = [sys.executable, str(script)]
        if block.marks.pytest:
            # No configuration file of the work folder's parents; trio mode as the docs assume.
            command = [
                sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "-c", os.devnull, "--rootdir", str(self.scripts), "-o", "trio_mode=true",
                str(script),
            ]  # fmt: skip
        status, output = self._execute(command)
        if status != 0:
            self._fail(block, f"exited with status {status}", output)

    def _run_console(self, block: Block) -> None:
        for command in console_commands(block.text):
            text = self.substitute(command.text)
            expected = [self.substitute(line) for line in command.expected]
            if block.marks.background:
                self._start(block, ["bash", "-c", self._script(text)], text, expected)
                continue
            status, output = self._execute(["bash", "-c", self._script(text)])
            problems = []
            if status != block.marks.exit_status:
                problems.append(f"exit status {status}, expected {block.marks.exit_status}")
            if not matches(expected, output.splitlines()):
                problems.append("output differs from the block's:\n" + _indent(expected))
            if problems:
                self._fail(block, f"$ {text}\n  " + "\n  ".join(problems), output)

    def _run_bash(self, block: Block) -> None:
        status, output = self._execute(["bash", "-e", "-c", self.substitute(block.text)])
        if status != block.marks.exit_status:
            self._fail(block, f"exited with {status}, expected {block.marks.exit_status}", output)

    _run_sh = _run_bash

    # --- processes ---------------------------------------------------------------------------

    def _script(self, command: str) -> str:
        """``command`` in a shell that reads and then saves the variables of the page."""
        state = f'"{self.state}"'
        return f"set -a\n. {state}\n{command}\n__status=$?\nexport -p > {state}\nexit $__status\n"

    def _execute(self, command: list[str]) -> tuple[int, str]:
        process = subprocess.Popen(
            command,
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = process.communicate(timeout=COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            text = out.decode(errors="replace")
            return -1, f"{text}\n(timed out after {COMMAND_TIMEOUT:g} s)"
        finally:
            _kill_group(process.pid, signal.SIGKILL)
        return process.returncode, out.decode(errors="replace")

    def _start(self, block: Block, command: list[str], text: str, expected: list[str]) -> None:
        named = "\n".join([text, *expected])
        ports = [port for port in self.ports.values() if re.search(rf"(?<!\d){port}(?!\d)", named)]
        if not ports and not any(line.strip() for line in expected):
            self._fail(block, "a background block must name a port or show output to wait for")
            return
        path = self.root / f"background-{block.line}.log"
        log = path.open("wb")
        process = subprocess.Popen(
            command,
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started = _Background(process, log, path)
        self._background.append(started)
        deadline = time.monotonic() + READY_TIMEOUT
        while not (all(_port_open(p) for p in ports) and contains(expected, started.output())):
            if process.poll() is not None:
                what = f"exited with {process.returncode} before it was ready"
                self._fail(block, what, "\n".join(started.output()))
                return
            if time.monotonic() > deadline:
                what = f"not ready after {READY_TIMEOUT:g} s (ports {ports})"
                self._fail(block, what, "\n".join(started.output()))
                return
            time.sleep(0.1)

    def _stop_background(self) -> None:
        for started in reversed(self._background):
            _kill_group(started.process.pid, signal.SIGTERM)
            try:
                started.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                _kill_group(started.process.pid, signal.SIGKILL)
                started.process.wait()
            _kill_group(started.process.pid, signal.SIGKILL)
            started.log.close()
        self._background.clear()


def _indent(lines: list[str]) -> str:
    return "\n".join(f"    {line}" for line in lines)
