"""Walk trio's task tree: which tasks are still running, and which of them are actors.

Under structured concurrency a task cannot outlive its nursery, so "leaked" means "still
running when the code that started it is done": at the end of a test body, everything below
the test's own task, plus anything outside the test's line of ancestors. What a pytest-trio
run looks like (pytest-trio 0.8, trio 0.35), and what the check leaves alone::

    <init>                                      trio's root task            (ancestor)
      <TrioToken.run_sync_soon task>            trio system task            (ignored)
      ..._bootstrap_fixtures_and_run_test       pytest-trio runner          (ancestor)
        <test 'test_x'>                         the test, current task      (ancestor)
          <anything still running in here>                                  LEAKED
        <fixture 'f'>                           an async fixture's task     (ignored)
          <tasks the fixture started>           stopped by its teardown     (ignored)

Not here: waiting for tasks to finish. Reach quiescence first (await what you started, or
``trio.testing.wait_all_tasks_blocked``); this module only reports.
"""

from __future__ import annotations

import os
import types
from typing import TYPE_CHECKING

import trio

from trimcp.actors import actor_of_task

if TYPE_CHECKING:
    from collections.abc import Iterator

    from trimcp.actors import ActorRef

_PYTEST_TRIO_PLUGIN = os.path.join("pytest_trio", "plugin.py")


def _children(task: trio.lowlevel.Task) -> Iterator[trio.lowlevel.Task]:
    for nursery in task.child_nurseries:
        # child_tasks is a frozenset: sort so that reports come out in a stable order.
        yield from sorted(nursery.child_tasks, key=lambda child: child.name)


def _lineage(task: trio.lowlevel.Task) -> Iterator[trio.lowlevel.Task]:
    current: trio.lowlevel.Task | None = task
    while current is not None:
        yield current
        nursery = current.parent_nursery
        current = nursery.parent_task if nursery is not None else None


def _descendants(task: trio.lowlevel.Task) -> Iterator[trio.lowlevel.Task]:
    for child in _children(task):
        yield child
        yield from _descendants(child)


def _is_pytest_trio_fixture(task: trio.lowlevel.Task) -> bool:
    """Whether ``task`` is pytest-trio's task for one fixture (``TrioFixture.run``)."""
    code = getattr(task.coro, "cr_code", None)
    return (
        isinstance(code, types.CodeType)
        and code.co_qualname == "TrioFixture.run"
        and code.co_filename.endswith(_PYTEST_TRIO_PLUGIN)
    )


def live_actors() -> list[ActorRef]:
    """Return a handle to every actor whose task is running in this ``trio.run``.

    Includes actors that are still starting (in ``init``) or stopping (in ``terminate``). No
    registry is involved: the task tree is the source of truth.
    """
    root = trio.lowlevel.current_root_task()
    if root is None:
        raise RuntimeError("live_actors() must be called inside trio.run")
    found: list[ActorRef] = []
    for task in _descendants(root):
        ref = actor_of_task(task)
        if ref is not None:
            found.append(ref)
    return found


def leaked_tasks() -> list[trio.lowlevel.Task]:
    """Return the outermost tasks that ``assert_no_leaked_tasks`` would report.

    That is every running task except: the current task and its ancestors, trio's system
    tasks (the root's other children), and pytest-trio's fixture tasks together with
    everything they started (a fixture's teardown stops its own tasks). A leaked task's own
    children are not listed separately.
    """
    root = trio.lowlevel.current_root_task()
    if root is None:
        raise RuntimeError("leaked_tasks() must be called inside trio.run")
    lineage = set(_lineage(trio.lowlevel.current_task()))
    leaked: list[trio.lowlevel.Task] = []
    pending = [root]
    while pending:
        parent = pending.pop()
        for task in _children(parent):
            if task in lineage:
                pending.append(task)
            elif parent is root or _is_pytest_trio_fixture(task):
                continue
            else:
                leaked.append(task)
    return leaked


def describe_task(task: trio.lowlevel.Task) -> str:
    """Return a one-line description of ``task``: name, actor (if any), child count."""
    text = repr(task.name)
    ref = actor_of_task(task)
    if ref is not None:
        state = "alive" if ref.alive else f"exited: {ref.exit_reason}"
        text += f" (actor {ref.name!r}, phase {ref.statistics().phase}, {state})"
    helpers = sum(1 for _ in _descendants(task))
    if helpers:
        text += f" with {helpers} child task(s)"
    return text


def assert_no_leaked_tasks() -> None:
    """Fail if a task is still running that the caller should have waited for.

    Call it at the end of a test body (``tests/conftest.py`` does, after every trio test). See
    ``leaked_tasks`` for what counts. It does not wait: a task that is merely about to finish
    still counts, because the code under test returned before it did.

    Raises:
        AssertionError: listing each leaked task by name, and the actor it runs, if any.
    """
    leaked = leaked_tasks()
    if leaked:
        lines = "\n".join(f"  - {describe_task(task)}" for task in leaked)
        raise AssertionError(f"{len(leaked)} task(s) still running:\n{lines}")
