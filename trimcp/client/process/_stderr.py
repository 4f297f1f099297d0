"""A launched server's stderr: read all the time, last lines kept for error messages.

Servers log to stderr (MCP 2025-11-25, Transports, stdio: "The server MAY write UTF-8 strings
to its standard error"). Nobody reading it is not an option: once the pipe's buffer (64 KiB on
Linux) is full, a server's next log line blocks it forever, mid-request. So a task drains it
from launch to exit, and ``StderrTail`` (sans-IO) keeps the last lines, each cut to a bounded
length, for the exit message. Lines also go to this module's logger at DEBUG.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from typing import TYPE_CHECKING, final

import trio

if TYPE_CHECKING:
    from collections.abc import Iterable

logger = logging.getLogger(__name__)

DEFAULT_STDERR_LINES = 50
"""Lines of a server's stderr kept for error messages."""

# A line is cut after this many bytes: the start of a traceback line says what happened, and
# a server writing megabytes without a newline must not cost megabytes here.
MAX_LINE_BYTES = 2000

# Bytes asked for per read: the Linux pipe capacity.
_RECEIVE_SIZE = 64 * 1024

# Terminal escapes (colours, cursor moves, titles) and other control characters, which mean
# nothing in a log file or an exception message. Tabs stay.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.")
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@final
class StderrTail:
    """The last ``size`` lines of a byte stream, each cut at ``MAX_LINE_BYTES``.

    Feed it chunks as they arrive; ``lines`` returns the kept lines, decoded, an unfinished
    last line included. Lines are stored as bytes and decoded only when asked for, so a
    chatty server costs a split per chunk and nothing per line it does not keep.
    """

    __slots__ = ("_cut", "_lines", "_partial", "_total")

    def __init__(self, size: int = DEFAULT_STDERR_LINES) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, not {size}")
        self._lines: deque[bytes] = deque(maxlen=size)
        self._partial = bytearray()
        self._cut = 0  # bytes dropped from the unfinished line
        self._total = 0

    @property
    def total(self) -> int:
        """Lines seen so far, kept or not (an unfinished last line not counted)."""
        return self._total

    def feed(self, data: bytes | bytearray) -> list[bytes]:
        """Add a chunk; return the lines it finished (as bytes, without line endings)."""
        pieces = bytes(data).split(b"\n")
        finished: list[bytes] = []
        for piece in pieces[:-1]:
            self._append(piece)
            finished.append(self._finish())
        self._append(pieces[-1])
        self._lines.extend(finished)
        self._total += len(finished)
        return finished

    def feed_eof(self) -> list[bytes]:
        """Finish an unterminated last line; return it (or nothing)."""
        if not self._partial and not self._cut:
            return []
        line = self._finish()
        self._lines.append(line)
        self._total += 1
        return [line]

    def lines(self) -> tuple[str, ...]:
        """Return the kept lines, oldest first, decoded and cleaned of terminal escapes."""
        kept: list[bytes] = list(self._lines)
        if self._partial or self._cut:
            kept.append(self._mark_cut(bytes(self._partial), self._cut))
        return tuple(clean_line(line) for line in kept)

    def _append(self, piece: bytes) -> None:
        room = MAX_LINE_BYTES - len(self._partial)
        if len(piece) <= room:
            self._partial += piece
        else:
            self._partial += piece[: max(room, 0)]
            self._cut += len(piece) - max(room, 0)

    def _finish(self) -> bytes:
        line = self._mark_cut(bytes(self._partial), self._cut)
        self._partial.clear()
        self._cut = 0
        return line

    @staticmethod
    def _mark_cut(line: bytes, cut: int) -> bytes:
        line = line.removesuffix(b"\r")
        return line + b" ... (%d more bytes)" % cut if cut else line


def clean_line(line: bytes) -> str:
    """Decode a stderr line leniently and drop terminal escapes and control characters."""
    text = line.decode("utf-8", "replace").rstrip("\r")
    # A progress bar redraws its line after each \r; a terminal would show the last part.
    text = text.rpartition("\r")[2]
    return _CONTROLS.sub("", _ESCAPES.sub("", text)).rstrip()


async def drain_stderr(
    stream: trio.abc.ReceiveStream, tail: StderrTail, *, server: str, done: trio.Event
) -> None:
    """Read ``stream`` into ``tail`` until EOF, then set ``done`` (also if cancelled or broken).

    Never raises for the stream's sake: a closed or broken pipe ends the drain like EOF does.
    """
    try:
        while True:
            try:
                data = await stream.receive_some(_RECEIVE_SIZE)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                break
            if not data:
                _log(server, tail.feed_eof())
                break
            _log(server, tail.feed(data))
    finally:
        done.set()


def _log(server: str, lines: Iterable[bytes]) -> None:
    if not logger.isEnabledFor(logging.DEBUG):
        return
    for line in lines:
        logger.debug("server %s stderr: %s", server, clean_line(line), extra={"server": server})
