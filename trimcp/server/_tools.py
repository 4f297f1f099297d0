"""Registered tools: their ``Tool`` definition and how one call runs.

A ``ToolEntry`` is built once, at registration: the function's input schema (``_schema``),
its outputSchema when the return annotation is structured, and the wire ``Tool`` object.
``ToolEntry.call`` validates and converts arguments, runs the function, and builds the
``CallToolResult``. Errors follow MCP 2025-11-25 (Tools > Error Handling): invalid
arguments and anything the tool raises become a result with ``isError: true`` the model can
read, including a ``JsonRpcError`` the client answered a sampling or elicitation request
with. Only ``UrlElicitationRequired`` (-32042, the one error the spec defines for a call that
must wait for the user) stays a protocol error. Unknown tool names are the dispatcher's
business (-32602).
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import typing
from typing import TYPE_CHECKING, Any, TypedDict

import trio

from trimcp.errors import (
    ArgumentError,
    MissingClientCapability,
    SchemaError,
    ToolError,
    UrlElicitationRequired,
)
from trimcp.protocol import ToolAnnotations
from trimcp.server._content import content_blocks, json_text
from trimcp.server._hints import classify
from trimcp.server._result import ToolResult
from trimcp.server._schema import _STRUCTURED, derive_function_schema, structured_content
from trimcp.server._validation import (
    compiled_validator,
    validate_arguments,
    validate_structured_content,
)
from trimcp.server._values import to_jsonable

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from trimcp.protocol import JsonObject
    from trimcp.server._context import Context
    from trimcp.server._schema import FunctionSchema
    from trimcp.server._tasks import TaskSupport

__all__ = ["ToolEntry", "ToolOptions", "error_result"]

logger = logging.getLogger(__name__)

# Tools > Tool Names (2025-11-25): SHOULD be 1-128 characters of A-Z a-z 0-9 _ - .
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


class ToolOptions(TypedDict, total=False):
    """Options of ``MCPServer.tool`` / ``add_tool``.

    ``structured_output``: None derives an outputSchema only for object-like return
    annotations (TypedDict, dataclass, pydantic model, ``dict[str, X]``); True also wraps
    other annotations as ``{"result": ...}``; False never declares one. ``run_in_thread``
    runs a sync function in a worker thread (``trio.to_thread.run_sync``); without it a sync
    tool runs in the session's task and must be quick. ``input_schema`` is listed as
    written instead of the schema derived from the hints (e.g. to keep ``$schema`` or
    ``$defs`` exactly), and arguments are validated against it, in its own dialect; it is
    checked at registration. ``task_support`` (2025-11-25, experimental) says whether a
    client may run the tool as a task: ``"forbidden"`` (default), ``"optional"`` or
    ``"required"``; it is listed as ``execution.taskSupport``.
    """

    title: str
    description: str
    annotations: ToolAnnotations | Mapping[str, object]
    icons: Sequence[Mapping[str, object]]
    structured_output: bool
    meta: Mapping[str, object]
    run_in_thread: bool
    input_schema: Mapping[str, object]
    task_support: TaskSupport


def error_result(message: str) -> JsonObject:
    """Return a ``CallToolResult`` reporting a tool execution error."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _structured_by_default(fn: Callable[..., object]) -> bool:
    try:
        hint = typing.get_type_hints(fn, include_extras=True).get("return")
    except (NameError, TypeError):
        return False
    if hint is None:
        return False
    if typing.get_origin(hint) is ToolResult:
        # Asking for a ToolResult is asking for structured content (unless its shape is None).
        (hint,) = typing.get_args(hint)
        if hint in (None, type(None)):
            return False
    try:
        return classify(hint).kind in _STRUCTURED
    except SchemaError:
        return False


def _annotations_wire(value: ToolAnnotations | Mapping[str, object] | None) -> JsonObject | None:
    if value is None:
        return None
    if isinstance(value, ToolAnnotations):
        return value.to_wire()
    return typing.cast("JsonObject", to_jsonable(dict(value)))


