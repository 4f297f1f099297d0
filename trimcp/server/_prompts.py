"""Registered prompts: their ``Prompt`` definition and rendering ``prompts/get``.

Arguments come from the function's parameters: a parameter without a default is
``required``; descriptions come from the docstring's ``Args:`` section. Prompt arguments
are strings on the wire (Prompts > Data Types); a parameter annotated ``int``, ``float``,
``bool`` (or another convertible hint) is converted from its text, and a failure is -32602
like an unknown prompt or a missing required argument (Prompts > Error Handling).

A prompt function returns a ``str`` (one user message), a ``PromptMessage``, a wire dict
``{"role", "content"}``, or a list of these; a message's content is a ``str``, a helper
from ``_content`` (``Image``, ``Audio``, ``EmbeddedResource``, ``ResourceLink``) or a wire
content block.
"""

from __future__ import annotations

import inspect
import typing
from typing import TYPE_CHECKING, Any, TypedDict

from trimcp.errors import InvalidParams
from trimcp.protocol import PromptMessage
from trimcp.server._content import content_block, wire_message
from trimcp.server._docstrings import parse_docstring
from trimcp.server._resources import convert_text
from trimcp.server._schema import ContextMarker
from trimcp.server._values import to_jsonable

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from trimcp.protocol import JsonObject, JsonValue
    from trimcp.server._context import Context

__all__ = ["PromptEntry", "PromptOptions"]


class PromptOptions(TypedDict, total=False):
    """Options of ``MCPServer.prompt`` / ``add_prompt``."""

    title: str
    description: str
    icons: Sequence[Mapping[str, object]]
    meta: Mapping[str, object]


def _message(item: object) -> JsonValue:
    if isinstance(item, PromptMessage):
        return wire_message(item)
    if isinstance(item, dict) and "role" in item and "content" in item:
        return {"role": to_jsonable(item["role"]), "content": content_block(item["content"])}
    return wire_message(PromptMessage("user", item))


def messages_of(value: object) -> list[JsonValue]:
    """Turn a prompt function's return value into ``messages``."""
    items = value if isinstance(value, list | tuple) else [value]
    return [_message(item) for item in items]


@typing.final
class PromptEntry:
    """One registered prompt."""

    __slots__ = ("arguments", "context", "definition", "fn", "hints", "name", "required")

    def __init__(self, fn: Callable[..., Any], name: str | None, options: PromptOptions) -> None:
        self.fn = fn
        self.name = name or str(getattr(fn, "__name__", "prompt"))
        self.hints: dict[str, Any] = typing.get_type_hints(fn, include_extras=True)
        doc = parse_docstring(inspect.getdoc(fn))
        self.context: list[str] = []
        self.arguments: list[str] = []
        self.required: list[str] = []
        wire_arguments: list[JsonValue] = []
        for param in inspect.signature(fn).parameters.values():
            hint = self.hints.get(param.name)
            if isinstance(hint, type) and issubclass(hint, ContextMarker):
                self.context.append(param.name)
                continue
            argument: JsonObject = {"name": param.name}
            if param.name in doc.params:
                argument["description"] = doc.params[param.name]
            if param.default is inspect.Parameter.empty:
                argument["required"] = True
                self.required.append(param.name)
            self.arguments.append(param.name)
            wire_arguments.append(argument)
        self.definition = self._definition(options, doc.description, wire_arguments)

    def _definition(
        self, options: PromptOptions, doc: str | None, arguments: list[JsonValue]
    ) -> JsonObject:
        definition: JsonObject = {"name": self.name}
        pairs: dict[str, object] = {
            "title": options.get("title"),
            "description": options.get("description") or doc,
            "icons": options.get("icons"),
            "_meta": options.get("meta"),
        }
        definition.update({k: to_jsonable(v) for k, v in pairs.items() if v is not None})
        if arguments:
            definition["arguments"] = arguments
        return definition

    def _kwargs(self, arguments: object) -> dict[str, object]:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParams("prompt arguments must be an object of strings")
        missing = [name for name in self.required if name not in arguments]
        if missing:
            raise InvalidParams(f"Missing required argument(s) for prompt {self.name}: {missing}")
        unknown = sorted(set(arguments) - set(self.arguments))
        if unknown:
            raise InvalidParams(f"Unknown argument(s) for prompt {self.name}: {unknown}")
        try:
            return {
                key: convert_text(self.hints.get(key, str), value, key)
                for key, value in arguments.items()
            }
        except ValueError as exc:
            raise InvalidParams(f"Invalid argument for prompt {self.name}: {exc}") from exc

    async def render(self, arguments: object, context: Context) -> JsonObject:
        """Run the prompt function and return the ``GetPromptResult``.

        Raises:
            InvalidParams: missing, unknown or unconvertible arguments.
        """
        kwargs = self._kwargs(arguments)
        for name in self.context:
            kwargs[name] = context
        value = self.fn(**kwargs)
        if inspect.isawaitable(value):
            value = await value
        result: JsonObject = {}
        description = self.definition.get("description")
        if description is not None:
            result["description"] = description
        result["messages"] = messages_of(value)
        return result
