"""``spawn_unlinked``: start an actor whose crash a test wants to look at, not propagate.

``spawn`` links the actor to its nursery the trio way: a crash is raised into the nursery and
cancels everything else in it. A test that provokes a crash usually wants the opposite: keep
its own tasks running and read the crash where the runtime reports it (``exit_reason``,
``wait_exited``, a monitor's ``Down``). That is what a supervisor does, minus the restart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from trimcp.actors import StartedFlag

if TYPE_CHECKING:
    from trimcp.actors import Actor, ActorRef, Registry


async def _run_unlinked(
    actor: Actor,
    name: str | None,
    registry: Registry | None,
    mailbox_size: int | None,
    *,
    task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED,
) -> None:
    status = StartedFlag(task_status)
    try:
        await actor.run(
            name=name,
            registry=registry,
            mailbox_size=mailbox_size,
            task_status=status,
        )
    except Exception as exc:
        reason = actor.ref.exit_reason
        # Swallow exactly the crash the runtime recorded; a start failure goes to the starter.
        if not status.done or reason is None or reason.error is not exc:
            raise


async def spawn_unlinked(
    nursery: trio.Nursery,
    actor: Actor,
    *,
    name: str | None = None,
    registry: Registry | None = None,
    mailbox_size: int | None = None,
) -> ActorRef:
    """Start ``actor`` in ``nursery`` like ``spawn``, but keep its crash out of ``nursery``.

    Returns once ``init`` succeeded. After that, a crash ends only the actor: read it from
    ``ref.exit_reason`` / ``await ref.wait_exited()`` (``reason.error`` is the exception) or
    from a monitor's ``Down``.

    Raises:
        Exception: whatever ``init`` (or registering ``name``) raised, as ``spawn`` does.
    """
    ref: ActorRef = await nursery.start(_run_unlinked, actor, name, registry, mailbox_size)
    return ref
