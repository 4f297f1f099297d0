"""The grep tool's work: walk the jail, read each file whole, print the matching lines.

Runs in a worker thread (``run_blocking``). Files come from the jail's ``walk_files`` (no
symlink followed, blocked paths and ``.git`` skipped, ``.gitignore`` honoured when asked;
``walk``'s checks, with a folder's regular files handed over in runs) and are opened as
``open_regular`` does, on the walk's folder descriptor with ``O_NOFOLLOW | O_NONBLOCK``,
then ``fstat`` of the descriptor (only a regular file is read: the entry may have become a
FIFO or a device since it was listed) and one ``os.read`` of the size it gave;
``_grep_match`` finds the matching lines in the buffer. Output is grep's:
``path:line:text``, context lines ``path-line-text``, ``--`` between groups that are not
adjacent; lines longer than ``MAX_LINE_CHARS`` are cut around the match with ``[+N chars]``
marking what was left out.

Speed (bench/skills_search.py, bench/RESULTS.md): over 10,000 files / 100 MB a literal
search takes ~2.1x the wall time of ``grep -r``. Most of it is the floor every search that
keeps the jail's guarantees pays before matching anything, ~1.7x ``grep -r`` alone: per
file an open, an ``fstat`` (1.8 µs, most of it building the ``stat_result``; ~0.25x
``grep -r`` over the tree, kept: nothing cheaper tells a regular file from a device on the
open descriptor) and a read, plus the walk (~0.4x). A thread pool reading files was
measured slower, not faster: each system call hands the GIL over, and the two threads then
wait on each other at every one.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AnyStr, TypedDict

from trimcp.errors import PathRefused
from trimcp.skills._runtime import Cancelled
from trimcp.skills.jail import FILE_FLAGS, WalkStats, open_parent, open_regular, shown, walk_files

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pathspec

    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Jail, Resolved
    from trimcp.skills.tools._output import Budget

    from ._grep_match import Hit, Matcher

__all__ = [
    "MAX_LINE_CHARS",
    "GrepMatch",
    "GrepQuery",
    "GrepRun",
    "GrepTally",
    "cut_line",
    "display_prefix",
]

#: Longest line shown whole; longer ones are cut around the match.
MAX_LINE_CHARS = 1000
# A file with a NUL byte in its first 8 KiB is binary (grep's and git's rule of thumb).
_BINARY_PROBE = 8192


class GrepMatch(TypedDict):
    """One matching line, for ``structuredContent``.

    ``text`` is the line exactly (no quoting), or the part shown when it was longer than
    1,000 characters (``truncated``).
    """

    path: str
    line: int
    text: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class GrepQuery:
    """What to search for and how (the tool's arguments, checked)."""

    matcher: Matcher
    before: int
    after: int
    files_only: bool
    max_matches: int
    max_file_size: int
    max_visited: int
    gitignore: bool
    include: pathspec.PathSpec[pathspec.Pattern] | None
    exclude: pathspec.PathSpec[pathspec.Pattern] | None


@dataclass(slots=True)
class GrepTally:
    """What one search found and what it left out, for the summary and structured output."""

    searched: int = 0
    files_matched: int = 0
    matches: int = 0
    binary: int = 0
    large: int = 0
    unreadable: list[str] = field(default_factory=list)
    stopped: str | None = None
    walk: WalkStats = field(default_factory=WalkStats)
    found: list[GrepMatch] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def display_prefix(jail: Jail, start: Resolved) -> str:
    """What goes before a path below ``start.root`` in output: nothing for the first root
    (tools take paths relative to it), else the root itself."""
    return "" if start.root == jail.roots[0] else f"{start.root}/"


def cut_line(line: str, column: int) -> tuple[str, bool]:
    """Return ``line`` fit for output, cut around ``column`` when too long, and whether cut."""
    size = len(line)
    if size <= MAX_LINE_CHARS:
        return line, False
    begin = max(0, min(column - MAX_LINE_CHARS // 4, size - MAX_LINE_CHARS))
    return line[begin : begin + MAX_LINE_CHARS], True


def _marked(line: str, column: int) -> str:
    piece, cut = cut_line(line, column)
    if not cut:
        return piece
    begin = max(0, min(column - MAX_LINE_CHARS // 4, len(line) - MAX_LINE_CHARS))
    rest = len(line) - begin - len(piece)
    return (f"[+{begin} chars] " if begin else "") + piece + (f" [+{rest} chars]" if rest else "")


class GrepRun:
    """One search: feeds files to the matcher and prints what it finds into ``budget``."""

    def __init__(self, query: GrepQuery, budget: Budget, progress: Progress) -> None:
        self.query = query
        self.budget = budget
        self.progress = progress
        self.tally = GrepTally()
        self._full = False  # max_matches reached: the next match stops the search
        self._printed = False  # a line was printed (a "--" goes before the next group)

    # --- where the files come from ------------------------------------------------------

    def run(self, jail: Jail, start: Resolved, prefix: str) -> GrepTally:
        """Search the file or folder ``start``; paths print as ``prefix`` + path below root."""
        if start.real.is_dir():
            self._tree(jail, start, prefix)
        else:
            with open_parent(start) as (dir_fd, name):
                self._file(dir_fd, name, prefix + "/".join(start.parts))
        return self.tally

    def _tree(self, jail: Jail, start: Resolved, prefix: str) -> None:  # noqa: C901, PLR0912, PLR0915
        # The hot loop: per file ~6 µs of system calls and as little Python as possible
        # around them (locals, no helper calls, no object per file but the data read), since
        # a 10,000-file tree runs it 10,000 times. It is ``open_regular`` and ``_file``
        # spelled out: open with O_NOFOLLOW|O_NONBLOCK relative to the folder's descriptor,
        # fstat the descriptor (the entry may have been swapped for a FIFO or a device since
        # it was listed: only a regular file is read), one read of the size fstat gave.
        query, tally, progress = self.query, self.tally, self.progress
        include, limit = query.include, query.max_file_size
        matcher = query.matcher
        rare = matcher.rare
        below = sum(len(part) + 1 for part in start.parts)  # where a path below start begins
        files = walk_files(
            jail,
            start,
            stats=tally.walk,
            max_visited=query.max_visited,
            gitignore=query.gitignore,
            exclude=query.exclude,
        )
        opener, fstat, regular, read, close = os.open, os.fstat, stat.S_ISREG, os.read, os.close
        find = bytes.find  # bytes.find beats `in` 2x here
        flags, probe = FILE_FLAGS, _BINARY_PROBE
        searched = 0
        try:
            for dir_fd, _, folder, items, _ in files:
                here = folder[below:]  # the folder below start, for include
                for item in items:
                    name = item.name
                    if include is not None and not include.match_file(here + name):
                        continue
                    if progress.cancelled:
                        raise Cancelled
                    try:
                        fd = opener(name, flags, dir_fd=dir_fd)
                    except OSError:
                        tally.unreadable.append(prefix + folder + name)
                        continue
                    try:
                        info = fstat(fd)
                        if not regular(info.st_mode):
                            tally.unreadable.append(prefix + folder + name)
                            continue
                        size = info.st_size
                        if size > limit:
                            tally.large += 1
                            continue
                        data = read(fd, size + 1)
                        if len(data) != size:
                            whole = _read_rest(fd, data, limit)
                            if whole is None:
                                tally.large += 1
                                continue
                            data = whole
                    except OSError:
                        tally.unreadable.append(prefix + folder + name)
                        continue
                    finally:
                        close(fd)
                    searched += 1
                    progress.done = searched
                    if find(data, b"\0", 0, probe) != -1:
                        tally.binary += 1
                        continue
                    if find(data, rare) == -1 or matcher.absent(data):
                        continue  # the usual case: one memchr rules the file out
                    if not self._matched(prefix + folder + name, data):
                        return
        finally:
            tally.searched += searched
            files.close()
        if tally.walk.truncated and tally.stopped is None:
            tally.stopped = "max_files_visited"

    def _file(self, dir_fd: int, name: str, path: str) -> bool:
        """Search one file; return False when the search must stop."""
        tally = self.tally
        limit = self.query.max_file_size
        try:
            fd, info = open_regular(dir_fd, name, path)
        except PathRefused:
            tally.unreadable.append(path)
            return True
        try:
            data = None
            if info.st_size <= limit:
                data = _read_rest(fd, os.read(fd, info.st_size + 1), limit)
        except OSError:
            tally.unreadable.append(path)
            return True
        finally:
            os.close(fd)
        if data is None:
            tally.large += 1
            return True
        tally.searched += 1
        self.progress.done += 1
        if data.find(b"\0", 0, _BINARY_PROBE) != -1:
            tally.binary += 1
            return True
        return self.query.matcher.absent(data) or self._matched(path, data)

    def _matched(self, path: str, data: bytes) -> bool:
        """Print the matching lines of a file that may hold some; False: stop the search."""
        text, hits = self.query.matcher.lines(data)
        if self.query.files_only:
            return self._listed(path, hits)
        if isinstance(text, bytes):
            return self._print(path, text, hits, b"\n")
        return self._print(path, text, hits, "\n")

    # --- printing ----------------------------------------------------------------------

    def _listed(self, path: str, hits: Iterator[Hit]) -> bool:
        if next(hits, None) is None:
            return True
        tally = self.tally
        if self._full:
            tally.stopped = "max_matches"
            return False
        if not self.budget.add(shown(path)):
            tally.stopped = "max_bytes"
            return False
        tally.files_matched += 1
        tally.matches += 1
        tally.files.append(path)
        self._full = tally.matches >= self.query.max_matches
        return True

    def _print(self, path: str, text: AnyStr, hits: Iterator[Hit], newline: AnyStr) -> bool:  # noqa: C901
        query, tally = self.query, self.tally
        before, after = query.before, query.after
        size = len(text)
        name = shown(path)
        line_no, counted = 1, 0  # the number of the line starting at offset ``counted``
        last_line, last_end = 0, -1  # the last line printed in this file, its end offset
        pending = 0  # after-context lines still owed to the last match
        matched = False

        def emit(line: str, number: int, mark: str, column: int) -> bool:
            if self.budget.add(f"{name}{mark}{number}{mark}{_marked(line, column)}"):
                self._printed = True
                return True
            tally.stopped = "max_bytes"
            return False

        def owed(limit: int | None) -> bool:
            # The after-context lines of the last match, up to line ``limit`` (excluded).
            nonlocal last_line, last_end, pending
            while pending and (limit is None or last_line + 1 < limit):
                start = last_end + 1
                if start >= size:
                    break
                end = text.find(newline, start)
                end = size if end == -1 else end
                if not emit(_decoded(text[start:end]), last_line + 1, "-", 0):
                    return False
                last_line, last_end, pending = last_line + 1, end, pending - 1
            return True

        for start, end, column in hits:
            line_no += text.count(newline, counted, start)
            counted = start
            if self._full:
                tally.stopped = "max_matches"
                owed(line_no)
                return False
            if not owed(line_no):
                return False
            first = max(line_no - before, last_line + 1)
            spans: list[tuple[int, int]] = []
            position = start
            for _ in range(line_no - first):  # the before-context, walking back
                previous = text.rfind(newline, 0, position - 1) + 1
                spans.append((previous, position - 1))
                position = previous
            apart = last_line == 0 or first > last_line + 1
            if (before or after) and self._printed and apart and not self.budget.add("--"):
                tally.stopped = "max_bytes"
                return False
            for number, (line_start, line_end) in enumerate(reversed(spans), start=first):
                if not emit(_decoded(text[line_start:line_end]), number, "-", 0):
                    return False
            line = _decoded(text[start:end])
            if column and len(line) > MAX_LINE_CHARS and isinstance(text, bytes):
                column = len(_decoded(text[start : start + column]))  # bytes -> characters
            if not emit(line, line_no, ":", column):
                return False
            shown_text, cut = cut_line(line, column)
            tally.found.append(
                {"path": path, "line": line_no, "text": shown_text, "truncated": cut}
            )
            tally.matches += 1
            if not matched:
                matched = True
                tally.files_matched += 1
            last_line, last_end, pending = line_no, end, after
            self._full = tally.matches >= query.max_matches
        return owed(None)


def _decoded(chunk: bytes | str) -> str:
    return chunk.decode("utf-8", "replace") if isinstance(chunk, bytes) else chunk


def _read_rest(fd: int, data: bytes, limit: int) -> bytes | None:
    """Finish reading a file whose first read was not the size fstat gave.

    Reads to the end (it shrank, or a read came back short); None if it grew past ``limit``.
    """
    chunks = [data]
    total = len(data)
    while data and total <= limit:
        data = os.read(fd, 65536)
        chunks.append(data)
        total += len(data)
    return None if total > limit else b"".join(chunks)
