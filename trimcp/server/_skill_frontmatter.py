"""The YAML frontmatter of a skill's ``SKILL.md``, read safely into JSON (SEP-2640, Agent Skills).

The frontmatter is served verbatim as JSON in ``skills/list`` entries, so it is parsed as
YAML 1.2 core-schema values (``yes`` stays a string), with a bounded size and nesting and no
aliases or custom tags, by PyYAML's SafeLoader (``trimcp[yaml]``). ``check_frontmatter``
applies the Agent Skills rules (https://agentskills.io/specification): a ``name`` equal to
the skill folder's, a ``description`` of at most 1024 characters. A skill that breaks them is
skipped (``Skipped``) with the reason.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
import typing
from typing import Any

if typing.TYPE_CHECKING:
    from trimcp.protocol import JsonObject, JsonValue

__all__ = ["Skipped", "check_frontmatter", "parse_frontmatter", "yaml_module"]

# Agent Skills frontmatter is a name, a description (<= 1024) and a little metadata.
_MAX_FRONTMATTER = 64 * 1024


_MAX_NESTING = 32


_MAX_DESCRIPTION = 1024


# Agent Skills "name" field: 1-64 of a-z 0-9 -, no leading, trailing or doubled hyphen
# (https://agentskills.io/specification#name-field; the conformance suite's regex).
_NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")


# The conformance suite's frontmatter extraction, so both sides see the same block.
_FRONTMATTER = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class Skipped(Exception):
    """A skill cannot be served as found; the message says why."""


_PLAIN_TAG = "?plain"


_STR_TAG = "tag:yaml.org,2002:str"


_SEQ_TAG = "tag:yaml.org,2002:seq"


_MAP_TAG = "tag:yaml.org,2002:map"


# YAML 1.2 core schema (YAML 1.2.2 section 10.3.2), which the conformance suite's parser
# (npm "yaml") uses: PyYAML resolves YAML 1.1 (yes/no, 010 octal, dates), so plain scalars
# are resolved here instead, and "frontmatter identical in content" holds on both sides.
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})


_BOOLS = {"true": True, "True": True, "TRUE": True}


_INT = re.compile(r"[-+]?[0-9]+")


_OCT = re.compile(r"0o[0-7]+")


_HEX = re.compile(r"0x[0-9a-fA-F]+")


_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


_NON_FINITE = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


@functools.cache
def yaml_module() -> Any:  # noqa: ANN401 - PyYAML is untyped (and optional: trimcp[yaml])
    """Return the ``yaml`` module, or None if PyYAML is not installed."""
    try:
        return importlib.import_module("yaml")
    except ImportError:
        return None


@functools.cache
def _loader() -> Any:  # noqa: ANN401 - a subclass of PyYAML's untyped SafeLoader
    """Return a SafeLoader that leaves plain scalars unresolved (tag ``?plain``)."""
    yaml = yaml_module()
    base_resolve = yaml.SafeLoader.resolve
    scalar_node = yaml.ScalarNode

    def resolve(self: object, kind: object, value: str, implicit: tuple[bool, bool]) -> object:
        if kind is scalar_node and implicit[0]:
            return _PLAIN_TAG
        return base_resolve(self, kind, value, implicit)

    return type("_FrontmatterLoader", (yaml.SafeLoader,), {"resolve": resolve})


def _core_number(text: str) -> int | float | None:
    """Return the YAML 1.2 core int or float ``text`` spells, or None if it spells neither."""
    if _NON_FINITE.fullmatch(text):
        raise Skipped(f"frontmatter holds {text}, which JSON cannot carry; quote it")
    number: int | float | None = None
    try:
        if _INT.fullmatch(text):
            # "-0" is negative zero to a JSON reader (JavaScript's -0), which only a float keeps.
            number = int(text, 10) or (-0.0 if text.startswith("-") else 0)
        elif _OCT.fullmatch(text) or _HEX.fullmatch(text):
            number = int(text[2:], 8 if text[1] == "o" else 16)
        elif _FLOAT.fullmatch(text):
            number = float(text)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        raise Skipped(f"frontmatter holds the number {text[:40]}..., too long; quote it") from None
    if isinstance(number, float) and math.isinf(number):
        raise Skipped(f"frontmatter holds {text[:40]}, too large for JSON; quote it")
    return number


def _core_scalar(text: str) -> JsonValue:
    """Resolve a plain (unquoted, untagged) scalar per the YAML 1.2 core schema."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    number = _core_number(text)
    return text if number is None else number


