"""``list_directory``: one folder's entries with kind, size and time, sorted as asked.

The folder is opened through the jail (``open_dir``) and listed with ``os.scandir(fd)``;
each entry's ``lstat`` comes from the same descriptor, so nothing is followed. Blocked
entries are left out and counted (their names are not shown); symlinks are marked ``@`` and
named by where they lead only when that is inside the jail (see ``_read_common``).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from trimcp.errors import PathRefused
from trimcp.server import ToolResult
from trimcp.skills.jail import open_dir, shown
from trimcp.skills.tools._output import Budget

from ._common import (
    EntryType,
    display,
    entry_type,
    exact,
    human_size,
    iso_time,
    link_target,
)

if TYPE_CHECKING:
    from trimcp.config import SkillsSettings
    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Jail, Resolved

    from ._common import LinkTarget

__all__ = ["ListedEntry", "Listing", "SortKey", "kind_marker", "list_directory_work"]

SortKey = Literal["name", "size", "modified"]


class ListedEntry(TypedDict):
    """One entry of a listing; ``size`` is left out for symlinks (see ``FileInfo``)."""

    name: str
    type: EntryType
    size: NotRequired[int]
    modified: str
    target: NotRequired[str]
    target_status: NotRequired[Literal["inside", "missing", "blocked", "outside"]]


class Listing(TypedDict):
    """``list_directory``'s structured result: the entries shown, and what was left out."""

    path: str
    entries: list[ListedEntry]
    blocked: int
    hidden: int
    truncated: bool


_MARKERS: dict[EntryType, str] = {
    "folder": "/",
    "symlink": "@",
    "fifo": "|",
    "socket": "=",
    "device": " (device file)",
    "other": " (special file)",
}


def kind_marker(kind: EntryType) -> str:
    """The ``ls -F``-style mark after a name: ``/`` folder, ``@`` symlink, ..."""
    return _MARKERS.get(kind, "")


def _entry_line(entry: ListedEntry, link: LinkTarget | None) -> str:
    if entry["type"] == "file":
        size = f"{human_size(entry['size']):>9} {entry['size']:>13}"
    else:
        size = f"{'-':>9} {'-':>13}"
    arrow = link.text() if link is not None else ""
    return f"{size}  {entry['modified']}  {shown(entry['name'])}{kind_marker(entry['type'])}{arrow}"


def _scan(  # noqa: PLR0913
    jail: Jail,
    resolved: Resolved,
    *,
    show_hidden: bool,
    most: int,
    progress: Progress,
    counts: dict[str, int],
) -> list[tuple[ListedEntry, float, LinkTarget | None]]:
    found: list[tuple[ListedEntry, float, LinkTarget | None]] = []
    fd = open_dir(resolved)
    try:
        with os.scandir(fd) as listing:
            for item in listing:
                if len(found) >= most:
                    counts["truncated"] = 1
                    break
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue  # removed while listed
                kind = entry_type(info.st_mode)
                is_dir = stat.S_ISDIR(info.st_mode)
                if jail.is_blocked((*resolved.parts, item.name), "read", is_dir=is_dir):
                    counts["blocked"] += 1
                    continue
                if not show_hidden and item.name.startswith("."):
                    counts["hidden"] += 1
                    continue
                entry = ListedEntry(
                    name=exact(item.name), type=kind, modified=iso_time(info.st_mtime)
                )
                link = None
                if kind == "symlink":
                    link = link_target(jail, resolved.real, item.name)
                    entry["target_status"] = link.where
                    if link.target is not None:
                        entry["target"] = exact(link.target)
                else:
                    entry["size"] = info.st_size
                found.append((entry, info.st_mtime, link))
                progress.done += 1
                if len(found) % 1024 == 0:
                    progress.check()
    finally:
        os.close(fd)
    return found


def _sort(
    found: list[tuple[ListedEntry, float, LinkTarget | None]], sort: SortKey, reverse: bool
) -> None:
    if sort == "name":
        found.sort(key=lambda item: item[0]["name"], reverse=reverse)
        return
    if sort == "size":
        # Largest first, as ``ls -S``; symlinks (no size) last.
        found.sort(key=lambda item: (-item[0].get("size", -1), item[0]["name"]))
    else:
        # Newest first, as ``ls -t``.
        found.sort(key=lambda item: (-item[1], item[0]["name"]))
    if reverse:
        found.reverse()


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def _header(  # noqa: PLR0913
    path: str, count: int, sort: SortKey, *, reverse: bool, counts: dict[str, int], most: int
) -> str:
    order = {"name": "by name", "size": "largest first", "modified": "newest first"}[sort]
    header = f"{shown(path)}: {_entries(count)} ({order}{', reversed' if reverse else ''})"
    if counts["blocked"]:
        header += f"; {_entries(counts['blocked'])} blocked by blocked_paths, not shown"
    if counts["hidden"]:
        header += f"; {counts['hidden']} hidden (name starts with '.'; show_hidden=true shows them)"
    if counts["truncated"]:
        header += (
            f"; stopped after max_files_visited ({most}) entries, so the folder has more "
            "than are listed"
        )
    return header


def list_directory_work(  # noqa: PLR0913
    jail: Jail,
    settings: SkillsSettings,
    resolved: Resolved,
    progress: Progress,
    *,
    sort: SortKey,
    reverse: bool,
    show_hidden: bool,
) -> ToolResult[Listing]:
    """List ``resolved`` as ``list_directory`` does (in a worker thread).

    Raises:
        PathRefused: not a folder, or it changed on the way.
    """
    if not os.path.isdir(resolved.real):
        raise PathRefused(
            f"{shown(resolved.given)} is not a folder; read it with read_file or describe it "
            "with file_info"
        )
    counts = {"blocked": 0, "hidden": 0, "truncated": 0}
    found = _scan(
        jail,
        resolved,
        show_hidden=show_hidden,
        most=settings.max_files_visited,
        progress=progress,
        counts=counts,
    )
    _sort(found, sort, reverse)
    path = display(jail, resolved)
    budget = Budget(
        settings.max_result_bytes, "list a subfolder, sort differently, or use glob to narrow"
    )
    budget.add(
        _header(
            path,
            len(found),
            sort,
            reverse=reverse,
            counts=counts,
            most=settings.max_files_visited,
        )
    )
    if not found:
        budget.add("(nothing shown)" if counts["blocked"] + counts["hidden"] else "(empty folder)")
    entries: list[ListedEntry] = []
    for entry, _, link in found:
        if not budget.add(_entry_line(entry, link)):
            continue
        entries.append(entry)
    listing = Listing(
        path=exact(path),
        entries=entries,
        blocked=counts["blocked"],
        hidden=counts["hidden"],
        truncated=bool(counts["truncated"]) or budget.full,
    )
    return ToolResult(budget.text(), listing)
