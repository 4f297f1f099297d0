"""What Tab offers at the shell's prompt: a pure function of the line and a catalog snapshot.

``complete(line, names)`` gets the text before the cursor and returns the words that may
replace its last word: commands, ``/mcp`` actions, server names, tool names (``mcp__s__t``,
or a server's own names after ``SERVER``), resource URIs, prompt names and template URIs,
and argument keys as ``key=`` once a tool, prompt or template is named. ``Names`` is read
from the connection manager after each command (the readline callback cannot await), so
what Tab offers is what the servers offered when the prompt was drawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

from trimcp.client import qualify

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from trimcp.client import CatalogKind
    from trimcp.protocol import JsonObject

__all__ = ["ACTIONS", "COMMANDS", "Entry", "Names", "complete", "template_variables"]

COMMANDS = ("/mcp", "/help", "/quit")
ACTIONS = (
    "servers",
    "connect",
    "disconnect",
    "tools",
    "resources",
    "prompts",
    "call",
    "read",
    "prompt",
    "complete",
    "reload",
)
#: Actions whose one argument is a server name.
_SERVER_ACTIONS = frozenset({"connect", "disconnect", "tools", "resources", "prompts"})

# RFC 6570 expressions: {var}, {+path}, {?q,lang}, {/segments*}, {var:3}.
_EXPRESSION = re.compile(r"\{([^}]*)\}")


@final
@dataclass(frozen=True, slots=True)
class Entry:
    """One named thing a server offers, and the argument keys it takes."""

    server: str
    name: str
    keys: tuple[str, ...] = ()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Names:
    """A snapshot of what the servers offer, for completion and for finding a server."""

    servers: tuple[str, ...] = ()
    tools: tuple[Entry, ...] = ()
    resources: tuple[Entry, ...] = ()
    templates: tuple[Entry, ...] = ()
    prompts: tuple[Entry, ...] = ()
    #: The tools by qualified name (``mcp__server__tool``).
    qualified: Mapping[str, Entry] = field(default_factory=dict)

    @classmethod
    def from_catalogs(
        cls,
        servers: Iterable[str],
        catalogs: Iterable[tuple[str, Mapping[CatalogKind, Sequence[JsonObject]]]],
    ) -> Names:
        """Read the configured ``servers`` and each connected server's catalog."""
        catalogs = list(catalogs)
        tools = [
            Entry(server, str(tool.get("name", "")), _schema_keys(tool))
            for server, catalog in catalogs
            for tool in catalog.get("tools", ())
        ]
        resources = [
            Entry(server, str(resource.get("uri", "")))
            for server, catalog in catalogs
            for resource in catalog.get("resources", ())
        ]
        templates = [
            Entry(server, uri, template_variables(uri))
            for server, catalog in catalogs
            for uri in (str(t.get("uriTemplate", "")) for t in catalog.get("resourceTemplates", ()))
        ]
        prompts = [
            Entry(server, str(prompt.get("name", "")), _prompt_keys(prompt))
            for server, catalog in catalogs
            for prompt in catalog.get("prompts", ())
        ]
        return cls(
            servers=tuple(sorted(servers)),
            tools=tuple(tools),
            resources=tuple(resources),
            templates=tuple(templates),
            prompts=tuple(prompts),
            qualified={qualify(entry.server, entry.name): entry for entry in tools},
        )


def template_variables(uri_template: str) -> tuple[str, ...]:
    """The variable names of an RFC 6570 URI template, in order."""
    names: list[str] = []
    for expression in _EXPRESSION.findall(uri_template):
        for spec in expression.lstrip("+#./;?&").split(","):
            name = spec.split(":", 1)[0].rstrip("*").strip()
            if name and name not in names:
                names.append(name)
    return tuple(names)


def _schema_keys(tool: JsonObject) -> tuple[str, ...]:
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return tuple(properties) if isinstance(properties, dict) else ()


def _prompt_keys(prompt: JsonObject) -> tuple[str, ...]:
    arguments = prompt.get("arguments")
    if not isinstance(arguments, list):
        return ()
    return tuple(
        str(item["name"]) for item in arguments if isinstance(item, dict) and "name" in item
    )


def complete(line: str, names: Names) -> list[str]:
    """Return the words that may replace the last word of ``line`` (the text before the cursor).

    A word that ends a step gets a trailing space, so the next Tab goes on to the next
    word; a key gets ``=`` and waits for its value.
    """
    words = line.split()
    current = "" if not line or line[-1].isspace() else words.pop()
    offered = _offered(words, names)
    found = sorted({word for word in offered if word.startswith(current)})
    return [word if word.endswith("=") else f"{word} " for word in found]


def _offered(words: list[str], names: Names) -> Iterable[str]:
    if not words:
        return COMMANDS
    if words[0] != "/mcp":
        return ()
    if len(words) == 1:
        return ACTIONS
    action, rest = words[1], words[2:]
    if action in _SERVER_ACTIONS:
        return names.servers if not rest else ()
    after = _AFTER_ACTION.get(action)
    return after(rest, names) if after is not None else ()


def _call_words(rest: list[str], names: Names) -> Iterable[str]:
    if not rest:
        return [*names.qualified, *names.servers]
    entry = names.qualified.get(rest[0])
    if entry is not None:
        return _keys(entry, rest[1:])
    return _named_words(rest, names.tools, names.servers)


def _read_words(rest: list[str], names: Names) -> Iterable[str]:
    if not rest:
        return [*(entry.name for entry in names.resources), *names.servers]
    if len(rest) == 1 and rest[0] in names.servers:
        return [entry.name for entry in names.resources if entry.server == rest[0]]
    return ()


def _prompt_words(rest: list[str], names: Names) -> Iterable[str]:
    return _named_words(rest, names.prompts, names.servers)


def _complete_words(rest: list[str], names: Names) -> Iterable[str]:
    return _named_words(rest, (*names.prompts, *names.templates), names.servers)


def _named_words(
    rest: list[str], entries: Sequence[Entry], servers: Sequence[str]
) -> Iterable[str]:
    """Names, or one server's names after ``SERVER``, then the named entry's keys."""
    if not rest:
        return [*(entry.name for entry in entries), *servers]
    if rest[0] in servers:
        mine = [entry for entry in entries if entry.server == rest[0]]
        if len(rest) == 1:
            return [entry.name for entry in mine]
        return _keys(_find(mine, rest[1]), rest[2:])
    return _keys(_find(entries, rest[0]), rest[1:])


def _find(entries: Iterable[Entry], name: str) -> Entry | None:
    return next((entry for entry in entries if entry.name == name), None)


def _keys(entry: Entry | None, given: list[str]) -> list[str]:
    if entry is None:
        return []
    typed = {word.split("=", 1)[0].rstrip(":") for word in given if "=" in word}
    return [f"{key}=" for key in entry.keys if key not in typed]


#: What follows each action that takes more than a server name.
_AFTER_ACTION: dict[str, Callable[[list[str], Names], Iterable[str]]] = {
    "call": _call_words,
    "read": _read_words,
    "prompt": _prompt_words,
    "complete": _complete_words,
}
