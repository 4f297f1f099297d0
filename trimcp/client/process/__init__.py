"""Upstream servers as child processes: launch (a sanitised environment, the command resolved
on the child's own PATH), MCP over their stdin/stdout, their stderr kept, and a bounded stop
of the whole process group (close, TERM, KILL), with launch failures and exits explained.
A ``ProcessWatch`` (``watch_processes``) learns which process was launched in its context.
"""

from ._env import child_environment as child_environment
from ._launch import ProcessSpec as ProcessSpec
from ._process import ServerProcess as ServerProcess
from ._process import open_server_process as open_server_process
from ._text import redact_arguments as redact_arguments
from ._watch import ProcessWatch as ProcessWatch
from ._watch import watch_processes as watch_processes

__all__ = [
    "ProcessSpec",
    "ProcessWatch",
    "ServerProcess",
    "child_environment",
    "open_server_process",
    "redact_arguments",
    "watch_processes",
]
