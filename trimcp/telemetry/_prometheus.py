"""``RequestMetrics``: Prometheus counters and a duration histogram of the requests served.

Two families in the registry it is given (the admin app's, say):

* ``trimcp_requests_total{method, outcome}``: requests answered, by how they ended
  (``ok``, ``error`` for a JSON-RPC error, ``tool_error`` for a ``tools/call`` result
  with ``isError`` true, ``cancelled``);
* ``trimcp_request_duration_seconds{method}``: how long each took, from the moment it was
  read to its answer.

``method`` is one of the methods MCP defines, anything else ``other`` (``_methods.py``):
no session ids, tool names or URIs, whose variety has no bound. The label children are
kept per label value (at most a few hundred, since both labels are bounded) so a request
costs two dictionary lookups, not a label resolution each.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, Self, final

from prometheus_client import Counter, Histogram

from ._methods import method_label
from ._seam import IGNORED, install, uninstall

if TYPE_CHECKING:
    from types import TracebackType

    from prometheus_client import CollectorRegistry

    from trimcp.protocol import JsonObject, RequestId

    from ._seam import ClientProbe, Outcome, Peer, RequestProbe, SessionProbe

__all__ = ["DURATION_BUCKETS", "RequestMetrics"]

#: Seconds: the bucket advice of the OpenTelemetry MCP conventions for its duration
#: histograms (https://github.com/open-telemetry/semantic-conventions-genai/blob/main/docs/gen-ai/mcp.md#metrics),
#: so that the Prometheus figures and the OpenTelemetry ones compare bucket for bucket.
DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
)  # fmt: skip


@final
class RequestMetrics:
    """Count and time the requests this process serves, into a Prometheus registry.

    Creating one registers its two families in ``registry`` (a second one in the same
    registry fails there, as Prometheus allows one family per name). Nothing is counted
    until ``install`` (or ``with metrics:``) puts it in the telemetry slot; ``uninstall``
    takes it out again, and the figures stay in the registry.
    """

    __slots__ = ("_counts", "_durations", "_requests", "_timers")

    def __init__(self, registry: CollectorRegistry) -> None:
        """Register ``trimcp_requests_total`` and ``trimcp_request_duration_seconds``."""
        self._requests = Counter(
            "trimcp_requests",
            "MCP requests served, by method and outcome (ok, error, tool_error, cancelled)",
            ("method", "outcome"),
            registry=registry,
        )
        self._durations = Histogram(
            "trimcp_request_duration_seconds",
            "Seconds from reading an MCP request to its answer, by method",
            ("method",),
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        # Label children by label value; bounded by the bounded labels (_methods.py).
        self._counts: dict[tuple[str, str], Counter] = {}
        self._timers: dict[str, Histogram] = {}

    def install(self) -> None:
        """Start counting (``trimcp.telemetry.install``)."""
        install(self)

    def uninstall(self) -> None:
        """Stop counting; what was counted stays."""
        uninstall(self)

    def __enter__(self) -> Self:
        """Install for the ``with`` block."""
        self.install()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Uninstall."""
        self.uninstall()

    # --- Observer -------------------------------------------------------------------------

    def server_request(
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
    ) -> RequestProbe:
        """Start timing a request served."""
        return _Timing(self, method_label(method), time.perf_counter())

    def client_request(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> ClientProbe:
        """Requests sent are not counted here (OpenTelemetry's client histogram has them)."""
        return IGNORED

    def server_session(self, peer: Peer) -> SessionProbe:
        """Sessions are not counted here."""
        return IGNORED

    def client_session(self, peer: Peer) -> SessionProbe:
        """Sessions are not counted here."""
        return IGNORED

    def _record(self, method: str, outcome: Outcome, seconds: float) -> None:
        counter = self._counts.get((method, outcome))
        if counter is None:
            counter = self._counts[method, outcome] = self._requests.labels(method, outcome)
        counter.inc()
        timer = self._timers.get(method)
        if timer is None:
            timer = self._timers[method] = self._durations.labels(method)
        timer.observe(seconds)


@final
class _Timing:
    """One request being timed."""

    __slots__ = ("_method", "_metrics", "_start")

    def __init__(self, metrics: RequestMetrics, method: str, start: float) -> None:
        self._metrics = metrics
        self._method = method
        self._start = start

    def enter(self) -> None:
        pass

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        self._metrics._record(self._method, outcome, time.perf_counter() - self._start)
