"""``ToolBook``: what one session learnt about the server's tools from ``tools/list``.

Two things ride on a tool's definition after it was listed. Its ``outputSchema``, against
which a later call's ``structuredContent`` is checked (``check_output``). And, towards a
2026-07-28 server over Streamable HTTP, its ``x-mcp-header`` annotations: the parameters
the transport mirrors into ``Mcp-Param-{Name}`` headers (handed to the stream's
``ToolHeaderSink``), and the rule that a tool whose annotations are invalid "MUST" be left
out of ``tools/list``, with a warning naming the tool and why, logged once per session
(2026-07-28, Tools > x-mcp-header,
https://modelcontextprotocol.io/specification/2026-07-28/server/tools#x-mcp-header). Over
other transports, and towards servers of earlier revisions, annotations mean nothing and
no tool is left out ("Clients using other transports MAY ignore x-mcp-header").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, final

import jsonschema

from trimcp.errors import ToolOutputInvalid
from trimcp.protocol import header_annotation_problems, header_parameters

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject
    from trimcp.transports.http_client import ToolHeaderSink

    from ._results import CallToolResult, Tool

__all__ = ["ToolBook"]

logger = logging.getLogger(__name__)


@final
class ToolBook:
    """The tools of one session, as far as calls depend on them (module docstring)."""

    def __init__(self) -> None:
        self._output_schemas: dict[str, JsonObject | None] = {}
        self._warned: set[tuple[str, str]] = set()
        # The stream that mirrors x-mcp-header parameters, while the session is modern.
        self.headers: ToolHeaderSink | None = None

    def knows(self, name: str) -> bool:
        """Tell whether ``name`` was listed (and admitted) since the last change."""
        return name in self._output_schemas

    def admit(self, tool: Tool) -> bool:
        """Record ``tool``; False when it must be left out of the listing (module docstring)."""
        sink = self.headers
        if sink is not None:
            problems = header_annotation_problems(tool.input_schema)
            if problems:
                self._warn(tool.name, "; ".join(problems))
                return False
            sink.set_tool_headers(tool.name, header_parameters(tool.input_schema))
        self._output_schemas[tool.name] = tool.output_schema
        return True

    def forget(self) -> None:
        """Forget every tool (``notifications/tools/list_changed``, a new era)."""
        self._output_schemas.clear()
        if self.headers is not None:
            self.headers.forget_tool_headers()

    def _warn(self, name: str, reasons: str) -> None:
        if (name, reasons) in self._warned:
            return
        self._warned.add((name, reasons))
        logger.warning(
            "left tool %r out of tools/list: its x-mcp-header annotations are invalid (%s)",
            name,
            reasons,
        )

    def check_output(self, name: str, result: CallToolResult) -> None:
        """Validate ``result`` against the known ``outputSchema`` of tool ``name``.

        Raises:
            ToolOutputInvalid: no ``structuredContent`` though the tool declares a schema,
                a schema that is itself invalid, or content that does not match it.
        """
        schema = self._output_schemas.get(name)
        if schema is None or result.is_error:
            return
        if result.structured_content is None:
            raise ToolOutputInvalid(
                name, "no structuredContent, though the tool declares an outputSchema", result
            )
        try:
            validator_class = jsonschema.validators.validator_for(
                schema, default=jsonschema.Draft202012Validator
            )
            error = jsonschema.exceptions.best_match(
                validator_class(schema).iter_errors(result.structured_content)
            )
        except jsonschema.SchemaError as exc:
            raise ToolOutputInvalid(
                name, f"its outputSchema is invalid: {exc.message}", result
            ) from exc
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "(root)"
            raise ToolOutputInvalid(name, f"at {where}: {error.message}", result)
