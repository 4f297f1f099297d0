"""The client side of MCP: sessions to servers, and a supervised host of many servers.

* ``open_client_session(stream)`` -> ``ClientSession``: one server, every MCP method, over
  any ``MessageStream``: a launched process (``open_server_process``), WebSocket
  (``trimcp.transports.open_websocket_stream``) or Streamable HTTP.
* ``ConnectionManager``: the servers of an ``mcpServers`` configuration
  (``load_client_config``), each kept connected by a supervised ``Connection`` actor that
  reconnects with backoff; their tools as ``mcp__<server>__<tool>``, guarded by a
  ``PermissionPolicy`` and exportable to LLM APIs (``export_tools``).

Failures are explained in plain words: configuration problems name the file, server, field
and fix; launch failures and crashes name the command, exit status and last stderr lines.
The exceptions are ``trimcp.errors``'; the payloads the server speaks too (``Root``,
``ElicitResult``, ``ToolAnnotations``, ``ResourceContents``, ``PromptMessage``,
``Completion``, ``Page``) are ``trimcp.protocol``'s, re-exported here.
"""

# The mcpServers configuration and the HTTP transports, with the rest of their kind.
from trimcp.config.mcp_servers import ClientConfig as ClientConfig
from trimcp.config.mcp_servers import ConfigDiff as ConfigDiff
from trimcp.config.mcp_servers import ConfigReport as ConfigReport
from trimcp.config.mcp_servers import ConfigSource as ConfigSource
from trimcp.config.mcp_servers import ServerConfig as ServerConfig
from trimcp.config.mcp_servers import client_config_from_mapping as client_config_from_mapping
from trimcp.config.mcp_servers import default_config_sources as default_config_sources
from trimcp.config.mcp_servers import diff_configs as diff_configs
from trimcp.config.mcp_servers import expand_server as expand_server
from trimcp.config.mcp_servers import inspect_client_config as inspect_client_config
from trimcp.config.mcp_servers import load_client_config as load_client_config

# The payloads the server side speaks too, defined once in the protocol core.
from trimcp.protocol import Completion as Completion
from trimcp.protocol import ElicitResult as ElicitResult
from trimcp.protocol import Page as Page
from trimcp.protocol import PromptMessage as PromptMessage
from trimcp.protocol import ResourceContents as ResourceContents
from trimcp.protocol import Root as Root
from trimcp.protocol import ToolAnnotations as ToolAnnotations
from trimcp.transports.http_client import HttpClientStream as HttpClientStream
from trimcp.transports.http_client import LegacySseClientStream as LegacySseClientStream
from trimcp.transports.http_client import ReconnectPolicy as ReconnectPolicy
from trimcp.transports.http_client import open_http_client_stream as open_http_client_stream
from trimcp.transports.http_client import (
    open_legacy_sse_client_stream as open_legacy_sse_client_stream,
)

from ._backoff import BackoffPolicy as BackoffPolicy
from ._connection import CatalogKind as CatalogKind
from ._connection import ConnectionState as ConnectionState
from ._connection import ConnectionStatus as ConnectionStatus
from ._connection import Connector as Connector
from ._connection import Upstream as Upstream
from ._manager import ConnectionManager as ConnectionManager
from ._naming import qualify as qualify
from ._naming import split_qualified as split_qualified
from ._permissions import CallRequest as CallRequest
from ._permissions import Decision as Decision
from ._permissions import PermissionPolicy as PermissionPolicy
from ._permissions import PermissionRule as PermissionRule
from ._tool_export import EXPORT_FORMATS as EXPORT_FORMATS
from ._tool_export import ExportFormat as ExportFormat
from ._tool_export import HostTool as HostTool
from ._tool_export import export_tools as export_tools
from ._upstream import SessionUpstream as SessionUpstream
from ._upstream import connect_upstream as connect_upstream
from .process import ProcessSpec as ProcessSpec
from .process import ServerProcess as ServerProcess
from .process import child_environment as child_environment
from .process import open_server_process as open_server_process
from .session import CallToolResult as CallToolResult
from .session import ClientHandlers as ClientHandlers
from .session import ClientSession as ClientSession
from .session import ClientSessionOptions as ClientSessionOptions
from .session import ElicitRequest as ElicitRequest
from .session import GetPromptResult as GetPromptResult
from .session import LogMessage as LogMessage
from .session import Progress as Progress
from .session import Prompt as Prompt
from .session import PromptArgument as PromptArgument
from .session import Resource as Resource
from .session import ResourceTemplate as ResourceTemplate
from .session import SamplingRequest as SamplingRequest
from .session import SamplingResult as SamplingResult
from .session import Task as Task
from .session import Tool as Tool
from .session import open_client_session as open_client_session
from .session import prompt_ref as prompt_ref
from .session import resource_ref as resource_ref

__all__ = [
    "EXPORT_FORMATS",
    "BackoffPolicy",
    "CallRequest",
    "CallToolResult",
    "CatalogKind",
    "ClientConfig",
    "ClientHandlers",
    "ClientSession",
    "ClientSessionOptions",
    "Completion",
    "ConfigDiff",
    "ConfigReport",
    "ConfigSource",
    "ConnectionManager",
    "ConnectionState",
    "ConnectionStatus",
    "Connector",
    "Decision",
    "ElicitRequest",
    "ElicitResult",
    "ExportFormat",
    "GetPromptResult",
    "HostTool",
    "HttpClientStream",
    "LegacySseClientStream",
    "LogMessage",
    "Page",
    "PermissionPolicy",
    "PermissionRule",
    "ProcessSpec",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReconnectPolicy",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Root",
    "SamplingRequest",
    "SamplingResult",
    "ServerConfig",
    "ServerProcess",
    "SessionUpstream",
    "Task",
    "Tool",
    "ToolAnnotations",
    "Upstream",
    "child_environment",
    "client_config_from_mapping",
    "connect_upstream",
    "default_config_sources",
    "diff_configs",
    "expand_server",
    "export_tools",
    "inspect_client_config",
    "load_client_config",
    "open_client_session",
    "open_http_client_stream",
    "open_legacy_sse_client_stream",
    "open_server_process",
    "prompt_ref",
    "qualify",
    "resource_ref",
    "split_qualified",
]
