"""Shell-style glob patterns over the jail: the syntax, and the walk that applies it.

The syntax is the shell's with ``**`` (bash's ``globstar``, Python's ``glob(recursive=True)``),
matched against the path below the folder searched, case-sensitively:

* ``*`` matches any run of characters inside one path component, ``?`` one character;
  neither crosses ``/``. Unlike the shell's, they also match a leading dot (``*`` finds
  ``.github``), as fnmatch and gitignore do.
* ``**`` as a whole component matches zero or more folders (``**/*.py`` is every ``.py``
  file at any depth, ``src/**`` everything below ``src``).
* ``[abc]``, ``[a-z]``, ``[!abc]`` / ``[^abc]``: character classes.
* ``{a,b}``: alternatives, expanded first as the shell does (``**/*.{ts,tsx}``); may nest.
* ``\\`` makes the next character literal. A trailing ``/`` matches folders only.

So ``*.py`` matches the ``.py`` files directly in the folder, as in a shell. Walking uses the
jail's ``walk``: symlinks are never followed nor listed, blocked paths never listed. The walk
starts below the pattern's literal leading folders (``src/lib/**/*.py`` walks ``src/lib``)
and goes no deeper than the pattern can reach when it has no ``**``. (The first only when
``.gitignore`` files are not honoured: starting lower would skip those on the way.)
"""

from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from trimcp.errors import PathRefused, ToolError
from trimcp.skills.jail import WalkStats, shown, walk

if TYPE_CHECKING:
    from collections.abc import Generator

    from trimcp.skills._runtime import Progress
    from trimcp.skills.jail import Entry, Jail, Resolved

__all__ = ["GlobPattern", "GlobWalk", "compile_glob"]

_MAX_EXPANSIONS = 256
_LONGEST_PATTERN = 4096
_SPECIAL = frozenset("*?[{\\")


@dataclass(frozen=True, slots=True)
class GlobPattern:
    """A compiled glob: the regex of paths below the base, and what narrows the walk."""

    text: str
    regex: re.Pattern[str]
    folders_only: bool
    prefix: tuple[str, ...]  # literal folders every match starts with
    depth: int | None  # components of the deepest match, None with **


def compile_glob(pattern: str) -> GlobPattern:
    """Compile a glob (syntax in the module docstring).

    Raises:
        ToolError: empty, absolute, with ``..``, too long, or with too many ``{}``
            alternatives (each message says what is allowed).
    """
    if not pattern.strip():
        raise ToolError("the glob pattern is empty; give one such as **/*.py")
    if len(pattern) > _LONGEST_PATTERN:
        raise ToolError(f"the glob pattern is longer than {_LONGEST_PATTERN} characters")
    if pattern.startswith("/"):
        raise ToolError(
            f"the glob pattern {shown(pattern)} is absolute; patterns match below the folder "
            "given as path, so pass the folder as path and a relative pattern"
        )
    folders_only = pattern.endswith("/")
    alternatives = _expand_braces(pattern.rstrip("/"))
    regexes: list[str] = []
    splits: list[list[str]] = []
    for alternative in alternatives:
        components = [part for part in alternative.split("/") if part not in ("", ".")]
        if ".." in components:
            raise ToolError(
                f"the glob pattern {shown(pattern)} contains '..'; patterns match below the "
                "folder given as path, so pass the folder above as path instead"
            )
        if not components:
            raise ToolError(f"the glob pattern {shown(pattern)} names no file or folder")
        splits.append(components)
        regexes.append(_translate(components))
    try:
        regex = re.compile("|".join(f"(?:{source})" for source in regexes), re.DOTALL)
    except re.error as exc:
        raise ToolError(f"the glob pattern {shown(pattern)} is invalid: {exc.msg}") from None
    prefix = _common_literal_prefix(splits)
    depth = None if any("**" in parts for parts in splits) else max(map(len, splits))
    return GlobPattern(pattern, regex, folders_only, prefix, depth)


def _expand_braces(pattern: str) -> list[str]:
    """Expand ``{a,b}`` alternatives as the shell does; a brace without a comma is literal."""
    done: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        found = _first_brace(current)
        if found is None:
            done.append(current)
        else:
            start, end, options = found
            todo.extend(current[:start] + option + current[end + 1 :] for option in options)
        if len(done) + len(todo) > _MAX_EXPANSIONS:
            raise ToolError(
                f"the glob pattern {shown(pattern)} expands to more than {_MAX_EXPANSIONS} "
                "alternatives; use fewer {a,b} groups"
            )
    return sorted(set(done))


