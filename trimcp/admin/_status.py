"""``/status``, ``/healthz`` and ``/readyz``: one look at the live objects, in the contract's shape.

``look`` takes one ``Snapshot`` at request time: the application (``current_application``),
the supervision tree (``describe_tree``, each supervisor asked through its mailbox with a
timeout), each listener's manager and event store, the sessions (at most
``[admin] max_listed_sessions`` per listener, the most recently active first) and each
upstream's ``ConnectionStatus`` (asked of its connection actor). Nothing is cached: a dead
upstream is shown dead on the first look after it died.

Readiness (``/readyz``) is for load balancers: ready when every enabled listener is bound
and no upstream is ``failed`` (a failed upstream gave up; one that is reconnecting may come
back on its own and does not make the daemon unready). Health (``/healthz``) is narrower:
the root supervisor runs.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, final

import trio

from trimcp.client import ConnectionStatus
from trimcp.errors import ActorGone, CallTimeout
from trimcp.sessions import describe_sessions
from trimcp.supervision import current_application, describe_tree
from trimcp.transports import MemoryEventStore

if TYPE_CHECKING:
    from trimcp.actors import ActorRef
    from trimcp.config import AdminSettings
    from trimcp.server import TaskCounts
    from trimcp.sessions import SessionDescription
    from trimcp.supervision import Application, TreeNode

    from ._targets import AdminTargets, ListenerWatch

__all__ = ["Snapshot", "health_only", "look", "upstream_json"]

#: Seconds one actor (a supervisor, a connection) gets to answer a look.
LOOK_TIMEOUT = 1.0


@final
@dataclass(slots=True, kw_only=True)
class ListenerLook:
    """One listener's figures at the time of the look."""

    watch: ListenerWatch
    sessions: list[SessionDescription] = field(default_factory=list)
    sessions_total: int | None = None
    in_flight: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    mailbox_sum: int = 0
    mailbox_max: int = 0
    dropped: int = 0

    def as_json(self) -> dict[str, object]:
        """The contract's listener entry."""
        watch = self.watch
        return {
            "name": watch.name,
            "transport": watch.transport,
            "address": watch.address,
            "bound": watch.serving,
            "sessions": self.sessions_total,
            "in_flight": self.in_flight,
            **{key: self.counts.get(key) for key in _COUNTS},
        }


_COUNTS = ("created", "expired", "evicted", "refused", "terminated")


@final
@dataclass(slots=True, kw_only=True)
class Snapshot:
    """Everything one look saw (module docstring)."""

    application: Application | None
    tree: TreeNode | None
    listeners: list[ListenerLook]
    upstreams: list[tuple[ConnectionStatus, str | None]]
    event_store: dict[str, object] | None
    version: str
    tasks: TaskCounts | None = None

    @property
    def healthy(self) -> bool:
        """The root supervisor runs and no stop has begun."""
        return self.application is not None and self.application.state == "running"

    def health(self) -> tuple[str, str | None]:
        """``ok``, ``stopping`` or ``down``, and why when not ok."""
        app = self.application
        if app is None:
            return "down", "the application has not started"
        state = app.state
        if state == "running":
            return "ok", None
        if state == "stopping":
            return "stopping", f"{app.name} is stopping (a graceful stop has begun)"
        return "down", f"{app.name}'s root supervisor has exited"

    def checks(self) -> list[dict[str, object]]:
        """Each readiness check: ``{"check", "ok", "detail"}``."""
        found: list[dict[str, object]] = []
        for listener in self.listeners:
            watch = listener.watch
            bound = watch.serving
            found.append(
                {
                    "check": f"listener {watch.name}",
                    "ok": bound,
                    "detail": f"bound at {watch.address}" if bound else "not bound",
                }
            )
        for status, _ in self.upstreams:
            failed = status.state == "failed"
            found.append(
                {
                    "check": f"upstream {status.name}",
                    "ok": not failed,
                    "detail": f"{status.state}: {status.summary()}" if failed else status.state,
                }
            )
        return found

    def not_ready(self) -> list[str]:
        """Why the daemon is not ready, one line each; empty when ready."""
        reasons = [f"{c['check']}: {c['detail']}" for c in self.checks() if not c["ok"]]
        status, why = self.health()
        if status != "ok":
            reasons.insert(0, f"application: {why}")
        return reasons

    def sessions(self) -> list[dict[str, object]]:
        """The listed sessions of every listener, with their listener's name."""
        return [
            {"listener": look.watch.name, **session.as_json()}
            for look in self.listeners
            for session in look.sessions
        ]

    def as_json(self) -> dict[str, object]:
        """The whole ``/status`` document (the contract in docs/operations.md)."""
        not_ready = self.not_ready()
        return {
            "application": self._application_json(),
            "health": {"healthy": self.healthy, "ready": not not_ready, "not_ready": not_ready},
            "tree": None if self.tree is None else self.tree.as_json(),
            "listeners": [look.as_json() for look in self.listeners],
            "sessions": self.sessions(),
            "sessions_total": sum(look.sessions_total or 0 for look in self.listeners),
            "upstreams": [upstream_json(s, t) for s, t in self.upstreams],
            "event_store": self.event_store,
            "tasks": None
            if self.tasks is None
            else {
                "stored": self.tasks.kept,
                "running": self.tasks.running,
                "limit": self.tasks.limit,
            },
        }

    def _application_json(self) -> dict[str, object] | None:
        app = self.application
        if app is None:
            return None
        return {
            "name": app.name,
            "version": self.version,
            "pid": app.pid,
            "started_at": datetime.fromtimestamp(app.started_at, UTC).isoformat(timespec="seconds"),
            "uptime": max(0.0, time.time() - app.started_at),
            "state": app.state,
            "python": sys.version.split()[0],
        }


