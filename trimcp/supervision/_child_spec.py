"""``ChildSpec``: how a supervisor starts, restarts and stops one child (OTP's child_spec)."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack, final

import trio

from trimcp.errors import InvalidChildSpec

if TYPE_CHECKING:
    from trimcp.actors import Actor

Restart = Literal["permanent", "transient", "temporary"]
ChildKind = Literal["worker", "supervisor"]
BRUTAL_KILL: Literal["brutal_kill"] = "brutal_kill"

#: A start function: ``start(*args, task_status=...)`` in ``nursery.start`` style, or a plain
#: ``start(*args)`` coroutine function, which counts as started as soon as it is called.
StartFunction = Callable[..., Awaitable[object]]


@final
@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to start one child and what to do when it exits.

    Attributes:
        id: unique among the supervisor's children; used in logs and ``terminate_child``.
        start: an async function run in the supervisor's nursery with ``*args``. If it takes a
            ``task_status`` parameter it is started like ``nursery.start`` (the value it
            passes to ``task_status.started`` — e.g. an ``ActorRef`` — becomes the child's
            value, and an exception before that is a start failure); otherwise it counts as
            started at once with value None.
        args: positional arguments for ``start``.
        restart: ``"permanent"`` (default) — always restarted; ``"transient"`` — restarted
            only after an abnormal exit (a crash or ``killed``); ``"temporary"`` — never
            restarted, and forgotten when it exits.
        shutdown: seconds the child gets to stop (its ``terminate`` runs) before it is
            cancelled outright; ``"brutal_kill"`` cancels at once; ``math.inf`` waits as long
            as it takes. Default: 5.0 for workers, ``math.inf`` for supervisors (OTP's
            defaults), because a supervisor bounds its own children's shutdown.
        significant: with the supervisor's ``auto_shutdown``, this child's own exit may stop
            the supervisor. Only ``transient`` and ``temporary`` children may be significant.
        kind: ``"worker"`` (default) or ``"supervisor"``; decides the default ``shutdown``.
    """

    id: str
    start: StartFunction
    _: KW_ONLY
    args: tuple[object, ...] = ()
    restart: Restart = "permanent"
    shutdown: float | Literal["brutal_kill"] | None = None
    significant: bool = False
    kind: ChildKind = "worker"
    #: Whether ``start`` accepts ``task_status`` (worked out once, here).
    takes_task_status: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.id:
            raise InvalidChildSpec("a child spec needs a non-empty id")
        if self.restart not in ("permanent", "transient", "temporary"):
            raise InvalidChildSpec(
                f"child {self.id!r}: restart must be 'permanent', 'transient' or 'temporary', "
                f"not {self.restart!r}"
            )
        if self.kind not in ("worker", "supervisor"):
            raise InvalidChildSpec(
                f"child {self.id!r}: kind must be 'worker' or 'supervisor', not {self.kind!r}"
            )
        if self.shutdown is None:
            object.__setattr__(self, "shutdown", math.inf if self.kind == "supervisor" else 5.0)
        elif self.shutdown != BRUTAL_KILL and not _is_seconds(self.shutdown):
            raise InvalidChildSpec(
                f"child {self.id!r}: shutdown must be seconds >= 0, math.inf or 'brutal_kill', "
                f"not {self.shutdown!r}"
            )
        if self.significant and self.restart == "permanent":
            raise InvalidChildSpec(
                f"child {self.id!r}: a significant child must be 'transient' or 'temporary' "
                "(a permanent one would always be restarted, so its exit could never count)"
            )
        if not callable(self.start):
            raise InvalidChildSpec(f"child {self.id!r}: start must be an async function")
        object.__setattr__(self, "takes_task_status", _takes_task_status(self.start))

    @property
    def shutdown_seconds(self) -> float:
        """The stop budget in seconds (0 for ``brutal_kill``)."""
        return 0.0 if self.shutdown == BRUTAL_KILL else float(self.shutdown or 0.0)

    @classmethod
    def for_actor(
        cls,
        id: str,  # noqa: A002  (OTP's field name)
        factory: Callable[..., Actor],
        *,
        name: str | None = None,
        **options: Unpack[ChildOptions],
    ) -> ChildSpec:
        """Return a spec that builds a fresh actor with ``factory()`` on every (re)start.

        With ``name`` the actor is registered under it while it runs. ``options`` are the
        other ChildSpec fields (restart, shutdown, significant, kind). As the template of a
        simple_one_for_one supervisor, ``start_child(sup, args=...)`` passes its args to
        ``factory``.
        """
        return cls(id, _run_actor, args=(factory, name), **options)


class ChildOptions(TypedDict, total=False):
    """The optional ChildSpec fields, for helpers that build specs."""

    restart: Restart
    shutdown: float | Literal["brutal_kill"] | None
    significant: bool
    kind: ChildKind


def _is_seconds(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value >= 0


async def _run_actor(
    factory: Callable[..., Actor],
    name: str | None,
    *args: object,
    task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED,
) -> None:
    await factory(*args).run(name=name, task_status=task_status)


# Cached because inspect.signature costs ~15 us and specs are built per dynamic child; the
# start functions of one program are few.
@functools.lru_cache(maxsize=256)
def _takes_task_status(start: StartFunction) -> bool:
    try:
        parameters = inspect.signature(start).parameters
    except (TypeError, ValueError):
        return True
    return "task_status" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