def _first_brace(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{...}`` group holding a top-level comma: its bounds and options."""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            group = _brace_group(text, index)
            if group is not None:
                bounds = [index, *group[1], group[0]]
                options = [text[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                return index, group[0], options
        index += 1
    return None


def _brace_group(text: str, start: int) -> tuple[int, list[int]] | None:
    """The closing brace of the group opening at ``start`` and its top-level commas."""
    depth, cursor = 0, start
    commas: list[int] = []
    while cursor < len(text):
        char = text[cursor]
        if char == "\\":
            cursor += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return (cursor, commas) if commas else None
        elif char == "," and depth == 1:
            commas.append(cursor)
        cursor += 1
    return None


def _translate(components: list[str]) -> str:
    pieces: list[str] = []
    last = len(components) - 1
    for index, component in enumerate(components):
        if component == "**":
            # Inside: zero or more folders (with their slashes); at the end: all below.
            pieces.append("[^/]+(?:/[^/]+)*" if index == last else "(?:[^/]+/)*")
        else:
            pieces.append(_component(component) + ("" if index == last else "/"))
    return "".join(pieces)


def _component(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char == "*":
            if not out or out[-1] != "[^/]*":
                out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\":
            if index < len(text):
                out.append(re.escape(text[index]))
                index += 1
            else:
                out.append(re.escape("\\"))
        elif char == "[":
            end, cls = _char_class(text, index)
            if cls is None:
                out.append(re.escape("["))
            else:
                out.append(cls)
                index = end
        else:
            out.append(re.escape(char))
    return "".join(out)


def _char_class(text: str, index: int) -> tuple[int, str | None]:
    """Translate the class starting after ``[`` at ``index``; (end, None) if unclosed."""
    negate = index < len(text) and text[index] in "!^"
    cursor = index + 1 if negate else index
    items: list[str] = []
    first = True
    while cursor < len(text):
        char = text[cursor]
        if char == "]" and not first:
            body = "".join(items)
            return cursor + 1, f"[^/{body}]" if negate else f"[{body}]"
        if char == "\\" and cursor + 1 < len(text):
            items.append(re.escape(text[cursor + 1]))
            cursor += 2
        else:
            items.append("-" if char == "-" and not first else re.escape(char))
            cursor += 1
        first = False
    return index, None


def _common_literal_prefix(splits: list[list[str]]) -> tuple[str, ...]:
    prefix: list[str] = []
    for column in zip(*(parts[:-1] for parts in splits), strict=False):
        name = column[0]
        if any(other != name for other in column) or any(char in _SPECIAL for char in name):
            break
        prefix.append(name)
    return tuple(prefix)


@dataclass(slots=True)
class GlobWalk:
    """One glob over the jail: what matched and what was left out."""

    matches: list[tuple[str, bool]] = field(default_factory=list)  # (path, is folder)
    stats: WalkStats = field(default_factory=WalkStats)
    more: bool = False  # stopped at the result limit with more left

    def run(  # noqa: PLR0913
        self,
        jail: Jail,
        base: Resolved,
        glob: GlobPattern,
        *,
        gitignore: bool,
        folders: bool,
        limit: int,
        max_visited: int,
        progress: Progress,
    ) -> None:
        """Collect what ``glob`` matches below the folder ``base``, up to ``limit`` results."""
        found = self.entries(
            jail, base, glob, gitignore=gitignore, max_visited=max_visited, progress=progress
        )
        with contextlib.closing(found):
            for entry, is_dir in found:
                if is_dir and not folders and not glob.folders_only:
                    continue
                if len(self.matches) >= limit:
                    self.more = True
                    return
                self.matches.append(("/".join(entry.parts), is_dir))

    def entries(  # noqa: PLR0913
        self,
        jail: Jail,
        base: Resolved,
        glob: GlobPattern,
        *,
        gitignore: bool,
        max_visited: int,
        progress: Progress,
    ) -> Generator[tuple[Entry, bool]]:
        """Yield the regular files and folders below ``base`` that ``glob`` matches."""
        # Starting lower would skip the .gitignore files on the way: only without them.
        prefix = () if gitignore else glob.prefix
        start = self._start(jail, base, prefix)
        if start is None:
            return
        depth = None if glob.depth is None else glob.depth - len(prefix)
        skip = len(base.parts)
        match = glob.regex.fullmatch
        folders_only = glob.folders_only
        walker = cast(
            "Generator[Entry]",
            walk(
                jail, start, stats=self.stats, max_visited=max_visited, gitignore=gitignore,
                max_depth=depth,
            ),
        )  # fmt: skip
        try:
            for entry in walker:
                progress.check()
                progress.done += 1
                item = entry.entry
                is_dir = item.is_dir(follow_symlinks=False)
                if not is_dir and (folders_only or not item.is_file(follow_symlinks=False)):
                    continue
                if match("/".join(entry.parts[skip:])):
                    yield entry, is_dir
        finally:
            walker.close()

    @staticmethod
    def _start(jail: Jail, base: Resolved, prefix: tuple[str, ...]) -> Resolved | None:
        """The folder to walk: ``base`` and the literal prefix, if that holds no symlink.

        A prefix through a symlink (the jail resolves it) or a blocked or missing folder is
        a place the walk from ``base`` would never enter, so it matches nothing.
        """
        if not prefix:
            return base
        if ".git" in prefix:
            return None  # the walk never enters .git folders
        try:
            start = jail.resolve(str(base.real.joinpath(*prefix)), "read")
        except PathRefused:
            return None
        if start.root != base.root or start.parts != base.parts + prefix:
            return None
        return start if start.real.is_dir() else None