def upstream_json(status: ConnectionStatus, transport: str | None) -> dict[str, object]:
    """An upstream as ``/status`` lists it (``ConnectionStatus.as_json`` and its transport)."""
    return {**status.as_json(), "transport": transport}


async def look(targets: AdminTargets, settings: AdminSettings, *, detail: bool = True) -> Snapshot:
    """Take one snapshot of everything (module docstring).

    ``detail=False`` (the probes) leaves out the tree and the session lists: readiness
    needs only the listeners and the upstreams.
    """
    app = current_application()
    listeners = [_listener_look(w, targets, settings, detail=detail) for w in targets.listeners]
    tree = None
    if app is not None and detail:
        grafts = _grafts(targets)
        tree = await describe_tree(
            # describe_tree's own bound on the children listed per supervisor (50; sessions
            # beyond it are counted).
            app.supervisor,
            timeout=LOOK_TIMEOUT,
            subtrees=grafts,
        )
    return Snapshot(
        application=app,
        tree=tree,
        listeners=listeners,
        upstreams=await upstream_statuses(targets),
        event_store=_event_store(targets) if detail else None,
        version=targets.version,
        tasks=targets.tasks() if targets.tasks is not None and detail else None,
    )


def health_only(targets: AdminTargets) -> Snapshot:
    """A snapshot of the application alone (``/healthz``: no actor is asked anything)."""
    return Snapshot(
        application=current_application(),
        tree=None,
        listeners=[],
        upstreams=[],
        event_store=None,
        version=targets.version,
    )


async def upstream_statuses(targets: AdminTargets) -> list[tuple[ConnectionStatus, str | None]]:
    """Every backend's status, in configuration order, with how it is reached.

    The connections are asked at once, so a look takes at most ``LOOK_TIMEOUT`` however
    many of them are stuck.
    """
    gateway = targets.gateway
    if gateway is None:
        return []
    names = gateway.backends
    found: dict[str, ConnectionStatus] = {}

    async def ask(name: str) -> None:
        found[name] = await _status_of(targets, name)

    async with trio.open_nursery() as nursery:
        for name in names:
            nursery.start_soon(ask, name)
    return [(found[name], gateway.transport_of(name)) for name in names]


async def _status_of(targets: AdminTargets, name: str) -> ConnectionStatus:
    assert targets.gateway is not None
    with trio.move_on_after(LOOK_TIMEOUT):
        try:
            return await targets.gateway.manager.status_of(name)
        except (ActorGone, CallTimeout) as exc:
            return ConnectionStatus(name=name, state="stopped", last_error=str(exc))
    return ConnectionStatus(
        name=name,
        state="stopped",
        last_error=f"its connection did not answer within {LOOK_TIMEOUT:g} s",
    )


def _grafts(targets: AdminTargets) -> dict[ActorRef, tuple[str, ActorRef]]:
    grafts: dict[ActorRef, tuple[str, ActorRef]] = {}
    for watch in targets.listeners:
        manager = watch.manager
        if manager is None or manager.stopping:
            continue
        supervisor = manager.session_supervisor
        if supervisor is not None:
            grafts[manager.ref] = ("sessions", supervisor)
    return grafts


def _listener_look(
    watch: ListenerWatch, targets: AdminTargets, settings: AdminSettings, *, detail: bool
) -> ListenerLook:
    manager = watch.manager
    look = ListenerLook(watch=watch)
    if manager is None or manager.stopping or not detail:
        return look
    gateway = targets.gateway
    counter = gateway.subscription_count if gateway is not None else None
    listed, total = describe_sessions(
        manager, limit=settings.max_listed_sessions, subscriptions=counter
    )
    look.sessions = listed
    look.sessions_total = total
    stats = manager.statistics()
    look.counts = {key: getattr(stats, key) for key in _COUNTS}
    in_flight = 0
    for record in manager.table.records():
        box = record.ref.statistics()
        look.mailbox_sum += box.mailbox_length
        look.mailbox_max = max(look.mailbox_max, box.mailbox_length)
        look.dropped += box.dropped
        if record.session is not None:
            in_flight += record.session.in_flight
    if watch.http is not None:  # 2026-07-28 requests: in no session
        in_flight += watch.http.per_request_in_flight
    look.in_flight = in_flight
    return look


def _event_store(targets: AdminTargets) -> dict[str, object] | None:
    for watch in targets.listeners:
        store = watch.store
        # Only the in-memory store can be looked at without I/O (a shared one would not).
        if not isinstance(store, MemoryEventStore):
            continue
        figures = store.statistics()
        return {
            "bytes": figures.bytes,
            "limit": watch.store_limit,
            "streams": figures.streams,
            "events": figures.events,
            "footprint": figures.footprint,
        }
    return None
