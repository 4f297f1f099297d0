"""The readable form of an ``inspect`` report: a rich tree on a terminal, plain text otherwise.

Both forms show the same facts, from the report's JSON (``trimcp.cli._inspect``): the server
line, instructions, capabilities, then each tool with its description, input and output
schemas summarised as ``name: type`` (``*`` marks required) and its annotations, each
resource and template with its URI, name, MIME type and description, each prompt with its
arguments. The full schemas are in ``--json``. Text the server sent is shown as text: rich
markup in it is not interpreted.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from trimcp.cli._output import is_terminal

if TYPE_CHECKING:
    from collections.abc import Iterator

    from trimcp.protocol import JsonObject, JsonValue

__all__ = ["Section", "print_report", "render_text", "sections"]

# (heading, lines under it); an item's first line is its head, its details start with "  ".
Section = tuple[str, list[str]]


def print_report(report: JsonObject) -> None:
    """Print ``report`` to stdout: a tree on a terminal, plain text otherwise."""
    if is_terminal(sys.stdout):
        from rich.console import Console

        Console().print(render_tree(report))
    else:
        sys.stdout.write(render_text(report))


def render_text(report: JsonObject) -> str:
    """The report as plain text, one section after another."""
    out: list[str] = []
    for heading, lines in sections(report):
        out.append(heading)
        out += [f"  {line}" for line in lines]
    return "\n".join(out) + "\n"


def render_tree(report: JsonObject) -> object:
    """The report as a ``rich.tree.Tree`` (typed ``object`` so that rich loads lazily)."""
    from rich.text import Text
    from rich.tree import Tree

    parts = list(sections(report))
    head, details = parts[0]
    tree = Tree(Text(head, style="bold"))
    for detail in details:
        tree.add(Text(detail, style="dim"))
    for heading, lines in parts[1:]:
        branch = tree.add(Text(heading, style="bold cyan"))
        item: Tree | None = None
        for line in lines:
            if line.startswith("  ") and item is not None:
                item.add(Text(line.strip(), style="dim"))
            else:
                item = branch.add(Text(line))
    return tree


def sections(report: JsonObject) -> Iterator[Section]:
    """The report's sections in order; the first heading is the server line."""
    server = _obj(report.get("server"))
    name = f"{server.get('name', '?')} {server.get('version', '')}".strip()
    title = f" ({server['title']})" if isinstance(server.get("title"), str) else ""
    details = [f"protocol {report.get('protocolVersion', '?')}"]
    details += [
        str(server[k]) for k in ("description", "websiteUrl") if isinstance(server.get(k), str)
    ]
    yield f"{name}{title}", details
    instructions = report.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        yield "Instructions", instructions.strip().splitlines()
    yield "Capabilities", [_capability(k, v) for k, v in _obj(report.get("capabilities")).items()]
    yield (
        _counted("Tools", report.get("tools")),
        [line for tool in _objs(report.get("tools")) for line in _tool(tool)],
    )
    yield (
        _counted("Resources", report.get("resources")),
        [line for item in _objs(report.get("resources")) for line in _resource(item, "uri")],
    )
    yield (
        _counted("Resource templates", report.get("resourceTemplates")),
        [
            line
            for item in _objs(report.get("resourceTemplates"))
            for line in _resource(item, "uriTemplate")
        ],
    )
    yield (
        _counted("Prompts", report.get("prompts")),
        [line for prompt in _objs(report.get("prompts")) for line in _prompt(prompt)],
    )
    errors = _obj(report.get("errors"))
    if errors:
        yield "Errors", [f"{kind}: {message}" for kind, message in errors.items()]


def _obj(value: JsonValue | None) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _objs(value: JsonValue | None) -> list[JsonObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _counted(heading: str, items: JsonValue | None) -> str:
    return f"{heading} ({len(items) if isinstance(items, list) else 0})"


def _capability(name: str, value: JsonValue) -> str:
    flags = (
        [key for key, on in value.items() if on not in (False, None)]
        if isinstance(value, dict)
        else []
    )
    return f"{name} ({', '.join(flags)})" if flags else name


def _head(item: JsonObject, key: str) -> str:
    head = str(item.get(key, "?"))
    title = item.get("title")
    if isinstance(title, str) and title != head:
        head += f" ({title})"
    description = item.get("description")
    if isinstance(description, str) and description.strip():
        head += f" - {description.strip().splitlines()[0]}"
    return head


def _tool(tool: JsonObject) -> list[str]:
    lines = [_head(tool, "name")]
    lines.append(f"  input: {schema_summary(tool.get('inputSchema'))}")
    if "outputSchema" in tool:
        lines.append(f"  output: {schema_summary(tool.get('outputSchema'))}")
    hints = [
        f"{key}={json.dumps(value, ensure_ascii=False)}"
        for key, value in _obj(tool.get("annotations")).items()
    ]
    if hints:
        lines.append(f"  annotations: {', '.join(hints)}")
    return lines


def _resource(item: JsonObject, uri_key: str) -> list[str]:
    head = f"{item.get(uri_key, '?')}  {_head(item, 'name')}"
    mime = item.get("mimeType")
    return [f"{head}  [{mime}]" if isinstance(mime, str) else head]


def _prompt(prompt: JsonObject) -> list[str]:
    lines = [_head(prompt, "name")]
    for argument in _objs(prompt.get("arguments")):
        marked = f"{argument.get('name', '?')}{'*' if argument.get('required') is True else ''}"
        lines.append(f"  argument {_head({**argument, 'name': marked}, 'name')}")
    return lines


def schema_summary(schema: JsonValue | None) -> str:
    """``a: integer*, b: string`` for an object schema (``*``: required); else its type."""
    if not isinstance(schema, dict):
        return "(none)"
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, dict):
        if not isinstance(properties, dict) or not properties:
            return "(no arguments)" if schema.get("type") == "object" else _type(schema)
        required = schema.get("required")
        needed = set(required) if isinstance(required, list) else set()
        return ", ".join(
            f"{key}: {_type(value)}{'*' if key in needed else ''}"
            for key, value in properties.items()
        )
    return _type(schema)


def _type(schema: JsonValue) -> str:
    """A short name for a property's schema: ``string``, ``array of integer``, ``a | b``..."""
    if not isinstance(schema, dict):
        return "any" if schema is True else "?"
    combined = _combination(schema)
    if combined is not None:
        return combined
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(part) for part in kind)
    if kind == "array":
        return f"array of {_type(schema.get('items', True))}"
    return str(kind) if isinstance(kind, str) else "any"


def _combination(schema: JsonObject) -> str | None:
    """The values or alternatives a schema allows (enum, const, anyOf, oneOf, $ref), if any."""
    enum = schema.get("enum")
    if isinstance(enum, list):
        return " | ".join(json.dumps(value, ensure_ascii=False) for value in enum)
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            return " | ".join(_type(option) for option in options)
    ref = schema.get("$ref")
    return ref.rpartition("/")[2] if isinstance(ref, str) else None
