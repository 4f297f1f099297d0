"""Newline-delimited framing as a pure state machine: bytes in, whole lines out.

Sans-IO like ``h11``: ``LineFramer`` never reads or awaits. ``StdioStream`` feeds it the
chunks it reads and asks it for lines; the same core could frame any other byte stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from trimcp.errors import MessageTooLarge

# Lines at least this long are copied out once, through a memoryview; shorter ones through a
# bytearray slice (two copies), which is about half the cost below a few KiB (timeit, 3.11).
_COPY_THROUGH_VIEW = 16 * 1024


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FramerStatistics:
    """A snapshot of a ``LineFramer``'s buffer.

    Attributes:
        buffered_bytes: bytes held now (a partial line, plus whole lines not yet taken).
        peak_buffered_bytes: the most bytes ever held at once; never more than
            ``max_message_size + 1 + `` the largest chunk fed (the ``+ 1`` is a trailing
            ``\\r`` that CRLF framing strips).
        discarding_bytes: bytes of an over-long line dropped so far, 0 when not discarding.
        at_eof: ``feed_eof`` was called.
    """

    buffered_bytes: int
    peak_buffered_bytes: int
    discarding_bytes: int
    at_eof: bool


@final
class LineFramer:
    """Split a byte stream into lines, bounding memory per line.

    A line ends at ``\\n``; one trailing ``\\r`` is stripped (CRLF is tolerated) and empty
    lines are skipped. ``max_message_size`` bounds a line without its line ending. A line
    that is certainly longer is dropped as its bytes arrive, never buffered; once its end is
    seen (or at EOF), ``next_message`` raises ``MessageTooLarge`` once, in stream order, and
    then carries on with the following line.

    Use: ``feed`` each chunk, then call ``next_message`` until it returns ``None`` (or call
    ``messages`` once); at end of input call ``feed_eof`` and drain again. An unterminated
    last line counts as a message.
    """

    def __init__(self, max_message_size: int) -> None:
        if max_message_size < 1:
            raise ValueError(f"max_message_size must be >= 1, not {max_message_size}")
        self._limit = max_message_size
        # Invariants: bytes before _start are consumed; there is no b"\n" in
        # _buffer[_start:_scan], so each byte is searched once (no quadratic rescans).
        self._buffer = bytearray()
        self._start = 0
        self._scan = 0
        self._peak = 0
        # > 0 while dropping an over-long line whose end has not been seen yet.
        self._discarding = 0
        # Size of an over-long line whose end was found but not yet reported.
        self._too_large: int | None = None
        self._eof = False

    @property
    def at_eof(self) -> bool:
        """Whether ``feed_eof`` has been called."""
        return self._eof

    def statistics(self) -> FramerStatistics:
        """Return a snapshot of the buffer (see ``FramerStatistics``)."""
        return FramerStatistics(
            buffered_bytes=len(self._buffer) - self._start,
            peak_buffered_bytes=self._peak,
            discarding_bytes=self._discarding,
            at_eof=self._eof,
        )

    def feed(self, data: bytes | bytearray) -> None:
        """Add a chunk of input. Call only once ``next_message`` has returned ``None``."""
        if self._eof:
            raise RuntimeError("feed() after feed_eof()")
        if self._discarding:
            end = data.find(b"\n")
            if end < 0:
                self._discarding += len(data)
                return
            self._too_large = self._discarding + end
            self._discarding = 0
            data = data[end + 1 :]
        if self._start:
            del self._buffer[: self._start]
            self._scan -= self._start
            self._start = 0
        self._buffer += data
        self._peak = max(self._peak, len(self._buffer))

    def feed_eof(self) -> None:
        """Mark the end of input; the next ``next_message`` calls drain what is left."""
        self._eof = True

    def next_message(self) -> bytes | None:
        """Return the next non-empty line without its line ending, or ``None`` for "need input".

        At EOF, an unterminated last line is returned once, then ``None`` forever.

        Raises:
            MessageTooLarge: the next line in the stream was over the limit; it is gone and
                the following call continues after it. ``size`` is the line's length
                without its ``\\n`` (a ``\\r`` before it counts), or at EOF the bytes dropped.
        """
        while True:
            if self._too_large is not None:
                size, self._too_large = self._too_large, None
                raise MessageTooLarge(size, self._limit)
            end = self._buffer.find(b"\n", self._scan)
            if end < 0:
                return self._no_line_ending()
            line = self._take(end)
            if line:
                return line

    def messages(self) -> list[bytes | MessageTooLarge]:
        """Return every message ``next_message`` would return now, in one call.

        An over-long line appears as its ``MessageTooLarge``, in stream order, instead of
        being raised. A reader that takes a whole read's messages at once (``StdioStream``
        does) saves a call per message and the final empty check.
        """
        out: list[bytes | MessageTooLarge] = []
        if self._too_large is not None:
            out.append(MessageTooLarge(self._too_large, self._limit))
            self._too_large = None
        buffer, limit, start = self._buffer, self._limit, self._start
        end = buffer.find(b"\n", self._scan)
        while end >= 0:
            # The same steps as _take, inlined: this loop runs once per message.
            size = end - start
            stop = end - 1 if size and buffer[end - 1] == 0x0D else end  # b"\r"
            if stop - start > limit:
                out.append(MessageTooLarge(size, limit))
            elif stop - start >= _COPY_THROUGH_VIEW:
                with memoryview(buffer) as view, view[start:stop] as line:
                    out.append(bytes(line))
            elif stop > start:
                out.append(bytes(buffer[start:stop]))
            start = end + 1
            end = buffer.find(b"\n", start)
        self._start = self._scan = start
        try:
            last = self._no_line_ending()
        except MessageTooLarge as exc:
            out.append(exc)
        else:
            if last is not None:
                out.append(last)
        return out

    def _take(self, end: int) -> bytes:
        """Consume the line ending at ``end`` (the ``\\n``'s index); return its content."""
        start = self._start
        self._start = self._scan = end + 1
        size = end - start
        if size and self._buffer[end - 1] == 0x0D:  # b"\r"
            end -= 1
        if end - start > self._limit:
            raise MessageTooLarge(size, self._limit)
        if end - start < _COPY_THROUGH_VIEW:
            return bytes(self._buffer[start:end])
        with memoryview(self._buffer) as view, view[start:end] as line:
            return bytes(line)

    def _no_line_ending(self) -> bytes | None:
        """Handle a buffer without a complete line: keep, drop or (at EOF) flush its tail."""
        self._scan = len(self._buffer)
        tail = self._scan - self._start
        # A tail of limit + 1 bytes may still end in the b"\r" of a line that fits.
        if tail > self._limit + 1:
            self._buffer.clear()
            self._start = self._scan = 0
            self._discarding = tail
        if not self._eof:
            return None
        if self._discarding:
            size, self._discarding = self._discarding, 0
            raise MessageTooLarge(size, self._limit)
        if tail == 0:
            return None
        # An unterminated last line: take it as if it had its b"\n".
        self._buffer += b"\n"
        return self.next_message()
