"""``directory_tree``: a folder drawn as ``tree`` draws it, to a depth, with exclude globs.

The entries come from the jail's ``walk`` (descriptor-relative, symlinks listed but never
entered, blocked paths and ``.git`` left out, ``.gitignore`` honoured when asked), so the
tree cannot be led out of the jail. The branch glyphs need to know whether an entry is the
last of its folder, which a depth-first stream only tells later; so the entries (at most
``max_files_visited``) are gathered first and drawn after, the last-sibling flags computed
in one backward pass.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, cast

import pathspec

from trimcp.errors import PathRefused, ToolError
from trimcp.server import ToolResult
from trimcp.skills.jail import WalkStats, shown, walk
from trimcp.skills.tools._output import Budget

from ._common import EntryType, display, entry_type, exact, link_target
from ._list import kind_marker

if TYPE_CHECKING:
    from collections.abc import Generator
    from pathlib import Path

    from trimcp.config import SkillsSettings
    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Entry, Jail, Resolved

__all__ = ["Tree", "TreeEntry", "directory_tree_work"]


class TreeEntry(TypedDict):
    """One entry of the tree: its path below the tree's folder, kind and depth (1: top)."""

    path: str
    type: EntryType
    depth: int
    target_status: NotRequired[Literal["inside", "missing", "blocked", "outside"]]


class Tree(TypedDict):
    """``directory_tree``'s structured result: the entries drawn, and what was left out."""

    path: str
    entries: list[TreeEntry]
    folders: int
    files: int
    symlinks: int
    ignored: int
    blocked: int
    truncated: bool


@dataclass(slots=True)
class _Node:
    entry: TreeEntry
    name: str
    suffix: str
    last: bool = False


def _node(jail: Jail, root: Path, item: Entry, base: int) -> _Node:
    if item.is_dir:
        kind: EntryType = "folder"
    elif item.is_symlink:
        kind = "symlink"
    elif item.is_file:
        kind = "file"
    else:
        try:
            kind = entry_type(item.stat().st_mode)
        except OSError:  # removed while walked
            kind = "other"
    entry = TreeEntry(path=exact("/".join(item.parts[base:])), type=kind, depth=item.depth)
    suffix = kind_marker(kind)
    if kind == "symlink":
        link = link_target(jail, root.joinpath(*item.parts[:-1]), item.name)
        entry["target_status"] = link.where
        suffix += link.text()
    return _Node(entry, item.name, suffix)


def _mark_last(nodes: list[_Node]) -> None:
    # Backwards: an entry is the last of its folder when no later sibling was met before
    # the walk climbed above its depth; meeting a shallower entry forgets deeper levels.
    later: set[int] = set()
    for node in reversed(nodes):
        depth = node.entry["depth"]
        node.last = depth not in later
        later = {level for level in later if level < depth}
        later.add(depth)


def _draw(nodes: list[_Node]) -> list[str]:
    lines: list[str] = []
    open_levels: list[bool] = []  # per depth above: does that ancestor have later siblings
    for node in nodes:
        depth = node.entry["depth"]
        del open_levels[depth - 1 :]
        indent = "".join("│   " if more else "    " for more in open_levels)
        branch = "└── " if node.last else "├── "
        lines.append(f"{indent}{branch}{shown(node.name)}{node.suffix}")
        open_levels.append(not node.last)
    return lines


def _exclude_spec(exclude: list[str]) -> pathspec.PathSpec[pathspec.Pattern] | None:
    if not exclude:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(exclude)
    except (ValueError, TypeError) as exc:
        raise ToolError(f"an exclude pattern is not a valid gitignore-style glob: {exc}") from None


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _summary(nodes: list[_Node], stats: WalkStats, depth: int, settings: SkillsSettings) -> str:
    folders = sum(1 for node in nodes if node.entry["type"] == "folder")
    files = sum(1 for node in nodes if node.entry["type"] == "file")
    parts = [f"{_plural(folders, 'folder')}, {_plural(files, 'file')}"]
    if stats.symlinks:
        parts.append(f"{_plural(stats.symlinks, 'symlink')} (not followed)")
    if stats.special:
        parts.append(_plural(stats.special, "special file"))
    if stats.ignored:
        parts.append(f"{stats.ignored} ignored by .gitignore (gitignore=false shows them)")
    if stats.blocked:
        parts.append(f"{stats.blocked} blocked (blocked_paths)")
    unexpanded = sum(
        1 for node in nodes if node.entry["type"] == "folder" and node.entry["depth"] == depth
    )
    if unexpanded:
        parts.append(f"{_plural(unexpanded, 'folder')} at depth {depth} not expanded")
    if stats.unreadable:
        shown_ = "; ".join(shown(text) for text in stats.unreadable[:5])
        more = f" and {len(stats.unreadable) - 5} more" if len(stats.unreadable) > 5 else ""
        parts.append(f"could not read {shown_}{more}")
    summary = "; ".join(parts)
    if stats.truncated:
        summary += (
            f"\n[stopped after max_files_visited ({settings.max_files_visited}) entries: "
            "the tree is incomplete; narrow it with a subfolder path, a smaller depth or exclude]"
        )
    return summary


def directory_tree_work(  # noqa: PLR0913
    jail: Jail,
    settings: SkillsSettings,
    resolved: Resolved,
    progress: Progress,
    *,
    depth: int,
    exclude: list[str],
    gitignore: bool,
) -> ToolResult[Tree]:
    """Draw ``resolved`` as ``directory_tree`` does (in a worker thread).

    Raises:
        ToolError: not a folder, or an invalid exclude pattern.
    """
    if not resolved.real.is_dir():
        raise PathRefused(
            f"{shown(resolved.given)} is not a folder; read it with read_file or describe it "
            "with file_info"
        )
    spec = _exclude_spec(exclude)
    stats = WalkStats()
    nodes: list[_Node] = []
    base = len(resolved.parts)
    # ``walk`` is a generator (annotated as an iterator): closing it releases its descriptors
    # at once if this thread is cancelled part way.
    walker = cast(
        "Generator[Entry, None, None]",
        walk(
            jail,
            resolved,
            stats=stats,
            max_visited=settings.max_files_visited,
            gitignore=gitignore,
            exclude=spec,
            max_depth=depth,
        ),
    )
    with contextlib.closing(walker):
        for item in walker:
            nodes.append(_node(jail, resolved.root, item, base))
            progress.done += 1
            if progress.done % 256 == 0:
                progress.check()
    _mark_last(nodes)
    path = display(jail, resolved)
    budget = Budget(
        settings.max_result_bytes, "narrow it with a subfolder path, a smaller depth or exclude"
    )
    budget.add(f"{shown(path)}/" if path != "." else ".")
    entries: list[TreeEntry] = []
    for node, line in zip(nodes, _draw(nodes), strict=True):
        if budget.add(line):
            entries.append(node.entry)
    tree = Tree(
        path=exact(path),
        entries=entries,
        folders=sum(1 for node in nodes if node.entry["type"] == "folder"),
        files=sum(1 for node in nodes if node.entry["type"] == "file"),
        symlinks=stats.symlinks,
        ignored=stats.ignored,
        blocked=stats.blocked,
        truncated=stats.truncated or budget.full,
    )
    return ToolResult(budget.text(_summary(nodes, stats, depth, settings)), tree)
