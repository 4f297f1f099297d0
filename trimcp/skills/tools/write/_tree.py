"""The inner steps of ``delete`` and ``move``, given ``Resolved`` paths.

A folder is deleted bottom-up through descriptors: each folder is opened from its parent's
descriptor with ``O_NOFOLLOW | O_DIRECTORY``, its entries are unlinked relative to it, and
it is removed from its parent's (``unlinkat``). A symlink inside is unlinked itself, never
what it points to; a folder swapped for a symlink mid-way fails its open and stops the
delete. Before anything is removed the tree is scanned (bounded by ``max_files_visited``):
a tree holding a path the write tools may not change (``.git/``, ``.env``, ...) is refused
whole, rather than half-deleted. ``move`` scans a folder the same way, since moving a folder
moves everything in it, and a path blocked by an anchored pattern could be freed by
renaming a folder above it.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trimcp.errors import PathRefused, ToolError
from trimcp.skills.jail import kind_of, shown

from ._fs import DIR_FLAGS, failure, lstat_at, parent_of, rename_noreplace
from ._ops import refuse_roots

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Jail, Resolved

__all__ = ["TreeScan", "delete_link", "delete_resolved", "move_resolved", "scan_tree"]

# Blocked paths named in a refusal; the rest are counted.
_NAMED = 5


@dataclass(slots=True)
class TreeScan:
    """What lies below a folder: counts, and the entries a check refused."""

    files: int = 0
    folders: int = 0
    symlinks: int = 0
    blocked: list[str] = field(default_factory=list)
    too_many: bool = False

    @property
    def entries(self) -> int:
        """Everything counted."""
        return self.files + self.folders + self.symlinks


def scan_tree(  # noqa: C901
    dir_fd: int,
    name: str,
    *,
    refused: Callable[[tuple[str, ...], bool], bool],
    max_visited: int,
    progress: Progress,
) -> TreeScan:
    """Count what lies below the folder ``name`` in ``dir_fd``; never follows a symlink.

    ``refused(relative_parts, is_dir)`` marks entries as blocked. Stops once more than
    ``max_visited`` entries were seen (``too_many``).

    Raises:
        OSError: a folder could not be opened or listed (swapped for a symlink: ``ELOOP``).
    """
    scan = TreeScan()
    # Each frame: the folder's descriptor, its parts below the top, its sub-folders left.
    # Only the folders on the current branch are open, so descriptors grow with depth only.
    stack: list[tuple[int, tuple[str, ...], list[str]]] = []

    def enter(parent_fd: int, folder: str, parts: tuple[str, ...]) -> bool:
        fd = os.open(folder, DIR_FLAGS, dir_fd=parent_fd)
        folders: list[str] = []
        stack.append((fd, parts, folders))
        with os.scandir(fd) as listing:
            entries = [
                (entry.name, entry.is_dir(follow_symlinks=False), entry.is_symlink())
                for entry in listing
            ]
        for entry_name, is_dir, is_link in sorted(entries, reverse=True):
            progress.check()
            if scan.entries >= max_visited:
                scan.too_many = True
                return False
            child = (*parts, entry_name)
            if refused(child, is_dir):
                # One blocked folder is enough to refuse; what is in it is not listed.
                scan.blocked.append("/".join(child) + ("/" if is_dir else ""))
                continue
            if is_dir:
                scan.folders += 1
                folders.append(entry_name)
            elif is_link:
                scan.symlinks += 1
            else:
                scan.files += 1
        return True

    try:
        if not enter(dir_fd, name, ()):
            return scan
        while stack:
            fd, parts, folders = stack[-1]
            if not folders:
                os.close(stack.pop()[0])
                continue
            folder = folders.pop()
            if not enter(fd, folder, (*parts, folder)):
                return scan
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return scan


def _remove_tree(dir_fd: int, name: str, progress: Progress) -> int:
    """Remove the folder ``name`` in ``dir_fd`` and everything in it; return entries removed.

    Raises:
        OSError: something could not be removed or opened (a folder swapped for a symlink
            fails with ``ELOOP``/``ENOTDIR``); what was removed before stays removed.
    """
    removed = 0
    # Each frame: the folder's descriptor, its name in the frame above, its sub-folders left.
    stack: list[tuple[int, str, list[str]]] = []

    def enter(parent_fd: int, folder: str) -> None:
        nonlocal removed
        fd = os.open(folder, DIR_FLAGS, dir_fd=parent_fd)
        folders: list[str] = []
        try:
            with os.scandir(fd) as listing:
                entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
            for entry_name, is_dir in entries:
                progress.check()
                if is_dir:
                    folders.append(entry_name)
                else:
                    # unlinkat removes the entry itself: a symlink, never its target.
                    os.unlink(entry_name, dir_fd=fd)
                    removed += 1
        except BaseException:
            os.close(fd)
            raise
        stack.append((fd, folder, folders))

    enter(dir_fd, name)
    try:
        while stack:
            fd, folder, folders = stack[-1]
            if folders:
                enter(fd, folders.pop())
                continue
            stack.pop()
            os.close(fd)
            os.rmdir(folder, dir_fd=stack[-1][0] if stack else dir_fd)
            removed += 1
            progress.done = removed
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return removed


def _blocked_message(given: str, scan: TreeScan, action: str) -> str:
    named = ", ".join(shown(path) for path in scan.blocked[:_NAMED])
    more = len(scan.blocked) - _NAMED
    return (
        f"{shown(given)} holds {len(scan.blocked)} path(s) the write tools may not change "
        f"({named}{f' and {more} more' if more > 0 else ''}; blocked_paths or "
        f"write_blocked_paths); nothing was {action}"
    )


def _checked_scan(  # noqa: PLR0913
    jail: Jail,
    resolved: Resolved,
    dir_fd: int,
    name: str,
    *,
    max_visited: int,
    progress: Progress,
    action: str,
    also: Resolved | None = None,
) -> TreeScan:
    def refused(relative: tuple[str, ...], is_dir: bool) -> bool:
        if jail.is_blocked((*resolved.parts, *relative), "write", is_dir=is_dir):
            return True
        return also is not None and jail.is_blocked(
            (*also.parts, *relative), "write", is_dir=is_dir
        )

    try:
        scan = scan_tree(dir_fd, name, refused=refused, max_visited=max_visited, progress=progress)
    except OSError as exc:
        raise failure(resolved.given, "examined", exc) from None
    if scan.too_many:
        raise ToolError(
            f"{shown(resolved.given)} holds more than {max_visited} entries "
            f"(max_files_visited), too many to check; nothing was {action}"
        )
    if scan.blocked:
        scan.blocked = [f"{resolved.relative}/{path}" for path in scan.blocked]
        raise PathRefused(_blocked_message(resolved.given, scan, action))
    return scan


def delete_resolved(
    jail: Jail, resolved: Resolved, *, recursive: bool, max_visited: int, progress: Progress
) -> str:
    """Delete the file or folder ``resolved`` (``delete``'s inner step).

    Raises:
        PathRefused: a root, a path that changed on the way, or a folder holding blocked
            paths.
        ToolError: missing, a non-empty folder without ``recursive``, or removal failed.
    """
    given = resolved.given
    refuse_roots(jail, resolved, "deleted")
    with parent_of(resolved) as (dir_fd, name):
        info = lstat_at(dir_fd, name)
        if info is None:
            raise ToolError(f"{shown(given)} does not exist; nothing deleted")
        if stat.S_ISLNK(info.st_mode):
            raise PathRefused(f"{shown(given)} became a symlink after it was checked; not deleted")
        if not stat.S_ISDIR(info.st_mode):
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused(f"{shown(given)} is a {kind_of(info.st_mode)}; not deleted")
            try:
                os.unlink(name, dir_fd=dir_fd)
            except OSError as exc:
                raise failure(given, "deleted", exc) from None
            return f"deleted file {shown(given)} ({info.st_size} bytes)"
        if not recursive:
            try:
                os.rmdir(name, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise ToolError(
                        f"{shown(given)} is a folder that is not empty; pass recursive=true "
                        "to delete it with everything in it"
                    ) from None
                raise failure(given, "deleted", exc) from None
            return f"deleted empty folder {shown(given)}"
        scan = _checked_scan(
            jail,
            resolved,
            dir_fd,
            name,
            max_visited=max_visited,
            progress=progress,
            action="deleted",
        )
        progress.total = scan.entries + 1
        try:
            removed = _remove_tree(dir_fd, name, progress)
        except OSError as exc:
            raise ToolError(
                f"deleting {shown(given)} stopped part-way: {failure(given, 'deleted', exc)}"
            ) from None
    return (
        f"deleted folder {shown(given)} with {scan.files} file(s), {scan.folders} folder(s) "
        f"and {scan.symlinks} symlink(s) in it ({removed} entries removed; symlinks were "
        "removed themselves, never what they point to)"
    )


def delete_link(link: Resolved) -> str:
    """Delete the symlink ``link`` itself (the path named a symlink inside the jail).

    Raises:
        ToolError: it is no longer a symlink, or could not be removed.
    """
    with parent_of(link) as (dir_fd, name):
        info = lstat_at(dir_fd, name)
        if info is None or not stat.S_ISLNK(info.st_mode):
            raise ToolError(f"{shown(link.given)} changed while being deleted; try again")
        try:
            os.unlink(name, dir_fd=dir_fd)
        except OSError as exc:
            raise failure(link.given, "deleted", exc) from None
    return f"deleted the symlink {shown(link.given)} (what it pointed to is untouched)"


def move_resolved(  # noqa: C901, PLR0913
    jail: Jail,
    source: Resolved,
    destination: Resolved,
    *,
    overwrite: bool,
    max_visited: int,
    progress: Progress,
) -> str:
    """Rename ``source`` to ``destination`` through both parents' descriptors (``move``).

    Raises:
        PathRefused: a root, a symlink, a special file, or a folder holding blocked paths.
        ToolError: missing, the destination exists (without ``overwrite``), a folder into
            itself, another file system, or the rename failed.
    """
    src, dst = shown(source.given), shown(destination.given)
    if source.real == destination.real:
        return f"{src} and {dst} are the same path; nothing moved"
    refuse_roots(jail, source, "moved")
    refuse_roots(jail, destination, "replaced")
    with (
        parent_of(source) as (src_fd, src_name),
        parent_of(destination, hint="; make it first with make_directory") as (dst_fd, dst_name),
    ):
        info = lstat_at(src_fd, src_name)
        if info is None:
            raise ToolError(f"{src} does not exist; nothing moved")
        if stat.S_ISLNK(info.st_mode):
            raise PathRefused(f"{src} became a symlink after it was checked; not moved")
        if stat.S_ISDIR(info.st_mode):
            if destination.real.is_relative_to(source.real):
                raise ToolError(f"{dst} is inside {src}; a folder cannot be moved into itself")
            _checked_scan(
                jail,
                source,
                src_fd,
                src_name,
                max_visited=max_visited,
                progress=progress,
                action="moved",
                also=destination,
            )
        elif not stat.S_ISREG(info.st_mode):
            raise PathRefused(f"{src} is a {kind_of(info.st_mode)}; not moved")
        existing = lstat_at(dst_fd, dst_name)
        if existing is not None and not overwrite:
            raise ToolError(f"{dst} already exists; pass overwrite=true to replace it")
        try:
            if overwrite:
                os.rename(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
            else:
                rename_noreplace(src_fd, src_name, dst_fd, dst_name)
        except FileExistsError:
            raise ToolError(f"{dst} already exists; pass overwrite=true to replace it") from None
        except OSError as exc:
            raise _move_failure(src, dst, exc) from None
    if existing is None:
        return f"moved {src} to {dst}"
    return f"moved {src} to {dst}, replacing the {kind_of(existing.st_mode)} that was there"


def _move_failure(src: str, dst: str, exc: OSError) -> ToolError:
    reasons = {
        errno.ENOTEMPTY: f"{dst} is a folder that is not empty; it cannot be replaced",
        errno.EEXIST: f"{dst} is a folder that is not empty; it cannot be replaced",
        errno.EISDIR: f"{dst} is a folder; a file cannot replace it",
        errno.ENOTDIR: f"{dst} is a file; a folder cannot replace it",
        errno.EXDEV: f"{dst} is on another file system; copy {src} there, then delete it",
        errno.EINVAL: f"{dst} is inside {src}; a folder cannot be moved into itself",
    }
    message = reasons.get(exc.errno or 0)
    if message is not None:
        return ToolError(message + "; nothing moved")
    if exc.errno == errno.ELOOP:
        return failure(src, "moved", exc)
    return ToolError(f"{src} could not be moved to {dst}: {exc.strerror}")
