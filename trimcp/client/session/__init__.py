"""``ClientSession``: one MCP session from the client's side, over any ``MessageStream``.

The handshake declares only the capabilities that have handlers; every MCP method is a
method here (with pagination, output-schema checks and timeouts reset by progress);
sampling, elicitation and roots requests from the server go to ``ClientHandlers``.
"""

from ._core import ClientSessionOptions as ClientSessionOptions
from ._handlers import ClientHandlers as ClientHandlers
from ._handlers import ElicitRequest as ElicitRequest
from ._handlers import SamplingRequest as SamplingRequest
from ._handlers import SamplingResult as SamplingResult
from ._results import CallToolResult as CallToolResult
from ._results import GetPromptResult as GetPromptResult
from ._results import LogMessage as LogMessage
from ._results import Progress as Progress
from ._results import Prompt as Prompt
from ._results import PromptArgument as PromptArgument
from ._results import Resource as Resource
from ._results import ResourceTemplate as ResourceTemplate
from ._results import Task as Task
from ._results import Tool as Tool
from ._session import ClientSession as ClientSession
from ._session import open_client_session as open_client_session
from ._session import prompt_ref as prompt_ref
from ._session import resource_ref as resource_ref

__all__ = [
    "CallToolResult",
    "ClientHandlers",
    "ClientSession",
    "ClientSessionOptions",
    "ElicitRequest",
    "GetPromptResult",
    "LogMessage",
    "Progress",
    "Prompt",
    "PromptArgument",
    "Resource",
    "ResourceTemplate",
    "SamplingRequest",
    "SamplingResult",
    "Task",
    "Tool",
    "open_client_session",
    "prompt_ref",
    "resource_ref",
]
