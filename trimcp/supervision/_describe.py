"""Looking inside a running supervision tree: ``describe_tree`` and the snapshots it returns.

An OTP system is operated by looking at it: which children run, which are being restarted,
how many restarts the intensity window holds, why each child last exited, how full each
mailbox is. ``describe_tree`` asks each supervisor for a snapshot of itself through its
mailbox (``_Describe``, like ``which_children``), with a timeout, so a snapshot is always
consistent with what the supervisor's own task sees and a busy or stuck supervisor costs the
caller at most that timeout, never a hang. The walk down the tree is the caller's: no
supervisor waits for another one to answer.

Bounds: a supervisor lists at most ``max_children`` children (a ``simple_one_for_one``
supervisor of sessions may hold thousands) and always says how many it has
(``children_total``); the walk stops at ``max_depth``.

Nothing here costs anything between two looks: the supervisor keeps only what it keeps
anyway (its restart history) plus, per child, a restart count and its last exit.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, cast, final

from trimcp.errors import ActorGone, CallTimeout

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.actors import ActorRef, ActorStatistics, ExitReason

__all__ = [
    "ChildSnapshot",
    "ExitRecord",
    "SupervisorSnapshot",
    "TreeNode",
    "describe_supervisor",
    "describe_tree",
    "exit_words",
]

ChildState = Literal["running", "restarting", "stopped"]

#: Children listed per supervisor by default; the rest are counted only.
DEFAULT_MAX_CHILDREN = 50
#: Seconds a supervisor gets to answer before it is reported without its children.
DEFAULT_TIMEOUT = 1.0
#: Levels walked at most.
DEFAULT_MAX_DEPTH = 16


@final
@dataclass(frozen=True, slots=True)
class _Describe:
    """The message a supervisor answers with its ``SupervisorSnapshot``."""

    max_children: int


def exit_words(reason: ExitReason) -> str:
    """``crashed: ValueError: boom``, ``killed``, ``normal``: an exit reason for people."""
    error = reason.error
    if error is None:
        return reason.kind
    text = str(error).strip().splitlines()
    detail = f": {text[0]}" if text else ""
    return f"crashed: {type(error).__name__}{detail}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExitRecord:
    """How and when a child last exited.

    Attributes:
        reason: the reason in words (``exit_words``).
        at: when, in seconds since the epoch (wall clock, for showing).
    """

    reason: str
    at: float

    @classmethod
    def of(cls, reason: ExitReason, at: float | None = None) -> ExitRecord:
        """Record ``reason`` as of ``at`` (default: now)."""
        return cls(reason=exit_words(reason), at=time.time() if at is None else at)

    def as_json(self) -> dict[str, object]:
        """``{"reason": ..., "at": ISO 8601 UTC}``."""
        return {"reason": self.reason, "at": iso_time(self.at)}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSnapshot:
    """One child as its supervisor sees it.

    Attributes:
        id: the child's id.
        kind: ``"worker"`` or ``"supervisor"``.
        restart: its restart type.
        state: ``running``; ``restarting`` (it exited and its supervisor will start it
            again); ``stopped`` (it exited and stays so).
        restarts: times its supervisor restarted it.
        last_exit: its last exit, or None if it never exited.
        ref: its actor, if it is one (a supervisor always is).
    """

    id: str
    kind: str
    restart: str
    state: ChildState
    restarts: int
    last_exit: ExitRecord | None
    ref: ActorRef | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisorSnapshot:
    """A supervisor's answer to ``describe_supervisor``.

    Attributes:
        name: the supervisor's actor name.
        strategy: its restart strategy.
        intensity: restarts allowed within ``period``.
        period: the intensity window, in seconds.
        restarts: restarts inside the window now (``intensity + 1`` would stop it).
        children: at most ``max_children`` children, in start order.
        children_total: how many children it has.
    """

    name: str
    strategy: str
    intensity: int
    period: float
    restarts: int
    children: tuple[ChildSnapshot, ...]
    children_total: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TreeNode:
    """One node of ``describe_tree``'s answer: a supervisor or a worker.

    Attributes:
        id: the child id (the actor name for the root).
        kind: ``"supervisor"`` or ``"worker"``.
        state: ``running``, ``restarting`` or ``stopped``.
        restart: its restart type (None for the root, which nobody restarts).
        restarts: for a child, times its supervisor restarted it; for the root, the
            restarts inside its own intensity window.
        last_exit: its last exit, or None.
        mailbox: its actor's statistics, if it is an actor.
        strategy, intensity, period, window_restarts: a supervisor's flags and the restarts
            inside its intensity window now (None for workers, and for a supervisor that
            did not answer in time).
        children: at most ``max_children`` children.
        children_total: how many children it has (0 for a worker).
        unanswered: why the supervisor's children are missing (it did not answer in time,
            it exited meanwhile, the walk was too deep); None when they are all there.
    """

    id: str
    kind: str
    state: ChildState
    restart: str | None = None
    restarts: int = 0
    last_exit: ExitRecord | None = None
    mailbox: ActorStatistics | None = None
    strategy: str | None = None
    intensity: int | None = None
    period: float | None = None
    window_restarts: int | None = None
    children: tuple[TreeNode, ...] = ()
    children_total: int = 0
    unanswered: str | None = None

    def walk(self) -> list[TreeNode]:
        """This node and every node below it, depth first."""
        nodes = [self]
        for child in self.children:
            nodes.extend(child.walk())
        return nodes

    def as_json(self) -> dict[str, object]:
        """The node as the admin app's ``/status`` shows it (absent facts are null)."""
        box = self.mailbox
        return {
            "id": self.id,
            "kind": self.kind,
            "state": self.state,
            "restart": self.restart,
            "restarts": self.restarts,
            "strategy": self.strategy,
            "intensity": self.intensity,
            "period": self.period,
            "window_restarts": self.window_restarts,
            "last_exit": None if self.last_exit is None else self.last_exit.as_json(),
            "mailbox": None
            if box is None
            else {
                "length": box.mailbox_length,
                "capacity": box.mailbox_capacity,
                "peak": box.mailbox_peak,
            },
            "children": [child.as_json() for child in self.children],
            "children_total": self.children_total,
            "unanswered": self.unanswered,
        }


