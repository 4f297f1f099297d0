"""Reading part of a file larger than ``max_file_size`` without reading all of it.

``Forward`` decodes from a line onwards (skipping the lines before it by counting newline
bytes a block at a time when the encoding allows, so ``offset=1_000_000`` costs a scan, not a
decode); ``tail_bytes`` reads blocks backwards from the end until it has enough lines, so the
tail of a 1 GB log costs a few blocks. Lines are capped at ``cap`` characters as they are
assembled: a file with one endless line still uses bounded memory.
"""

from __future__ import annotations

import codecs
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from trimcp.skills._runtime import Progress
    from trimcp.skills.tools._text import Encoding

__all__ = ["BLOCK_SIZE", "Forward", "tail_bytes"]

#: Bytes read at a time.
BLOCK_SIZE = 1024 * 1024


class Forward:
    """The lines of an open file from some line on, decoded.

    Args:
        fd: the open file (read with ``pread``; its offset is not used).
        encoding: how to decode it.
        cap: the most characters kept of one line (the rest is counted, not kept).
        progress: checked for cancellation between blocks.

    After iterating to the end, ``eof`` is true and ``total`` is the number of lines.
    """

    def __init__(self, fd: int, encoding: Encoding, cap: int, progress: Progress) -> None:
        self._fd = fd
        self._encoding = encoding
        self._cap = cap
        self._progress = progress
        self.eof = False
        self.total = 0

    def lines(self, start: int) -> Iterator[tuple[int, str]]:
        """Yield ``(number, text)`` for line ``start`` (1-based) and every one after it."""
        position, number = self._encoding.bom, 1
        if self._encoding.bytewise_newlines and start > 1:
            position, number = self._skip(start)
            if self.eof:
                return
        for line_number, text in self._decoded(position, number):
            if line_number >= start:
                yield line_number, text

    def _skip(self, start: int) -> tuple[int, int]:
        """Return the byte position and number of line ``start`` by counting newline bytes."""
        position, number = self._encoding.bom, 1
        while number < start:
            block = os.pread(self._fd, BLOCK_SIZE, position)
            if not block:
                # Every newline so far ended a line; a last line without one counts too.
                self.eof = True
                if position == self._encoding.bom:
                    self.total = 0
                elif os.pread(self._fd, 1, position - 1) == b"\n":
                    self.total = number - 1
                else:
                    self.total = number
                return position, number
            self._progress.check()
            count = block.count(b"\n")
            if number + count < start:
                number += count
                position += len(block)
                continue
            index = -1
            for _ in range(start - number):
                index = block.index(b"\n", index + 1)
            return position + index + 1, start
        return position, number

    def _decoded(self, position: int, number: int) -> Iterator[tuple[int, str]]:
        decoder = codecs.getincrementaldecoder(self._encoding.codec)(errors="replace")
        kept: list[str] = []
        kept_chars = 0
        length = 0
        while True:
            block = os.pread(self._fd, BLOCK_SIZE, position)
            position += len(block)
            final = not block
            pieces = decoder.decode(block, final=final).split("\n")
            for index, piece in enumerate(pieces):
                length += len(piece)
                if kept_chars < self._cap:
                    kept.append(piece[: self._cap - kept_chars])
                    kept_chars += len(kept[-1])
                if index < len(pieces) - 1:  # a newline ended this line
                    yield number, "".join(kept)
                    number += 1
                    kept, kept_chars, length = [], 0, 0
            if final:
                if length:
                    yield number, "".join(kept)
                    number += 1
                self.eof, self.total = True, number - 1
                return
            self._progress.check()


def tail_bytes(  # noqa: PLR0913
    fd: int, size: int, start: int, *, count: int, most: int, progress: Progress
) -> tuple[list[bytes], bool]:
    """Return the last ``count`` lines of the file (bytes, newline-free) and a flag.

    Reads blocks backwards from ``size`` down to ``start`` (the end of a byte order mark)
    and stops once it has ``count`` lines or ``most`` bytes (more than can be shown).
    The flag says the first line returned is partial (it began before what was read).
    Only for encodings whose newline is the byte 0x0A.
    """
    if size <= start:
        return [], False
    end = size
    # The file's final newline ends its last line; it separates nothing.
    if os.pread(fd, 1, size - 1) == b"\n":
        end -= 1
    blocks: list[bytes] = []
    position = end
    newlines = 0
    gathered = 0
    while position > start and newlines < count and gathered <= most:
        step = min(BLOCK_SIZE, position - start)
        position -= step
        block = os.pread(fd, step, position)
        blocks.append(block)
        newlines += block.count(b"\n")
        gathered += step
        progress.check()
    lines = b"".join(reversed(blocks)).split(b"\n")
    partial = position > start and os.pread(fd, 1, position - 1) != b"\n"
    if partial and len(lines) > count:
        lines, partial = lines[1:], False
    return lines[-count:], partial
