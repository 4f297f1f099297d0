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

# The payloads the server side speaks too, defined once in the protocol core.
from trimcp.protocol import Completion as Completion
from trimcp.protocol import ElicitResult as ElicitResult
from trimcp.protocol import Page as Page
from trimcp.protocol import PromptMessage as PromptMessage
from trimcp.protocol import ResourceContents as ResourceContents
from trimcp.protocol import Root as Root
from trimcp.protocol import ToolAnnotations as ToolAnnotations

from ._backoff import BackoffPolicy as BackoffPolicy
from ._config_expand import expand_server as expand_server
from ._config_files import ConfigReport as ConfigReport
from ._config_files import client_config_from_mapping as client_config_from_mapping
from ._config_files import default_config_sources as default_config_sources
from ._config_files import inspect_client_config as inspect_client_config
from ._config_files import load_client_config as load_client_config
from ._config_model import ClientConfig as ClientConfig
from ._config_model import ConfigDiff as ConfigDiff
from ._config_model import ConfigSource as ConfigSource
from ._config_model import ServerConfig as ServerConfig
from ._config_model import diff_configs as diff_configs
from ._connection import CatalogKind as CatalogKind
from ._connection import ConnectionState as ConnectionState
from ._connection import ConnectionStatus as ConnectionStatus
from ._connection import Connector as Connector
from ._connection import Upstream as Upstream
from ._http import HttpClientStream as HttpClientStream
from ._http import open_http_client_stream as open_http_client_stream
from ._http_legacy import LegacySseClientStream as LegacySseClientStream
from ._http_legacy import open_legacy_sse_client_stream as open_legacy_sse_client_stream
from ._http_resume import ReconnectPolicy as ReconnectPolicy
from ._manager import ConnectionManager as ConnectionManager
from ._naming import qualify as qualify
from ._naming import split_qualified as split_qualified
from ._permissions import CallRequest as CallRequest
from ._permissions import Decision as Decision
from ._permissions import PermissionPolicy as PermissionPolicy
from ._permissions import PermissionRule as PermissionRule
from ._process import ServerProcess as ServerProcess
from ._process import open_server_process as open_server_process
from ._process_env import child_environment as child_environment
from ._process_launch import ProcessSpec as ProcessSpec
from ._session import ClientSession as ClientSession
from ._session import open_client_session as open_client_session
from ._session import prompt_ref as prompt_ref
from ._session import resource_ref as resource_ref
from ._session_core import ClientSessionOptions as ClientSessionOptions
from ._session_handlers import ClientHandlers as ClientHandlers
from ._session_handlers import ElicitRequest as ElicitRequest
from ._session_handlers import SamplingRequest as SamplingRequest
from ._session_handlers import SamplingResult as SamplingResult
from ._session_results import CallToolResult as CallToolResult
from ._session_results import GetPromptResult as GetPromptResult
from ._session_results import LogMessage as LogMessage
from ._session_results import Progress as Progress
from ._session_results import Prompt as Prompt
from ._session_results import PromptArgument as PromptArgument
from ._session_results import Resource as Resource
from ._session_results import ResourceTemplate as ResourceTemplate
from ._session_results import Task as Task
from ._session_results import Tool as Tool
from ._tool_export import EXPORT_FORMATS as EXPORT_FORMATS
from ._tool_export import ExportFormat as ExportFormat
from ._tool_export import HostTool as HostTool
from ._tool_export import export_tools as export_tools
from ._upstream import SessionUpstream as SessionUpstream
from ._upstream import connect_upstream as connect_upstream

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