def iso_time(at: float) -> str:
    """``at`` (seconds since the epoch) as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


async def describe_supervisor(
    supervisor: ActorRef,
    *,
    max_children: int = DEFAULT_MAX_CHILDREN,
    timeout: float = DEFAULT_TIMEOUT,
) -> SupervisorSnapshot:
    """Ask one supervisor for its snapshot (through its mailbox).

    Raises:
        CallTimeout: it did not answer within ``timeout`` (it may be busy restarting).
        ActorGone: it has exited.
    """
    if max_children < 0:
        raise ValueError("max_children must be >= 0")
    answer = await supervisor.call(_Describe(max_children), timeout=timeout)
    return cast("SupervisorSnapshot", answer)


async def describe_tree(
    supervisor: ActorRef,
    *,
    max_children: int = DEFAULT_MAX_CHILDREN,
    timeout: float = DEFAULT_TIMEOUT,
    max_depth: int = DEFAULT_MAX_DEPTH,
    subtrees: Mapping[ActorRef, tuple[str, ActorRef]] | None = None,
) -> TreeNode:
    """Describe ``supervisor`` and everything below it (module docstring).

    Args:
        supervisor: the root of the walk.
        max_children: children listed per supervisor at most (the rest are counted).
        timeout: seconds each supervisor gets to answer.
        max_depth: levels walked at most.
        subtrees: supervisors that run under a worker rather than as a supervisor's child
            (a ``SessionManager`` runs its sessions' supervisor itself): worker actor ->
            (the id to show, the supervisor). Listed as that worker's only child.
    """
    walk = _Walk(max_children, timeout, dict(subtrees or {}))
    node = await walk.expand(_supervisor_node(supervisor.name, supervisor), supervisor, max_depth)
    # Nobody restarts the root: its "restarts" are those in its window.
    return dataclasses.replace(node, restarts=node.window_restarts or 0)


def _supervisor_node(node_id: str, ref: ActorRef) -> TreeNode:
    return TreeNode(
        id=node_id,
        kind="supervisor",
        state="running" if ref.alive else "stopped",
        mailbox=ref.statistics(),
    )


@final
@dataclass(frozen=True, slots=True)
class _Walk:
    max_children: int
    timeout: float
    grafts: dict[ActorRef, tuple[str, ActorRef]]

    async def expand(self, node: TreeNode, ref: ActorRef, depth: int) -> TreeNode:
        """Fill in a supervisor node's flags and children (asking the supervisor)."""
        if depth <= 0:
            return dataclasses.replace(
                node, unanswered="not described: the tree is deeper than max_depth"
            )
        try:
            snapshot = await describe_supervisor(
                ref, max_children=self.max_children, timeout=self.timeout
            )
        except CallTimeout:
            return dataclasses.replace(node, unanswered=f"did not answer within {self.timeout:g} s")
        except ActorGone:
            return dataclasses.replace(node, state="stopped", unanswered="exited")
        children = [await self.child(child, depth - 1) for child in snapshot.children]
        return dataclasses.replace(
            node,
            strategy=snapshot.strategy,
            intensity=snapshot.intensity,
            period=snapshot.period,
            window_restarts=snapshot.restarts,
            children=tuple(children),
            children_total=snapshot.children_total,
        )

    async def child(self, child: ChildSnapshot, depth: int) -> TreeNode:
        """A child's node; a running supervisor's (or grafted worker's) with its own children."""
        ref = child.ref
        node = TreeNode(
            id=child.id,
            kind=child.kind,
            state=child.state,
            restart=child.restart,
            restarts=child.restarts,
            last_exit=child.last_exit,
            mailbox=ref.statistics() if ref is not None else None,
        )
        if ref is None or child.state != "running":
            return node
        if child.kind == "supervisor":
            return await self.expand(node, ref, depth)
        graft = self.grafts.get(ref)
        if graft is None:
            return node
        graft_id, graft_ref = graft
        inner = await self.expand(_supervisor_node(graft_id, graft_ref), graft_ref, depth - 1)
        return dataclasses.replace(node, children=(inner,), children_total=1)
