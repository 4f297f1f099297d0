"""Real child processes for tests: ``ChildProcess``, and ``DaemonProcess`` for ``trimcp serve``.

A child runs in its own process group and its stderr is read by a thread, so a test can wait
for a log line. ``stop()`` sends SIGTERM by PID and waits; ``cleanup()`` kills at once; both
then kill what is left of the group. A ``DaemonProcess`` has HOME and XDG_CONFIG_HOME in the
test's folder, so no user or project mcpServers file is read.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


class ChildProcess:
    """``command`` run in ``cwd`` with the environment ``env``, in its own process group."""

    #: Seconds ``wait_for`` waits by default.
    wait_timeout = 20.0

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.pid = self.process.pid
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.lines.append("")  # end of stderr
            self._changed.notify_all()

    def wait_for(
        self, pattern: str | re.Pattern[str], timeout: float | None = None
    ) -> re.Match[str]:
        """Return the first match of ``pattern`` in a stderr line, waiting (bounded) for it."""
        deadline = time.monotonic() + (self.wait_timeout if timeout is None else timeout)
        regex = re.compile(pattern)
        with self._changed:
            while True:
                for line in self.lines:
                    if found := regex.search(line):
                        return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1] == ""):
                    raise AssertionError(f"no {regex.pattern!r} in:\n{''.join(self.lines)}")
                self._changed.wait(left)

    def log(self) -> str:
        """Everything the daemon wrote to stderr so far."""
        with self._changed:
            return "".join(self.lines)

    def group_alive(self) -> bool:
        """True while any process of the daemon's group is left."""
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def stop(self) -> None:
        """SIGTERM by PID, then SIGKILL if it does not exit in 15 s; then ``cleanup()``."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=15)
        self.cleanup()

    def cleanup(self) -> None:
        """Kill the process and its group if still there; reap it; close its stderr."""
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


class DaemonProcess(ChildProcess):
    """``python -m trimcp serve --config CONFIG`` run in ``tmp_path``, with ``env`` added."""

    def __init__(self, tmp_path: Path, config: Path, env: dict[str, str] | None = None) -> None:
        environment = {key: value for key, value in os.environ.items() if key != "TRIMCP_CONFIG"}
        environment |= {
            "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        command = [sys.executable, "-m", "trimcp", "serve", "--config", str(config)]
        super().__init__(command, tmp_path, environment)
