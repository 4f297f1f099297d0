"""Small pieces the read tools share: paths for output, sizes, times, modes, symlink targets.

A symlink is described by where it resolves, and only when that is inside the jail and not
blocked: the target of one that leads out is never named (not even as the link text), so
listing a folder cannot be used to learn what lies outside it (the CVE-2025-53109 lesson of
the reference filesystem server).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from trimcp.errors import PathRefused
from trimcp.protocol import ToolAnnotations
from trimcp.skills.jail import Resolved, shown

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.skills.jail import Jail

__all__ = [
    "READ_ONLY",
    "EntryType",
    "LinkTarget",
    "display",
    "entry_type",
    "exact",
    "human_size",
    "iso_time",
    "link_target",
    "permissions",
]

#: The read tools change nothing, give the same answer for the same files, and touch only the
#: local file system (MCP 2025-11-25, Server > Tools > Tool Annotations,
#: https://modelcontextprotocol.io/specification/2025-11-25/server/tools).
READ_ONLY = ToolAnnotations(
    read_only_hint=True,
    idempotent_hint=True,
    open_world_hint=False,
    destructive_hint=False,
)

#: The kind of a directory entry, as structured output names it.
EntryType = Literal["file", "folder", "symlink", "fifo", "socket", "device", "other"]


_TYPES: tuple[tuple[Callable[[int], bool], EntryType], ...] = (
    (stat.S_ISREG, "file"),
    (stat.S_ISDIR, "folder"),
    (stat.S_ISLNK, "symlink"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "device"),
    (stat.S_ISBLK, "device"),
)


def entry_type(mode: int) -> EntryType:
    """Return the kind of file ``mode`` (an ``lstat`` mode) describes."""
    for test, kind in _TYPES:
        if test(mode):
            return kind
    return "other"


def exact(text: str) -> str:
    """``text`` for structured content: itself, unless it holds undecodable bytes.

    A file name that is not valid UTF-8 reaches Python with lone surrogates
    (``surrogateescape``), which no JSON encoder accepts; they are written as ``\\udcXX``
    escapes instead, as ``shown`` writes them in text.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def display(jail: Jail, resolved: Resolved) -> str:
    """The path for output: relative to the first root (as tools take it), else absolute."""
    if resolved.root == jail.roots[0]:
        return resolved.relative
    return str(resolved.real)


_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


def human_size(size: int) -> str:
    """Return ``size`` bytes in words: ``"512 B"``, ``"1.5 KiB"``, ``"20.0 MiB"``."""
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    index = 0
    while value >= 1024 and index < len(_UNITS) - 1:
        value /= 1024
        index += 1
    return f"{value:.1f} {_UNITS[index]}"


def iso_time(timestamp: float) -> str:
    """Return a POSIX timestamp as ISO 8601 in UTC, to the second: ``2026-01-31T12:00:00Z``."""
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def permissions(mode: int) -> tuple[str, str]:
    """Return the permission bits of ``mode`` as ``ls`` shows them and in octal."""
    return stat.filemode(mode)[1:], f"{stat.S_IMODE(mode):04o}"


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """Where a symlink leads, as far as the jail lets it be said.

    Attributes:
        where: "inside" (target named), "missing" (inside, but nothing there),
            "blocked" (inside, but a blocked path: not named) or "outside" (not named).
        target: the target for output (see ``display``), only for "inside" and "missing".
    """

    where: Literal["inside", "missing", "blocked", "outside"]
    target: str | None = None

    def text(self) -> str:
        """The ``-> ...`` part of a listing line."""
        if self.where == "outside":
            return " -> outside the allowed folders"
        if self.where == "blocked":
            return " -> a blocked path"
        assert self.target is not None
        missing = " (missing)" if self.where == "missing" else ""
        return f" -> {shown(self.target)}{missing}"


def link_target(jail: Jail, folder: Path, name: str) -> LinkTarget:
    """Say where the symlink ``name`` in the (resolved) ``folder`` leads.

    Resolution works on path strings (as ``Jail.resolve`` does); nothing is opened, and the
    answer names the target only when it lies inside the jail and is not blocked.
    """
    real = Path(os.path.realpath(os.path.join(folder, name)))
    root = jail.root_of(real)
    if root is None:
        return LinkTarget("outside")
    resolved = Resolved(real, root, real.relative_to(root).parts, name)
    try:
        jail.check_blocked(resolved, "read")
    except PathRefused:
        return LinkTarget("blocked")
    where: Literal["inside", "missing"] = "inside" if os.path.lexists(real) else "missing"
    return LinkTarget(where, display(jail, resolved))
