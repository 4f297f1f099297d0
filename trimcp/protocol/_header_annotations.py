"""Which tool parameters a client mirrors into headers: ``x-mcp-header`` (MCP 2026-07-28).

A tool marks a parameter of its input schema with ``"x-mcp-header": "Region"``; a client
then sends the argument as ``Mcp-Param-Region`` too, so that intermediaries can route on it
(https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#request-metadata).
``header_parameters`` reads the annotations of a schema; ``header_annotation_problems`` says
why a tool's annotations are invalid (a client drops such a tool). Schemas come from
servers: the walk is bounded in depth and survives cycles.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final, TypeAlias

from ._header_values import shown

__all__ = ["HeaderParams", "header_annotation_problems", "header_parameters"]

#: A tool's mirrored parameters: the chain of ``properties`` keys that leads to each
#: annotated parameter (``("region",)``, or ``("target", "region")`` when nested) mapped to
#: the ``{Name}`` of its ``Mcp-Param-{Name}`` header. ``header_parameters`` builds it.
HeaderParams: TypeAlias = "Mapping[tuple[str, ...], str]"

#: RFC 9110 §5.6.2 ``tchar``, the only characters of a field name (``x-mcp-header`` values).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PRIMITIVES: Final = frozenset({"string", "integer", "boolean"})
#: Keywords whose value is one subschema or a list of them (JSON Schema 2020-12 and the
#: draft-07 spellings). An annotation below any of them is not statically reachable.
_SUBSCHEMAS: Final = (
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contentSchema",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
)
#: Keywords whose value maps names to subschemas, other than ``properties``.
_SUBSCHEMA_MAPS: Final = (
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "$defs",
    "definitions",
)
#: Deeper than this, a schema is refused rather than walked: no tool needs it, and a
#: schema built in Python may contain a cycle.
_MAX_DEPTH: Final = 200


def header_parameters(input_schema: Mapping[str, object]) -> dict[tuple[str, ...], str]:
    """Return where each ``x-mcp-header`` parameter sits and its header's ``{Name}``.

    Keys are the chains of ``properties`` keys from the schema root: ``("region",)`` for a
    top-level parameter, longer for one nested in object parameters, which the spec allows
    (2026-07-28, Streamable HTTP > Custom Headers from Tool Parameters > Schema Extension,
    https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#schema-extension).
    Names keep the server's spelling; compare them case-insensitively.

    Raises:
        ValueError: the annotations are invalid (``header_annotation_problems`` lists why).
            A client drops such a tool; a server should refuse to register it.
    """
    found, problems = _scan(input_schema)
    if problems:
        raise ValueError("invalid x-mcp-header annotations: " + "; ".join(problems))
    return found


def header_annotation_problems(input_schema: Mapping[str, object]) -> list[str]:
    """List what makes a tool's ``x-mcp-header`` annotations invalid (empty: none).

    The rules (2026-07-28, Tools > x-mcp-header,
    https://modelcontextprotocol.io/specification/2026-07-28/server/tools#x-mcp-header): the
    value is a non-empty string of RFC 9110 ``tchar``; values are unique ignoring case; the
    parameter's ``type`` is string, integer or boolean (a list of those, optionally with
    ``"null"``, is accepted: a null argument just sends no header); and the parameter is
    reached from the root through ``properties`` alone, never through ``items``, ``oneOf``,
    ``$defs``, ``$ref`` and the like. A client over Streamable HTTP MUST leave a tool with
    any problem out of ``tools/list``, and SHOULD log its name and these reasons.

    Never raises, whatever JSON it is given. Each problem names its place in the schema as a
    JSON Pointer-like path from ``inputSchema``.
    """
    return _scan(input_schema)[1]


def _scan(schema: object) -> tuple[dict[tuple[str, ...], str], list[str]]:
    found: dict[tuple[str, ...], str] = {}
    problems: list[str] = []
    names: dict[str, str] = {}  # lower-cased name -> where it was first seen
    for node, path, where in _schema_nodes(schema, problems):
        if "x-mcp-header" not in node:
            continue
        name = node["x-mcp-header"]
        found_problems = _annotation_problems(node, name, path, where)
        if not found_problems and isinstance(name, str) and path:
            first = names.setdefault(name.lower(), where)
            if first != where:
                found_problems.append(
                    f"{where}: x-mcp-header {shown(name)} repeats the header of {first} "
                    "(header names ignore case); give each parameter its own name"
                )
            else:
                found[path] = name
        problems.extend(found_problems)
    return found, problems


#: A schema node met on the walk, the ``properties`` chain to it (None once the walk went
#: through any other keyword) and where it is, for messages.
_Node: TypeAlias = "tuple[Mapping[str, object], tuple[str, ...] | None, str]"


def _schema_nodes(schema: object, problems: list[str]) -> Iterator[_Node]:
    """Yield every subschema, depth first in document order; record cycles and depth."""
    stack: list[tuple[object, tuple[str, ...] | None, str, tuple[int, ...]]] = [
        (schema, (), "inputSchema", ())
    ]
    while stack:
        node, path, where, ancestors = stack.pop()
        if not isinstance(node, Mapping):
            continue  # true/false schemas, and junk in a keyword's place
        if id(node) in ancestors:
            problems.append(f"{where}: the schema contains itself; a schema must be a tree")
            continue
        if len(ancestors) >= _MAX_DEPTH:
            problems.append(f"{where}: the schema nests deeper than {_MAX_DEPTH} levels")
            continue
        yield node, path, where
        inner = (*ancestors, id(node))
        children = [
            (sub, sub_path, at, inner) for sub, sub_path, at in _children(node, path, where)
        ]
        stack.extend(reversed(children))


def _children(
    node: Mapping[str, object], path: tuple[str, ...] | None, where: str
) -> Iterator[tuple[object, tuple[str, ...] | None, str]]:
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        for key, sub in properties.items():
            sub_path = None if path is None else (*path, str(key))
            yield sub, sub_path, f"{where}/properties/{_escape(key)}"
    for keyword in _SUBSCHEMA_MAPS:
        entries = node.get(keyword)
        if isinstance(entries, Mapping):
            for key, sub in entries.items():
                yield sub, None, f"{where}/{keyword}/{_escape(key)}"
    for keyword in _SUBSCHEMAS:
        sub = node.get(keyword)
        if isinstance(sub, list):
            for index, item in enumerate(sub):
                yield item, None, f"{where}/{keyword}/{index}"
        else:
            yield sub, None, f"{where}/{keyword}"


def _escape(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _annotation_problems(
    node: Mapping[str, object], name: object, path: tuple[str, ...] | None, where: str
) -> list[str]:
    if not path:
        place = (
            "on the schema root, not on a parameter"
            if path is not None
            else "not reachable from the root through 'properties' alone"
        )
        return [
            f"{where}: x-mcp-header {shown(name)} is {place}; annotate only parameters "
            "reached through a chain of 'properties' (never items, oneOf, $defs, $ref, ...)"
        ]
    problems: list[str] = []
    if not isinstance(name, str):
        problems.append(f"{where}: x-mcp-header is {shown(name)}, not a string")
    elif not name:
        problems.append(f"{where}: x-mcp-header is empty; give the header a name")
    elif not _TOKEN.fullmatch(name):
        bad = sorted({char for char in name if not _TOKEN.fullmatch(char)})
        listed = ", ".join(repr(char) for char in bad[:5]) + (", ..." if len(bad) > 5 else "")
        problems.append(
            f"{where}: x-mcp-header {shown(name)} has characters a header name may not hold "
            f"({listed}); use letters, digits and !#$%&'*+-.^_`|~"
        )
    declared = node.get("type")
    kinds = [declared] if isinstance(declared, str) else declared
    if not isinstance(kinds, list) or not _primitive(kinds):
        declares = "no type" if declared is None else f"type {shown(declared)}"
        problems.append(
            f"{where}: x-mcp-header {shown(name)} is on a parameter that declares {declares}; "
            "only string, integer and boolean parameters can be mirrored into a header"
        )
    return problems


def _primitive(kinds: list[object]) -> bool:
    concrete = [kind for kind in kinds if kind != "null"]
    return bool(concrete) and all(
        isinstance(kind, str) and kind in _PRIMITIVES for kind in concrete
    )
