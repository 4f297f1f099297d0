"""Opening and walking jailed paths through directory descriptors, never following a symlink.

``Jail.resolve`` decides on the path as it is when asked; between that check and the open a
folder could be swapped for a symlink that leads out. So nothing here opens a path string:
each component is opened relative to the descriptor of the one above it with ``O_NOFOLLOW``
(``openat(2)``), starting at the root, and a component that has become a symlink fails the
open (``ELOOP``/``ENOTDIR``) instead of being followed. Files are opened ``O_NONBLOCK`` so a
FIFO swapped in cannot hang the server, and ``fstat`` on the open descriptor refuses anything
but a regular file. Writes use the same descriptors (``dir_fd=``) for create, rename and
unlink. The walk used by search, glob and tree keeps a descriptor per open folder and lists
folders with ``scandir(fd)``, so it is race-free too and costs one ``openat`` per folder;
``walk_files``, grep's variant, is the same walk handing over only regular files (by their
listed type, to be confirmed by ``fstat`` once opened), without an ``Entry`` per file.
"""

from __future__ import annotations

import contextlib
import errno
import operator
import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pathspec

from trimcp.errors import PathRefused

from ._jail import Resolved, kind_of, shown

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator, Sequence

    from ._jail import Access, Jail

__all__ = [
    "FILE_FLAGS",
    "Entry",
    "Found",
    "WalkStats",
    "open_dir",
    "open_parent",
    "open_regular",
    "read_regular",
    "walk",
    "walk_files",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: How a file in the jail is opened for reading: never through a symlink (ELOOP), never
#: waiting on a FIFO or device (O_NONBLOCK), never becoming the controlling terminal.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
# What a failed O_NOFOLLOW open of a component that became a symlink (or a file) looks like.
_SWAPPED = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})


def _refused_while_opening(given: str, exc: OSError) -> PathRefused:
    if exc.errno in _SWAPPED:
        return PathRefused(
            f"{shown(given)} changed while it was being opened (a folder on the way is now a "
            "symlink or a file); symlinks are not followed there"
        )
    if exc.errno == errno.ENOENT:
        return PathRefused(f"{shown(given)} does not exist")
    return PathRefused(f"{shown(given)} cannot be opened: {exc.strerror}")


