"""What the shell shows while a command runs: the servers' log lines and the progress line.

While a command runs, ``trimcp.cli._output.Activity`` shows them as the one-shot commands
do, but on the shell's own stream: on a terminal progress is one line redrawn in place (a
bar when the total is known) with log lines printed above it, elsewhere one plain line per
notification. A log message that arrives while the prompt waits is printed above the prompt,
which is drawn again with what was typed (``LineReader.show``).

Callbacks arrive from the session's tasks and from the calling task; both are in trio's
thread, so writes never interleave mid-line, and nothing here waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

from trimcp.cli._output import Activity, log_line

if TYPE_CHECKING:
    from typing import TextIO

    from trimcp.client import LogMessage, Progress

    from ._terminal import LineReader

__all__ = ["Display"]


@final
class Display:
    """Log lines and the progress line of the command running (module docstring)."""

    def __init__(self, out: TextIO, reader: LineReader, *, live: bool) -> None:
        """``live``: ``out`` is a terminal, so progress may be redrawn in place."""
        self._reader = reader
        self._activity = Activity(out, terminal=live)

    def log(self, server: str, message: LogMessage) -> None:
        """Show one log message of ``server``."""
        if self._reader.reading:
            self._reader.show(log_line(server, message) + "\n")
        else:
            self._activity.log(server, message)

    def progress(self, update: Progress) -> None:
        """Show the progress of the request running."""
        self._activity.progress(update)

    def finish(self) -> None:
        """Take the progress line off the terminal (before the command's answer)."""
        self._activity.close()
