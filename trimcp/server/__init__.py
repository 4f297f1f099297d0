"""User-facing server API: ``MCPServer`` and its decorators, on top of the sessions layer.

``MCPServer`` implements ``trimcp.sessions.RequestHandler``: ``@server.tool()``,
``@server.resource(uri)``, ``@server.prompt()`` and ``@server.completion()`` register plain
(sync or async) functions; schemas come from type hints, arguments are validated and
converted before a call, results become content blocks, and a ``Context`` parameter gives a
function progress, logging, cancellation and the client's sampling, elicitation and roots.
``server.run_stdio()`` serves one client over stdio; the runners (and the daemon) start a
``NotificationHub`` beside the listeners, so a slow client never delays the others' notifications.

Modules: ``_server`` (``MCPServer``), ``_catalog`` (registries), ``_dispatch`` (one
function per method), ``_tools``, ``_resources``, ``_prompts``, ``_completion``,
``_content`` (content helpers and conversion), ``_context`` (``Context``),
``_client_features`` (sampling/elicitation/roots params and results), ``_broadcast``
(sessions, resource subscriptions, and how list_changed, resources/updated and server-wide
log notifications reach them: through a ``trimcp.notify`` hub, or directly), ``_fanout`` (the
actor that keeps the sessions subscribed to the hub), and the pure building blocks:
``_schema`` (JSON Schema from signatures), ``_validation`` and ``_conversion`` (arguments),
``_uri_template`` (RFC 6570), ``_pagination`` (opaque cursors); ``_run`` (``run_server``,
which ``run_http``, ``run_stdio`` and ``trimcp run`` run under, with an exit status).

Defined elsewhere and re-exported here: the payloads the client speaks too
(``ToolAnnotations``, ``ResourceContents``, ``PromptMessage``, ``Completion``, ``Page``,
``Root``, ``ElicitResult``: ``trimcp.protocol``) and this API's exceptions (``ToolError``,
``SchemaError``, ...: ``trimcp.errors``).

The experimental tasks feature of 2025-11-25 is offered per tool
(``@server.tool(task_support="optional" | "required")``, bounded by ``TaskPolicy``;
``_tasks``). On 2026-07-28 requests the same tools are tasks of the Tasks extension
(SEP-2663: ``tasks/get``, ``tasks/update``, ``tasks/cancel``; ``Context.continue_as_task``;
bounded by ``TasksExtensionPolicy``; ``_tasks_ext``, its store and its runner). Not here:
the wire and the lifecycle (``trimcp.sessions``, ``trimcp.protocol``) and transports. The
in-memory test client is ``trimcp.testing.open_in_memory_client``.
"""

from __future__ import annotations

# The server API's exceptions, which live with every other in trimcp.errors.
from trimcp.errors import ArgumentError as ArgumentError
from trimcp.errors import ArgumentProblem as ArgumentProblem
from trimcp.errors import ClientCapabilityMissing as ClientCapabilityMissing
from trimcp.errors import ElicitationError as ElicitationError
from trimcp.errors import InvalidCursor as InvalidCursor
from trimcp.errors import OutputError as OutputError
from trimcp.errors import SchemaError as SchemaError
from trimcp.errors import TemplateError as TemplateError
from trimcp.errors import ToolError as ToolError
from trimcp.errors import UnsupportedDialect as UnsupportedDialect

# The payloads the client side speaks too, defined once in the protocol core.
from trimcp.protocol import Completion as Completion
from trimcp.protocol import ElicitResult as ElicitResult
from trimcp.protocol import Page as Page
from trimcp.protocol import PromptMessage as PromptMessage
from trimcp.protocol import ResourceContents as ResourceContents
from trimcp.protocol import Root as Root
from trimcp.protocol import ToolAnnotations as ToolAnnotations

