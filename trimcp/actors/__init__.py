"""The actor runtime: gen_server-style actors on trio, with no knowledge of MCP.

An actor is a trio task with a bounded mailbox, reached only through an ``ActorRef``:
``call`` (reply or typed error, always with a timeout), ``cast`` (waits for mailbox space),
``cast_nowait`` (``MailboxFull`` at once), ``send_info`` (runtime notices). Actors have
lifecycle phases from a transition table, unique names in a ``Registry``, and monitors that
deliver ``Down`` when a watched actor exits.

Not here: restarting actors (``trimcp.supervision``), anything about MCP or I/O.
"""

from ._actor import Actor as Actor
from ._actor import spawn as spawn
from ._envelope import DEFER as DEFER
from ._envelope import ReplyTo as ReplyTo
from ._exit import KILLED as KILLED
from ._exit import NOPROC as NOPROC
from ._exit import NORMAL as NORMAL
from ._exit import SHUTDOWN as SHUTDOWN
from ._exit import ExitReason as ExitReason
from ._exit import crashed as crashed
from ._mailbox import Mailbox as Mailbox
from ._mailbox import MailboxStatistics as MailboxStatistics
from ._monitor import Down as Down
from ._monitor import MonitorRef as MonitorRef
from ._monitor import demonitor as demonitor
from ._monitor import monitor as monitor
from ._phase import ACTOR_PHASES as ACTOR_PHASES
from ._phase import INITIALIZATION as INITIALIZATION
from ._phase import OPERATION as OPERATION
from ._phase import SHUTDOWN_PHASE as SHUTDOWN_PHASE
from ._phase import STARTED as STARTED
from ._phase import STOP as STOP
from ._phase import Phase as Phase
from ._phase import PhaseTable as PhaseTable
from ._ref import DEFAULT_CALL_TIMEOUT as DEFAULT_CALL_TIMEOUT
from ._ref import ActorRef as ActorRef
from ._ref import Request as Request
from ._ref import actor_of_task as actor_of_task
from ._registry import Registry as Registry
from ._registry import current_registry as current_registry
from ._registry import register as register
from ._registry import unregister as unregister
from ._registry import whereis as whereis
from ._started import StartedFlag as StartedFlag
from ._statistics import ActorStatistics as ActorStatistics

__all__ = [
    "ACTOR_PHASES",
    "DEFAULT_CALL_TIMEOUT",
    "DEFER",
    "INITIALIZATION",
    "KILLED",
    "NOPROC",
    "NORMAL",
    "OPERATION",
    "SHUTDOWN",
    "SHUTDOWN_PHASE",
    "STARTED",
    "STOP",
    "Actor",
    "ActorRef",
    "ActorStatistics",
    "Down",
    "ExitReason",
    "Mailbox",
    "MailboxStatistics",
    "MonitorRef",
    "Phase",
    "PhaseTable",
    "Registry",
    "ReplyTo",
    "Request",
    "StartedFlag",
    "actor_of_task",
    "crashed",
    "current_registry",
    "demonitor",
    "monitor",
    "register",
    "spawn",
    "unregister",
    "whereis",
]
