"""Public functions around the ``Supervisor`` actor: open one, nest one, manage children.

Thin wrappers over ``call`` (OTP's ``supervisor`` API): each one is a message to the supervisor's
mailbox, so children are only ever touched by the supervisor's own task.
"""

from __future__ import annotations

import math
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Unpack, cast

import trio

from trimcp.actors import SHUTDOWN, ActorRef, Registry, StartedFlag

from ._child_spec import ChildSpec, Restart
from ._supervisor import (
    ChildCounts,
    ChildInfo,
    Supervisor,
    _CountChildren,
    _DeleteChild,
    _RestartChild,
    _StartChild,
    _TerminateChild,
    _WhichChildren,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from ._strategy import SupervisorFlags

#: Managing children may wait for a child's whole shutdown, so calls wait longer than 5 s.
MANAGE_TIMEOUT = math.inf


@asynccontextmanager
async def open_supervisor(
    children: Sequence[ChildSpec] = (),
    *,
    name: str | None = None,
    registry: Registry | None = None,
    **flags: Unpack[SupervisorFlags],
) -> AsyncIterator[ActorRef]:
    """Run a supervisor for the duration of the ``async with`` block; yield its handle.

    Children are started (in order) before the block runs; a start failure is raised here as
    ``StartFailed``. Leaving the block stops the supervisor in order. If the supervisor gives
    up (``RestartIntensityExceeded``) the block is cancelled and that one error is raised —
    not an exception group. An exception from the block itself is re-raised as is.
    """
    supervisor = Supervisor(children, **flags)
    failure: list[Exception] = []

    async def run(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED) -> None:
        flag = StartedFlag(task_status)
        try:
            await supervisor.run(name=name, registry=registry, task_status=flag)
        except Exception as exc:
            if not flag.done:
                raise
            failure.append(exc)
            nursery.cancel_scope.cancel()

    try:
        async with trio.open_nursery() as nursery:
            ref = cast("ActorRef", await nursery.start(run))
            try:
                yield ref
            finally:
                ref.request_stop(SHUTDOWN)
    except BaseExceptionGroup as group:
        # The nursery wraps the block's own exception; hand it back unwrapped. Re-raise it from
        # its own cause: ``from None`` would erase it (StartFailed keeps the original there).
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise
    if failure:
        raise failure[0]


def supervisor_spec(
    id: str,  # noqa: A002  (OTP's field name)
    children: Sequence[ChildSpec],
    *,
    restart: Restart = "permanent",
    name: str | None = None,
    **flags: Unpack[SupervisorFlags],
) -> ChildSpec:
    """Return a child spec that runs a nested supervisor (``kind="supervisor"``).

    ``flags`` are the nested supervisor's (strategy, intensity, period, auto_shutdown).
    """

    def build() -> Supervisor:
        return Supervisor(children, **flags)

    return ChildSpec.for_actor(id, build, name=name, restart=restart, kind="supervisor")


async def start_child(
    supervisor: ActorRef, spec: ChildSpec | None = None, *, args: Sequence[object] = ()
) -> ChildInfo:
    """Start a child at runtime and return it once started.

    Give a ``spec`` to a one_for_one / one_for_all / rest_for_one supervisor, or ``args``
    (appended to the template's) to a simple_one_for_one one, whose children get ids
    ``<template id>-<n>``.

    Raises:
        StartFailed: the child's start raised; the supervisor keeps running.
        DuplicateChild: a child with this id exists.
        InvalidChildSpec: spec/args do not fit the supervisor's strategy.
    """
    message = _StartChild(spec, tuple(args))
    return cast("ChildInfo", await supervisor.call(message, timeout=MANAGE_TIMEOUT))


async def terminate_child(supervisor: ActorRef, child_id: str) -> None:
    """Stop a child (within its ``shutdown``) without restarting it.

    Its spec is kept for ``restart_child`` unless it is temporary or dynamic.

    Raises:
        ChildNotFound: no such child.
    """
    await supervisor.call(_TerminateChild(child_id), timeout=MANAGE_TIMEOUT)


async def restart_child(supervisor: ActorRef, child_id: str) -> object:
    """Start again a child that was terminated; return its new value (e.g. an ActorRef)."""
    return await supervisor.call(_RestartChild(child_id), timeout=MANAGE_TIMEOUT)


async def delete_child(supervisor: ActorRef, child_id: str) -> None:
    """Forget the spec of a child that is not running."""
    await supervisor.call(_DeleteChild(child_id), timeout=MANAGE_TIMEOUT)


async def which_children(supervisor: ActorRef) -> list[ChildInfo]:
    """Return every child, in start order."""
    return cast("list[ChildInfo]", await supervisor.call(_WhichChildren()))


async def count_children(supervisor: ActorRef) -> ChildCounts:
    """Return how many child specs the supervisor has, how many run, and of which kind."""
    return cast("ChildCounts", await supervisor.call(_CountChildren()))
