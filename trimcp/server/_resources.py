"""Registered resources and resource templates, and reading them.

``@server.resource(uri)`` registers a static resource when ``uri`` has no ``{}``
expression, else a template (RFC 6570, ``UriTemplate``): ``resources/read`` of a concrete
URI tries static resources first, then templates in registration order, and calls the
function with the matched variables as keyword arguments, converted by its type hints
(``int``, ``float``, ``bool`` are parsed from the URI text; other hints go through
argument conversion). A URI nothing matches, or whose variables do not convert, is -32002
with ``data.uri`` (Resources > Error Handling).

What a resource function returns: ``str`` -> one text item, ``bytes`` -> one ``blob`` item
(base64 on the wire), a ``ResourceContents`` or a list of them -> as given (sub-resources
carry their own URI), anything else JSON-able -> its JSON text (``application/json``).

Two hooks let a template stand for resources that come and go (the files of a folder, say):
``list_with`` adds the template's concrete resources to ``resources/list`` after the static
ones, and ``on_subscribe`` sees each ``resources/subscribe`` of a URI the entry matches before
it is recorded, and may refuse it by raising a ``JsonRpcError`` (MCP 2025-11-25, Server >
Resources > Subscriptions,
https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions).
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from trimcp.errors import ArgumentError, ResourceNotFound
from trimcp.protocol import ResourceContents
from trimcp.server._content import json_text
from trimcp.server._conversion import convert_value
from trimcp.server._docstrings import parse_docstring
from trimcp.server._schema import ContextMarker
from trimcp.server._uri_template import UriTemplate
from trimcp.server._values import to_jsonable

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from trimcp.protocol import JsonObject
    from trimcp.server._context import Context

#: ``list_with``: ``lister(context, fresh)`` returns the resources a template stands for now,
#: each a ``Resource`` mapping (``uri`` and ``name`` at least; ``mimeType``, ``size``, ...).
#: ``fresh`` is True for a first page (no cursor): list anew; False when the client goes on
#: with a cursor, so the lister may give again the listing that cursor's pages came from (the
#: pages then stay consistent with each other).
ResourceLister: typing.TypeAlias = (
    "Callable[[Context, bool], Awaitable[Sequence[Mapping[str, object]]]]"
)
#: ``on_subscribe``: ``hook(uri, context)`` before a subscription to ``uri`` is recorded.
SubscribeHook: typing.TypeAlias = "Callable[[str, Context], Awaitable[None]]"

__all__ = [
    "ResourceEntry",
    "ResourceLister",
    "ResourceOptions",
    "SubscribeHook",
    "contents_of",
    "convert_text",
]


class ResourceOptions(TypedDict, total=False):
    """Options of ``MCPServer.resource`` / ``add_resource``.

    ``size`` is the raw size in bytes (static resources only); ``mime_type`` is declared
    in the listing and used for returned items that do not name their own. ``list_with``
    (templates only) and ``on_subscribe`` are the hooks of the module docstring.
    """

    name: str
    title: str
    description: str
    mime_type: str
    icons: Sequence[Mapping[str, object]]
    annotations: Mapping[str, object]
    size: int
    meta: Mapping[str, object]
    list_with: ResourceLister
    on_subscribe: SubscribeHook


_PARSERS: dict[object, Callable[[str], object]] = {
    int: int,
    float: float,
    bool: lambda text: {"true": True, "false": False, "1": True, "0": False}[text.lower()],
}


def convert_text(hint: object, value: object, name: str) -> object:
    """Convert a string-valued argument (URI variable, prompt argument) by its hint.

    Raises:
        ValueError: the text does not convert.
    """
    parse = _PARSERS.get(hint)
    try:
        if parse is not None and isinstance(value, str):
            return parse(value)
        return convert_value(hint, value, (name,))
    except (ArgumentError, KeyError, ValueError) as exc:
        raise ValueError(f"{name}: {exc}") from exc


def contents_of(uri: str, value: object, mime_type: str | None) -> list[JsonObject]:
    """Turn a resource function's return value into ``contents`` (module docstring)."""
    if isinstance(value, ResourceContents):
        value = [value]
    if isinstance(value, list) and value and all(isinstance(v, ResourceContents) for v in value):
        return [item.to_wire() for item in value]
    if isinstance(value, str):
        item = ResourceContents(uri=uri, text=value, mime_type=mime_type)
    elif isinstance(value, bytes | bytearray):
        item = ResourceContents(uri=uri, blob=bytes(value), mime_type=mime_type)
    else:
        text = json_text(to_jsonable(value))
        item = ResourceContents(uri=uri, text=text, mime_type=mime_type or "application/json")
    return [item.to_wire()]