def _open_below(root_fd: int, parts: Sequence[str], given: str) -> int:
    """Open the folder ``parts`` below ``root_fd`` one component at a time, no symlinks."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refused_while_opening(given, exc) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_dir(resolved: Resolved) -> int:
    """Return a descriptor of the folder ``resolved``; the caller closes it.

    Raises:
        PathRefused: it does not exist, is not a folder, or changed on the way.
    """
    try:
        root_fd = os.open(resolved.root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError as exc:
        raise _refused_while_opening(resolved.given, exc) from None
    try:
        return _open_below(root_fd, resolved.parts, resolved.given)
    finally:
        os.close(root_fd)


@contextlib.contextmanager
def open_parent(resolved: Resolved) -> Iterator[tuple[int, str]]:
    """Yield a descriptor of the folder holding ``resolved`` and its name in it.

    For the write tools: create, replace, rename and unlink with ``dir_fd=`` and the name.

    Raises:
        PathRefused: ``resolved`` is a root (it has no parent inside the jail), or the
            parent does not exist, is not a folder, or changed on the way.
    """
    if not resolved.parts:
        raise PathRefused(f"{shown(resolved.given)} is an allowed root folder itself")
    try:
        root_fd = os.open(resolved.root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError as exc:
        raise _refused_while_opening(resolved.given, exc) from None
    try:
        fd = _open_below(root_fd, resolved.parts[:-1], resolved.given)
    finally:
        os.close(root_fd)
    try:
        yield fd, resolved.parts[-1]
    finally:
        os.close(fd)


def open_regular(dir_fd: int, name: str, given: str) -> tuple[int, os.stat_result]:
    """Open the regular file ``name`` in ``dir_fd`` for reading; return it and its stat.

    Raises:
        PathRefused: it is a symlink, a folder, a device, FIFO or socket, or cannot be opened.
    """
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathRefused(f"{shown(given)} is a symlink, which is not followed here") from None
        raise _refused_while_opening(given, exc) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise PathRefused(f"{shown(given)} is a {kind_of(info.st_mode)}, not a regular file")
    return fd, info


def read_regular(resolved: Resolved, limit: int) -> tuple[bytes, os.stat_result]:
    """Read the whole regular file ``resolved`` if it holds at most ``limit`` bytes.

    Raises:
        PathRefused: as ``open_regular``, or larger than ``limit`` (the message says how to
            read part of it).
    """
    with open_parent(resolved) as (dir_fd, name):
        fd, info = open_regular(dir_fd, name, resolved.given)
    with os.fdopen(fd, "rb") as file:
        if info.st_size > limit:
            raise PathRefused(
                f"{shown(resolved.given)} is {info.st_size} bytes, more than the {limit} "
                "allowed (max_file_size); read part of it with offset/limit or head/tail"
            )
        data = file.read(limit + 1)
    if len(data) > limit:
        raise PathRefused(f"{shown(resolved.given)} grew past {limit} bytes while being read")
    return data, info


# --- walking --------------------------------------------------------------------------------


@dataclass(slots=True)
class WalkStats:
    """What a walk saw and left out, for the summary line of a tool's result."""

    visited: int = 0
    blocked: int = 0
    ignored: int = 0
    symlinks: int = 0
    special: int = 0
    unreadable: list[str] = field(default_factory=list)
    truncated: bool = False


@dataclass(slots=True)
class Entry:
    """One file or folder met by ``walk``.

    ``dir_fd`` is the open descriptor of the folder holding it, valid only until the walk
    moves on; open the entry with ``open_regular(entry.dir_fd, entry.name, ...)``.
    """

    parts: tuple[str, ...]
    dir_fd: int
    entry: os.DirEntry[str]
    depth: int

    @property
    def name(self) -> str:
        """The entry's own name."""
        return self.parts[-1]

    @property
    def relative(self) -> str:
        """The path below the root, ``/``-separated."""
        return "/".join(self.parts)

    @property
    def is_dir(self) -> bool:
        """A folder (never through a symlink)."""
        return self.entry.is_dir(follow_symlinks=False)

    @property
    def is_file(self) -> bool:
        """A regular file (never through a symlink)."""
        return self.entry.is_file(follow_symlinks=False)

    @property
    def is_symlink(self) -> bool:
        """A symlink (reported, never followed)."""
        return self.entry.is_symlink()

    def stat(self) -> os.stat_result:
        """The entry's own ``lstat``."""
        return self.entry.stat(follow_symlinks=False)


_GITIGNORE = ".gitignore"


