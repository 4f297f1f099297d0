"""``ScriptedFactory``: a fresh ``ScriptedActor`` per start, for supervision tests.

A supervisor restarts a child by building a new actor (``ChildSpec.for_actor(id, factory)``
calls ``factory()`` on every start). The factory keeps every instance it built, so a test can
count starts and read each incarnation's records, and it can be told to sabotage the next
start(s): "fail the next init", or any other one-off script.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, final

from trimcp.errors import ScriptedCrash

from ._scripted import Script, ScriptedActor

if TYPE_CHECKING:
    from trimcp.actors import ExitReason


@final
class ScriptedFactory:
    """Build a new ``ScriptedActor`` on every call; remember them all.

    Attributes:
        script: the script each instance gets unless a one-off script is queued.
        instances: every actor built so far, oldest first.
    """

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.instances: list[ScriptedActor] = []
        self._queued: deque[Script] = deque()

    def __call__(self) -> ScriptedActor:
        """Return a new actor: with the next queued one-off script, else with ``script``."""
        script = self._queued.popleft() if self._queued else self.script
        actor = ScriptedActor(script)
        self.instances.append(actor)
        return actor

    def script_next(self, script: Script, *, times: int = 1) -> None:
        """Give the next ``times`` instances ``script`` instead of the default one.

        One-off scripts queue up in call order behind those already queued.
        """
        self._queued.extend([script] * times)

    def fail_next_init(self, error: BaseException | None = None, *, times: int = 1) -> None:
        """Make the next ``times`` instances fail ``init``.

        Each gets ``error``, or by default its own ``ScriptedCrash("init")``; the rest of the
        default script (``init_delay`` for instance) still applies.
        """
        for _ in range(times):
            failure = error if error is not None else ScriptedCrash("init")
            self._queued.append(replace(self.script, init_error=failure))

    @property
    def built(self) -> int:
        """How many instances were built (start attempts)."""
        return len(self.instances)

    @property
    def started(self) -> int:
        """How many instances finished ``init`` successfully."""
        return sum(1 for actor in self.instances if actor.started_at is not None)

    @property
    def latest(self) -> ScriptedActor:
        """The most recently built instance.

        Raises:
            LookupError: nothing was built yet.
        """
        if not self.instances:
            raise LookupError("the factory has not built an actor yet")
        return self.instances[-1]

    def terminate_reasons(self) -> list[ExitReason]:
        """Return the reason each instance's ``terminate`` got, oldest first.

        Instances whose ``terminate`` never ran (failed ``init``, ``kill``) are left out.
        """
        return [a.terminate_reason for a in self.instances if a.terminate_reason is not None]
