"""What the shell shows while a command runs: the servers' log lines and one progress line.

On a terminal, progress is a single line redrawn in place (``\\r`` and erase-to-end), with a
bar when the total is known; a log message clears it, is printed, and the progress line is
drawn again below it. A log message that arrives while the prompt waits goes above the
prompt (``LineReader.show``). Elsewhere (a pipe, a file) each notification is one plain line.

Callbacks arrive from the session's tasks and from the calling task; both are in trio's
thread, so writes never interleave mid-line, and nothing here waits.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from typing import TextIO

    from trimcp.client import LogMessage, Progress

    from ._terminal import LineReader

__all__ = ["Display", "log_line", "progress_line"]

_ERASE_LINE = "\r\x1b[K"  # to column 0, then clear to the end of the line (ANSI CSI K)
_BAR_WIDTH = 20


def log_line(server: str, message: LogMessage) -> str:
    """A ``notifications/message`` as one line: ``[server] level (logger): data``."""
    data = message.data
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    source = f" ({message.logger})" if message.logger else ""
    return f"[{server}] {message.level}{source}: {text}"


def progress_line(update: Progress, *, bar: bool = False) -> str:
    """A ``notifications/progress`` as one line: ``progress 2/4 message``, with a bar if asked."""
    total = update.total
    amount = f"{update.progress:g}" + (f"/{total:g}" if total is not None else "")
    message = f" {update.message}" if update.message else ""
    if not bar or not total or total <= 0:
        return f"progress {amount}{message}"
    filled = max(0, min(_BAR_WIDTH, round(_BAR_WIDTH * update.progress / total)))
    return f"[{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {amount}{message}"


@final
class Display:
    """Log lines and the progress line of the command running (module docstring)."""

    def __init__(self, out: TextIO, reader: LineReader, *, live: bool) -> None:
        """``live``: ``out`` is a terminal, so progress may be redrawn in place."""
        self._out = out
        self._reader = reader
        self._live = live
        self._progress = ""  # the progress line on the terminal now, or ""

    def log(self, server: str, message: LogMessage) -> None:
        """Show one log message of ``server``."""
        line = log_line(server, message) + "\n"
        if self._reader.reading:
            self._reader.show(line)
            return
        if self._progress:
            line = _ERASE_LINE + line + self._progress
        self._out.write(line)
        self._out.flush()

    def progress(self, update: Progress) -> None:
        """Show the progress of the request running: redraw the line, or write one more."""
        if not self._live:
            self._out.write(f"  {progress_line(update)}\n")
            self._out.flush()
            return
        # Cut to the terminal's width: a line that wraps cannot be redrawn with \r.
        width = shutil.get_terminal_size().columns - 1
        self._progress = progress_line(update, bar=True)[:width]
        self._out.write(_ERASE_LINE + self._progress)
        self._out.flush()

    def finish(self) -> None:
        """Take the progress line off the terminal (before the command's answer)."""
        if self._progress:
            self._progress = ""
            self._out.write(_ERASE_LINE)
            self._out.flush()