def _ignore_spec(dir_fd: int) -> pathspec.GitIgnoreSpec | None:
    try:
        fd = os.open(_GITIGNORE, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None
        text = file.read(1024 * 1024).decode("utf-8", "replace")
    spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    return spec if spec.patterns else None


def walk(  # noqa: PLR0913
    jail: Jail,
    start: Resolved,
    *,
    stats: WalkStats,
    max_visited: int,
    gitignore: bool = True,
    exclude: pathspec.PathSpec[pathspec.Pattern] | None = None,
    max_depth: int | None = None,
    access: Access = "read",
) -> Iterator[Entry]:
    """Yield what lies below the folder ``start``, depth first, names sorted, no symlinks followed.

    Blocked paths are skipped (counted in ``stats.blocked``); so are ``.git`` folders, what
    ``.gitignore`` files exclude when ``gitignore`` is true (``stats.ignored``) and what
    ``exclude`` matches (paths relative to ``start``; not counted). Symlinks are yielded
    (``is_symlink``) but never entered. Stops after ``max_visited`` entries, setting
    ``stats.truncated``. Close the generator (``contextlib.closing``) to release its
    descriptors early.

    Raises:
        PathRefused: ``start`` is not a folder or changed on the way.
    """
    scan = _scan(
        jail, start, stats=stats, max_visited=max_visited, gitignore=gitignore, exclude=exclude,
        max_depth=max_depth, access=access, files_only=False,
    )  # fmt: skip
    try:
        for dir_fd, parts, _, items, depth in scan:
            for item in items:
                yield Entry((*parts, item.name), dir_fd, item, depth)
    finally:
        scan.close()


#: What ``walk_files`` yields per run of files of one folder: the folder's descriptor
#: (valid until the walk moves on), its parts below the root, its path below the root
#: (``"a/b/"``, ``""`` for a root), the files' ``DirEntry``s in name order, their depth
#: below the start.
Found = tuple[int, tuple[str, ...], str, list[os.DirEntry[str]], int]


def walk_files(  # noqa: PLR0913
    jail: Jail,
    start: Resolved,
    *,
    stats: WalkStats,
    max_visited: int,
    gitignore: bool = True,
    exclude: pathspec.PathSpec[pathspec.Pattern] | None = None,
    access: Access = "read",
) -> Generator[Found]:
    """``walk`` for grep: the same entries skipped and counted, only regular files yielded,
    a folder's files in runs (``Found``): no ``Entry``, no resuming of the walk per file.

    The files come in ``walk``'s order: a run ends where the walk goes down into a
    folder. A file is regular by its ``DirEntry`` type (no system call); it may be swapped
    for something else before it is opened, so open it with ``open_regular`` (or check
    ``fstat`` on the descriptor as it does).

    Raises:
        PathRefused: ``start`` is not a folder or changed on the way.
    """
    return _scan(
        jail, start, stats=stats, max_visited=max_visited, gitignore=gitignore, exclude=exclude,
        max_depth=None, access=access, files_only=True,
    )  # fmt: skip


def _scan(  # noqa: C901, PLR0912, PLR0913, PLR0915
    jail: Jail,
    start: Resolved,
    *,
    stats: WalkStats,
    max_visited: int,
    gitignore: bool,
    exclude: pathspec.PathSpec[pathspec.Pattern] | None,
    max_depth: int | None,
    access: Access,
    files_only: bool,
) -> Generator[Found]:
    """The loop under ``walk`` (a run of one entry each time) and ``walk_files``.

    It runs once per entry of a 10,000-file search, so it keeps per folder what it can:
    the folder's path text (an entry's path is one concatenation), an iterator over its
    sorted entries, and whether a blocked pattern could match through it (``BlockedCheck``:
    an entry's own name is matched, not its whole path, unless a folder above is tainted).
    """
    check = jail.blocked_check(access)
    names, paths, exact = check.names.match, check.paths.search, check.exact
    # Each frame: the folder's descriptor, parts below the root, path below the root ("a/b/",
    # "" for a root), iterator over its sorted entries, tainted (see BlockedCheck), depth.
    stack: list[tuple[int, tuple[str, ...], str, Iterator[os.DirEntry[str]], bool, int]] = []
    # Each .gitignore in force: the depth of its folder, where its folder ends in a path.
    ignores: list[tuple[int, int, pathspec.GitIgnoreSpec]] = []

    def enter(fd: int, parts: tuple[str, ...], folder: str, tainted: bool, depth: int) -> None:
        try:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=_BY_NAME)
        except OSError as exc:
            stats.unreadable.append(f"{folder[:-1] or '.'}: {exc.strerror}")
            entries = []
        stack.append((fd, parts, folder, iter(entries), tainted, depth))
        if gitignore:
            spec = _ignore_spec(fd)
            if spec is not None:
                ignores.append((depth, len(folder), spec))

    run: list[os.DirEntry[str]] = []  # files_only: the files not yet yielded
    tainted = False
    for name in start.parts:
        tainted = check.taints(tainted, name)
    top_folder = "".join(f"{name}/" for name in start.parts)
    skip = len(top_folder)  # where a path below ``start`` begins
    if gitignore:
        ignores.extend(_ancestor_ignores(start))
    top = open_dir(start)
    try:
        enter(top, start.parts, top_folder, tainted, 0)
        while stack:
            fd, parts, folder, entries, tainted, depth = stack[-1]
            for item in entries:
                name = item.name
                is_dir = item.is_dir(follow_symlinks=False)
                if is_dir:
                    if name == ".git":
                        continue
                    path = f"{folder}{name}/"
                    taints = tainted or names(name + "/") is not None
                    maybe = taints or paths(path) is not None
                else:
                    path = folder + name
                    maybe = tainted or names(name) is not None or paths(path) is not None
                if maybe and exact(path):
                    stats.blocked += 1
                    continue
                if ignores and _ignored(ignores, path):
                    stats.ignored += 1
                    continue
                if exclude is not None and exclude.match_file(path[skip:]):
                    continue
                if stats.visited >= max_visited:
                    stats.truncated = True
                    if run:
                        yield fd, parts, folder, run, depth + 1
                    return
                stats.visited += 1
                if is_dir:
                    if not files_only:
                        yield fd, parts, folder, [item], depth + 1
                    elif run:
                        yield fd, parts, folder, run, depth + 1
                        run = []
                    if max_depth is not None and depth + 1 >= max_depth:
                        continue
                    try:
                        sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    except OSError as exc:
                        stats.unreadable.append(f"{path[:-1]}: {exc.strerror}")
                        continue
                    enter(sub, (*parts, name), path, taints, depth + 1)
                    break  # go down; this folder's iterator resumes when that one is done
                if item.is_file(follow_symlinks=False):
                    if files_only:
                        run.append(item)
                    else:
                        yield fd, parts, folder, [item], depth + 1
                    continue
                if item.is_symlink():
                    stats.symlinks += 1
                else:
                    stats.special += 1
                if not files_only:
                    yield fd, parts, folder, [item], depth + 1
            else:
                if run:
                    yield fd, parts, folder, run, depth + 1
                    run = []
                stack.pop()
                os.close(fd)
                if ignores and ignores[-1][0] == depth:
                    ignores.pop()
    finally:
        for frame in stack:
            os.close(frame[0])


