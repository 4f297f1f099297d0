"""Argument completion (``completion/complete``): references, results and the handler type.

One handler per server (``@server.completion()``) receives a ``PromptRef`` or a
``ResourceTemplateRef``, the argument's name and partial value, and the arguments already
resolved (``context.arguments``, 2025-06-18 and later). It returns a list of strings or a
``Completion``; at most 100 values go out (Completion > Result: ``values`` max 100), and
when more were offered ``hasMore`` is set and ``total`` counts them.
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from trimcp.errors import InvalidParams
from trimcp.protocol import Completion

if typing.TYPE_CHECKING:
    from trimcp.protocol import JsonObject

__all__ = [
    "MAX_COMPLETION_VALUES",
    "CompletionHandler",
    "PromptRef",
    "ResourceTemplateRef",
    "completion_result",
    "read_completion_request",
]

#: Completion > Result: ``values`` holds at most 100 items.
MAX_COMPLETION_VALUES = 100


@typing.final
@dataclass(frozen=True, slots=True)
class PromptRef:
    """``{"type": "ref/prompt", "name": ...}``."""

    name: str


@typing.final
@dataclass(frozen=True, slots=True)
class ResourceTemplateRef:
    """``{"type": "ref/resource", "uri": ...}`` (a URI template or a URI)."""

    uri: str


CompletionHandler = Callable[
    [PromptRef | ResourceTemplateRef, str, str, Mapping[str, str]],
    Awaitable[Sequence[str] | Completion],
]


@typing.final
@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """The checked params of one ``completion/complete``."""

    ref: PromptRef | ResourceTemplateRef
    argument_name: str
    argument_value: str
    context_arguments: Mapping[str, str]


def _ref(raw: object) -> PromptRef | ResourceTemplateRef:
    if isinstance(raw, dict):
        if raw.get("type") == "ref/prompt" and isinstance(raw.get("name"), str):
            return PromptRef(str(raw["name"]))
        if raw.get("type") == "ref/resource" and isinstance(raw.get("uri"), str):
            return ResourceTemplateRef(str(raw["uri"]))
    raise InvalidParams("ref must be a ref/prompt with a name or a ref/resource with a uri")


def read_completion_request(params: JsonObject) -> CompletionRequest:
    """Check and read ``completion/complete`` params.

    Raises:
        InvalidParams: a malformed ``ref``, ``argument`` or ``context``.
    """
    ref = _ref(params.get("ref"))
    argument = params.get("argument")
    if not (
        isinstance(argument, dict)
        and isinstance(argument.get("name"), str)
        and isinstance(argument.get("value"), str)
    ):
        raise InvalidParams("argument must be an object with string name and value")
    context = params.get("context")
    resolved = context.get("arguments") if isinstance(context, dict) else None
    arguments = {str(k): str(v) for k, v in resolved.items()} if isinstance(resolved, dict) else {}
    return CompletionRequest(ref, str(argument["name"]), str(argument["value"]), arguments)


def completion_result(answer: Sequence[str] | Completion) -> JsonObject:
    """Build ``{"completion": {...}}``, cutting ``values`` to 100 (then ``hasMore``)."""
    completion = answer if isinstance(answer, Completion) else Completion(values=list(answer))
    values = [str(value) for value in completion.values]
    total, has_more = completion.total, completion.has_more
    if len(values) > MAX_COMPLETION_VALUES:
        total = total if total is not None else len(values)
        values, has_more = values[:MAX_COMPLETION_VALUES], True
    return {"completion": Completion(values=values, total=total, has_more=has_more).to_wire()}
