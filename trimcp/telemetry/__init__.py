"""What happens per request, told to whoever observes it: metrics, traces, request logs.

The hot paths (a server session's requests, a 2026-07-28 request, a ``ClientSession``'s
requests, sessions opening and closing) consult one slot, ``SLOT.observer``, and do nothing
more while it is None: telemetry that is off costs one ``is None`` test per request.
Observers are put in the slot with ``install`` and taken out with ``uninstall``; several may
be on at once. Three come with trimcp:

* ``RequestMetrics``: Prometheus ``trimcp_requests_total`` and
  ``trimcp_request_duration_seconds`` in a registry of your choice;
* ``OtelObserver`` (``trimcp[otel]``): OpenTelemetry spans and the MCP duration histograms
  after the semantic conventions for MCP, trace context carried in ``params._meta``;
* the request log (``trimcp._logging``): a line per request and request fields on every
  log record written while a request is handled.

Below the sessions and the client, which call it; it imports only ``trimcp.errors``,
``trimcp.config`` and ``trimcp.protocol``, and ``opentelemetry`` only when asked to.
"""

from typing import TYPE_CHECKING

from ._methods import MCP_METHODS as MCP_METHODS
from ._methods import method_label as method_label
from ._plan import OtelPlan as OtelPlan
from ._plan import plan_otel as plan_otel
from ._prometheus import DURATION_BUCKETS as DURATION_BUCKETS
from ._prometheus import RequestMetrics as RequestMetrics
from ._requestlog import REQUEST_LOGGER as REQUEST_LOGGER
from ._requestlog import RequestLog as RequestLog
from ._requestlog import request_fields as request_fields
from ._seam import IGNORED as IGNORED
from ._seam import SLOT as SLOT
from ._seam import ClientProbe as ClientProbe
from ._seam import Observer as Observer
from ._seam import ObserverSlot as ObserverSlot
from ._seam import Outcome as Outcome
from ._seam import Peer as Peer
from ._seam import RequestProbe as RequestProbe
from ._seam import SessionProbe as SessionProbe
from ._seam import Transport as Transport
from ._seam import finish_raised as finish_raised
from ._seam import install as install
from ._seam import installed as installed
from ._seam import result_outcome as result_outcome
from ._seam import uninstall as uninstall
from ._setup import OtelHandle as OtelHandle
from ._setup import configure_otel as configure_otel
from ._setup import instrument as instrument
from ._setup import start_telemetry as start_telemetry

if TYPE_CHECKING:
    from ._otel import OtelObserver as OtelObserver


def __getattr__(name: str) -> object:
    # OtelObserver needs opentelemetry (trimcp[otel]): imported on first use only.
    if name == "OtelObserver":
        from ._otel import OtelObserver

        return OtelObserver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DURATION_BUCKETS",
    "IGNORED",
    "MCP_METHODS",
    "REQUEST_LOGGER",
    "SLOT",
    "ClientProbe",
    "Observer",
    "ObserverSlot",
    "OtelHandle",
    "OtelObserver",
    "OtelPlan",
    "Outcome",
    "Peer",
    "RequestLog",
    "RequestMetrics",
    "RequestProbe",
    "SessionProbe",
    "Transport",
    "configure_otel",
    "finish_raised",
    "install",
    "installed",
    "instrument",
    "method_label",
    "plan_otel",
    "request_fields",
    "result_outcome",
    "start_telemetry",
    "uninstall",
]