_BY_NAME = operator.attrgetter("name")


def _ancestor_ignores(start: Resolved) -> list[tuple[int, int, pathspec.GitIgnoreSpec]]:
    """The ``.gitignore`` files of the folders between the root and ``start``, top first.

    A search that starts in a subfolder honours them as git does (``build/`` in the root's
    file hides ``src/build`` from a search of ``src``). Depth -1: they stay for the whole
    walk. Files above the root are never read.
    """
    found: list[tuple[int, int, pathspec.GitIgnoreSpec]] = []
    for depth in range(len(start.parts)):
        parts = start.parts[:depth]
        folder = Resolved(start.root.joinpath(*parts), start.root, parts, start.given)
        fd = open_dir(folder)
        try:
            spec = _ignore_spec(fd)
        finally:
            os.close(fd)
        if spec is not None:
            found.append((-1, sum(len(part) + 1 for part in parts), spec))
    return found


def _ignored(ignores: list[tuple[int, int, pathspec.GitIgnoreSpec]], path: str) -> bool:
    # Deeper .gitignore files win (they may re-include with "!"), so the last verdict counts.
    # ``path`` is below the root, with a "/" after a folder; each file sees it below its own.
    verdict = False
    for _, offset, spec in ignores:
        result = spec.check_file(path[offset:])
        if result.include is not None:
            verdict = result.include
    return verdict
