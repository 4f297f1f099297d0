"""trimcp: a Model Context Protocol runtime built as a supervised actor system on trio.

This module re-exports the names most programs need; each subpackage documents its own:

* ``trimcp.actors``: actors, handles, call/cast, phases, registry, monitors;
* ``trimcp.supervision``: supervisors, child specs, the application;
* ``trimcp.config``: ``sys_config.toml`` into frozen dataclasses;
* ``trimcp.errors``: every exception trimcp raises.
"""

from trimcp.actors import DEFER as DEFER
from trimcp.actors import Actor as Actor
from trimcp.actors import ActorRef as ActorRef
from trimcp.actors import Down as Down
from trimcp.actors import ExitReason as ExitReason
from trimcp.actors import ReplyTo as ReplyTo
from trimcp.actors import Request as Request
from trimcp.actors import monitor as monitor
from trimcp.actors import spawn as spawn
from trimcp.actors import whereis as whereis
from trimcp.config import SysConfig as SysConfig
from trimcp.config import load_config as load_config
from trimcp.supervision import ChildSpec as ChildSpec
from trimcp.supervision import open_application as open_application
from trimcp.supervision import open_supervisor as open_supervisor
from trimcp.supervision import run_application as run_application
from trimcp.supervision import start_child as start_child
from trimcp.supervision import supervisor_spec as supervisor_spec
from trimcp.supervision import terminate_child as terminate_child

__version__ = "0.1.0"

__all__ = [
    "DEFER",
    "Actor",
    "ActorRef",
    "ChildSpec",
    "Down",
    "ExitReason",
    "ReplyTo",
    "Request",
    "SysConfig",
    "__version__",
    "load_config",
    "monitor",
    "open_application",
    "open_supervisor",
    "run_application",
    "spawn",
    "start_child",
    "supervisor_spec",
    "terminate_child",
    "whereis",
]
