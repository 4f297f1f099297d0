"""``/metrics``: Prometheus figures read from the live objects when Prometheus scrapes.

The admin app has a ``CollectorRegistry`` of its own (never prometheus_client's global one,
which a program embedding trimcp may use for its own figures). In it:

* ``trimcp.telemetry.RequestMetrics``: ``trimcp_requests_total{method, outcome}`` and
  ``trimcp_request_duration_seconds{method}``, counted as requests are served (installed
  while the admin app runs, when ``[admin] metrics`` is true);
* ``LiveCollector``: everything else, from the ``Snapshot`` the ``/metrics`` route takes
  just before it renders (``_status.look``): nothing is counted between two scrapes;
* prometheus_client's ``ProcessCollector`` (``process_*``: CPU, memory, open files).

Label values are bounded: listener names, upstream names and supervisor child ids come from
the configuration; sessions are only ever summed (a session id is no label, nor is a URI).
Children of a ``simple_one_for_one`` supervisor (sessions, connections started at runtime)
are counted per supervisor, not listed.
"""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING, final

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from collections.abc import Iterator

    from prometheus_client.metrics_core import Metric

    from trimcp.client import ConnectionState
    from trimcp.supervision import TreeNode

    from ._status import Snapshot

__all__ = ["METRICS", "LiveCollector", "admin_registry"]

#: Every family the admin app exports beside the process ones: name, type, labels, help.
METRICS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("trimcp_build_info", "gauge", ("version", "python"), "Always 1; the version running"),
    ("trimcp_up", "gauge", (), "1 while the root supervisor runs, else 0"),
    ("trimcp_ready", "gauge", (), "1 when /readyz would answer 200, else 0"),
    ("trimcp_listener_bound", "gauge", ("listener",), "1 while the listener serves"),
    ("trimcp_sessions_open", "gauge", ("listener",), "Sessions open now"),
    ("trimcp_sessions_created_total", "counter", ("listener",), "Sessions started"),
    ("trimcp_sessions_refused_total", "counter", ("listener",), "Sessions refused"),
    (
        "trimcp_sessions_ended_total",
        "counter",
        ("listener", "reason"),
        "Sessions ended by the manager: expired, evicted or terminated",
    ),
    ("trimcp_session_mailbox_depth_sum", "gauge", ("listener",), "Messages queued, summed"),
    ("trimcp_session_mailbox_depth_max", "gauge", ("listener",), "Most queued in one session"),
    (
        "trimcp_session_dropped_messages",
        "gauge",
        ("listener",),
        "Messages (notifications) the open sessions discarded",
    ),
    (
        "trimcp_requests_in_flight",
        "gauge",
        ("listener",),
        "Requests in flight: a session's running in a task, and 2026-07-28 ones being served",
    ),
    (
        "trimcp_supervisor_child_restarts_total",
        "counter",
        ("supervisor", "child"),
        "Restarts of each static child",
    ),
    ("trimcp_supervisor_children", "gauge", ("supervisor",), "Children of each supervisor"),
    (
        "trimcp_supervisor_window_restarts",
        "gauge",
        ("supervisor",),
        "Restarts inside each supervisor's intensity window",
    ),
    (
        "trimcp_upstream_state",
        "gauge",
        ("upstream", "state"),
        "1 for the upstream's current state, 0 for the others",
    ),
    ("trimcp_upstream_restarts", "gauge", ("upstream",), "Reconnects since the last manual one"),
    ("trimcp_event_store_bytes", "gauge", (), "Bytes of SSE events held for resumption"),
    ("trimcp_event_store_limit_bytes", "gauge", (), "The event store's byte bound"),
    ("trimcp_event_store_events", "gauge", (), "SSE events held"),
    ("trimcp_event_store_streams", "gauge", (), "SSE streams held"),
    ("trimcp_tasks", "gauge", ("state",), "Tasks held: kept (finished included) and running"),
)

_STATES: tuple[ConnectionState, ...] = (
    "connecting",
    "connected",
    "reconnecting",
    "failed",
    "stopped",
)


