"""MCP sessions as actors: one ``Session`` per client connection.

A session owns the wire of one connection — the sans-IO ``ServerConnection``, the
transport's ``MessageStream``, in-flight requests with their cancel scopes, its own requests
to the client — and hands requests to a ``RequestHandler`` (the server API). ``serve_stdio``
runs one session over stdin/stdout under a supervisor.

Not here: method semantics (``trimcp.server``), framing (``trimcp.transports``), the HTTP
session manager (``SessionManager``, ``_manager``).
"""

from ._context import LOG_LEVELS as LOG_LEVELS
from ._context import ProgressReporter as ProgressReporter
from ._context import RequestContext as RequestContext
from ._context import SessionHandle as SessionHandle
from ._context import SessionIdentity as SessionIdentity
from ._context import bind_identity as bind_identity
from ._describe import SessionDescription as SessionDescription
from ._describe import StreamCounter as StreamCounter
from ._describe import describe_session as describe_session
from ._describe import describe_sessions as describe_sessions
from ._handler import RequestHandler as RequestHandler
from ._inline import run_inline as run_inline
from ._listen import Listener as Listener
from ._listen_serve import ListenExtra as ListenExtra
from ._listen_serve import ListenHost as ListenHost
from ._listen_serve import serve_listen as serve_listen
from ._manager import ConnectionBound as ConnectionBound
from ._manager import ManagedStream as ManagedStream
from ._manager import ManagerStatistics as ManagerStatistics
from ._manager import SessionLimits as SessionLimits
from ._manager import SessionManager as SessionManager
from ._manager import SessionRecord as SessionRecord
from ._manager import SessionTable as SessionTable
from ._modern import ModernRequest as ModernRequest
from ._modern import RequestSink as RequestSink
from ._options import SessionOptions as SessionOptions
from ._port import ProgressCallback as ProgressCallback
from ._session import Notify as Notify
from ._session import Session as Session
from ._shutdown import SHUTTING_DOWN as SHUTTING_DOWN
from ._shutdown import SHUTTING_DOWN_MESSAGE as SHUTTING_DOWN_MESSAGE
from ._shutdown import shutting_down as shutting_down
from ._stdio import serve_session as serve_session
from ._stdio import serve_stdio as serve_stdio

__all__ = [
    "LOG_LEVELS",
    "SHUTTING_DOWN",
    "SHUTTING_DOWN_MESSAGE",
    "ConnectionBound",
    "ListenExtra",
    "ListenHost",
    "Listener",
    "ManagedStream",
    "ManagerStatistics",
    "ModernRequest",
    "Notify",
    "ProgressCallback",
    "ProgressReporter",
    "RequestContext",
    "RequestHandler",
    "RequestSink",
    "Session",
    "SessionDescription",
    "SessionHandle",
    "SessionIdentity",
    "SessionLimits",
    "SessionManager",
    "SessionOptions",
    "SessionRecord",
    "SessionTable",
    "StreamCounter",
    "bind_identity",
    "describe_session",
    "describe_sessions",
    "run_inline",
    "serve_listen",
    "serve_session",
    "serve_stdio",
    "shutting_down",
]
