"""Tool names across servers: ``mcp__<server>__<tool>``, and back.

A host that offers the tools of many servers to one model needs names that never collide and
that every LLM API accepts. The common denominator is ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI's
function names; Anthropic and Gemini accept the same set), so a qualified name is
``mcp__`` + server + ``__`` + tool, with every other character of the tool's name replaced by
``_``, and names longer than 64 characters shortened with a hash of the full name so that two
long names stay distinct. Server names are already restricted by the configuration to
``[A-Za-z0-9_-]`` without ``__`` (``config/mcp_servers/_rules.py``), so the first ``__``
after the prefix always ends the server part.

``ToolNames`` keeps the mapping both ways for one host, so routing a model's call back never
depends on reversing a lossy transformation.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Final, final

__all__ = ["MAX_NAME_LENGTH", "PREFIX", "QualifiedName", "ToolNames", "qualify", "split_qualified"]

PREFIX: Final = "mcp__"
SEPARATOR: Final = "__"
#: The longest function name the common LLM APIs accept.
MAX_NAME_LENGTH: Final = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LENGTH: Final = 8


@final
@dataclass(frozen=True, slots=True)
class QualifiedName:
    """One server's tool under its host-wide name."""

    server: str
    tool: str
    qualified: str


def qualify(server: str, tool: str) -> str:
    """Return ``mcp__<server>__<tool>``, made safe and at most ``MAX_NAME_LENGTH`` long."""
    name = f"{PREFIX}{server}{SEPARATOR}{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME_LENGTH and name == f"{PREFIX}{server}{SEPARATOR}{tool}":
        return name
    # Changed or too long: add a hash of the exact pair so that distinct tools stay distinct.
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_LENGTH]
    keep = MAX_NAME_LENGTH - _HASH_LENGTH - 1
    return f"{name[:keep]}_{digest}" if len(name) > keep else f"{name}_{digest}"


def split_qualified(name: str) -> tuple[str, str] | None:
    """Return ``(server, tool part)`` of a qualified name, or ``None`` if it is not one.

    The tool part is the name as qualified (possibly made safe or shortened); use
    ``ToolNames.resolve`` to get the server's own tool name back.
    """
    if not name.startswith(PREFIX):
        return None
    server, separator, tool = name[len(PREFIX) :].partition(SEPARATOR)
    if not separator or not server or not tool:
        return None
    return server, tool


@final
@dataclass(slots=True)
class ToolNames:
    """The qualified names a host has handed out, and what each stands for."""

    _by_qualified: dict[str, QualifiedName] = field(default_factory=dict)

    def add(self, server: str, tool: str) -> QualifiedName:
        """Name ``server``'s ``tool``; the same pair always gets the same name."""
        qualified = qualify(server, tool)
        entry = QualifiedName(server, tool, qualified)
        self._by_qualified[qualified] = entry
        return entry

    def forget_server(self, server: str) -> None:
        """Drop every name of ``server`` (it disconnected or its tools changed)."""
        for name in [n for n, entry in self._by_qualified.items() if entry.server == server]:
            del self._by_qualified[name]

    def resolve(self, qualified: str) -> QualifiedName | None:
        """Return what ``qualified`` stands for, or ``None`` if this host never named it."""
        return self._by_qualified.get(qualified)
