"""A launched stdio MCP server: its process, and a ``MessageStream`` over its stdin/stdout.

``open_server_process(spec)`` resolves and starts the server (``_launch``), and
yields a ``ServerProcess``: the same newline-delimited framing as the server side
(``trimcp.transports.StdioStream`` over the child's pipes: CRLF tolerated, blank lines
skipped, over-long lines dropped with ``MessageTooLarge`` while the stream goes on, batched
writes), so a client session runs over it exactly as a server session runs over stdio.

Around the stream, two helper tasks: one drains stderr into the last-lines ring
(``_stderr``), one waits for the process to exit. A server that exits on its own
turns the stream's end (EOF on stdout, a broken pipe on stdin) into ``ServerExited``: the
exit code or signal, the last stderr lines, and what to do, in words. The process we
launched *is* the server: when it exits, what it started is sent SIGTERM, and if a leftover
still holds stdout open, the stream is closed after a moment so that readers are not stuck.
A launcher must therefore ``exec`` its server or wait for it, as ``npx``, ``uvx`` and
``cmd /c`` do.

Closing (``aclose``, or leaving the ``async with``) closes the pipes and stops the whole
process group (``_stop``: grace, SIGTERM, grace, SIGKILL), shielded from
cancellation, so that no server outlives the block.
"""

from __future__ import annotations

import itertools
import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import TransportBroken, TransportClosed
from trimcp.transports import StdioStream

from ._exit import ExitFacts, Phase, Pipe, exit_error
from ._launch import Launch, ProcessSpec, prepare_launch, spawn
from ._stderr import StderrTail, drain_stderr
from ._stop import signal_leftovers, stop_process_tree
from ._watch import current_watch

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from trimcp.errors import MessageTooLarge, ServerExited
    from trimcp.transports import StdioStreamStatistics

logger = logging.getLogger(__name__)

# After the server exits: how long its stderr may take to reach EOF (a leftover child may
# hold it), and then how long stdout may (a reader still has messages to take) before the
# stream is closed under it.
_STDERR_LINGER = 0.5
_STDOUT_LINGER = 0.5

# How long an EOF on stdout, or a broken stdin, waits for the exit it usually means.
_EXIT_WAIT = 1.0

# One number per process launched by this interpreter.
_SERIALS = itertools.count(1)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerProcessStatistics:
    """A snapshot of a ``ServerProcess``.

    Attributes:
        pid: the server's process id (also its process group id on POSIX).
        argv: what was executed (the resolved program first).
        returncode: its exit status once it exited, else None.
        phase: "start" until ``mark_ready``, then "operation".
        closing: ``aclose`` has begun.
        stderr_lines: lines the server wrote to stderr so far.
        stream: the message stream's own statistics.
    """

    pid: int
    argv: tuple[str, ...]
    returncode: int | None
    phase: Phase
    closing: bool
    stderr_lines: int
    stream: StdioStreamStatistics


