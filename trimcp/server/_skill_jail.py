"""Reading a skills folder as a jail: directory descriptors, ``O_NOFOLLOW``, no devices.

Files are opened from the root down through directory descriptors with ``O_NOFOLLOW``,
after a ``realpath`` containment check, at scan time and at every read, so a file or folder
swapped for a symlink leads nowhere outside the root; ``fstat`` refuses FIFOs and devices and
reads are bounded. Also how a file's MIME type is guessed, and which names may be skills.
POSIX only (``O_NOFOLLOW``, ``dir_fd``).
"""

from __future__ import annotations

import errno
import mimetypes
import os
import stat
import typing

if typing.TYPE_CHECKING:
    from collections.abc import Sequence


__all__ = [
    "DIR_FLAGS",
    "SKILL_FILE",
    "Unreadable",
    "is_text",
    "mime_type",
    "name_problem",
    "open_folder",
    "read_regular",
    "real_parts",
    "why_not_opened",
]

SKILL_FILE = "SKILL.md"


DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


# Never through a symlink (ELOOP), never waiting on a FIFO (O_NONBLOCK), never a terminal.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


_SWAPPED = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})


# mimetypes' built-in table only (not the host's /etc/mime.types), plus what skills hold.
_MIME_DB = mimetypes.MimeTypes()


_MIME_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".csv": "text/csv",
    ".js": "text/javascript",
    ".ts": "text/x-typescript",
}


_TEXT_TYPES = frozenset(
    {"application/json", "application/yaml", "application/toml", "application/xml"}
    | {"application/javascript", "application/x-sh", "image/svg+xml"}
)


_OCTET_STREAM = "application/octet-stream"


class Unreadable(Exception):
    """A file or folder could not be read safely; the message says why."""


def why_not_opened(exc: OSError) -> str:
    if exc.errno in _SWAPPED:
        return "changed since the scan (a folder or the file is now a symlink); not followed"
    if exc.errno == errno.ENOENT:
        return "no longer exists"
    return f"cannot be opened: {exc.strerror}"


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def real_parts(root: str, parts: Sequence[str]) -> tuple[str, ...]:
    """Return where ``parts`` leads below ``root`` once symlinks are resolved.

    Raises:
        Unreadable: it leads to the root itself or outside it.
    """
    real = os.path.realpath(os.path.join(root, *parts))
    if real == root or os.path.commonpath((root, real)) != root:
        raise Unreadable("leads outside the skills folder (a symlink); it is not served")
    return tuple(os.path.relpath(real, root).split(os.sep))


def open_folder(root: str, parts: Sequence[str]) -> int:
    """Open the folder ``parts`` below ``root`` one component at a time, never via a symlink."""
    try:
        fd = os.open(root, DIR_FLAGS & ~os.O_NOFOLLOW)
    except OSError as exc:
        raise Unreadable(f"the skills folder {root} {why_not_opened(exc)}") from None
    try:
        for part in parts:
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise Unreadable(why_not_opened(exc)) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(root: str, parts: Sequence[str], limit: int) -> tuple[bytes, os.stat_result]:
    """Read the regular file at ``parts`` (after containment) if it holds <= ``limit`` bytes.

    Raises:
        Unreadable: outside the root, swapped, not a regular file, over ``limit``.
    """
    real = real_parts(root, parts)
    dir_fd = open_folder(root, real[:-1])
    try:
        fd = os.open(real[-1], _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise Unreadable(why_not_opened(exc)) from None
    finally:
        os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"is {_kind_of(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise Unreadable(f"is {info.st_size} bytes, over max_file_size ({limit})")
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0 and (chunk := os.read(fd, min(remaining, 1 << 16))):
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:  # EIO and the like, from fstat or read
        raise Unreadable(f"cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise Unreadable(f"grew past max_file_size ({limit}) while being read")
    return data, info


def mime_type(name: str) -> str:
    if name == SKILL_FILE:
        return "text/markdown"
    extension = os.path.splitext(name)[1].lower()
    return _MIME_TYPES.get(extension) or _MIME_DB.guess_type(name)[0] or _OCTET_STREAM


def is_text(mime_type: str) -> bool:
    return mime_type.startswith("text/") or mime_type in _TEXT_TYPES


def name_problem(name: str) -> str | None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8"
    if "\\" in name or any(ord(char) < 0x20 or ord(char) == 0x7F for char in name):
        return "its name holds a backslash or a control character"
    return None
