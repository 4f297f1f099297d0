"""The stdio transport: newline-delimited JSON-RPC over a pair of trio byte streams.

MCP 2025-11-25, Transports, stdio: one message per line, ``\\n``-delimited, UTF-8; the server
writes nothing but MCP messages to stdout and MAY log to stderr. ``StdioStream`` does the
framing (through the sans-IO ``LineFramer``) over any ``trio.abc.ReceiveStream`` /
``SendStream``; ``open_stdio_stream`` wires it to the process's own stdin and stdout.

No threads: the official Python SDK wraps stdio files in worker threads and pays for it on
every message (ARCHITECTURE.md, performance budget). We read and write the file descriptors
with ``trio.lowlevel.FdStream``, trio's own non-blocking fd stream, and send a batch of
replies as one ``send_all``.

What ``FdStream`` makes of each kind of stdin/stdout (checked on Linux, trio 0.35):

* pipe or socket (how MCP clients start servers; Node's ``child_process`` uses socketpairs):
  non-blocking reads and writes, waits in trio's epoll/kqueue loop. The intended case.
* regular file or ``/dev/null`` (``trimcp < requests.jsonl > replies.jsonl``): works as is.
  ``O_NONBLOCK`` means nothing to regular files, so ``os.read``/``os.write`` never raise
  ``BlockingIOError`` and trio never has to poll the fd (epoll would refuse it); each call
  blocks the event loop for one disk read or write, which is fine for a file.
* TTY (a person typing into the server): non-blocking mode belongs to the *open file
  description*, which a terminal's stdin, stdout and stderr share, so an ``FdStream`` on a
  ``dup`` of stdin would make stderr non-blocking too and log writes could fail with
  ``BlockingIOError`` (trio's ``FdStream`` docstring, python-trio/trio#174). So a TTY is
  reopened by name (``os.ttyname``): a new open file description that we alone make
  non-blocking. If that fails we fall back to ``dup`` and log a warning.

Keeping stdout clean: by default ``open_stdio_stream`` takes the real stdin and stdout for
itself and then points fd 0 at ``/dev/null`` and fd 1 at stderr, so a stray ``print``, a C
library, or a tool's subprocess (which inherits fds 0-2) can neither write into the
protocol stream nor eat protocol input. Logs belong on stderr; the daemon's logging setup
(``trimcp._logging``) puts them there. Windows is not supported (``FdStream`` is Unix-only).
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import LocalProtocolError, MessageTooLarge, TransportBroken, TransportClosed

from ._line_framer import LineFramer

if TYPE_CHECKING:
    from collections.abc import Sequence

logger = logging.getLogger(__name__)

# The MCP spec sets no limit. 4 MiB holds any sane JSON-RPC message (a large file read or
# base64 image) and bounds what one peer can make us buffer.
DEFAULT_MAX_MESSAGE_SIZE = 4 * 1024 * 1024

# Bytes asked for per read: the Linux pipe capacity, trio's own FdStream default.
DEFAULT_RECEIVE_SIZE = 64 * 1024


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StdioStreamStatistics:
    """A snapshot of a ``StdioStream``.

    Attributes:
        buffered_bytes: received bytes not yet returned as messages.
        peak_buffered_bytes: the most ever buffered at once; at most
            ``max_message_size + 1 + receive_size``.
        discarding_bytes: bytes of an over-long line dropped so far (0 when not dropping).
        max_message_size: the line length limit, without the line ending.
        receive_size: bytes asked for per read.
        closed: ``aclose`` has been called.
    """

    buffered_bytes: int
    peak_buffered_bytes: int
    discarding_bytes: int
    max_message_size: int
    receive_size: int
    closed: bool


@final
class StdioStream(trio.abc.AsyncResource):
    """A ``MessageStream`` of newline-delimited messages over two trio byte streams.

    Receiving reads ``receive_size`` bytes at a time and returns every whole line in that
    chunk before it reads again. A line longer than ``max_message_size`` (not counting its
    ``\\n`` or ``\\r\\n``) is dropped as it arrives, so at most ``max_message_size + 1 +
    receive_size`` bytes are ever buffered; ``MessageTooLarge`` is raised when its end is
    found, and the next call returns the line after it. Message bytes are not decoded:
    invalid UTF-8 passes through for the session to reject.

    Cancelling ``receive_message`` loses nothing: bytes already read stay buffered. A
    message already buffered is returned after a cancellation check but without a schedule
    point (a full ``trio.lowlevel.checkpoint`` costs ~10 µs, a tenth of the per-request
    budget); every read from the byte stream is a full checkpoint.

    Sending writes the whole batch as one ``send_all``. If cancelled mid-way, part of the
    batch may have been written and the stream should be closed. Only one task may send and
    one task receive at a time (trio raises ``BusyResourceError`` otherwise).

    Closing (``aclose``, idempotent) closes both byte streams; a task blocked in
    ``receive_message`` then gets ``TransportClosed``.
    """

    def __init__(
        self,
        receive_stream: trio.abc.ReceiveStream,
        send_stream: trio.abc.SendStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        receive_size: int = DEFAULT_RECEIVE_SIZE,
    ) -> None:
        if receive_size < 1:
            raise ValueError(f"receive_size must be >= 1, not {receive_size}")
        self._receive_stream = receive_stream
        self._send_stream = send_stream
        self._framer = LineFramer(max_message_size)
        self._max_message_size = max_message_size
        self._receive_size = receive_size
        self._closed = False

    def statistics(self) -> StdioStreamStatistics:
        """Return a snapshot of the receive buffer and settings."""
        framer = self._framer.statistics()
        return StdioStreamStatistics(
            buffered_bytes=framer.buffered_bytes,
            peak_buffered_bytes=framer.peak_buffered_bytes,
            discarding_bytes=framer.discarding_bytes,
            max_message_size=self._max_message_size,
            receive_size=self._receive_size,
            closed=self._closed,
        )

    async def receive_message(self) -> bytes:
        """Return the next non-empty line, reading more input only when none is buffered.

        At EOF an unterminated last line is returned as a message; the call after that
        raises ``TransportClosed``.

        Raises:
            TransportClosed: end of input, or this stream was closed.
            TransportBroken: reading failed (``trio.BrokenResourceError``).
            MessageTooLarge: the next line was over the limit and has been dropped.
        """
        if self._closed:
            raise TransportClosed("the stdio stream is closed")
        message = self._framer.next_message()
        if message is not None:
            await trio.lowlevel.checkpoint_if_cancelled()
            return message
        while message is None:
            if self._framer.at_eof:
                raise TransportClosed("end of input: the peer closed its end of the stream")
            await self._receive_chunk()
            message = self._framer.next_message()
        return message

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the lines already buffered, without reading (see ``MessageStream``)."""
        ready: list[bytes | MessageTooLarge] = []
        if self._closed:
            return ready
        while True:
            try:
                message = self._framer.next_message()
            except MessageTooLarge as exc:
                ready.append(exc)
                continue
            if message is None:
                return ready
            ready.append(message)

    async def _receive_chunk(self) -> None:
        try:
            data = await self._receive_stream.receive_some(self._receive_size)
        except trio.ClosedResourceError:
            raise TransportClosed("the stdio stream is closed") from None
        except trio.BrokenResourceError as exc:
            raise TransportBroken(f"reading the stdio stream failed: {exc!r}") from exc
        if data:
            self._framer.feed(data)
        else:
            self._framer.feed_eof()

    async def send_message(self, data: bytes) -> None:
        """Write ``data`` and a ``\\n``.

        Raises:
            LocalProtocolError: ``data`` is empty or holds a ``\\n`` (it would not arrive as
                one message); nothing was written.
            TransportClosed: this stream was closed.
            TransportBroken: the peer is gone (``EPIPE`` and the like).
        """
        await self.send_messages((data,))

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Write ``messages`` in order, one line each, in a single ``send_all``.

        Raises:
            LocalProtocolError: a message is empty or holds a ``\\n``; nothing was written.
            TransportClosed: this stream was closed.
            TransportBroken: the peer is gone (``EPIPE`` and the like).
        """
        if self._closed:
            raise TransportClosed("the stdio stream is closed")
        if not messages:
            await trio.lowlevel.checkpoint()
            return
        payload = b"\n".join([*messages, b""])
        # Exactly one b"\n" per message, and no empty line (the receiver would skip it).
        # Both scans run at memchr speed over bytes we are about to copy to the kernel anyway.
        if payload.count(b"\n") != len(messages) or not all(messages):
            raise LocalProtocolError(
                "a stdio message must be non-empty and contain no raw newline "
                "(MCP 2025-11-25, Transports, stdio); encode JSON compactly"
            )
        try:
            await self._send_stream.send_all(payload)
        except trio.ClosedResourceError:
            raise TransportClosed("the stdio stream is closed") from None
        except trio.BrokenResourceError as exc:
            raise TransportBroken(f"writing the stdio stream failed: {exc!r}") from exc

    async def aclose(self) -> None:
        """Close both byte streams. Idempotent; later calls of anything else raise."""
        if self._closed:
            await trio.lowlevel.checkpoint()
            return
        self._closed = True
        try:
            await self._send_stream.aclose()
        finally:
            await self._receive_stream.aclose()


def open_stdio_stream(
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    stdin: trio.abc.ReceiveStream | None = None,
    stdout: trio.abc.SendStream | None = None,
    isolate: bool = True,
) -> StdioStream:
    """Return a ``StdioStream`` over this process's stdin and stdout (or the given streams).

    For each of ``stdin``/``stdout`` left as ``None``, fd 0 / fd 1 is taken over: wrapped in
    a ``trio.lowlevel.FdStream`` (a ``dup``, or a TTY reopened by name; see the module
    docstring) and, with ``isolate`` (the default), fd 0 is then pointed at ``/dev/null``
    and fd 1 at stderr, so that only this stream can read protocol input or write protocol
    output. Text already buffered in ``sys.stdout`` then goes to stderr too. Closing the
    stream closes the protocol's stdout, which the client sees as EOF. Use it as
    ``async with open_stdio_stream() as stream:``.

    Raises:
        TransportBroken: fd 0 or fd 1 is not open.
        NotImplementedError: on Windows.
    """
    if sys.platform == "win32":  # pragma: no cover
        raise NotImplementedError("the stdio transport needs Unix file descriptors")
    if stdin is None:
        stdin = trio.lowlevel.FdStream(_take_fd(0, os.O_RDONLY, isolate=isolate))
    if stdout is None:
        stdout = trio.lowlevel.FdStream(_take_fd(1, os.O_WRONLY, isolate=isolate))
    return StdioStream(stdin, stdout, max_message_size=max_message_size)


def _take_fd(fd: int, tty_flags: int, *, isolate: bool) -> int:
    """Return a private fd for ``fd``'s file and, with ``isolate``, detach ``fd`` from it."""
    try:
        private = _private_fd(fd, tty_flags)
    except OSError as exc:
        raise TransportBroken(f"standard fd {fd} is not usable: {exc!r}") from exc
    if isolate:
        _detach(fd)
    return private


def _private_fd(fd: int, tty_flags: int) -> int:
    """Return an fd on ``fd``'s file whose non-blocking mode nobody else shares, if possible."""
    if not os.isatty(fd):
        return os.dup(fd)
    try:
        return os.open(os.ttyname(fd), tty_flags | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        logger.warning(
            "could not reopen the terminal on fd %d (%r); stderr may become non-blocking",
            fd,
            exc,
        )
        return os.dup(fd)


def _detach(fd: int) -> None:
    """Point fd 0 at ``/dev/null`` or fd 1 at stderr (fd 2)."""
    if fd == 1:
        os.dup2(2, 1)
        return
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
