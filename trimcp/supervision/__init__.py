"""Supervision: OTP supervisors, child specs, restart intensity and the application.

A supervisor is an actor (``trimcp.actors``) that starts children from ``ChildSpec``s,
restarts them by strategy (``one_for_one``, ``one_for_all``, ``rest_for_one``,
``simple_one_for_one``) within a restart intensity, and stops them in reverse start order,
each within its ``shutdown`` budget. ``open_application`` / ``run_application`` run the root
supervisor from a ``SysConfig``, embedded in a trio program or as the daemon. A ``Drain``
(``_drain.py``) is the graceful stop's first phase: no new work, what is in flight finishes;
``run_until_stopped`` gives a server run without the daemon the same SIGTERM behaviour.
``describe_tree`` looks inside a running tree (``_describe.py``): each supervisor's children,
their states, restarts, last exits and mailboxes, bounded and with a timeout.

Not here: anything about MCP. The pure decisions live in ``_strategy.py`` and
``_intensity.py``; ``_supervisor.py`` carries them out.
"""

from ._api import count_children as count_children
from ._api import delete_child as delete_child
from ._api import open_supervisor as open_supervisor
from ._api import restart_child as restart_child
from ._api import start_child as start_child
from ._api import supervisor_spec as supervisor_spec
from ._api import terminate_child as terminate_child
from ._api import which_children as which_children
from ._application import Application as Application
from ._application import Reloaded as Reloaded
from ._application import current_application as current_application
from ._application import open_application as open_application
from ._application import run_application as run_application
from ._child_spec import BRUTAL_KILL as BRUTAL_KILL
from ._child_spec import ChildOptions as ChildOptions
from ._child_spec import ChildSpec as ChildSpec
from ._describe import ChildSnapshot as ChildSnapshot
from ._describe import ExitRecord as ExitRecord
from ._describe import SupervisorSnapshot as SupervisorSnapshot
from ._describe import TreeNode as TreeNode
from ._describe import describe_supervisor as describe_supervisor
from ._describe import describe_tree as describe_tree
from ._describe import exit_words as exit_words
from ._drain import DRAIN as DRAIN
from ._drain import DRAINABLE_PHASES as DRAINABLE_PHASES
from ._drain import DRAINING as DRAINING
from ._drain import Drain as Drain
from ._drain import Drainable as Drainable
from ._drain import current_drain as current_drain
from ._drain import open_drain as open_drain
from ._drain import run_until_stopped as run_until_stopped
from ._intensity import add_restart as add_restart
from ._strategy import SupervisorFlags as SupervisorFlags
from ._strategy import affected_children as affected_children
from ._strategy import should_restart as should_restart
from ._supervisor import ChildCounts as ChildCounts
from ._supervisor import ChildInfo as ChildInfo
from ._supervisor import Supervisor as Supervisor

__all__ = [
    "BRUTAL_KILL",
    "DRAIN",
    "DRAINABLE_PHASES",
    "DRAINING",
    "Application",
    "ChildCounts",
    "ChildInfo",
    "ChildOptions",
    "ChildSnapshot",
    "ChildSpec",
    "Drain",
    "Drainable",
    "ExitRecord",
    "Reloaded",
    "Supervisor",
    "SupervisorFlags",
    "SupervisorSnapshot",
    "TreeNode",
    "add_restart",
    "affected_children",
    "count_children",
    "current_application",
    "current_drain",
    "delete_child",
    "describe_supervisor",
    "describe_tree",
    "exit_words",
    "open_application",
    "open_drain",
    "open_supervisor",
    "restart_child",
    "run_application",
    "run_until_stopped",
    "should_restart",
    "start_child",
    "supervisor_spec",
    "terminate_child",
    "which_children",
]