from ._cache_hints import CacheHint as CacheHint
from ._cache_hints import CachePolicy as CachePolicy
from ._client_features import SampleResult as SampleResult
from ._client_features import SamplingOptions as SamplingOptions
from ._completion import CompletionHandler as CompletionHandler
from ._completion import PromptRef as PromptRef
from ._completion import ResourceTemplateRef as ResourceTemplateRef
from ._content import Audio as Audio
from ._content import EmbeddedResource as EmbeddedResource
from ._content import Image as Image
from ._content import ResourceLink as ResourceLink
from ._context import Context as Context
from ._docstrings import Docstring as Docstring
from ._docstrings import parse_docstring as parse_docstring
from ._pagination import CursorCodec as CursorCodec
from ._pagination import Paginator as Paginator
from ._pagination import snapshot_of as snapshot_of
from ._prompts import PromptOptions as PromptOptions
from ._request_state import RequestStateKeys as RequestStateKeys
from ._request_state import RequestStateSealer as RequestStateSealer
from ._request_state import StateBinding as StateBinding
from ._request_state import generate_key as generate_key
from ._request_state import params_digest as params_digest
from ._resources import ResourceOptions as ResourceOptions
from ._result import ToolResult as ToolResult
from ._run import INTERRUPTED as INTERRUPTED
from ._run import StopSignal as StopSignal
from ._run import listen_error as listen_error
from ._run import run_server as run_server
from ._schema import FunctionSchema as FunctionSchema
from ._schema import OutputSpec as OutputSpec
from ._schema import Param as Param
from ._schema import ParameterSpec as ParameterSpec
from ._schema import derive_function_schema as derive_function_schema
from ._schema import derive_output_schema as derive_output_schema
from ._schema import schema_for_type as schema_for_type
from ._schema import structured_content as structured_content
from ._schema import to_jsonable as to_jsonable
from ._server import MCPServer as MCPServer
from ._server import MCPServerOptions as MCPServerOptions
from ._tasks import TaskCounts as TaskCounts
from ._tasks import TaskPolicy as TaskPolicy
from ._tasks_ext_store import TasksExtensionPolicy as TasksExtensionPolicy
from ._tools import ToolOptions as ToolOptions
from ._uri_template import UriTemplate as UriTemplate
from ._validation import CallArguments as CallArguments
from ._validation import validate_arguments as validate_arguments
from ._validation import validate_structured_content as validate_structured_content

__all__ = [
    "INTERRUPTED",
    "ArgumentError",
    "ArgumentProblem",
    "Audio",
    "CacheHint",
    "CachePolicy",
    "CallArguments",
    "ClientCapabilityMissing",
    "Completion",
    "CompletionHandler",
    "Context",
    "CursorCodec",
    "Docstring",
    "ElicitResult",
    "ElicitationError",
    "EmbeddedResource",
    "FunctionSchema",
    "Image",
    "InvalidCursor",
    "MCPServer",
    "MCPServerOptions",
    "OutputError",
    "OutputSpec",
    "Page",
    "Paginator",
    "Param",
    "ParameterSpec",
    "PromptMessage",
    "PromptOptions",
    "PromptRef",
    "RequestStateKeys",
    "RequestStateSealer",
    "ResourceContents",
    "ResourceLink",
    "ResourceOptions",
    "ResourceTemplateRef",
    "Root",
    "SampleResult",
    "SamplingOptions",
    "SchemaError",
    "StateBinding",
    "StopSignal",
    "TaskCounts",
    "TaskPolicy",
    "TasksExtensionPolicy",
    "TemplateError",
    "ToolAnnotations",
    "ToolError",
    "ToolOptions",
    "ToolResult",
    "UnsupportedDialect",
    "UriTemplate",
    "derive_function_schema",
    "derive_output_schema",
    "generate_key",
    "listen_error",
    "params_digest",
    "parse_docstring",
    "run_server",
    "schema_for_type",
    "snapshot_of",
    "structured_content",
    "to_jsonable",
    "validate_arguments",
    "validate_structured_content",
]
