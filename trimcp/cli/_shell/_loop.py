"""``run_shell``: read a line, run it, show what happens meanwhile; until Ctrl-D or ``/quit``.

Ctrl-C is trio's: for the whole session SIGINT goes to a signal receiver
(``trio.open_signal_receiver``), never to ``KeyboardInterrupt``, so it cannot land in the
middle of the connection manager's tasks. A task routes each one:

- a command is running: its cancel scope is cancelled. Whatever it awaited stops, a request in
  flight with it (the client session sends ``notifications/cancelled`` upstream), and the
  shell prints ``cancelled`` and prompts again. A permission question counts as part of
  the command it belongs to.
- the prompt waits: the line being typed is dropped and a fresh prompt drawn (bash does so).

The shell changes two things on the manager handle it is given (``dataclasses.replace``,
the subtree stays the same): its permission policy asks at the prompt whether to run a tool
the rules want asked about (destructive ones), with "always" remembered for the session;
and the connections it starts show the server's log messages (``notifications/message``)
as they arrive, through ``connect_upstream`` with an ``on_log`` handler.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, final

import trio

from trimcp.client import ClientHandlers, connect_upstream
from trimcp.errors import TrimcpError

from ._commands import Context, read_names, run_command
from ._completion import Names, complete
from ._display import Display
from ._terminal import open_line_reader

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from contextlib import AbstractAsyncContextManager
    from typing import TextIO

    from trimcp.client import (
        CallRequest,
        CatalogKind,
        ClientConfig,
        ConnectionManager,
        ServerConfig,
        SessionUpstream,
    )

    from ._terminal import LineReader

__all__ = ["history_path", "run_shell"]

logger = logging.getLogger(__name__)

_QUIT = frozenset({"/quit", "/exit"})
#: Seconds to read the servers' names for Tab between two commands (actor calls: quick).
_REFRESH_TIMEOUT = 5.0
#: What may be answered to the permission question (Enter alone is no).
_ANSWERS = {
    "y": "yes",
    "yes": "yes",
    "n": "no",
    "no": "no",
    "": "no",
    "a": "always",
    "always": "always",
}


def history_path() -> Path:
    """``~/.trimcp_history``, with ``~`` read from ``HOME`` when the shell starts."""
    return Path.home() / ".trimcp_history"


async def run_shell(
    manager: ConnectionManager,
    *,
    reload_config: Callable[[], ClientConfig],
    output: TextIO | None = None,
    prompt: str = "mcp> ",
) -> int:
    """Connect the servers, then read and run commands until ``/quit`` or Ctrl-D; return 0.

    ``prompt`` is shown only when stdin is a terminal (a script piped in gets answers only).
    """
    out = output or sys.stdout
    completer = _Completer()
    async with open_line_reader(out, completer, history_path()) as reader:
        shell = _Shell(manager, reader, out, reload_config, completer)
        return await shell.run(prompt if sys.stdin.isatty() else "")


@final
class _Completer:
    """Tab's answers from the last snapshot of the servers' names (a readline callback)."""

    def __init__(self) -> None:
        self.names = Names()

    def __call__(self, before_cursor: str) -> list[str]:
        return complete(before_cursor, self.names)


@final
class _Shell:
    """One session at the prompt (module docstring)."""

    def __init__(
        self,
        manager: ConnectionManager,
        reader: LineReader,
        out: TextIO,
        reload_config: Callable[[], ClientConfig],
        completer: _Completer,
    ) -> None:
        self._reader = reader
        self._out = out
        self._completer = completer
        self._live = _is_terminal(out)
        self._display = Display(out, reader, live=self._live)
        # The command running now, for Ctrl-C to cancel (None: the prompt waits).
        self._running: trio.CancelScope | None = None
        # Tools answered "always" to, by qualified name: not asked again this session.
        self._always: set[str] = set()
        permissions = dataclasses.replace(manager.permissions, ask=self._ask)
        self._manager = dataclasses.replace(
            manager, permissions=permissions, connector=self._open_upstream
        )
        self._context = Context(
            manager=self._manager, out=out, display=self._display, reload_config=reload_config
        )

    async def run(self, prompt: str) -> int:
        """The session: Ctrl-C routed by a task of its own while lines are read and run."""
        with trio.open_signal_receiver(signal.SIGINT) as interrupts:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._route_interrupts, interrupts)
                try:
                    return await self._read_and_run(prompt)
                finally:
                    nursery.cancel_scope.cancel()

    async def _read_and_run(self, prompt: str) -> int:
        self._out.write(
            "trimcp shell: /help lists the commands; Tab completes; "
            "Ctrl-C cancels; Ctrl-D leaves.\n"
        )
        await self._command(self._connect_all)
        await self._refresh_names()
        while True:
            line = await self._reader.read_line(prompt)
            if line is None or line.strip() in _QUIT:
                return 0
            if line.strip():
                await self._command(functools.partial(run_command, self._context, line.strip()))
                await self._refresh_names()

    async def _connect_all(self) -> None:
        """Connect every server that connects on its own, then show each one's status."""
        await self._manager.connect_all()
        await run_command(self._context, "/mcp")

    async def _command(self, run: Callable[[], Awaitable[object]]) -> None:
        """Run one command in a scope Ctrl-C cancels; print what went wrong, never raise it."""
        with trio.CancelScope() as scope:
            self._running = scope
            try:
                await run()
            except Exception as exc:  # noqa: BLE001  (the shell's boundary: report, go on)
                self._display.finish()
                self._out.write(_describe(exc) + "\n")
            finally:
                self._running = None
                self._display.finish()
        if scope.cancelled_caught:
            # At a terminal the cursor follows the "^C" the terminal echoed: start afresh.
            self._out.write(("\r\x1b[K" if self._live else "") + "cancelled\n")
        self._out.flush()

    async def _route_interrupts(self, interrupts: AsyncIterator[int]) -> None:
        async for _ in interrupts:
            if self._running is not None:
                self._running.cancel()
            else:
                self._reader.interrupt()

    async def _refresh_names(self) -> None:
        """Give Tab what the servers offer now; on a failure, what they offered before."""
        with trio.move_on_after(_REFRESH_TIMEOUT):
            try:
                self._completer.names = await read_names(self._manager)
            except TrimcpError as exc:
                logger.debug("the names for Tab were not refreshed: %s", exc)

    async def _ask(self, request: CallRequest) -> bool:
        """The permission question for a tool the rules want asked about."""
        name = request.qualified_name
        if name in self._always:
            return True
        hints = request.annotations or {}
        # As the policy reads the hints: destructive, unless also read-only.
        destructive = hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True
        decision = self._manager.permissions.decide(name, request.annotations)
        why = "is marked destructive" if destructive else f"needs asking ({decision.reason})"
        question = f"{name} {why}; run it? [y]es / [n]o / [a]lways for this tool in this session "
        while True:
            line = await self._reader.read_line(question, remember=False)
            answer = _ANSWERS.get((line or "n").strip().lower())
            if answer is not None:
                break
            self._out.write("answer y, n or a\n")
        if answer == "always":
            self._always.add(name)
        return answer != "no"

    def _open_upstream(
        self, config: ServerConfig, on_list_changed: Callable[[CatalogKind], None]
    ) -> AbstractAsyncContextManager[SessionUpstream]:
        handlers = ClientHandlers(on_log=functools.partial(self._display.log, config.name))
        return connect_upstream(config, on_list_changed, handlers=handlers)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _describe(error: BaseException) -> str:
    """An error as the shell prints it: our own in their words, anything else with its type."""
    if isinstance(error, BaseExceptionGroup):
        return "\n".join(_describe(inner) for inner in error.exceptions)
    if isinstance(error, TrimcpError | ValueError):
        return str(error)
    return f"{type(error).__name__}: {error}"
