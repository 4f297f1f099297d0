"""``DaemonProcess``: a real ``trimcp serve`` for tests, in its own process group.

Its stderr is read by a thread so a test can wait for a log line; HOME and XDG_CONFIG_HOME
point into the test's folder, so no user or project mcpServers file is read. Stop it with
``cleanup()``, which kills what is left of its process group.
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


class DaemonProcess:
    """``python -m trimcp serve --config CONFIG`` run in ``tmp_path``, with ``env`` added."""

    #: Seconds ``wait_for`` waits by default.
    wait_timeout = 20.0

    def __init__(self, tmp_path: Path, config: Path, env: dict[str, str] | None = None) -> None:
        environment = {key: value for key, value in os.environ.items() if key != "TRIMCP_CONFIG"}
        environment |= {
            "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trimcp", "serve", "--config", str(config)],
            cwd=tmp_path,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
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

    def wait_for(self, pattern: str, timeout: float | None = None) -> re.Match[str]:
        """Return the first match of ``pattern`` in a stderr line, waiting for it."""
        deadline = time.monotonic() + (self.wait_timeout if timeout is None else timeout)
        regex = re.compile(pattern)
        with self._changed:
            while True:
                for line in self.lines:
                    if found := regex.search(line):
                        return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1] == ""):
                    raise AssertionError(f"no {pattern!r} in:\n{''.join(self.lines)}")
                self._changed.wait(left)

    def log(self) -> str:
        """Everything the daemon wrote to stderr so far."""
        with self._changed:
            return "".join(self.lines)

    def group_alive(self) -> bool:
        """True while any process of the daemon's group is left."""
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def cleanup(self) -> None:
        """Kill the daemon and its group if still there; reap it; close its stderr."""
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()
