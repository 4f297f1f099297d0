"""``StartedFlag``: a ``task_status`` that remembers whether, and with what, a task started.

``nursery.start`` raises a task's exception to the starter only if it came before
``task_status.started()``; after that it belongs to the nursery. Code that wraps a start
function (actors, supervisors, test helpers) must tell the two apart, so it passes this on.
"""

from __future__ import annotations

from typing import final

import trio


@final
class StartedFlag(trio.TaskStatus[object]):
    """Forwards ``started(value)`` to the real task status and records ``done`` and ``value``."""

    __slots__ = ("_inner", "done", "value")

    def __init__(self, inner: trio.TaskStatus[object]) -> None:
        self._inner = inner
        self.done = False
        self.value: object = None

    def started(self, value: object = None) -> None:
        self.done = True
        self.value = value
        self._inner.started(value)
