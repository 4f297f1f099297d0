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

from ._methods import MCP_METHODS as MCP_METHODS
from ._methods import method_label as method_label
from ._prometheus import DURATION_BUCKETS as DURATION_BUCKETS
from ._prometheus import RequestMetrics as RequestMetrics
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
from ._seam import install as install
from ._seam import installed as installed
from ._seam import result_outcome as result_outcome
from ._seam import uninstall as uninstall

__all__ = [
    "DURATION_BUCKETS",
    "IGNORED",
    "MCP_METHODS",
    "SLOT",
    "ClientProbe",
    "Observer",
    "ObserverSlot",
    "Outcome",
    "Peer",
    "RequestMetrics",
    "RequestProbe",
    "SessionProbe",
    "Transport",
    "install",
    "installed",
    "method_label",
    "result_outcome",
    "uninstall",
]
