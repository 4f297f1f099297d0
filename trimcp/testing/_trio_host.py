"""``TrioHost``: one trio run in a helper thread that synchronous code steps into.

Hypothesis state machines are synchronous, but a session actor needs a live trio run that
outlasts each step (its reader, writer and request tasks keep running between rules). So
the run lives in a thread of its own for the whole lifetime of one machine: ``run(afn)``
executes ``afn`` inside it with ``trio.from_thread.run`` and blocks until it returns, and
``close`` ends the run and joins the thread. Between calls the run keeps going on its own;
anything it touches that the caller also reads must be read through ``run``.

Not here: anything MCP. Not for use from inside another trio run (``from_thread`` refuses).
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, NoReturn, TypeVar, TypeVarTuple, final

import outcome
import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


@final
class TrioHost:
    """A trio run in a daemon thread, started by the constructor (see the module docstring).

    Tasks started in ``nursery`` run until ``close``; if one of them raises, the run ends
    and the next ``run`` or ``close`` raises that error.
    """

    def __init__(self, *, name: str = "trio-host") -> None:
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        self._outcome: outcome.Outcome[None] | None = None
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._token is None:  # the run ended before it was ready
            self._result()

    def _main(self) -> None:
        try:
            self._outcome = outcome.capture(trio.run, self._serve)
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    @property
    def nursery(self) -> trio.Nursery:
        """The nursery of the hosted run; use it from inside ``run``."""
        assert self._nursery is not None
        return self._nursery

    @property
    def running(self) -> bool:
        """Tell whether the hosted run is still going."""
        return self._thread.is_alive()

    def run(self, afn: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> T:
        """Run ``afn(*args)`` inside the hosted run and return its result.

        Raises:
            Exception: whatever ``afn`` raised; if the run died meanwhile, what killed it.
            RuntimeError: the run had already ended normally (after ``close``).
        """
        try:
            return trio.from_thread.run(afn, *args, trio_token=self._token)
        except (trio.RunFinishedError, trio.Cancelled) as exc:
            # Cancelled reaches this thread only when the run shuts down under afn.
            self._ended(exc)

    def run_sync(self, fn: Callable[[*Ts], T], *args: *Ts) -> T:
        """Call ``fn(*args)`` inside the hosted run (between its tasks' steps), return its result.

        Raises:
            Exception: whatever ``fn`` raised; if the run had died, what killed it.
            RuntimeError: the run had already ended normally (after ``close``).
        """
        try:
            return trio.from_thread.run_sync(fn, *args, trio_token=self._token)
        except trio.RunFinishedError as exc:
            self._ended(exc)

    def _ended(self, exc: BaseException) -> NoReturn:
        self._thread.join()
        self._result()
        raise RuntimeError(f"the trio run in {self._thread.name} has ended") from exc

    def close(self, *, timeout: float = 10.0) -> None:
        """Cancel everything in the run, end it and join the thread. Idempotent.

        Raises:
            RuntimeError: the thread did not finish within ``timeout`` seconds.
            Exception: what a task of the run raised, if one crashed it.
        """
        if self._thread.is_alive() and self._stop is not None:
            stop = self._stop
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(stop.set, trio_token=self._token)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError(f"the trio run in {self._thread.name} did not stop")
        self._result()

    def _result(self) -> None:
        result, self._outcome = self._outcome, None
        if result is not None:
            result.unwrap()
