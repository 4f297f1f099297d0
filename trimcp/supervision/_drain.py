"""Draining: the first phase of a graceful stop, between "stop taking work" and the ordered stop.

A stop signal must not cut requests off mid-flight, and must not let new ones in while the
old ones finish. So before the supervision tree stops (children in reverse start order, each
within its budget) the application *drains*:

1. ``begin``: every participant enters its ``DRAINING`` phase and refuses new work (a
   listener new connections and sessions, a session new requests), while work already in
   flight carries on;
2. ``wait_idle``: wait until nothing is in flight, up to ``application.stop_timeout``;
3. ``abort``: if time ran out, the participants cancel what is left and answer each piece of
   it with an error (the caller is told, never left waiting); a short grace lets those
   answers leave;
4. then the ordered stop closes what is left (sessions, listeners), and the process exits.

Who takes part: whatever runs under a ``Drain`` made current with ``open_drain``
(``open_application`` and ``run_application`` do it for the daemon, ``run_until_stopped`` for
an embedded server). Participants find it with ``current_drain()`` — a context variable, so
every task started inside the block, however deep in the tree, sees the same drain — and
either ``add`` themselves (a ``Drainable``: told to begin and to abort, asked how much they
have in flight) or count their own units of work with ``track()`` (an HTTP exchange still
sending its answer). Outside any drain, ``current_drain()`` is None and nothing changes.

The phase: ``DRAINABLE_PHASES`` adds ``DRAINING`` to the actor phase table (operation ->
draining -> shutdown), so an actor that drains says so in its ``phase`` as it says it stops.

This module knows nothing of MCP: a "unit of work" is whatever a participant counts.
MCP itself defines no shutdown message (MCP 2025-11-25, Lifecycle > Shutdown,
https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#shutdown): the
transport's close ends a session, and the participants choose how they refuse.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import signal
import typing
from typing import TYPE_CHECKING, Protocol

import trio

from trimcp.actors import (
    ACTOR_PHASES,
    INITIALIZATION,
    OPERATION,
    SHUTDOWN_PHASE,
    STARTED,
    STOP,
    Phase,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

__all__ = [
    "DRAIN",
    "DRAINABLE_PHASES",
    "DRAINING",
    "Drain",
    "Drainable",
    "current_drain",
    "open_drain",
    "run_until_stopped",
]

logger = logging.getLogger(__name__)

#: The phase of an actor that takes no new work and finishes what it has.
DRAINING = Phase("draining")
#: The event that moves an actor from operation to ``DRAINING``.
DRAIN = "drain"
#: ``ACTOR_PHASES`` with ``DRAINING``: operation -> draining -> shutdown. Messages are still
#: accepted while draining (what is in flight may need them); refusing new work is the
#: actor's own decision, with an answer that says why.
DRAINABLE_PHASES = ACTOR_PHASES.extend(
    transitions={
        (OPERATION, DRAIN): DRAINING,
        # An actor that joins a drain under way (``Drain.add`` in ``init``) drains from the
        # start: it stays draining when ``init`` returns.
        (INITIALIZATION, DRAIN): DRAINING,
        (DRAINING, STARTED): DRAINING,
        (DRAINING, DRAIN): DRAINING,
        (DRAINING, STOP): SHUTDOWN_PHASE,
    },
    accepts={DRAINING: (object,)},
)

#: Seconds the answers of cancelled work get to leave after ``abort``.
ABORT_GRACE: typing.Final = 1.0

_current: contextvars.ContextVar[Drain | None] = contextvars.ContextVar(
    "trimcp_drain", default=None
)


class Drainable(Protocol):
    """A participant that ``Drain.add`` knows (a session, say)."""

    @property
    def in_flight(self) -> int:
        """How many units of work are still running."""
        ...

    def begin_drain(self) -> None:
        """Refuse new work from now on; keep what is in flight. Never waits."""
        ...

    def abort_in_flight(self, reason: str) -> None:
        """Cancel what is in flight and answer each unit with an error. Never waits."""
        ...


@typing.final
class Drain:
    """One application's drain (see the module docstring).

    ``retry_after`` is what a participant refusing work may tell its client to wait, in
    seconds (an HTTP ``Retry-After``); ``run`` sets it to the drain's timeout.
    """

    def __init__(self) -> None:
        self._participants: set[Drainable] = set()
        self._tracked = 0
        self._changed: trio.Event | None = None
        self._state = "running"
        self.retry_after = 5

    @property
    def draining(self) -> bool:
        """True from ``begin`` on: refuse new work."""
        return self._state != "running"

    @property
    def in_flight(self) -> int:
        """Units of work still running: the participants' and the tracked ones."""
        return self._tracked + sum(p.in_flight for p in self._participants)

    # --- participants ---------------------------------------------------------------------

    def add(self, participant: Drainable) -> None:
        """Take part; one that joins during the drain begins draining at once."""
        self._participants.add(participant)
        if self.draining:
            participant.begin_drain()

    def discard(self, participant: Drainable) -> None:
        """Take no more part (it stopped); what it had in flight no longer counts."""
        if participant in self._participants:
            self._participants.discard(participant)
            self.changed()

    @contextlib.contextmanager
    def track(self) -> Iterator[None]:
        """Count the block as one unit of work in flight."""
        self._tracked += 1
        try:
            yield
        finally:
            self._tracked -= 1
            self.changed()

    def changed(self) -> None:
        """Say that work finished: ``wait_idle`` looks again. Cheap when nobody waits."""
        event, self._changed = self._changed, None
        if event is not None:
            event.set()

    # --- the drain ------------------------------------------------------------------------

    def begin(self) -> None:
        """Enter the drain: every participant refuses new work from now on."""
        if self.draining:
            return
        self._state = "draining"
        for participant in list(self._participants):
            participant.begin_drain()

    async def wait_idle(self) -> None:
        """Wait until nothing is in flight."""
        while self.in_flight:
            if self._changed is None:
                self._changed = trio.Event()
            await self._changed.wait()

    def abort(self, reason: str) -> None:
        """Cancel what is in flight; each participant answers its units with ``reason``."""
        self.begin()
        self._state = "aborted"
        for participant in list(self._participants):
            if participant.in_flight:
                participant.abort_in_flight(reason)

    async def run(self, timeout: float) -> bool:
        """Drain: begin, wait up to ``timeout`` seconds, then abort what is left.

        Returns True if everything finished in time. After an abort, waits up to
        ``ABORT_GRACE`` seconds for the answers of what was cancelled to leave.
        """
        if timeout != math.inf:
            self.retry_after = max(1, math.ceil(timeout))
        self.begin()
        running = self.in_flight
        if running:
            # A unit is what a participant counts: a request running in a session, an HTTP
            # answer still being sent (one call in flight over HTTP is both).
            logger.info(
                "draining: no new sessions or requests; waiting up to %g s for %d unit(s) of"
                " work in flight",
                timeout,
                running,
            )
        with trio.move_on_after(timeout):
            await self.wait_idle()
            return True
        left = self.in_flight
        logger.warning(
            "draining: %d still in flight after %g s (application.stop_timeout); cancelling them",
            left,
            timeout,
        )
        self.abort(
            f"the server is shutting down: the request was cancelled after {timeout:g} s "
            "(application.stop_timeout)"
        )
        with trio.move_on_after(min(ABORT_GRACE, timeout)):
            await self.wait_idle()
        return False


