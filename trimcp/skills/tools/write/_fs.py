"""Changing files through directory descriptors: create, replace, rename; never a path string.

``Jail.resolve`` checked the path as it was; between that check and the change a folder on
the way could be swapped for a symlink that leads out of the jail. So every change here is
made relative to a descriptor of the parent folder, opened one component at a time from the
root with ``O_NOFOLLOW`` (``openat(2)``): a swapped-in symlink fails the open instead of
being followed. The name itself is never followed either: new files are created
``O_CREAT | O_EXCL | O_NOFOLLOW``, and ``rename``/``unlink``/``mkdir`` act on the directory
entry, not on what a symlink there would point to.

A file is replaced atomically: its new content goes to a temporary file with a random name
in the same folder, which is then renamed over it (``renameat(2)``), so a reader sees the old
file or the new one, never half of one, and a failure leaves the old one untouched. A
replace also breaks a hard link the old file had, so a file hard-linked from outside the jail
is never written through. "Create, do not replace" uses ``renameat2(RENAME_NOREPLACE)`` on
Linux, else ``link(2)`` (which fails when the name exists), else, on a file system that has
neither, a check followed by a rename: there a file created in the microseconds between the
two would be replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import sys
from typing import TYPE_CHECKING

from trimcp.errors import PathRefused, ToolError
from trimcp.skills.jail import kind_of, shown

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from trimcp.skills.jail import Resolved

__all__ = [
    "DIR_FLAGS",
    "failure",
    "lstat_at",
    "parent_of",
    "put_file",
    "rename_noreplace",
    "write_all",
]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Permission bits a replaced file keeps: setuid/setgid are dropped, as write(2) itself does.
_KEPT_BITS = 0o777
_RENAME_NOREPLACE = 1
# renameat2 answers these when the file system (or the kernel) lacks RENAME_NOREPLACE.
_NO_SUPPORT = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})
# link(2) answers these where hard links are not possible.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV})


def failure(given: str, action: str, exc: OSError) -> ToolError:
    """Return the error of an ``OSError`` met while doing ``action`` to ``given``."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return PathRefused(
            f"{shown(given)} changed while it was being {action} (a folder on the way is now "
            "a symlink or a file); symlinks are not followed there"
        )
    reason = exc.strerror or type(exc).__name__
    return ToolError(f"{shown(given)} could not be {action}: {reason}")


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """Return the ``lstat`` of ``name`` in ``dir_fd``, or None when nothing has that name."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_root(resolved: Resolved) -> int:
    # The root itself was resolved (symlinks followed) when the jail was made.
    try:
        return os.open(resolved.root, DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError as exc:
        raise failure(resolved.given, "opened", exc) from None


@contextlib.contextmanager
def parent_of(
    resolved: Resolved, *, create: list[str] | None = None, hint: str = ""
) -> Iterator[tuple[int, str]]:
    """Yield a descriptor of the folder holding ``resolved`` and its name in it.

    Like ``trimcp.skills.jail.open_parent``, one ``O_NOFOLLOW`` open per component from the
    root, with messages that name the missing folder. With ``create`` (a list) the missing
    folders are made on the way (``mkdirat``) and their paths appended to it.

    Raises:
        PathRefused: ``resolved`` is a root, or a folder on the way is a symlink or a file.
        ToolError: a folder on the way does not exist (``hint`` says what to do).
    """
    if not resolved.parts:
        raise PathRefused(f"{shown(resolved.given)} is an allowed root folder itself")
    fd = _open_root(resolved)
    try:
        for depth, part in enumerate(resolved.parts[:-1], start=1):
            child = _open_or_make(fd, part, resolved, depth, create, hint)
            os.close(fd)
            fd = child
        yield fd, resolved.parts[-1]
    finally:
        os.close(fd)


def _open_or_make(  # noqa: PLR0913, PLR0917
    fd: int, part: str, resolved: Resolved, depth: int, create: list[str] | None, hint: str
) -> int:
    folder = "/".join(resolved.parts[:depth])
    for _ in range(2):
        try:
            return os.open(part, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if create is None:
                raise ToolError(
                    f"{shown(resolved.given)}: the folder {shown(folder)} does not exist{hint}"
                ) from None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise PathRefused(
                    f"{shown(resolved.given)}: {shown(folder)} is not a folder (a file, or a "
                    "symlink, which is not followed there)"
                ) from None
            raise failure(resolved.given, "opened", exc) from None
        try:
            os.mkdir(part, 0o777, dir_fd=fd)
        except FileExistsError:
            continue  # made by someone else meanwhile: open it
        except OSError as exc:
            raise failure(folder, "created", exc) from None
        create.append(folder)
    raise PathRefused(f"{shown(resolved.given)}: {shown(folder)} keeps changing")


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_temp(dir_fd: int, data: bytes, mode: int | None) -> str:
    """Write ``data`` to a new file with a random name in ``dir_fd``; return its name.

    ``mode`` None: a new file's default permissions (0o666 less the umask). Otherwise the
    file is made private first and given ``mode`` once written, so nobody reads it early.
    """
    for _ in range(16):
        # Not derived from the target's name, so a 255-byte name still leaves room.
        name = f".trimcp-{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(name, _NEW_FILE, 0o666 if mode is None else 0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 16 collisions of 64 random bits
        raise ToolError("could not pick a free temporary file name")
    try:
        try:
            write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise
    return name


def put_file(  # noqa: PLR0913
    dir_fd: int,
    name: str,
    data: bytes,
    *,
    given: str,
    overwrite: bool,
    mode: int | None = None,
    expected: os.stat_result | None = None,
) -> os.stat_result | None:
    """Create or replace the regular file ``name`` in ``dir_fd`` with ``data``, atomically.

    A replaced file keeps its permission bits unless ``mode`` is given. With ``expected``
    (the ``lstat`` of the file when it was read) the replace is refused if the file changed
    since. Returns the ``lstat`` of the file replaced, or None when the file was new.

    Raises:
        ToolError: ``name`` exists and ``overwrite`` is false, is a folder, or changed.
        PathRefused: ``name`` is a symlink (swapped in after the check) or a special file.
    """
    old = lstat_at(dir_fd, name)
    if old is not None:
        _check_replaceable(old, given, overwrite)
        if expected is not None and _changed(old, expected):
            raise ToolError(f"{shown(given)} changed while it was being edited; nothing written")
        if mode is None:
            mode = stat.S_IMODE(old.st_mode) & _KEPT_BITS
    try:
        temp = _write_temp(dir_fd, data, mode)
    except OSError as exc:
        raise failure(given, "written", exc) from None
    try:
        if overwrite:
            # rename(2) replaces the entry itself: a symlink swapped in is replaced, not
            # followed; a folder swapped in makes it fail (EISDIR).
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            rename_noreplace(dir_fd, temp, dir_fd, name)
    except FileExistsError:
        raise ToolError(
            f"{shown(given)} already exists (it appeared just now); pass overwrite=true to "
            "replace it"
        ) from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise ToolError(f"{shown(given)} is a folder; a file cannot replace it") from None
        raise failure(given, "written", exc) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
    return old


def _check_replaceable(old: os.stat_result, given: str, overwrite: bool) -> None:
    if stat.S_ISDIR(old.st_mode):
        raise ToolError(f"{shown(given)} is a folder; a file cannot replace it")
    if stat.S_ISLNK(old.st_mode):
        raise PathRefused(
            f"{shown(given)} became a symlink after it was checked; symlinks are not followed"
        )
    if not stat.S_ISREG(old.st_mode):
        raise PathRefused(f"{shown(given)} is a {kind_of(old.st_mode)}, not a regular file")
    if not overwrite:
        raise ToolError(f"{shown(given)} already exists; pass overwrite=true to replace it")


def _changed(now: os.stat_result, then: os.stat_result) -> bool:
    return (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns) != (
        then.st_ino,
        then.st_dev,
        then.st_size,
        then.st_mtime_ns,
    )


# --- rename without replacing ----------------------------------------------------------------


def _load_renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """Return glibc's (or musl's) ``renameat2``, or None where there is none."""
    if sys.platform != "linux":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    renameat2: Callable[[int, bytes, int, bytes, int], int] = function
    return renameat2


_RENAMEAT2 = _load_renameat2()


def rename_noreplace(src_fd: int, src: str, dst_fd: int, dst: str) -> None:
    """Rename ``src`` (in ``src_fd``) to ``dst`` (in ``dst_fd``) unless ``dst`` exists.

    Raises:
        FileExistsError: ``dst`` exists.
        OSError: the rename failed otherwise.
    """
    if _RENAMEAT2 is not None:
        if _RENAMEAT2(src_fd, os.fsencode(src), dst_fd, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code not in _NO_SUPPORT:
            raise OSError(code, os.strerror(code), dst)
    if stat.S_ISREG(os.stat(src, dir_fd=src_fd, follow_symlinks=False).st_mode):
        try:
            # link(2) fails with EEXIST when dst exists: an atomic "create, do not replace".
            os.link(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
        else:
            os.unlink(src, dir_fd=src_fd)
            return
    # Neither is available (a folder without renameat2, or a file system without links):
    # check, then rename. The window between the two is documented in the module docstring.
    if lstat_at(dst_fd, dst) is not None:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), dst)
    os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
