"""Telling a connection which process serves it, without passing the process up the stack.

A ``Connection`` opens its server through a connector (``connect_upstream``) that launches
the process several layers down and yields only the client session. The connection's own
status should still say which process it is (its ``pid``: the one to look at, or to kill),
so the connection opens a ``ProcessWatch`` around its connector, and ``open_server_process``
tells the watch current in its task about the process it launched. A context variable
carries the watch down: nothing between the two needs to know.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING, Protocol, final

if TYPE_CHECKING:
    from collections.abc import Iterator


class Launched(Protocol):
    """A launched process as the watch sees it (a ``ServerProcess``)."""

    @property
    def pid(self) -> int:
        """Its process id."""
        ...

    @property
    def returncode(self) -> int | None:
        """Its exit status once it has exited, else None."""
        ...


__all__ = ["ProcessWatch", "watch_processes"]


@final
class ProcessWatch:
    """The process launched last under this watch, while it runs."""

    __slots__ = ("_process",)

    def __init__(self) -> None:
        self._process: Launched | None = None

    @property
    def pid(self) -> int | None:
        """The process id of the server launched last, or None (none, or it has exited)."""
        process = self._process
        if process is None or process.returncode is not None:
            return None
        return process.pid

    def launched(self, process: Launched) -> None:
        """``open_server_process`` calls this with each process it starts."""
        self._process = process

    def clear(self) -> None:
        """Forget the process (the connection ended)."""
        self._process = None


_current: contextvars.ContextVar[ProcessWatch | None] = contextvars.ContextVar(
    "trimcp_process_watch", default=None
)


@contextlib.contextmanager
def watch_processes(watch: ProcessWatch) -> Iterator[ProcessWatch]:
    """Make ``watch`` learn of every server process launched in this context."""
    token = _current.set(watch)
    try:
        yield watch
    finally:
        _current.reset(token)


def current_watch() -> ProcessWatch | None:
    """The watch of this context, if any."""
    return _current.get()
