"""``ToolResult``: a tool's own content blocks beside its structured content.

By default a tool with a structured return annotation answers with its JSON in one text
block (MCP 2025-11-25, Server > Tools > Structured Content: the text SHOULD carry the
serialized JSON too, for clients that ignore ``structuredContent``). A tool whose readers
are models often has a better text than that JSON (grep lines, a directory tree): it
annotates its return as ``ToolResult[Shape]`` and returns ``ToolResult(text, shape_value)``;
the outputSchema still comes from ``Shape``.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

__all__ = ["ToolResult", "unwrap_tool_result"]

T = typing.TypeVar("T")


@typing.final
@dataclass(frozen=True, slots=True)
class ToolResult(typing.Generic[T]):
    """Content for the model and ``structuredContent`` for programs, from one tool call.

    Attributes:
        content: what the tool's ``content`` blocks are made of (a string, a media helper,
            or a list of them: the usual return conversion).
        structured: the value for ``structuredContent``, of the annotated ``Shape``.
    """

    content: object
    structured: T


def unwrap_tool_result(hint: object) -> object:
    """Return ``Shape`` for a ``ToolResult[Shape]`` annotation, else ``hint`` itself."""
    if typing.get_origin(hint) is ToolResult:
        (inner,) = typing.get_args(hint)
        return inner
    return hint