def admin_registry() -> tuple[CollectorRegistry, LiveCollector]:
    """A fresh registry with the live collector and the process collector in it."""
    registry = CollectorRegistry(auto_describe=False)
    live = LiveCollector()
    registry.register(live)
    ProcessCollector(registry=registry)
    return registry, live


@final
class LiveCollector(Collector):
    """Turns the ``Snapshot`` set just before a scrape into metric families."""

    def __init__(self) -> None:
        self.snapshot: Snapshot | None = None

    def collect(self) -> Iterator[Metric]:
        """The families of ``METRICS`` from ``snapshot`` (none before the first look)."""
        snapshot = self.snapshot
        if snapshot is None:
            return
        families = {name: _family(name, kind, labels, text) for name, kind, labels, text in METRICS}
        families["trimcp_build_info"].add_metric([snapshot.version, platform.python_version()], 1)
        families["trimcp_up"].add_metric([], 1 if snapshot.healthy else 0)
        families["trimcp_ready"].add_metric([], 0 if snapshot.not_ready() else 1)
        _listeners(snapshot, families)
        if snapshot.tree is not None:
            _tree(snapshot.tree, snapshot.tree.id, families)
        for status, _ in snapshot.upstreams:
            for state in _STATES:
                families["trimcp_upstream_state"].add_metric(
                    [status.name, state], 1 if status.state == state else 0
                )
            families["trimcp_upstream_restarts"].add_metric([status.name], status.restarts)
        store = snapshot.event_store
        if store is not None:
            families["trimcp_event_store_bytes"].add_metric([], _number(store["bytes"]))
            if store["limit"] is not None:
                families["trimcp_event_store_limit_bytes"].add_metric([], _number(store["limit"]))
            families["trimcp_event_store_events"].add_metric([], _number(store["events"]))
            families["trimcp_event_store_streams"].add_metric([], _number(store["streams"]))
        if snapshot.tasks is not None:
            families["trimcp_tasks"].add_metric(["kept"], snapshot.tasks.kept)
            families["trimcp_tasks"].add_metric(["running"], snapshot.tasks.running)
        yield from families.values()


def _family(
    name: str, kind: str, labels: tuple[str, ...], text: str
) -> GaugeMetricFamily | CounterMetricFamily:
    if kind == "counter":
        return CounterMetricFamily(name.removesuffix("_total"), text, labels=labels)
    return GaugeMetricFamily(name, text, labels=labels)


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _listeners(
    snapshot: Snapshot, families: dict[str, GaugeMetricFamily | CounterMetricFamily]
) -> None:
    for look in snapshot.listeners:
        name = [look.watch.name]
        families["trimcp_listener_bound"].add_metric(name, 1 if look.watch.serving else 0)
        if look.sessions_total is None:
            continue
        families["trimcp_sessions_open"].add_metric(name, look.sessions_total)
        families["trimcp_sessions_created_total"].add_metric(name, look.counts["created"])
        families["trimcp_sessions_refused_total"].add_metric(name, look.counts["refused"])
        for reason in ("expired", "evicted", "terminated"):
            families["trimcp_sessions_ended_total"].add_metric([*name, reason], look.counts[reason])
        families["trimcp_session_mailbox_depth_sum"].add_metric(name, look.mailbox_sum)
        families["trimcp_session_mailbox_depth_max"].add_metric(name, look.mailbox_max)
        families["trimcp_session_dropped_messages"].add_metric(name, look.dropped)
        families["trimcp_requests_in_flight"].add_metric(name, look.in_flight or 0)


def _tree(
    node: TreeNode, path: str, families: dict[str, GaugeMetricFamily | CounterMetricFamily]
) -> None:
    if node.kind != "supervisor" or node.unanswered is not None:
        for child in node.children:  # a worker with a grafted supervisor
            _tree(child, f"{path}/{child.id}", families)
        return
    families["trimcp_supervisor_children"].add_metric([path], node.children_total)
    families["trimcp_supervisor_window_restarts"].add_metric([path], node.window_restarts or 0)
    dynamic = node.strategy == "simple_one_for_one"
    for child in node.children:
        if not dynamic:
            families["trimcp_supervisor_child_restarts_total"].add_metric(
                [path, child.id], child.restarts
            )
            _tree(child, f"{path}/{child.id}", families)