@typing.final
class ToolEntry:
    """One registered tool."""

    __slots__ = (
        "definition",
        "fn",
        "input_schema",
        "is_async",
        "name",
        "run_in_thread",
        "schema",
        "task_support",
    )

    def __init__(self, fn: Callable[..., Any], name: str | None, options: ToolOptions) -> None:
        structured = options.get("structured_output")
        if structured is None:
            structured = None if _structured_by_default(fn) else False
        self.schema: FunctionSchema = derive_function_schema(
            fn, name=name, description=options.get("description"), structured_output=structured
        )
        self.name = self.schema.name
        if not _TOOL_NAME.fullmatch(self.name):
            raise ValueError(
                f"tool name {self.name!r} must be 1-128 characters of A-Z a-z 0-9 _ - . "
                "(MCP 2025-11-25, Tools > Tool Names)"
            )
        self.input_schema: JsonObject | None = None
        if "input_schema" in options:
            self.input_schema = typing.cast(
                "JsonObject", to_jsonable(dict(options["input_schema"]))
            )
            compiled_validator(self.input_schema)  # refuse an invalid or unknown-dialect schema now
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.run_in_thread = bool(options.get("run_in_thread", False))
        self.task_support: TaskSupport = options.get("task_support", "forbidden")
        if self.task_support not in ("forbidden", "optional", "required"):
            raise ValueError(
                f"task_support must be 'forbidden', 'optional' or 'required', "
                f"not {self.task_support!r}"
            )
        if self.run_in_thread and self.is_async:
            raise ValueError("run_in_thread is for sync functions; this one is async")
        self.definition = self._definition(options)

    def _definition(self, options: ToolOptions) -> JsonObject:
        tool: JsonObject = {"name": self.name}
        if "title" in options:
            tool["title"] = options["title"]
        if self.schema.description:
            tool["description"] = self.schema.description
        if "icons" in options:
            tool["icons"] = to_jsonable([dict(icon) for icon in options["icons"]])
        tool["inputSchema"] = self.input_schema or self.schema.input_schema
        if self.schema.output is not None:
            tool["outputSchema"] = self.schema.output.schema
        annotations = _annotations_wire(options.get("annotations"))
        if annotations:
            tool["annotations"] = annotations
        if self.task_support != "forbidden":
            tool["execution"] = {"taskSupport": self.task_support}
        if "meta" in options:
            tool["_meta"] = to_jsonable(dict(options["meta"]))
        return tool

    async def call(self, arguments: object, context: Context) -> JsonObject:
        """Run the tool once and return its ``CallToolResult``.

        Raises:
            UrlElicitationRequired: raised by the tool, on purpose.
            MissingClientCapability: it needs a capability a 2026-07-28 client did not
                declare (-32021).
        """
        try:
            call = validate_arguments(self.schema, arguments, input_schema=self.input_schema)
        except ArgumentError as exc:
            problems = "; ".join(str(problem) for problem in exc.problems)
            return error_result(f"Invalid arguments for tool {self.name}: {problems}")
        kwargs = call.kwargs  # a fresh dict per call: ours to extend
        for parameter in self.schema.context_parameters:
            kwargs[parameter] = context
        try:
            if self.is_async or self.run_in_thread:
                value = await self._run(call.args, kwargs)
            else:  # the common quick sync tool: no coroutine around the call
                value = self.fn(*call.args, **kwargs)
            return self._result(value)
        except (UrlElicitationRequired, MissingClientCapability):
            # Protocol errors by design: the client must see the JSON-RPC error.
            raise
        except ToolError as exc:
            return error_result(str(exc))
        except Exception as exc:
            logger.warning("tool %s failed", self.name, exc_info=exc, extra={"tool": self.name})
            return error_result(f"Error in tool {self.name}: {str(exc) or type(exc).__name__}")

    async def _run(self, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        if self.is_async:
            return await self.fn(*args, **kwargs)
        return await trio.to_thread.run_sync(functools.partial(self.fn, *args, **kwargs))

    def _result(self, value: object) -> JsonObject:
        output = self.schema.output
        content: object = None
        if isinstance(value, ToolResult):
            content, value = value.content, value.structured
            if output is None:
                return {"content": content_blocks(content), "isError": False}
        if output is None:
            return {"content": content_blocks(value), "isError": False}
        structured = structured_content(output, value)
        validate_structured_content(output.schema, structured)
        if content is not None:
            blocks = content_blocks(content)
        else:
            # Tools > Structured Content: SHOULD also return the JSON in a text block.
            blocks = [{"type": "text", "text": json_text(structured)}]
        return {
            "content": blocks,
            "structuredContent": structured,
            "isError": False,
        }
