"""``read_many_files``: several files in one result, each under a ``==> path <==`` header.

Like ``head`` with several files: one header per file, its lines numbered as ``read_file``
numbers them. A file that cannot be read (refused, missing, binary, too large) gets its
reason under its header and the others are still read. The files share ``max_result_bytes``:
the file that reaches it is cut (the note says where to continue with ``read_file``) and the
ones after it are named but not read. Images and audio come after the text as content
blocks, together at most ``max_media_size`` bytes.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from trimcp.errors import ToolError
from trimcp.server import Audio, Image
from trimcp.skills.jail import open_parent, open_regular, shown
from trimcp.skills.tools._media import sniff
from trimcp.skills.tools._output import Budget
from trimcp.skills.tools._text import SAMPLE_SIZE, decode_whole, split_lines

from ._common import display, human_size
from ._file import read_bytes, refuse_binary
from ._lines import Room, format_line

if TYPE_CHECKING:
    from trimcp.config import SkillsSettings
    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Jail

__all__ = ["read_many_work"]

# Bytes kept back per file for its header and notes, beyond the size of its path.
_PER_FILE = 200


class _Reader:
    """The state of one ``read_many_files`` call: lines so far, media, room left."""

    def __init__(self, jail: Jail, settings: SkillsSettings, paths: list[str]) -> None:
        self.jail = jail
        self.settings = settings
        reserve = sum(2 * len(shown(path).encode("utf-8", "replace")) + _PER_FILE for path in paths)
        self.room = Room(max(0, settings.max_result_bytes - reserve))
        self.lines: list[str] = []
        self.media: list[Image | Audio] = []
        self.media_bytes = 0
        self.full = False

    def read(self, given: str) -> None:
        """Add the header and lines (or the reason it was not read) of the file ``given``."""
        if self.full:
            self.lines += [
                f"==> {shown(given)} <==",
                "[not read: the output is full (max_result_bytes); read it with read_file]",
            ]
            return
        try:
            self._read(given)
        except ToolError as exc:
            self.lines += [f"==> {shown(given)} <==", f"[not read: {exc}]"]

    def _read(self, given: str) -> None:
        resolved = self.jail.resolve(given, "read")
        path = display(self.jail, resolved)
        if os.path.isdir(resolved.real):
            raise ToolError(f"{shown(given)} is a folder; list it with list_directory")
        with open_parent(resolved) as (dir_fd, name):
            fd, info = open_regular(dir_fd, name, given)
        try:
            limit = self.settings.max_file_size
            if info.st_size > limit:
                raise ToolError(
                    f"{shown(path)} is {human_size(info.st_size)}, more than max_file_size "
                    f"({limit} bytes); read part of it with read_file and head, tail or offset"
                )
            data = read_bytes(fd, limit)
        finally:
            os.close(fd)
        if len(data) > limit:
            raise ToolError(f"{shown(path)} grew past max_file_size while being read")
        decoded = decode_whole(data)
        if decoded is None:
            self._media(path, data)
            return
        lines = split_lines(decoded.text)
        note = "" if decoded.encoding.plain_utf8 else f", encoding: {decoded.encoding.label}"
        if not lines:
            self.lines.append(f"==> {shown(path)} (empty file{note}) <==")
            return
        self.lines.append(f"==> {shown(path)} ({len(lines)} lines{note}) <==")
        for number, text in enumerate(lines, start=1):
            line = format_line(number, text, numbers=True)
            if not self.room.take(line):
                self.full = True
                self.lines.append(
                    f"[output cut at max_result_bytes after line {number - 1} of {len(lines)}; "
                    f"continue with read_file(path={shown(path)}, offset={number})]"
                )
                return
            self.lines.append(line)

    def _media(self, path: str, data: bytes) -> None:
        size = len(data)
        kind = sniff(data[:SAMPLE_SIZE], path)
        cap = self.settings.max_media_size
        if kind.media is None or size > cap:
            raise refuse_binary(path, data[:SAMPLE_SIZE], size, self.settings)
        if self.media_bytes + size > cap:
            raise ToolError(
                f"{shown(path)} ({kind.description}, {human_size(size)}) would take the images "
                f"and audio of this call past max_media_size ({cap} bytes); read it with read_file"
            )
        self.media_bytes += size
        media = Image if kind.media == "image" else Audio
        self.media.append(media(data, kind.mime_type))
        self.lines += [
            f"==> {shown(path)} <==",
            f"[{kind.description} ({kind.mime_type}), {human_size(size)}: {kind.media} block "
            f"{len(self.media)} after this text]",
        ]


def read_many_work(
    jail: Jail, settings: SkillsSettings, paths: list[str], progress: Progress
) -> str | list[object]:
    """Read ``paths`` as ``read_many_files`` does (in a worker thread).

    Raises:
        ToolError: no paths, or more than ``max_read_files``.
    """
    if not paths:
        raise ToolError("give at least one path in paths")
    most = settings.max_read_files
    if len(paths) > most:
        raise ToolError(
            f"{len(paths)} paths given; at most {most} files are read per call "
            "(max_read_files): split them over several calls"
        )
    progress.total = len(paths)
    reader = _Reader(jail, settings, paths)
    for index, given in enumerate(paths):
        progress.check()
        if index:
            reader.lines.append("")
        reader.read(given)
        progress.done += 1
    budget = Budget(settings.max_result_bytes, "read the files left out with read_file")
    for line in reader.lines:
        budget.add(line)
    text = budget.text()
    return [text, *reader.media] if reader.media else text
