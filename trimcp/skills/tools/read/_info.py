"""``file_info``: what ``stat`` says about one path, plus whether it is text and how long.

The path's last component is looked at with ``lstat`` through its parent folder's descriptor
(``open_parent``/``open_dir`` + ``os.stat(name, dir_fd=..., follow_symlinks=False)``), so a
symlink is described as the symlink it is; ``Jail.resolve`` alone would follow it, and refuse
one that leads out instead of saying that it does. Such a link is said to point outside the
allowed folders and nothing more: not its target, not even its size (the length of the
target's text).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from trimcp.errors import PathRefused
from trimcp.server import ToolResult
from trimcp.skills.jail import Resolved, kind_of, open_dir, open_regular, shown
from trimcp.skills.tools._media import sniff
from trimcp.skills.tools._text import SAMPLE_SIZE, Decoded, count_lines, decode_whole, detect

from ._common import (
    EntryType,
    display,
    entry_type,
    exact,
    human_size,
    iso_time,
    link_target,
    permissions,
)
from ._file import read_bytes

if TYPE_CHECKING:
    from trimcp.config import SkillsSettings
    from trimcp.skills.jail import Jail

__all__ = ["FileInfo", "file_info_work"]


class FileInfo(TypedDict):
    """``file_info``'s structured result.

    ``size`` is left out for symlinks (it would be the length of the target's text).
    ``target`` and ``target_status`` are for symlinks: the target is named only when it is
    inside the allowed folders and not blocked. ``is_binary`` is for regular files;
    ``mime_type`` for binary ones; ``encoding`` and ``lines`` for text files up to
    ``max_file_size``.
    """

    path: str
    type: EntryType
    size: NotRequired[int]
    modified: str
    accessed: str
    changed: str
    created: NotRequired[str]
    permissions: str
    mode: str
    target: NotRequired[str]
    target_status: NotRequired[Literal["inside", "missing", "blocked", "outside"]]
    is_binary: NotRequired[bool]
    mime_type: NotRequired[str]
    encoding: NotRequired[str]
    lines: NotRequired[int]


def _split(given: str) -> tuple[str, str] | None:
    """Split ``given`` into its parent and last name, None when it ends in ``.``/``..``/``/``."""
    parent, name = os.path.split(given)
    if name in ("", ".", "..") or (given.startswith("~") and "/" not in given):
        return None
    return parent or ".", name


def _lstat(jail: Jail, given: str) -> tuple[Resolved, os.stat_result]:
    """Return the path (its last component unresolved) and its ``lstat``."""
    if "\x00" in given:
        raise PathRefused(f"{shown(given)} contains a NUL character, which no path may hold")
    split = _split(given)
    if split is None:
        resolved = jail.resolve(given, "read")
        if not resolved.parts:
            fd = open_dir(resolved)
            try:
                return resolved, os.fstat(fd)
            finally:
                os.close(fd)
        # Resolved already, symlinks and all: its last component is no symlink.
        parent = Resolved(resolved.real.parent, resolved.root, resolved.parts[:-1], given)
        name = resolved.name
    else:
        parent = jail.resolve(split[0], "read")
        name = split[1]
    fd = open_dir(parent)
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        raise PathRefused(f"{shown(given)} does not exist") from None
    except OSError as exc:
        raise PathRefused(f"{shown(given)} cannot be examined: {exc.strerror}") from None
    finally:
        os.close(fd)
    entry = Resolved(parent.real / name, parent.root, (*parent.parts, name), given)
    if jail.is_blocked(entry.parts, "read", is_dir=stat.S_ISDIR(info.st_mode)):
        raise PathRefused(
            f"{shown(given)} is blocked by the [skills] blocked_paths setting; files that "
            "usually hold secrets are never read"
        )
    mode = info.st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        raise PathRefused(
            f"{shown(given)} is a {kind_of(mode)}; only regular files, folders and symlinks "
            "are described"
        )
    return entry, info


def _content(entry: Resolved, settings: SkillsSettings, info: FileInfo, lines: list[str]) -> None:
    """Add what the file's bytes say (binary or text, encoding, lines) to ``info``."""
    parent = Resolved(entry.real.parent, entry.root, entry.parts[:-1], entry.given)
    fd_dir = open_dir(parent)
    try:
        fd, stat_result = open_regular(fd_dir, entry.name, entry.given)
    finally:
        os.close(fd_dir)
    decoded: Decoded | None = None
    try:
        small = stat_result.st_size <= settings.max_file_size
        if small:
            data = read_bytes(fd, settings.max_file_size)
            small = len(data) <= settings.max_file_size
        if small:
            head = data[:SAMPLE_SIZE]
            decoded = decode_whole(data)
            encoding = decoded.encoding if decoded is not None else None
        else:
            head = os.pread(fd, SAMPLE_SIZE, 0)
            encoding = detect(head, whole=False)
    finally:
        os.close(fd)
    info["is_binary"] = encoding is None
    if encoding is None:
        kind = sniff(head, entry.name)
        info["mime_type"] = kind.mime_type
        lines.append(f"binary: yes ({kind.description}, {kind.mime_type})")
        return
    info["encoding"] = encoding.label
    lines.append(f"binary: no (text, {encoding.label})")
    if decoded is not None:
        info["lines"] = count_lines(decoded.text)
        lines.append(f"lines: {info['lines']}")
    else:
        lines.append(
            f"lines: not counted (larger than max_file_size, {settings.max_file_size} bytes)"
        )


def file_info_work(jail: Jail, settings: SkillsSettings, given: str) -> ToolResult[FileInfo]:
    """Describe ``given`` as ``file_info`` does (in a worker thread).

    Raises:
        PathRefused: outside the jail, blocked, missing, or a device, FIFO or socket.
    """
    entry, st = _lstat(jail, given)
    rwx, octal = permissions(st.st_mode)
    kind = entry_type(st.st_mode)
    path = display(jail, entry)
    info = FileInfo(
        path=exact(path),
        type=kind,
        modified=iso_time(st.st_mtime),
        accessed=iso_time(st.st_atime),
        changed=iso_time(st.st_ctime),
        permissions=rwx,
        mode=octal,
    )
    lines = [f"path: {shown(path)}"]
    if kind == "symlink":
        target = link_target(jail, entry.real.parent, entry.name)
        info["target_status"] = target.where
        if target.target is not None:
            info["target"] = exact(target.target)
        lines.append(f"type: symlink{target.text()}")
    else:
        info["size"] = st.st_size
        lines.append(f"type: {kind}")
        lines.append(f"size: {human_size(st.st_size)} ({st.st_size} bytes)")
    lines += [
        f"modified: {info['modified']}",
        f"accessed: {info['accessed']}",
        f"changed: {info['changed']} (metadata)",
    ]
    birth = getattr(st, "st_birthtime", None)
    if isinstance(birth, float | int):
        info["created"] = iso_time(birth)
        lines.append(f"created: {info['created']}")
    lines.append(f"permissions: {rwx} ({octal})")
    if kind == "file":
        _content(entry, settings, info, lines)
    return ToolResult("\n".join(lines), info)
