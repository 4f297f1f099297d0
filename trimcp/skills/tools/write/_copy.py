"""The inner step of ``copy``, given ``Resolved`` paths.

A file is read through ``open_regular`` (no symlink, no device) and written with
``put_file`` (atomic, through the destination folder's descriptor), keeping its permission
bits. A folder is copied only when asked (``recursive``): ``walk`` lists it without following
a symlink (symlinks inside are skipped and reported, as are blocked paths, special files and
git's own ``.git`` folders, which ``walk`` never enters), and the destination folders are
made and entered through descriptors. The walk is done twice: once to check the limits
(``max_files_visited`` entries, ``max_file_size`` per file, ``max_file_size *
max_read_files`` in all) so an oversized copy is refused before anything is written, then to
copy.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from trimcp.errors import PathRefused, ToolError
from trimcp.skills.jail import WalkStats, kind_of, open_regular, shown, walk

from ._fs import DIR_FLAGS, failure, lstat_at, parent_of, put_file

if TYPE_CHECKING:
    from collections.abc import Generator

    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Entry, Jail, Resolved

__all__ = ["CopyLimits", "copy_resolved"]

_KEPT_BITS = 0o777
# Paths named in a "skipped" note; the rest are counted.
_NAMED = 5
_HINT = "; make it first with make_directory"


@dataclass(frozen=True, slots=True)
class CopyLimits:
    """The limits of one copy, from the ``[skills]`` settings."""

    max_file_size: int
    max_visited: int
    max_total: int


@dataclass(slots=True)
class _Report:
    files: int = 0
    folders: int = 0
    bytes: int = 0
    symlinks: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)

    def text(self, head: str, stats: WalkStats) -> str:
        parts = [f"{head}: {self.files} file(s) ({self.bytes} bytes) and {self.folders} folder(s)"]
        if self.symlinks:
            parts.append(_skipped(self.symlinks, "symlink(s), which are not followed or copied"))
        if self.blocked or stats.blocked:
            parts.append(
                f"skipped {len(self.blocked) + stats.blocked} blocked path(s) (blocked_paths "
                "or write_blocked_paths)"
            )
        if self.special:
            parts.append(_skipped(self.special, "special file(s) (devices, FIFOs, sockets)"))
        if stats.unreadable:
            parts.append(f"could not read {len(stats.unreadable)} folder(s)")
        return "; ".join(parts)


def _skipped(paths: list[str], what: str) -> str:
    named = ", ".join(shown(path) for path in paths[:_NAMED])
    more = f" and {len(paths) - _NAMED} more" if len(paths) > _NAMED else ""
    return f"skipped {len(paths)} {what}: {named}{more}"


def _read(dir_fd: int, name: str, given: str, limit: int) -> tuple[bytes, int]:
    """Read the regular file ``name``; return its bytes and permission bits."""
    fd, info = open_regular(dir_fd, name, given)
    with os.fdopen(fd, "rb") as file:
        if info.st_size > limit:
            raise ToolError(
                f"{shown(given)} is {info.st_size} bytes, more than the {limit} a copy may "
                "read per file (max_file_size)"
            )
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"{shown(given)} grew past {limit} bytes while being copied")
    return data, stat.S_IMODE(info.st_mode) & _KEPT_BITS


def copy_resolved(  # noqa: PLR0913
    jail: Jail,
    source: Resolved,
    destination: Resolved,
    *,
    overwrite: bool,
    recursive: bool,
    limits: CopyLimits,
    progress: Progress,
) -> str:
    """Copy the file or folder ``source`` to ``destination`` (``copy``'s inner step).

    Raises:
        PathRefused: a path changed on the way, or is a special file.
        ToolError: missing, a folder without ``recursive``, into itself, the destination
            exists (without ``overwrite``), a limit passed, or writing failed.
    """
    src, dst = shown(source.given), shown(destination.given)
    if source.real == destination.real:
        raise ToolError(f"{src} and {dst} are the same path; nothing copied")
    with parent_of(source) as (src_fd, src_name):
        info = lstat_at(src_fd, src_name)
        if info is None:
            raise ToolError(f"{src} does not exist; nothing copied")
        if stat.S_ISREG(info.st_mode):
            data, mode = _read(src_fd, src_name, source.given, limits.max_file_size)
        elif not stat.S_ISDIR(info.st_mode):
            raise PathRefused(f"{src} is a {kind_of(info.st_mode)}; not copied")
    if stat.S_ISREG(info.st_mode):
        if destination.real.is_dir():
            raise ToolError(
                f"{dst} is a folder; give the new file's full path (such as "
                f"{shown(destination.given.rstrip('/') + '/' + source.name)})"
            )
        with parent_of(destination, hint=_HINT) as (dst_fd, dst_name):
            old = put_file(
                dst_fd, dst_name, data, given=destination.given, overwrite=overwrite, mode=mode
            )
        replaced = "" if old is None else ", replacing the file that was there"
        return f"copied {src} to {dst} ({len(data)} bytes, permissions kept){replaced}"
    if not recursive:
        raise ToolError(f"{src} is a folder; pass recursive=true to copy it with its contents")
    if destination.real.is_relative_to(source.real):
        raise ToolError(f"{dst} is inside {src}; a folder cannot be copied into itself")
    _check_limits(jail, source, limits, progress)
    return _copy_tree(
        jail, source, destination, overwrite=overwrite, limits=limits, progress=progress
    )


def _walk(
    jail: Jail, source: Resolved, stats: WalkStats, limits: CopyLimits
) -> Generator[Entry, None, None]:
    """Everything below ``source``, .gitignore or not (a copy copies it all)."""
    entries = walk(jail, source, stats=stats, max_visited=limits.max_visited, gitignore=False)
    # walk is a generator; closing it early releases its folder descriptors.
    return cast("Generator[Entry, None, None]", entries)


def _check_limits(jail: Jail, source: Resolved, limits: CopyLimits, progress: Progress) -> None:
    stats = WalkStats()
    total = 0
    too_big: list[str] = []
    entries = _walk(jail, source, stats, limits)
    with contextlib.closing(entries):
        for entry in entries:
            progress.check()
            if entry.is_file:
                size = entry.stat().st_size
                total += size
                if size > limits.max_file_size:
                    too_big.append("/".join(entry.parts[len(source.parts) :]))
    src = shown(source.given)
    if stats.truncated:
        raise ToolError(
            f"{src} holds more than {limits.max_visited} entries (max_files_visited); "
            "nothing copied"
        )
    if too_big:
        raise ToolError(
            _skipped(
                too_big, f"file(s) larger than {limits.max_file_size} bytes (max_file_size)"
            ).replace("skipped", f"{src} holds", 1)
            + "; nothing copied"
        )
    if total > limits.max_total:
        raise ToolError(
            f"{src} holds {total} bytes, more than the {limits.max_total} one copy may write "
            "(max_file_size * max_read_files); nothing copied"
        )
    progress.total = stats.visited


def _open_folder(parent_fd: int, name: str, mode: int, given: str, *, overwrite: bool) -> int:
    """Make (or, merging, reuse) the folder ``name`` in ``parent_fd`` and open it."""
    try:
        os.mkdir(name, mode | 0o700, dir_fd=parent_fd)
    except FileExistsError:
        existing = lstat_at(parent_fd, name)
        if existing is None or not stat.S_ISDIR(existing.st_mode):
            kind = "something else" if existing is None else f"a {kind_of(existing.st_mode)}"
            raise ToolError(f"{shown(given)} exists and is {kind}, not a folder") from None
        if not overwrite:
            raise ToolError(
                f"{shown(given)} already exists; pass overwrite=true to copy into it "
                "(files with the same names are replaced)"
            ) from None
    except OSError as exc:
        raise failure(given, "created", exc) from None
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        raise failure(given, "opened", exc) from None


def _copy_tree(  # noqa: C901, PLR0913
    jail: Jail,
    source: Resolved,
    destination: Resolved,
    *,
    overwrite: bool,
    limits: CopyLimits,
    progress: Progress,
) -> str:
    top_mode = _KEPT_BITS
    with parent_of(destination, hint=_HINT) as (dst_fd, dst_name):
        top = _open_folder(dst_fd, dst_name, top_mode, destination.given, overwrite=overwrite)
    report = _Report()
    stats = WalkStats()
    base = len(source.parts)
    # Destination folders on the current branch: stack[d - 1] receives entries of depth d.
    stack = [top]
    skip: tuple[str, ...] | None = None
    entries = _walk(jail, source, stats, limits)
    try:
        with contextlib.closing(entries):
            for entry in entries:
                progress.check()
                relative = entry.parts[base:]
                if skip is not None and relative[: len(skip)] == skip:
                    continue
                skip = None
                while len(stack) > entry.depth:
                    os.close(stack.pop())
                given = destination.given.rstrip("/") + "/" + "/".join(relative)
                if jail.is_blocked((*destination.parts, *relative), "write", is_dir=entry.is_dir):
                    report.blocked.append("/".join(relative))
                    skip = relative if entry.is_dir else None
                elif entry.is_symlink:
                    report.symlinks.append("/".join(relative))
                elif entry.is_dir:
                    mode = stat.S_IMODE(entry.stat().st_mode) & _KEPT_BITS
                    stack.append(_open_folder(stack[-1], entry.name, mode, given, overwrite=True))
                    report.folders += 1
                elif entry.is_file:
                    data, mode = _read(
                        entry.dir_fd, entry.name, "/".join(entry.parts), limits.max_file_size
                    )
                    report.bytes += len(data)
                    if report.bytes > limits.max_total:
                        raise ToolError(
                            f"the files grew past {limits.max_total} bytes while being copied"
                        )
                    put_file(
                        stack[-1], entry.name, data, given=given, overwrite=overwrite, mode=mode
                    )
                    report.files += 1
                else:
                    report.special.append("/".join(relative))
                progress.done += 1
    except ToolError as exc:
        raise ToolError(
            f"copying {shown(source.given)} stopped part-way ({report.files} file(s) copied): {exc}"
        ) from None
    finally:
        for fd in stack:
            os.close(fd)
    return report.text(f"copied folder {shown(source.given)} to {shown(destination.given)}", stats)
