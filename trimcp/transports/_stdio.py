"""The stdio transport: newline-delimited JSON-RPC over a pair of trio byte streams.

MCP 2025-11-25, Transports, stdio: one message per line, ``\\n``-delimited, UTF-8; the server
writes nothing but MCP messages to stdout and MAY log to stderr. ``StdioStream`` does the
framing (through the sans-IO ``LineFramer``) over any ``trio.abc.ReceiveStream`` /
``SendStream``; ``open_stdio_stream`` wires it to the process's own stdin and stdout.

No threads: the official Python SDK wraps stdio files in worker threads and pays for it on
every message (bench/stdio.py measures it). We read and write the file descriptors
of ``trio.lowlevel.FdStream``, trio's own non-blocking fd stream, and send a batch of
replies as one write. On an ``FdStream`` the stream mostly calls ``os.read``/``os.write``
itself: ``FdStream.receive_some``/``send_all`` always take a scheduling round before the
call, and for a lone request those rounds were most of trimcp's time (bench/RESULTS.md).
A pipe or socket is read by waiting in trio's I/O loop until it is readable, then reading,
so the wait is the read's only schedule point; ``send_messages_now`` writes at once and
keeps what the kernel does not take (``EAGAIN``) for ``send_messages``, which waits.

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

import errno
import logging
import os
import stat
import sys
from collections import deque
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
    budget); every read from the byte stream is a full checkpoint. On a pipe or socket that
    checkpoint is the wait until the fd is readable.

    Sending writes the whole batch as one ``send_all``. If cancelled mid-way, part of the
    batch may have been written and the stream should be closed. ``send_messages_now``
    writes without waiting and keeps what the kernel did not take for the next
    ``send_messages``. Only one task may send and one task receive at a time
    (``trio.BusyResourceError`` otherwise).

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
        # Messages framed but not yet returned (an oversized one as its error), in order.
        self._ready: deque[bytes | MessageTooLarge] = deque()
        self._eof = False  # the framer has had its feed_eof
        # Real file descriptors are read and written directly (see the module docstring);
        # -1 when not. Only aclose closes them, and every use checks _closed first, so a
        # number is never used after its fd was closed (and maybe reused).
        self._pipe_in = _pollable_fd(receive_stream)
        self._fd_out = _fd_of(send_stream)
        # Framed bytes accepted by send_messages_now but not written yet; they go first.
        self._unsent = b""
        self._receiving = False
        self._sending = False

    def statistics(self) -> StdioStreamStatistics:
        """Return a snapshot of the receive buffer and settings."""
        framer = self._framer.statistics()
        ready = sum(len(item) + 1 for item in self._ready if isinstance(item, bytes))
        return StdioStreamStatistics(
            buffered_bytes=framer.buffered_bytes + ready,
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
        ready = self._ready
        if ready:
            await trio.lowlevel.checkpoint_if_cancelled()
        while not ready:
            if self._eof:
                raise TransportClosed("end of input: the peer closed its end of the stream")
            await self._receive_chunk()
        message = ready.popleft()
        if isinstance(message, MessageTooLarge):
            raise message
        return message

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the lines already buffered, without reading (see ``MessageStream``)."""
        if self._closed or not self._ready:
            return []
        ready = list(self._ready)
        self._ready.clear()
        return ready

    async def _receive_chunk(self) -> None:
        """Read once (a full checkpoint) and frame what arrived."""
        data: bytes | bytearray
        try:
            if self._pipe_in >= 0:
                data = await self._read_pipe(self._pipe_in)
            else:
                data = await self._receive_stream.receive_some(self._receive_size)
        except trio.ClosedResourceError:
            raise TransportClosed("the stdio stream is closed") from None
        except trio.BrokenResourceError as exc:
            raise TransportBroken(f"reading the stdio stream failed: {exc!r}") from exc
        if data:
            self._framer.feed(data)
        else:
            self._framer.feed_eof()
            self._eof = True
        self._ready.extend(self._framer.messages())

    async def _read_pipe(self, fd: int) -> bytes:
        """Wait until ``fd`` is readable, then read it: the wait is the one schedule point.

        Waiting first, not trying first as ``FdStream`` and trio's sockets do, saves a
        failing read per lone request; a pipe or socket with data is readable at once.

        Raises:
            trio.ClosedResourceError: the stream was closed (also while waiting).
            trio.BrokenResourceError: the read failed.
        """
        if self._receiving:
            raise trio.BusyResourceError("another task is receiving on this stdio stream")
        self._receiving = True
        try:
            while True:
                await trio.lowlevel.wait_readable(fd)
                if self._closed:
                    raise trio.ClosedResourceError("the stdio stream is closed")
                try:
                    return os.read(fd, self._receive_size)
                except BlockingIOError:
                    continue  # readable, then not: someone else read it first
                except OSError as exc:
                    raise _fd_error(exc) from exc
        finally:
            self._receiving = False

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

        Bytes kept back by ``send_messages_now`` go first, also when ``messages`` is empty.

        Raises:
            LocalProtocolError: a message is empty or holds a ``\\n``; nothing was written.
            TransportClosed: this stream was closed.
            TransportBroken: the peer is gone (``EPIPE`` and the like).
        """
        payload = self._framed(messages)
        if not payload:
            await trio.lowlevel.checkpoint()
            return
        self._sending = True
        try:
            await self._send_stream.send_all(payload)
        except trio.ClosedResourceError:
            raise TransportClosed("the stdio stream is closed") from None
        except trio.BrokenResourceError as exc:
            raise TransportBroken(f"writing the stdio stream failed: {exc!r}") from exc
        finally:
            self._sending = False

    def send_messages_now(self, messages: Sequence[bytes]) -> bool:
        """Write ``messages`` (one line each) as far as the output takes them without waiting.

        Returns True when everything is written. Otherwise the rest is kept, in order, and
        the next send writes it first: call ``send_messages`` (with no messages, or more) to
        finish it. Only an ``FdStream`` output is written here; for any other byte stream
        everything is kept. Never a schedule point, so a reply to a lone request costs no
        extra scheduling round; the caller's next wait for input is its schedule point.

        Raises:
            LocalProtocolError: a message is empty or holds a ``\\n``; nothing was written.
            TransportClosed: this stream was closed.
            TransportBroken: the peer is gone (``EPIPE`` and the like).
        """
        payload = self._framed(messages)
        if not payload:
            return True
        written = 0
        if self._fd_out >= 0:
            try:
                written = os.write(self._fd_out, payload)
            except BlockingIOError:
                pass
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    raise TransportClosed("the stdio stream is closed") from None
                raise TransportBroken(f"writing the stdio stream failed: {exc!r}") from exc
            if written == len(payload):
                return True
        self._unsent = payload[written:]
        return False

    def _framed(self, messages: Sequence[bytes]) -> bytes:
        """Return the bytes to write next: what was kept back, then ``messages`` as lines."""
        if self._closed:
            raise TransportClosed("the stdio stream is closed")
        if self._sending:
            raise trio.BusyResourceError("another task is sending on this stdio stream")
        unsent, self._unsent = self._unsent, b""
        if not messages:
            return unsent
        payload = b"\n".join([*messages, b""])
        # Exactly one b"\n" per message, and no empty line (the receiver would skip it).
        # Both scans run at memchr speed over bytes we are about to copy to the kernel anyway.
        if payload.count(b"\n") != len(messages) or not all(messages):
            self._unsent = unsent
            raise LocalProtocolError(
                "a stdio message must be non-empty and contain no raw newline "
                "(MCP 2025-11-25, Transports, stdio); encode JSON compactly"
            )
        return unsent + payload if unsent else payload

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


def _fd_of(stream: trio.abc.SendStream | trio.abc.ReceiveStream) -> int:
    """Return the fd of an ``FdStream``, else -1."""
    if sys.platform != "win32" and isinstance(stream, trio.lowlevel.FdStream):
        return stream.fileno()
    return -1


def _pollable_fd(stream: trio.abc.ReceiveStream) -> int:
    """Return the fd of an ``FdStream`` on a pipe or socket, else -1.

    Only those can be waited on before reading: epoll refuses regular files and
    ``/dev/null``, and a terminal is left to ``FdStream``'s own way.
    """
    fd = _fd_of(stream)
    if fd < 0:
        return -1
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return -1
    return fd if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else -1


def _fd_error(exc: OSError) -> trio.ClosedResourceError | trio.BrokenResourceError:
    # The same mapping as FdStream's own calls.
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(exc))


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