def _node_to_json(node: Any, seen: set[int], depth: int) -> JsonValue:  # noqa: ANN401
    """Render a composed YAML node as JSON: strings, numbers, booleans, null, lists, maps."""
    if id(node) in seen:
        raise Skipped("frontmatter uses a YAML alias (*name); write the value out instead")
    seen.add(id(node))
    if depth > _MAX_NESTING:
        raise Skipped(f"frontmatter nests deeper than {_MAX_NESTING} levels")
    kind, tag = node.id, node.tag
    if kind == "scalar" and tag == _PLAIN_TAG:
        return _core_scalar(node.value)
    if kind == "scalar" and tag == _STR_TAG:
        return typing.cast("str", node.value)
    if kind == "sequence" and tag == _SEQ_TAG:
        return [_node_to_json(item, seen, depth + 1) for item in node.value]
    if kind == "mapping" and tag == _MAP_TAG:
        mapping: JsonObject = {}
        for key_node, value_node in node.value:
            key = _node_to_json(key_node, seen, depth + 1)
            if not isinstance(key, str):
                raise Skipped(f"frontmatter has the key {key!r}, not a string; quote it")
            if key in mapping:
                raise Skipped(f"frontmatter has the key {key!r} twice")
            mapping[key] = _node_to_json(value_node, seen, depth + 1)
        return mapping
    raise Skipped(f"frontmatter uses the YAML tag {tag}, which JSON cannot carry")


def parse_frontmatter(text: str) -> JsonObject:
    """Return the frontmatter of a ``SKILL.md`` as JSON (YAML 1.2 core schema, no aliases).

    Raises:
        Skipped: no ``---`` block, YAML errors, or something JSON cannot carry.
    """
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        raise Skipped("does not begin with a '---' line opening YAML frontmatter closed by '---'")
    block = match.group(1)
    if len(block) > _MAX_FRONTMATTER:
        raise Skipped(f"frontmatter is longer than {_MAX_FRONTMATTER} characters")
    try:
        # The loader's reader already refuses characters YAML does not allow, hence inside.
        loader = _loader()(block)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except RecursionError:
        raise Skipped("frontmatter nests too deeply") from None
    except yaml_module().YAMLError as exc:
        raise Skipped(f"frontmatter is not valid YAML: {exc}") from None
    if node is None:
        raise Skipped("frontmatter is empty; it needs name and description")
    value = _node_to_json(node, set(), 0)
    if not isinstance(value, dict):
        raise Skipped("frontmatter is not a mapping of fields (name: ..., description: ...)")
    return value


def check_frontmatter(frontmatter: JsonObject, folder: str) -> None:
    """Check the Agent Skills fields the URI and the listing rely on (SEP-2640 > Skill Format)."""
    name = frontmatter.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise Skipped(
            f"frontmatter name {name!r} is not 1-64 of a-z, 0-9 and single inner hyphens "
            "(https://agentskills.io/specification#name-field)"
        )
    if name != folder:
        raise Skipped(
            f"frontmatter name {name!r} differs from its folder {folder!r}; the final "
            "skill-path segment must equal the name (SEP-2640 > Resource Mapping): rename one"
        )
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        raise Skipped("frontmatter has no description (a non-empty string)")
    if len(description) > _MAX_DESCRIPTION:
        raise Skipped(f"frontmatter description is longer than {_MAX_DESCRIPTION} characters")
