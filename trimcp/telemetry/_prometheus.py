"""``RequestMetrics``: Prometheus counters and a duration histogram of the requests served.

Two families in the registry it is given (the admin app's, say):

* ``trimcp_requests_total{method, outcome}``: requests answered, by how they ended
  (``ok``, ``error`` for a JSON-RPC error, ``tool_error`` for a ``tools/call`` result
  with ``isError`` true, ``cancelled``);
* ``trimcp_request_duration_seconds{method}``: how long each took, from the moment it was
  read to its answer.

``method`` is one of the methods MCP defines, anything else ``other`` (``_methods.py``):
no session ids, tool names or URIs, whose variety has no bound.

The figures are plain numbers, one row per method label (bounded, so the rows are made up
front), turned into metric families only when the registry is collected (a scrape).
``prometheus_client``'s own ``Counter`` and ``Histogram`` take a lock per increment and one
per bucket, several µs a request; a request here costs a dictionary lookup when it starts,
and a bisection and three additions when it ends. All of it happens in the one thread that
serves requests; a scrape from another thread reads numbers that may be one request apart,
never torn.
"""

from __future__ import annotations

from bisect import bisect_left
from time import perf_counter
from typing import TYPE_CHECKING, Final, final

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

from ._methods import MCP_METHODS, OTHER
from ._seam import Installable, ServerRequestsOnly

if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextvars import Context

    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

    from trimcp.protocol import JsonObject, RequestId

    from ._seam import Outcome, Peer, RequestProbe

__all__ = ["DURATION_BUCKETS", "RequestMetrics"]

#: Seconds: the bucket advice of the OpenTelemetry MCP conventions for its duration
#: histograms (https://github.com/open-telemetry/semantic-conventions-genai/blob/main/docs/gen-ai/mcp.md#metrics),
#: so that the Prometheus figures and the OpenTelemetry ones compare bucket for bucket.
DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
)  # fmt: skip


@final
class RequestMetrics(Installable, ServerRequestsOnly):
    """Count and time the requests this process serves, into a Prometheus registry.

    Creating one registers its two families in ``registry`` (a second one in the same
    registry fails there, as Prometheus allows one family per name). Nothing is counted
    until ``install`` (or ``with metrics:``) puts it in the telemetry slot; ``uninstall``
    takes it out again, and the figures stay in the registry.
    """

    __slots__ = ("_rows",)

    def __init__(self, registry: CollectorRegistry) -> None:
        """Register ``trimcp_requests_total`` and ``trimcp_request_duration_seconds``.

        Raises:
            ValueError: ``registry`` already has a family of one of these names.
        """
        # One row of numbers per method label, made up front (the labels are bounded):
        # requests per bucket (the last one +Inf), the sum of seconds, then requests per
        # outcome (``_OUTCOMES``).
        self._rows: dict[str, list[float]] = {
            method: [0.0] * _ROW for method in (*sorted(MCP_METHODS), OTHER)
        }
        registry.register(self)

    # --- Observer -------------------------------------------------------------------------

    def server_request(  # noqa: PLR0913, PLR0917  # one request's facts, positional: hot path
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
        context: Context | None,
    ) -> RequestProbe:
        """Start timing a request served."""
        rows = self._rows
        # A tuple made by tuple's own constructor: no Python __init__ to run per request.
        return _new_timing(_Timing, (rows.get(method) or rows[OTHER], perf_counter()))

    # --- prometheus_client's Collector ---------------------------------------------------

    def describe(self) -> list[Metric]:
        """The two families, empty: what the registry checks names against."""
        return [_requests_family(), _durations_family()]

    def collect(self) -> Iterator[Metric]:
        """The two families with the figures so far (called by a scrape)."""
        requests = _requests_family()
        durations = _durations_family()
        for method, row in list(self._rows.items()):
            cells = row[:]  # one consistent copy
            for outcome, index in _OUTCOMES.items():
                if cells[index]:
                    requests.add_metric((method, outcome), cells[index])
            if not any(cells[_SUM + 1 :]):
                continue  # never requested: no series
            cumulative = 0.0
            buckets: list[tuple[str, float]] = []
            for bound, cell in zip((*_BOUNDS, "+Inf"), cells[:_SUM], strict=True):
                cumulative += cell
                buckets.append((bound, cumulative))
            durations.add_metric((method,), buckets, cells[_SUM])
        yield requests
        yield durations


_BOUNDS: Final = tuple(str(bound) for bound in DURATION_BUCKETS)
_FIRST_BOUND: Final = DURATION_BUCKETS[0]
# Where a row keeps the sum of seconds (after the buckets and +Inf), and each outcome.
_SUM: Final = len(DURATION_BUCKETS) + 1
_OUTCOMES: Final[dict[str, int]] = {
    outcome: _SUM + 1 + number
    for number, outcome in enumerate(("ok", "error", "tool_error", "cancelled"))
}
_ROW: Final = _SUM + 1 + len(_OUTCOMES)


def _requests_family() -> CounterMetricFamily:
    return CounterMetricFamily(
        "trimcp_requests",
        "MCP requests served, by method and outcome (ok, error, tool_error, cancelled)",
        labels=("method", "outcome"),
    )


def _durations_family() -> HistogramMetricFamily:
    return HistogramMetricFamily(
        "trimcp_request_duration_seconds",
        "Seconds from reading an MCP request to its answer, by method",
        labels=("method",),
    )


@final
class _Timing(tuple[list[float], float]):
    """One request being timed: its method's row and when it started."""

    __slots__ = ()

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        """Count the request by ``outcome`` and its duration in its row."""
        row, start = self
        seconds = perf_counter() - start
        row[_OUTCOMES[outcome]] += 1
        # The first bucket whose bound is >= seconds (Prometheus buckets are "le"); past the
        # last bound, +Inf. Most requests end within the first bound: no bisection for them.
        row[0 if seconds <= _FIRST_BOUND else bisect_left(DURATION_BUCKETS, seconds)] += 1
        row[_SUM] += seconds


_new_timing: Final = tuple.__new__
