"""Running a server in a trio loop of its own until a signal stops it, with an exit status.

``MCPServer.run_http``/``run_stdio`` and ``trimcp run`` use :func:`run_server`; ``trimcp
serve`` adds a :class:`StopSignal` to its application's children and looks for a
:func:`listen_error` when it fails to start. What each stop means to the shell::

    0    serve returned (the client closed stdin), or SIGTERM stopped it after the drain
    130  SIGINT (Ctrl-C) stopped it, after the same drain: 128 + SIGINT, what a shell
         reports for an interrupted program, so ``trimcp run x.py && next`` does not go on
    1    a listener could not bind its address (run_server logs which, and how to choose
         another port)

The drain itself (first signal: refuse new work and let what runs finish; second signal:
cancel at once) is ``trimcp.supervision``'s (``Drain``), as ``run_until_stopped`` and
``run_application`` run it; they stop on SIGTERM and SIGINT alike and do not say which came.
So :func:`run_server` runs ``run_until_stopped``'s loop itself, noting the signal, and
:class:`StopSignal` notes it inside ``run_application``. Not here: the listeners
(``trimcp.http``), the command line.
"""

from __future__ import annotations

import logging
import signal
import typing
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import StartFailed
from trimcp.supervision import ChildSpec, open_drain

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
    signals a closing receiver left pending). Later signals go to the runner directly. A
    signal that comes before the watch is in place goes to the runner unnoted: put it first
    among the application's children, and wait for the application to say it started.
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
    ``stop_timeout`` seconds, as ``run_until_stopped`` does; a SIGINT that comes before the signals
    are handled (while starting) stops at once, and quietly too. A listener that cannot bind
    is logged as an error naming the address, followed by ``listen_fix`` (how to choose
    another port, in the caller's terms), and returns 1; any other failure propagates.
    """
    stop = StopSignal()
    try:
        trio.run(_serve_until_stopped, serve, stop, stop_timeout)
    except KeyboardInterrupt:
        # trio raises it for a SIGINT no receiver was open for: before the runner's opened,
        # or after it closed (a second Ctrl-C as the stop ends).
        _interrupted_at(stop)
        return INTERRUPTED
    except (StartFailed, BaseExceptionGroup) as exc:
        if _interrupted(exc):
            _interrupted_at(stop)
            return INTERRUPTED
        error = listen_error(exc)
        if error is None:
            raise
        # No traceback: the message names the address, which is all there is to know.
        logger.error("%s; %s", error.strerror or error, listen_fix)
        return _FAILURE
    return stop.exit_status


async def _serve_until_stopped(
    serve: Callable[[], Awaitable[object]], stop: StopSignal, stop_timeout: float
) -> None:
    """``trimcp.supervision.run_until_stopped``, noting in ``stop`` the signal that began it.

    Its loop again, plus that note, rather than ``stop.watch`` inside it: the watch's
    receiver opens a few scheduling steps after the runner's, and a SIGINT in between would
    stop the server unnoted (status 0, not 130). The daemon's ``run_application`` leaves no
    such choice (``StopSignal``).
    """
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals, open_drain() as drain:
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                await serve()
                nursery.cancel_scope.cancel()

            async def drain_then_cancel() -> None:
                await drain.run(stop_timeout)
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            async for signum in signals:
                name = signal.Signals(signum).name
                if stop.received is None:
                    stop.received = signal.Signals(signum)
                    logger.info("%s received: stopping (up to %g s)", name, stop_timeout)
                    nursery.start_soon(drain_then_cancel)
                else:
                    logger.warning("%s received again: cancelling everything now", name)
                    nursery.cancel_scope.cancel()


def _interrupted_at(stop: StopSignal) -> None:
    if stop.received is None:
        logger.info("SIGINT received while starting: stopped")
    else:
        logger.info("SIGINT received again as the stop ended: stopped")


def _interrupted(exc: BaseException) -> bool:
    """Tell whether ``exc`` is a KeyboardInterrupt, or a group of nothing else.

    trio raises the KeyboardInterrupt of a SIGINT no receiver handles in whichever task was
    running; from inside a nursery it comes out of ``trio.run`` in an exception group.
    """
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(KeyboardInterrupt)[1] is None
    return isinstance(exc, KeyboardInterrupt)


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
