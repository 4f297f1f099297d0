"""The gateway: one MCP server fronting many MCP servers, each kept connected by a supervisor.

``Gateway`` is what ``trimcp serve`` serves by default (``trimcp.daemon``): the built-in
tools (``trimcp.skills``), the ``[server] object`` and every upstream of ``[upstreams]`` and
the user's and project's ``mcpServers`` files, merged into one catalog whose names follow
``[gateway] namespace`` (``_view.py``). Calls are routed to the backend's supervised
``Connection`` (``trimcp.client``); a backend that crashes fails its calls in flight with an
``isError`` result naming it, drops out of the lists (``list_changed``) and comes back when
its connection has restarted it. Either side may speak MCP 2025-11-25 or 2026-07-28; a
2026-07-28 caller is asked for a backend's input with ``InputRequiredResult`` rounds while
the backend call waits (``ParkedStatistics``: how many do).
"""

from ._gateway import Gateway as Gateway
from ._local import IN_PROCESS as IN_PROCESS
from ._local import local_config as local_config
from ._parked import ParkedStatistics as ParkedStatistics
from ._reload import ReloadReport as ReloadReport
from ._view import Route as Route
from ._view import View as View
from ._view import build_view as build_view
from ._view import exposed_name as exposed_name

__all__ = [
    "IN_PROCESS",
    "Gateway",
    "ParkedStatistics",
    "ReloadReport",
    "Route",
    "View",
    "build_view",
    "exposed_name",
    "local_config",
]
