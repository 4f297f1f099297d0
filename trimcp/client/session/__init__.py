"""``ClientSession``: one MCP session from the client's side, over any ``MessageStream``.

Dual-era: a 2026-07-28 server is spoken to per request (``server/discover``, ``_meta`` on
every request, multi round-trip results, ``subscriptions/listen``), an older one through
the ``initialize`` handshake; the era of each server is found out once and remembered
(``EraCache``). Only the capabilities that have handlers are declared; every MCP method is
a method here (with pagination, list caching, output-schema checks and timeouts reset by
progress); sampling, elicitation and roots go to ``ClientHandlers`` whether the server
asks with a request (2025-11-25) or an ``InputRequiredResult`` (2026-07-28).
"""

from ._eracache import DEFAULT_ERA_CACHE as DEFAULT_ERA_CACHE
from ._eracache import EraCache as EraCache
from ._handlers import ClientHandlers as ClientHandlers
from ._handlers import ElicitRequest as ElicitRequest
from ._handlers import SamplingRequest as SamplingRequest
from ._handlers import SamplingResult as SamplingResult
from ._open import open_client_session as open_client_session
from ._options import ClientSessionOptions as ClientSessionOptions
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
from ._session import prompt_ref as prompt_ref
from ._session import resource_ref as resource_ref

__all__ = [
    "DEFAULT_ERA_CACHE",
    "CallToolResult",
    "ClientHandlers",
    "ClientSession",
    "ClientSessionOptions",
    "ElicitRequest",
    "EraCache",
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
