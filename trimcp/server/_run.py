"""Running a server in a trio loop of its own until a signal stops it, with an exit status.

``MCPServer.run_http``/``run_stdio`` and ``trimcp run`` use :func:`run_server`; ``trimcp
serve`` adds a :class:`StopSignal` to its application's children and looks for a
:func:`listen_error` when it fails to start. What each stop means to the shell::

    0    serve returned (the client closed stdin), or SIGTERM stopped it after the drain
    130  SIGINT (Ctrl-C) stopped it, after the same drain: 128 + SIGINT, what a shell
         reports for an interrupted program, so ``trimcp run x.py && next`` does not go on
    1    a listener could not bind its address (run_server logs which, and how to move)

The drain itself (first signal: refuse new work and let what runs finish; second signal:
cancel at once) is ``trimcp.supervision.run_until_stopped``'s and ``run_application``'s,
which stop on SIGTERM and SIGINT alike and do not say which came: :class:`StopSignal`
notes it for them. Not here: the listeners (``trimcp.http``), the command line.
"""

from __future__ import annotations

import functools
import logging
import signal
import typing
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import StartFailed
from trimcp.supervision import ChildSpec, run_until_stopped

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["INTERRUPTED", "StopSignal", "listen_error", "run_server"]

logger = logging.getLogger(__name__)

#: The exit status of a program stopped by SIGINT: 128 + the signal's number (2), as shells
#: report it (bash, "EXIT STATUS": 128+n for a command terminated by signal n).
INTERRUPTED: typing.Final = 128 + signal.SIGINT
_FAILURE: typing.Final = 1


@final
class StopSignal:
    """Which signal began a stop that SIGTERM and SIGINT begin alike.

    ``watch`` must run inside the runner that handles the signals (``run_until_stopped``,
    ``run_application``): a trio signal receiver opened inside another takes the signals
    while it is open. It takes the first SIGTERM or SIGINT, notes it, closes, and raises the
    signal again for the runner's receiver, in place again by then (trio does the same with
    signals a closing receiver left pending). Later signals go to the runner directly.
    """

    def __init__(self) -> None:
        """Start with no signal received."""
        self.received: signal.Signals | None = None

    @property
    def exit_status(self) -> int:
        """``INTERRUPTED`` (130) if SIGINT began the stop, else 0."""
        return INTERRUPTED if self.received == signal.SIGINT else 0

    async def watch(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Wait for the first SIGTERM or SIGINT, note it, and hand it on to the runner.

        Reports started once the signals are its own. Cancelled before a signal, it notes
        nothing (and trio hands on a signal that arrived meanwhile).
        """
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for signum in signals:
                self.received = signal.Signals(signum)
                break
        if self.received is not None:
            signal.raise_signal(self.received)

    def spec(self) -> ChildSpec:
        """Return ``watch`` as a temporary child, for an application's children (first)."""
        return ChildSpec("stop-signal", self.watch, restart="temporary")


def run_server(
    serve: Callable[[], Awaitable[object]], *, listen_fix: str, stop_timeout: float = 30.0
) -> int:
    """Run ``serve()`` in a new trio loop until it returns or a signal stops it.

    Returns the exit status (module docstring). SIGTERM and SIGINT drain first, for up to
    ``stop_timeout`` seconds (``run_until_stopped``); a SIGINT that comes before the signals
    are handled (while starting) stops at once, and quietly too. A listener that cannot bind
    is logged as an error naming the address, followed by ``listen_fix`` (how to choose
    another port, in the caller's terms), and returns 1; any other failure propagates.
    """
    stop = StopSignal()

    async def watched() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(stop.watch)
            await serve()
            nursery.cancel_scope.cancel()

    try:
        trio.run(functools.partial(run_until_stopped, watched, stop_timeout=stop_timeout))
    except KeyboardInterrupt:
        # trio raises it for a SIGINT that came before the receiver was open.
        logger.info("SIGINT received while starting: stopped")
        return INTERRUPTED
    except (StartFailed, BaseExceptionGroup) as exc:
        error = listen_error(exc)
        if error is None:
            raise
        # No traceback: the message names the address, which is all there is to know.
        logger.error("%s; %s", error.strerror or error, listen_fix)
        return _FAILURE
    return stop.exit_status


def listen_error(exc: BaseException) -> OSError | None:
    """Return the OSError that kept a listener from starting, if that is what ``exc`` is.

    Looks through exception groups for a ``StartFailed`` (what a supervisor raises when a
    child fails to start), then down its causes for the OSError; the listeners word theirs
    as ``cannot listen on HOST:PORT: reason``. An OSError while serving is not one.
    """
    if isinstance(exc, BaseExceptionGroup):
        found = (listen_error(inner) for inner in exc.exceptions)
        return next((error for error in found if error is not None), None)
    if isinstance(exc, StartFailed):
        return _os_error(exc.__cause__)
    return None


def _os_error(exc: BaseException | None) -> OSError | None:
    while exc is not None:
        if isinstance(exc, OSError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = (_os_error(inner) for inner in exc.exceptions)
            return next((error for error in found if error is not None), None)
        exc = exc.__cause__
    return None