@typing.final
@dataclass(frozen=True, slots=True)
class _Signature:
    hints: dict[str, Any]
    context: tuple[str, ...]
    parameters: tuple[str, ...]


def _signature(fn: Callable[..., object]) -> _Signature:
    hints = typing.get_type_hints(fn, include_extras=True)
    context: list[str] = []
    parameters: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name)
        if isinstance(hint, type) and issubclass(hint, ContextMarker):
            context.append(param.name)
        else:
            parameters.append(param.name)
    return _Signature(hints, tuple(context), tuple(parameters))


@typing.final
class ResourceEntry:
    """One registered resource or template (``template`` is None for a static one)."""

    __slots__ = (
        "definition",
        "fn",
        "key",
        "lister",
        "mime_type",
        "on_subscribe",
        "signature",
        "template",
    )

    def __init__(self, uri: str, fn: Callable[..., Any], options: ResourceOptions) -> None:
        parsed = UriTemplate(uri)
        self.template = parsed if parsed.is_template else None
        self.key = uri
        self.fn = fn
        self.mime_type = options.get("mime_type")
        self.lister = options.get("list_with")
        self.on_subscribe = options.get("on_subscribe")
        if self.lister is not None and self.template is None:
            raise ValueError(f"resource {uri!r}: list_with is for templates only")
        self.signature = _signature(fn)
        self._check_parameters()
        self.definition = self._definition(uri, options)

    def _check_parameters(self) -> None:
        variables = set(self.template.variable_names) if self.template else set()
        parameters = set(self.signature.parameters)
        if parameters != variables:
            raise ValueError(
                f"resource {self.key!r}: function parameters {sorted(parameters)} must be the "
                f"URI template variables {sorted(variables)} (plus Context parameters)"
            )

    def _definition(self, uri: str, options: ResourceOptions) -> JsonObject:
        doc = parse_docstring(inspect.getdoc(self.fn))
        definition: JsonObject = {"uriTemplate" if self.template else "uri": uri}
        definition["name"] = options.get("name") or str(getattr(self.fn, "__name__", uri))
        pairs: dict[str, object] = {
            "title": options.get("title"),
            "description": options.get("description") or doc.description,
            "mimeType": self.mime_type,
            "size": None if self.template else options.get("size"),
            "annotations": options.get("annotations"),
            "icons": options.get("icons"),
            "_meta": options.get("meta"),
        }
        for key, value in pairs.items():
            if value is not None:
                definition[key] = to_jsonable(value)
        return definition

    def match(self, uri: str) -> dict[str, object] | None:
        """Return the converted variables if ``uri`` is this resource, else None.

        Raises:
            ResourceNotFound: the URI matches the template but a variable does not convert.
        """
        if self.template is None:
            return {} if uri == self.key else None
        found = self.template.match(uri)
        if found is None:
            return None
        try:
            return {
                name: convert_text(self.signature.hints.get(name, str), value, name)
                for name, value in found.items()
            }
        except ValueError as exc:
            raise ResourceNotFound(uri, f"Resource not found: {exc}") from exc

    async def listed(self, context: Context, fresh: bool) -> list[JsonObject]:
        """Return the resources ``list_with`` gives now (none without it).

        Raises:
            TypeError: an item has no string ``uri`` or ``name`` (the lister's bug).
        """
        if self.lister is None:
            return []
        listed: list[JsonObject] = []
        for item in await self.lister(context, fresh):
            if not isinstance(item.get("uri"), str) or not isinstance(item.get("name"), str):
                raise TypeError(f"template {self.key!r} listed a resource without uri and name")
            listed.append({key: to_jsonable(value) for key, value in item.items()})
        return listed

    async def subscribing(self, uri: str, context: Context) -> None:
        """Run ``on_subscribe`` for ``uri``, if the entry has one (it may raise to refuse)."""
        if self.on_subscribe is not None:
            await self.on_subscribe(uri, context)

    async def read(
        self, uri: str, variables: dict[str, object], context: Context
    ) -> list[JsonObject]:
        """Call the function and return the ``contents`` items.

        Raises:
            ResourceNotFound: the function's own, with ``data.uri`` the URI asked for (a
                template function sees only its variables, so it cannot name it exactly).
        """
        kwargs = dict(variables)
        for name in self.signature.context:
            kwargs[name] = context
        try:
            value = self.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        except ResourceNotFound as exc:
            if exc.uri == uri:
                raise
            raise ResourceNotFound(uri, exc.message) from None
        return contents_of(uri, value, self.mime_type)
