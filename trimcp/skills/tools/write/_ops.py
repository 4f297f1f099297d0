"""The inner steps of ``write_file``, ``append_file`` and ``make_directory``, given a ``Resolved``.

Each runs in a worker thread after ``Jail.resolve(path, "write")`` accepted the path, and
changes the file system only through the parent folder's descriptor (``_write_fs``), so it
can be called directly with a path resolved earlier: a folder swapped for a symlink in
between makes it fail with ``PathRefused``, never write outside.

Also here: the checks the tools share (a symlink named by the path itself, roots that must
not be moved or deleted).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from trimcp.errors import PathRefused, ToolError
from trimcp.skills.jail import Resolved, kind_of, shown

from ._fs import failure, lstat_at, parent_of, put_file, write_all

if TYPE_CHECKING:
    from trimcp.skills.jail import Jail

__all__ = [
    "append_resolved",
    "encode_content",
    "lexical_link",
    "make_directory_resolved",
    "refuse_roots",
    "write_resolved",
]

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def encode_content(content: str) -> bytes:
    """Return ``content`` as UTF-8.

    Raises:
        ToolError: it holds a lone surrogate, which UTF-8 cannot hold.
    """
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"content holds a lone surrogate (U+{ord(exc.object[exc.start]):04X}) at "
            f"character {exc.start}, which UTF-8 cannot encode"
        ) from None


def _size(count: int) -> str:
    return f"{count} byte{'s' if count != 1 else ''}"


def _made(created: list[str]) -> str:
    if not created:
        return ""
    return "; created folder" + ("s " if len(created) > 1 else " ") + ", ".join(created)


def write_resolved(
    resolved: Resolved, data: bytes, *, overwrite: bool, create_parents: bool
) -> str:
    """Create or atomically replace the file ``resolved`` with ``data`` (``write_file``).

    Raises:
        PathRefused: a folder on the way is (now) a symlink, or the path is a special file.
        ToolError: a folder on the way is missing, the file exists and ``overwrite`` is
            false, the path is a folder, or writing failed.
    """
    created: list[str] = []
    with parent_of(
        resolved,
        create=created if create_parents else None,
        hint="; pass create_parents=true to make the missing folders",
    ) as (dir_fd, name):
        old = put_file(dir_fd, name, data, given=resolved.given, overwrite=overwrite)
    if old is None:
        return f"created {shown(resolved.given)} ({_size(len(data))}){_made(created)}"
    return (
        f"replaced {shown(resolved.given)}: {_size(len(data))} written (was "
        f"{_size(old.st_size)}), permissions kept{_made(created)}"
    )


def append_resolved(resolved: Resolved, data: bytes, *, create: bool) -> str:
    """Append ``data`` to the file ``resolved`` with ``O_APPEND`` (``append_file``).

    A file with more than one hard link is refused: the other name could be outside the
    jail, and appending writes the shared content in place.

    Raises:
        PathRefused: a symlink, special file or hard-linked file, or changed on the way.
        ToolError: missing (and ``create`` false), a folder, or writing failed.
    """
    given = resolved.given
    flags = _APPEND | (os.O_CREAT if create else 0)
    with parent_of(resolved) as (dir_fd, name):
        existed = lstat_at(dir_fd, name) is not None
        try:
            fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
        except FileNotFoundError:
            raise ToolError(f"{shown(given)} does not exist; pass create=true to make it") from None
        except OSError as exc:
            raise _append_refusal(given, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused(f"{shown(given)} is a {kind_of(info.st_mode)}, not a regular file")
        if info.st_nlink > 1:
            raise PathRefused(
                f"{shown(given)} has {info.st_nlink} hard links, and another of its names may "
                "be outside the allowed folders; append_file refuses it (write_file replaces "
                "the file instead, which leaves the other names alone)"
            )
        try:
            write_all(fd, data)
        except OSError as exc:
            raise failure(given, "appended to", exc) from None
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if not existed:
        return f"created {shown(given)} with {_size(len(data))}"
    return f"appended {_size(len(data))} to {shown(given)} (now {_size(size)})"


def _append_refusal(given: str, exc: OSError) -> ToolError:
    if exc.errno == errno.ELOOP:
        return PathRefused(f"{shown(given)} is a symlink, which is not followed here")
    if exc.errno == errno.EISDIR:
        return ToolError(f"{shown(given)} is a folder; only files can be appended to")
    if exc.errno == errno.ENXIO:  # a FIFO without a reader, opened O_NONBLOCK
        return PathRefused(f"{shown(given)} is a FIFO (named pipe), not a regular file")
    return failure(given, "opened", exc)


def make_directory_resolved(resolved: Resolved, *, parents: bool) -> str:
    """Make the folder ``resolved`` (``make_directory``); an existing folder is success.

    Raises:
        PathRefused: a folder on the way is (now) a symlink or a file.
        ToolError: a parent is missing and ``parents`` is false, or a file has the name.
    """
    given = resolved.given
    if not resolved.parts:
        return f"{shown(given)} already exists (an allowed root folder); nothing changed"
    created: list[str] = []
    with parent_of(
        resolved,
        create=created if parents else None,
        hint="; pass parents=true to make the missing folders too",
    ) as (dir_fd, name):
        try:
            os.mkdir(name, 0o777, dir_fd=dir_fd)
        except FileExistsError:
            info = lstat_at(dir_fd, name)
            if info is None or not stat.S_ISDIR(info.st_mode):
                kind = "something" if info is None else f"a {kind_of(info.st_mode)}"
                raise ToolError(f"{shown(given)} exists and is {kind}, not a folder") from None
        except OSError as exc:
            raise failure(given, "created", exc) from None
        else:
            created.append(resolved.relative)
    if not created:
        return f"folder {shown(given)} already exists; nothing changed"
    if len(created) == 1:
        return f"created folder {shown(created[0])}"
    return "created folders " + ", ".join(shown(folder) for folder in created)


# --- shared checks -----------------------------------------------------------------------------


def refuse_roots(jail: Jail, resolved: Resolved, action: str) -> None:
    """Refuse ``resolved`` when it is, or holds, one of the jail's roots.

    Raises:
        PathRefused: naming the root.
    """
    for root in jail.roots:
        if root.is_relative_to(resolved.real):
            raise PathRefused(
                f"{shown(resolved.given)} is or holds the allowed root folder "
                f"{shown(str(root))}, which cannot be {action}"
            )


def lexical_link(jail: Jail, path: str) -> Resolved | None:
    """Return the symlink ``path`` names itself, when its last component is one.

    ``Jail.resolve`` follows symlinks, which is right for reading and writing through a
    link, but deleting or moving ``link`` must act on the link, not on what it points to.
    The caller has resolved ``path`` already, so the link points inside the jail. Not
    race-free by itself: the caller acts through the parent's descriptor and checks the
    entry is still a symlink there.

    Raises:
        PathRefused: the folder holding it is outside the jail, or the link is blocked.
    """
    if path.endswith("/"):
        return None  # "link/" names the folder the link points to, as in POSIX
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return None
    parent = jail.resolve(head or ".", "write")
    candidate = parent.real / tail
    try:
        if not stat.S_ISLNK(os.lstat(candidate).st_mode):
            return None
    except OSError:
        return None
    link = Resolved(candidate, parent.root, (*parent.parts, tail), path)
    jail.check_blocked(link, "write")
    return link