@final
class ServerProcess(trio.abc.AsyncResource):
    """A running stdio server and the ``MessageStream`` over its stdin and stdout.

    Get one from ``open_server_process``. The stream methods follow ``MessageStream``
    (``trimcp.transports``), with one difference in the errors: when the server went away by
    itself, the end of the stream is ``ServerExited`` (a ``TransportBroken``) instead of
    ``TransportClosed``. After ``aclose`` they raise ``TransportClosed``.
    """

    def __init__(self, process: trio.Process, launch: Launch, spec: ProcessSpec) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._process = process
        self._launch = launch
        self._spec = spec
        self._stream = StdioStream(
            process.stdout, process.stdin, max_message_size=spec.max_message_size
        )
        self._tail = StderrTail(spec.stderr_lines)
        self._phase: Phase = "start"
        self._closing = False
        self._close_done = trio.Event()
        self._stderr_done = trio.Event()
        self._exited = trio.Event()  # the exit is known and its stderr read
        self._output_ended = trio.Event()  # a reader met the end of stdout
        self._send_failure: TransportBroken | TransportClosed | None = None
        self._helpers = trio.CancelScope()
        # Tells processes apart when the system reuses a pid.
        self._serial = next(_SERIALS)

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it exited (negative: the signal), else None."""
        return self._process.returncode

    @property
    def argv(self) -> tuple[str, ...]:
        """What was executed: the resolved program and the arguments."""
        return self._launch.resolved.argv

    @property
    def server_key(self) -> str:
        """This process, as the server whose protocol era a session remembers
        (``trimcp.transports.http_client.ServerIdentity``): MCP 2026-07-28 caches the era
        "for the lifetime of the server process"; a restarted server is probed again."""
        return f"stdio:{self.pid}:{self._serial}"

    @property
    def authorization_context(self) -> str | None:
        """None: a stdio server is not sent credentials (``ServerIdentity``)."""
        return None

    @property
    def closing(self) -> bool:
        """Whether ``aclose`` has begun."""
        return self._closing

    def mark_ready(self) -> None:
        """Record that the initialize handshake finished: later exits are "while in use"."""
        self._phase = "operation"

    def stderr_tail(self) -> tuple[str, ...]:
        """Return the last lines the server wrote to stderr, oldest first."""
        return self._tail.lines()

    def statistics(self) -> ServerProcessStatistics:
        """Return a snapshot of the process and its stream."""
        return ServerProcessStatistics(
            pid=self.pid,
            argv=self.argv,
            returncode=self.returncode,
            phase=self._phase,
            closing=self._closing,
            stderr_lines=self._tail.total,
            stream=self._stream.statistics(),
        )

    async def wait_exited(self) -> int:
        """Wait until the server process has exited (for whatever reason); return its status."""
        return await self._process.wait()

    # --- MessageStream ------------------------------------------------------------------

    async def receive_message(self) -> bytes:
        """Return the server's next stdout line (see ``StdioStream.receive_message``).

        Raises:
            ServerExited: the server closed its stdout or exited (waits up to a second for
                the exit, so the message can name the exit code).
            TransportClosed: this stream was closed.
            MessageTooLarge: the next line was over the limit and has been dropped.
        """
        try:
            return await self._stream.receive_message()
        except (TransportClosed, TransportBroken) as exc:
            if self._closing:
                raise
            self._output_ended.set()
            raise await self._exit_error("output") from exc

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the lines already read and framed, without waiting (maybe none)."""
        return self._stream.receive_ready()

    async def send_message(self, data: bytes) -> None:
        """Write one message and its ``\\n`` to the server's stdin."""
        await self.send_messages((data,))

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Write ``messages`` as lines in one write, after any kept back by ``send_messages_now``.

        Raises:
            ServerExited: the server's stdin is gone: it exited or closed it.
            TransportClosed: this stream was closed.
            LocalProtocolError: a message is empty or holds a ``\\n``; nothing was written.
        """
        failure = self._send_failure
        if failure is not None and not self._closing:
            raise await self._exit_error("input") from failure
        try:
            await self._stream.send_messages(messages)
        except (TransportClosed, TransportBroken) as exc:
            if self._closing:
                raise
            self._send_failure = exc
            raise await self._exit_error("input") from exc

    def send_messages_now(self, messages: Sequence[bytes]) -> bool:
        """Write ``messages`` as far as the pipe takes them without waiting; True if all went.

        When the server's stdin is gone this returns False, and the next ``send_messages``
        raises ``ServerExited`` (this method cannot wait for the exit status).
        """
        if self._send_failure is not None and not self._closing:
            return False
        try:
            return self._stream.send_messages_now(messages)
        except (TransportClosed, TransportBroken) as exc:
            if self._closing:
                raise
            self._send_failure = exc
            return False

    async def aclose(self) -> None:
        """Close the pipes and stop the server's process group; return once it is reaped.

        Shielded: cancelling the caller does not interrupt it, and it never raises
        ``Cancelled`` (it takes at most ``close_grace + term_grace`` seconds and a moment).
        Idempotent; a second caller waits for the first to finish.
        """
        if self._closing:
            with trio.CancelScope(shield=True):
                await self._close_done.wait()
            return
        self._closing = True
        with trio.CancelScope(shield=True):
            try:
                await self._stream.aclose()
                await stop_process_tree(
                    self._process,
                    close_grace=self._spec.close_grace,
                    term_grace=self._spec.term_grace,
                )
            finally:
                self._helpers.cancel()
                self._close_done.set()
        logger.debug("server %s stopped: status %s", self._spec.name, self.returncode)

    # --- the helpers --------------------------------------------------------------------

    async def _run_helpers(self) -> None:
        """Drain stderr and watch for the exit until ``aclose`` cancels them."""
        assert self._process.stderr is not None
        with self._helpers:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch_exit)
                await drain_stderr(
                    self._process.stderr, self._tail, server=self._spec.name, done=self._stderr_done
                )

    async def _watch_exit(self) -> None:
        """When the server exits by itself: stop its leftovers, settle stderr, wake readers."""
        status = await self._process.wait()
        if self._closing:
            return
        logger.info(
            "server %s exited by itself (status %d)",
            self._spec.name,
            status,
            extra={"server": self._spec.name},
        )
        signal_leftovers(self._process)
        with trio.move_on_after(_STDERR_LINGER):
            await self._stderr_done.wait()
        self._exited.set()
        with trio.move_on_after(_STDOUT_LINGER):
            await self._output_ended.wait()
        if not self.closing and not self._output_ended.is_set():
            # Something still holds stdout open: close it, so a reader gets ServerExited.
            await self._stream.aclose()

    async def _exit_error(self, pipe: Pipe) -> ServerExited:
        """Wait briefly for the exit the end of ``pipe`` usually means; describe it."""
        with trio.move_on_after(_EXIT_WAIT):
            await self._exited.wait()
        facts = ExitFacts(
            returncode=self._process.returncode,
            stderr=self._tail.lines(),
            stderr_total=self._tail.total,
            during=self._phase,
            pipe=pipe,
        )
        return exit_error(self._launch.context, facts)


@asynccontextmanager
async def open_server_process(
    spec: ProcessSpec, *, environ: Mapping[str, str] | None = None
) -> AsyncIterator[ServerProcess]:
    """Launch the server of ``spec`` and yield its ``ServerProcess``; stop it on the way out.

    ``environ`` is the environment variables are taken from (default ``os.environ``). The
    program is looked up before anything starts. Leaving the block (normally, by an
    exception, or cancelled) runs ``aclose``: the server and its process group are gone
    when the block is left.

    Raises:
        CommandNotFound: the program does not exist (on the server's PATH, or at its path).
        CommandNotExecutable: it exists but may not be run.
        LaunchFailed: the working directory is missing, or the system refused to start it.
    """
    launch = prepare_launch(spec, environ)
    process = await spawn(launch)
    server = ServerProcess(process, launch, spec)
    watch = current_watch()
    if watch is not None:
        watch.launched(server)
    logger.info(
        "server %s started: pid %d, %s",
        spec.name,
        process.pid,
        launch.context.command_line(),
        extra={"server": spec.name},
    )
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server._run_helpers)
            try:
                yield server
            finally:
                await server.aclose()
    finally:
        if not server.closing:  # the nursery failed before its block ran
            await server.aclose()
