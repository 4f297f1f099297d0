"""Read the parts of a Google-style docstring that tools, resources and prompts advertise.

Only what MCP can carry is extracted: the description (everything before the first
section), the ``Args:`` entries (property descriptions) and the ``Returns:`` text. Other
sections (``Raises:``, ``Examples:``, ...) end the description and are otherwise ignored.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass, field

__all__ = ["Docstring", "parse_docstring"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns|Return|Yields|Yield|Raises|Examples?|Notes?|Attributes|See Also|Warnings?|"
    r"Warns|Todo|References|Methods):\s*$"
)
_ARG_SECTIONS = {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"}
_RETURN_SECTIONS = {"Returns", "Return"}
# ``name (type): text`` or ``name: text``; ``*args``/``**kwargs`` spellings tolerated.
_ARG_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


@typing.final
@dataclass(frozen=True, slots=True)
class Docstring:
    """What a docstring says: description, per-argument text, return text."""

    description: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google-style docstring into description, ``Args:`` and ``Returns:`` text.

    Continuation lines (indented deeper than their entry) are joined with single spaces.
    A docstring with no sections is all description. Never raises.
    """
    if not doc or not doc.strip():
        return Docstring()
    sections: dict[str, list[str]] = {}
    current = "description"
    sections[current] = []
    for line in inspect.cleandoc(doc).splitlines():
        header = _SECTION.match(line)
        if header is not None:
            current = header.group(1)
            sections.setdefault(current, [])
            continue
        sections[current].append(line)
    description = "\n".join(sections["description"]).strip() or None
    params: dict[str, str] = {}
    returns: str | None = None
    for name, lines in sections.items():
        if name in _ARG_SECTIONS:
            params.update(_parse_entries(lines))
        elif name in _RETURN_SECTIONS:
            returns = " ".join(line.strip() for line in lines if line.strip()) or None
    return Docstring(description, params, returns)


def _parse_entries(lines: list[str]) -> dict[str, str]:
    entries: dict[str, list[str]] = {}
    entry_indent: int | None = None
    name: str | None = None
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if entry_indent is None:
            entry_indent = indent
        match = _ARG_ENTRY.match(line.strip()) if indent <= entry_indent else None
        if match is not None:
            name = match.group("name")
            entries[name] = [match.group("text").strip()]
        elif name is not None:
            entries[name].append(line.strip())
    return {key: " ".join(part for part in text if part) for key, text in entries.items()}