def current_drain() -> Drain | None:
    """Return the drain of the application this task runs in, or None."""
    return _current.get()


@contextlib.contextmanager
def open_drain(drain: Drain | None = None) -> Iterator[Drain]:
    """Make ``drain`` (a new one if None) current for the block and every task started in it."""
    chosen = drain or Drain()
    token = _current.set(chosen)
    try:
        yield chosen
    finally:
        _current.reset(token)


async def run_until_stopped(
    serve: Callable[[], Awaitable[object]], *, stop_timeout: float = 30.0
) -> None:
    """Run ``serve()`` until it returns or SIGTERM/SIGINT stops it gracefully.

    For a server run without the daemon (``MCPServer.serve_http``, ``serve_stdio``):
    ``trio.run(run_until_stopped, server.serve_http)``. ``serve`` runs under a ``Drain``
    of its own; the first signal drains it for up to ``stop_timeout`` seconds (module
    docstring), then cancels ``serve``; a second signal cancels it at once.
    """
    signals = (signal.SIGTERM, signal.SIGINT)
    with trio.open_signal_receiver(*signals) as received, open_drain() as drain:
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                await serve()
                nursery.cancel_scope.cancel()

            async def stop() -> None:
                await drain.run(stop_timeout)
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            async for signum in received:
                name = signal.Signals(signum).name
                if not drain.draining:
                    logger.info("%s received: stopping (up to %g s)", name, stop_timeout)
                    nursery.start_soon(stop)
                else:
                    logger.warning("%s received again: cancelling everything now", name)
                    nursery.cancel_scope.cancel()
