"""The concat_files tool's work: many files in one text, each under a ``==> path <==`` header.

The header is ``head``'s and ``tail``'s when given several files. Files come from a list
of paths (each checked by the jail on its own, a refused one noted in place) or from a glob
(``_glob``); at most ``max_read_files`` are read and the text stops at the ``Budget``, the
last file cut at a line end, with a note naming what was left out. Binary files (a NUL in
the first 8 KiB) and files over ``max_file_size`` are noted, not shown.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from trimcp.errors import PathRefused
from trimcp.skills.jail import open_parent, open_regular, shown

if TYPE_CHECKING:
    from trimcp.config import SkillsSettings
    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Jail
    from trimcp.skills.tools._output import Budget

__all__ = ["Concat"]

_BINARY_PROBE = 8192
# A cut file still shows its start when at least this much room is left.
_MIN_PART = 256
_NAMES_LISTED = 20


class Concat:
    """Builds the text of one concat_files call."""

    def __init__(self, settings: SkillsSettings, budget: Budget, progress: Progress) -> None:
        self.settings = settings
        self.budget = budget
        self.progress = progress
        self.read = 0  # files handled: shown or noted
        self.displayed = 0
        self.left_out: list[str] = []
        self.full = False

    def wants(self, name: str) -> bool:
        """Whether another file may be added; if not, ``name`` is noted as left out."""
        self.progress.check()
        if self.full or self.read >= self.settings.max_read_files:
            self.left_out.append(name)
            return False
        self.read += 1
        self.progress.done += 1
        return True

    def add_named(self, jail: Jail, name: str) -> None:
        """Add the file ``name`` (a path as the caller gave it), or a note of why not."""
        if not self.wants(name):
            return
        try:
            resolved = jail.resolve(name, "read")
            if resolved.real.is_dir():
                self._add(name, "[not read: it is a folder; name files, or use pattern]")
                return
            with open_parent(resolved) as (dir_fd, file_name):
                self._add_file(name, dir_fd, file_name)
        except PathRefused as exc:
            self._add(name, f"[not read: {exc}]")

    def add_entry(self, name: str, dir_fd: int, file_name: str) -> None:
        """Add the file ``file_name`` in the folder ``dir_fd`` (met by a walk)."""
        if self.wants(name):
            self._add_file(name, dir_fd, file_name)

    def footer(self) -> str:
        """The closing note: how many files were shown and what was left out, and why."""
        noted = self.read - self.displayed
        lines = [
            f"[{self.displayed} file(s) shown" + (f"; {noted} noted, not shown]" if noted else "]")
        ]
        if self.left_out:
            reason = (
                f"the output reached {self.budget.limit} bytes (max_result_bytes)"
                if self.full
                else f"at most {self.settings.max_read_files} files are read per call "
                "(max_read_files)"
            )
            names = ", ".join(shown(name) for name in self.left_out[:_NAMES_LISTED])
            more = len(self.left_out) - _NAMES_LISTED
            lines.append(
                f"[{len(self.left_out)} more file(s) not shown because {reason}: {names}"
                + (f" and {more} more" if more > 0 else "")
                + "; ask for them in another call]"
            )
        return "\n".join(lines)

    def _add_file(self, name: str, dir_fd: int, file_name: str) -> None:
        limit = self.settings.max_file_size
        try:
            fd, info = open_regular(dir_fd, file_name, name)
        except PathRefused as exc:
            self._add(name, f"[not read: {exc}]")
            return
        try:
            if info.st_size > limit:
                self._add(
                    name,
                    f"[not shown: {info.st_size} bytes, more than max_file_size ({limit}); "
                    "read part of it with read_file]",
                )
                return
            data = os.read(fd, limit + 1)
        except OSError as exc:
            self._add(name, f"[not read: {exc.strerror}]")
            return
        finally:
            os.close(fd)
        if len(data) > limit:
            self._add(name, f"[not shown: it grew past max_file_size ({limit}) while read]")
        elif data.find(b"\0", 0, _BINARY_PROBE) != -1:
            self._add(name, f"[binary file, {len(data)} bytes: not shown]")
        else:
            self._add(name, data.decode("utf-8", "replace").removesuffix("\n"), content=True)

    def _add(self, name: str, body: str, *, content: bool = False) -> None:
        budget = self.budget
        header = ("\n" if budget.lines else "") + f"==> {shown(name)} <=="
        piece = f"{header}\n{body}"
        room = budget.limit - budget.used - 1  # Budget counts a line break per piece
        if len(piece.encode("utf-8", "surrogateescape")) <= room:
            budget.add(piece)
            self.displayed += content
            return
        # The last file that fits in part: cut at a line end, with a note after it.
        self.full = True
        note_room = 200
        room -= len(header.encode("utf-8", "surrogateescape")) + 1 + note_room
        if room < _MIN_PART:
            self.left_out.append(name)
            self.read -= 1
            return
        size = len(body.encode("utf-8", "surrogateescape"))
        part = body.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
        cut = part.rfind("\n")
        part = part[:cut] if cut > 0 else part
        self.displayed += content
        budget.add(
            f"{header}\n{part}\n[cut: {len(part.encode('utf-8', 'surrogateescape'))} of {size} "
            "bytes shown (max_result_bytes); read the rest with read_file]"
        )

    def text(self) -> str:
        """The whole result: the files, then the footer."""
        return "\n".join([*self.budget.lines, self.footer()])
