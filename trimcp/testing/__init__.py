"""Public helpers for testing code built on trimcp's actor runtime, deterministically.

* ``ScriptedActor`` / ``Script``: a real actor whose behaviour is written down (answer calls
  with these values, crash on this message, after N messages or after a delay, fail ``init``,
  overrun ``terminate``) and which records every message it handled and its ``terminate``
  reason. ``ScriptedFactory`` builds a fresh one per (re)start for supervision tests, counts
  them, and can be told to fail the next start.
* ``spawn_unlinked``: start an actor whose crash the test inspects (``exit_reason``,
  ``Down``) instead of letting it cancel the test's nursery.
* ``assert_no_leaked_tasks``: walk trio's task tree and fail if anything the test started is
  still running; ``live_actors`` lists the actors that are.

Meant for trio tests under ``MockClock(autojump_threshold=0)`` (pytest-trio's
``autojump_clock``): every delay in a script is trio time, so tests assert exact times.

Not here: pytest plugins or fixtures. This package does not import pytest; the project's
``tests/conftest.py`` shows how to run the leak check after every trio test.
"""

from ._factory import ScriptedFactory as ScriptedFactory
from ._scripted import CrashTrigger as CrashTrigger
from ._scripted import Handled as Handled
from ._scripted import HandledKind as HandledKind
from ._scripted import MessageMatch as MessageMatch
from ._scripted import Script as Script
from ._scripted import ScriptedActor as ScriptedActor
from ._scripted import ScriptedCrash as ScriptedCrash
from ._tasks import assert_no_leaked_tasks as assert_no_leaked_tasks
from ._tasks import describe_task as describe_task
from ._tasks import leaked_tasks as leaked_tasks
from ._tasks import live_actors as live_actors
from ._unlinked import spawn_unlinked as spawn_unlinked

__all__ = [
    "CrashTrigger",
    "Handled",
    "HandledKind",
    "MessageMatch",
    "Script",
    "ScriptedActor",
    "ScriptedCrash",
    "ScriptedFactory",
    "assert_no_leaked_tasks",
    "describe_task",
    "leaked_tasks",
    "live_actors",
    "spawn_unlinked",
]
