"""The daemon's admin app: what runs inside ``trimcp serve``, on a port of its own.

``trimcp serve`` runs it as a child of its root supervisor when ``[admin] enabled``
(``admin_spec``): ``/healthz`` (the root supervisor runs), ``/readyz`` (every listener bound,
no upstream failed; for load balancers), ``/status`` (the supervision tree, listeners,
sessions, upstreams, event store, as JSON), ``/metrics`` (Prometheus, a registry of its own),
``/`` (a self-contained dashboard), and behind the admin token ``POST /reload`` (what SIGHUP
does) and ``POST /upstreams/<name>/restart``. docs/operations.md is the contract.

Every figure is read from the live objects when asked (``AdminTargets``: the handles the
daemon hands over), never kept on the side. Not here: the ``trimcp status``/``reload``/
``restart`` commands (``trimcp.cli``), which speak to this app over HTTP.

quart is imported only when the app is served (``serve_admin``): building a daemon, or
``trimcp config check``, does not pay for it.
"""

from ._metrics import METRICS as METRICS
from ._metrics import LiveCollector as LiveCollector
from ._metrics import admin_registry as admin_registry
from ._serve import admin_policy as admin_policy
from ._serve import admin_spec as admin_spec
from ._serve import serve_admin as serve_admin
from ._status import Snapshot as Snapshot
from ._status import look as look
from ._targets import AdminTargets as AdminTargets
from ._targets import ListenerWatch as ListenerWatch
from ._targets import ReloadLog as ReloadLog
from ._token import AdminToken as AdminToken
from ._token import load_admin_token as load_admin_token

__all__ = [
    "METRICS",
    "AdminTargets",
    "AdminToken",
    "ListenerWatch",
    "LiveCollector",
    "ReloadLog",
    "Snapshot",
    "admin_policy",
    "admin_registry",
    "admin_spec",
    "load_admin_token",
    "look",
    "serve_admin",
]
