"""The search tools: ``glob``, ``grep`` and ``concat_files``.

Each checks its paths with the call's jail, then does its file system work in a worker
thread (``run_blocking``): walking only with the jail's ``walk`` (no symlink followed,
blocked paths, ``.git`` and — unless told otherwise — what ``.gitignore`` excludes skipped),
opening only with ``open_regular`` on the walk's folder descriptors. Long searches send
``notifications/progress`` when the client asked (MCP 2025-11-25, Basic > Utilities >
Progress, https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress)
and stop at the next file when the request is cancelled. Every limit that shortened a
result is named in it. The work lives in ``_grep``/``_grep_match``, ``_glob`` and
``_concat``; this module holds the tools' signatures, descriptions and summaries.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Annotated, TypedDict

import pathspec

from trimcp.errors import PathRefused, ToolError
from trimcp.protocol import ToolAnnotations
from trimcp.server import Context, MCPServer, Param, ToolResult
from trimcp.skills._runtime import Progress, Skills, run_blocking
from trimcp.skills.jail import Jail, Resolved, WalkStats, shown
from trimcp.skills.tools._output import Budget

from ._concat import Concat
from ._glob import GlobWalk, compile_glob
from ._grep import GrepMatch, GrepQuery, GrepRun, GrepTally, display_prefix
from ._grep_match import compile_matcher

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["SEARCH", "GlobMatch", "GlobReport", "GrepReport", "Skipped", "register"]

#: The search tools change nothing, give the same answer for the same files and touch only
#: the local file system (MCP 2025-11-25, Server > Tools > Tool Annotations,
#: https://modelcontextprotocol.io/specification/2025-11-25/server/tools).
SEARCH = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

_MAX_CONTEXT = 100
_MAX_PATTERNS = 100


class Skipped(TypedDict):
    """What a search passed over, by reason."""

    binary: int
    too_large: int
    blocked: int
    ignored: int
    symlinks: int
    special: int
    unreadable: int


class GrepReport(TypedDict):
    """The structured result of ``grep``."""

    matches: list[GrepMatch]
    files: list[str]
    files_searched: int
    files_with_matches: int
    skipped: Skipped
    stopped_by: str | None


class GlobMatch(TypedDict):
    """One path ``glob`` found."""

    path: str
    folder: bool


class GlobReport(TypedDict):
    """The structured result of ``glob``."""

    matches: list[GlobMatch]
    skipped: Skipped
    stopped_by: str | None


def register(server: MCPServer, skills: Skills) -> None:
    """Register ``glob``, ``grep`` and ``concat_files`` on ``server``."""
    server.add_tool(_glob_tool(skills), "glob", annotations=SEARCH)
    server.add_tool(_grep_tool(skills), "grep", annotations=SEARCH)
    server.add_tool(_concat_tool(skills), "concat_files", annotations=SEARCH)


def _glob_tool(skills: Skills) -> Callable[..., Awaitable[ToolResult[GlobReport]]]:
    settings = skills.settings

    async def glob(  # noqa: PLR0913 - one parameter per glob option offered
        ctx: Context,
        pattern: str,
        path: str = ".",
        *,
        gitignore: bool | None = None,
        include_folders: bool = False,
        max_results: Annotated[int, Param(ge=1)] = 1000,
    ) -> ToolResult[GlobReport]:
        """Find files whose path matches a shell glob, sorted; symlinks are not followed.

        Syntax, matched against the path below ``path``: ``*`` and ``?`` stay inside one
        folder level (``*.py`` is the .py files directly in ``path``), ``**`` spans any
        number of folders (``**/*.py`` finds them at every depth, ``src/**`` everything
        below src), ``[a-z]``/``[!a-z]`` classes, ``{ts,tsx}`` alternatives, ``\\`` escapes; a
        trailing ``/`` matches folders only. ``*`` also matches names starting with a dot.
        Blocked paths (secrets) and ``.git`` are never listed; files ``.gitignore``
        excludes are skipped unless ``gitignore`` is false.

        Args:
            pattern: the glob, e.g. ``**/*.py`` or ``src/**/test_*.{py,txt}``.
            path: the folder to search (relative paths start at the first root).
            gitignore: skip what .gitignore files exclude (default: the server's setting).
            include_folders: list matching folders too (shown with a trailing /).
            max_results: the most paths returned; the result says when more matched.
        """
        compiled = compile_glob(pattern)
        jail = await skills.jail_for(ctx)
        honour = settings.gitignore if gitignore is None else gitignore

        def work(progress: Progress) -> tuple[GlobWalk, str]:
            base = _folder(jail, path, "glob")
            found = GlobWalk()
            found.run(
                jail, base, compiled, gitignore=honour, folders=include_folders,
                limit=max_results, max_visited=settings.max_files_visited, progress=progress,
            )  # fmt: skip
            return found, display_prefix(jail, base)

        found, prefix = await run_blocking(ctx, work)
        return _glob_result(
            found, prefix, pattern=pattern, path=path, max_results=max_results,
            limit=settings.max_result_bytes,
        )  # fmt: skip

    return glob


def _grep_tool(skills: Skills) -> Callable[..., Awaitable[ToolResult[GrepReport]]]:
    settings = skills.settings

    async def grep(  # noqa: PLR0913 - one parameter per grep option offered
        ctx: Context,
        pattern: str,
        path: str = ".",
        *,
        fixed_string: bool = False,
        ignore_case: bool = False,
        context: Annotated[int, Param(ge=0, le=_MAX_CONTEXT)] = 0,
        before: Annotated[int, Param(ge=0, le=_MAX_CONTEXT)] | None = None,
        after: Annotated[int, Param(ge=0, le=_MAX_CONTEXT)] | None = None,
        include: list[str] | None = None,
        exclude: list[str] | None = None,
        max_matches: Annotated[int, Param(ge=1)] = 200,
        max_bytes: Annotated[int, Param(ge=1)] | None = None,
        gitignore: bool | None = None,
        files_only: bool = False,
    ) -> ToolResult[GrepReport]:
        """Search file contents for a Python regex or a fixed string, like grep -rn.

        Prints ``path:line:text`` per matching line (context lines as ``path-line-text``,
        ``--`` between groups), then a summary: matches, files searched, what was skipped
        (binary files — a NUL byte in the first 8 KiB —, files over max_file_size, blocked,
        .gitignore'd, symlinks, which are never followed) and whether max_matches or
        max_bytes stopped the search. Matching is per line (``^``/``$`` anchor at line
        ends; a match cannot span lines); regexes follow Python ``re`` on the text decoded
        as UTF-8, fixed strings are found as their UTF-8 bytes. Lines longer than 1,000
        characters are cut around the match, ``[+N chars]`` marking what was left out.

        Args:
            pattern: a Python regular expression (``re`` syntax), or the text itself with
                fixed_string.
            path: the folder (searched recursively) or file to search.
            fixed_string: match the pattern literally, no regex.
            ignore_case: match regardless of case (Unicode case folding).
            context: lines of context before and after each match.
            before: lines of context before each match (overrides context).
            after: lines of context after each match (overrides context).
            include: only files whose path below ``path`` matches one of these gitignore-
                style globs (``*.py`` at any depth, ``src/**/*.ts``).
            exclude: skip files and folders matching these gitignore-style globs.
            max_matches: stop after this many matching lines (files with files_only).
            max_bytes: the most bytes of output (default and cap: max_result_bytes).
            gitignore: skip what .gitignore files exclude (default: the server's setting).
            files_only: list the files with a match instead of the lines.
        """
        matcher = compile_matcher(pattern, fixed_string=fixed_string, ignore_case=ignore_case)
        query = GrepQuery(
            matcher=matcher,
            before=context if before is None else before,
            after=context if after is None else after,
            files_only=files_only,
            max_matches=max_matches,
            max_file_size=settings.max_file_size,
            max_visited=settings.max_files_visited,
            gitignore=settings.gitignore if gitignore is None else gitignore,
            include=_globs(include, "include"),
            exclude=_globs(exclude, "exclude"),
        )
        limit = min(max_bytes or settings.max_result_bytes, settings.max_result_bytes)
        budget = Budget(limit)
        jail = await skills.jail_for(ctx)

        def work(progress: Progress) -> GrepTally:
            start = jail.resolve(path, "read")
            if not start.real.exists():
                raise PathRefused(f"{shown(path)} does not exist")
            return GrepRun(query, budget, progress).run(jail, start, display_prefix(jail, start))

        tally = await run_blocking(ctx, work)
        lines = budget.lines if budget.lines else [f"No matches for {shown(pattern)}"]
        summary = _grep_summary(tally, query, limit, settings.max_file_size)
        report: GrepReport = {
            "matches": tally.found,
            "files": tally.files,
            "files_searched": tally.searched,
            "files_with_matches": tally.files_matched,
            "skipped": _skipped(tally.walk, tally.binary, tally.large, len(tally.unreadable)),
            "stopped_by": tally.stopped,
        }
        return ToolResult("\n".join([*lines, *summary]), report)

    return grep


def _concat_tool(skills: Skills) -> Callable[..., Awaitable[str]]:
    settings = skills.settings

    async def concat_files(
        ctx: Context,
        paths: list[str] | None = None,
        pattern: str | None = None,
        path: str = ".",
    ) -> str:
        """Show several text files in one result, each under a ``==> path <==`` header.

        Give the files as ``paths``, or a ``pattern`` (the glob syntax of the glob tool,
        below ``path``; .gitignore honoured as the server is set). At most max_read_files
        files are read and the text stops at max_result_bytes; what was left out is named
        at the end. Binary files and files over max_file_size are noted, not shown.

        Args:
            paths: the files to show, in this order.
            pattern: a glob choosing the files instead, e.g. ``src/**/*.py``.
            path: the folder the pattern is matched below.
        """
        if paths is not None and not paths:
            raise ToolError("paths is empty; name at least one file, or give a pattern")
        if (paths is None) == (pattern is None):
            raise ToolError(
                "give either paths (a list of files) or pattern (a glob such as **/*.md), "
                "not both and not neither"
            )
        compiled = compile_glob(pattern) if pattern is not None else None
        jail = await skills.jail_for(ctx)

        def work(progress: Progress) -> str:
            concat = Concat(settings, Budget(settings.max_result_bytes), progress)
            if compiled is None:
                for given in paths or ():
                    concat.add_named(jail, given)
                return concat.text()
            base = _folder(jail, path, "concat_files")
            prefix = display_prefix(jail, base)
            entries = GlobWalk().entries(
                jail, base, compiled, gitignore=settings.gitignore,
                max_visited=settings.max_files_visited, progress=progress,
            )  # fmt: skip
            with contextlib.closing(entries):
                for entry, is_dir in entries:
                    if not is_dir:
                        concat.add_entry(prefix + entry.relative, entry.dir_fd, entry.name)
            if concat.read == 0 and not concat.left_out:
                return f"No files match {shown(compiled.text)} below {shown(path)}"
            return concat.text()

        return await run_blocking(ctx, work)

    return concat_files


def _folder(jail: Jail, path: str, tool: str) -> Resolved:
    resolved = jail.resolve(path, "read")
    if not resolved.real.is_dir():
        what = "does not exist" if not resolved.real.exists() else "is a file"
        raise PathRefused(f"{shown(path)} {what}; {tool} needs a folder to search below")
    return resolved


def _globs(patterns: list[str] | None, what: str) -> pathspec.PathSpec[pathspec.Pattern] | None:
    if not patterns:
        return None
    if len(patterns) > _MAX_PATTERNS:
        raise ToolError(f"{what} holds {len(patterns)} patterns; at most {_MAX_PATTERNS}")
    try:
        return pathspec.GitIgnoreSpec.from_lines(patterns)
    except (ValueError, TypeError) as exc:
        raise ToolError(f"an {what} pattern is invalid: {exc}") from None


def _skipped(stats: WalkStats, binary: int, large: int, unreadable: int) -> Skipped:
    return {
        "binary": binary,
        "too_large": large,
        "blocked": stats.blocked,
        "ignored": stats.ignored,
        "symlinks": stats.symlinks,
        "special": stats.special,
        "unreadable": unreadable + len(stats.unreadable),
    }


def _skipped_text(skipped: Skipped, max_file_size: int) -> str | None:
    words = {
        "binary": "binary",
        "too_large": f"over max_file_size ({max_file_size} bytes)",
        "blocked": "blocked (blocked_paths)",
        "ignored": "ignored (.gitignore)",
        "symlinks": "symlink(s), never followed",
        "special": "device/FIFO/socket",
        "unreadable": "unreadable",
    }
    parts = [f"{skipped[key]} {word}" for key, word in words.items() if skipped[key]]  # type: ignore[literal-required]
    return f"[skipped: {', '.join(parts)}]" if parts else None


def _grep_summary(tally: GrepTally, query: GrepQuery, limit: int, max_file_size: int) -> list[str]:
    if query.files_only:
        head = f"[{tally.files_matched} file(s) with matches; {tally.searched} file(s) searched]"
    else:
        head = (
            f"[{tally.matches} matching line(s) in {tally.files_matched} file(s); "
            f"{tally.searched} file(s) searched]"
        )
    lines = [head]
    skipped = _skipped_text(
        _skipped(tally.walk, tally.binary, tally.large, len(tally.unreadable)), max_file_size
    )
    if skipped:
        lines.append(skipped)
    if tally.stopped == "max_matches":
        lines.append(
            f"[stopped at max_matches={query.max_matches}: more matches exist; raise "
            "max_matches or narrow the search with path, include or a tighter pattern]"
        )
    elif tally.stopped == "max_bytes":
        lines.append(
            f"[stopped at max_bytes={limit}: the output is full and more matches may exist; "
            "narrow the search, or use files_only to see which files match]"
        )
    elif tally.stopped == "max_files_visited":
        lines.append(
            f"[stopped after visiting {query.max_visited} files and folders "
            "(max_files_visited): search a narrower path]"
        )
    return lines


def _glob_result(  # noqa: PLR0913
    found: GlobWalk, prefix: str, *, pattern: str, path: str, max_results: int, limit: int
) -> ToolResult[GlobReport]:
    budget = Budget(limit)
    matches: list[GlobMatch] = []
    stopped = "max_results" if found.more else None
    for relative, folder in found.matches:
        shown_path = prefix + relative
        if not budget.add(shown(shown_path) + ("/" if folder else "")):
            stopped = "max_bytes"
            break
        matches.append({"path": shown_path, "folder": folder})
    skipped = _skipped(found.stats, 0, 0, 0)
    lines = list(budget.lines) or [f"No paths match {shown(pattern)} below {shown(path)}"]
    lines.append(f"[{len(matches)} path(s); {found.stats.visited} entries visited]")
    skipped_text = _skipped_text(skipped, 0)
    if skipped_text:
        lines.append(skipped_text)
    if stopped == "max_results":
        lines.append(f"[stopped at max_results={max_results}: more paths match; narrow the glob]")
    elif stopped == "max_bytes":
        lines.append(f"[stopped at {limit} bytes (max_result_bytes): narrow the glob]")
    elif found.stats.truncated:
        stopped = "max_files_visited"
        lines.append("[stopped at max_files_visited: search a narrower path]")
    return ToolResult(
        "\n".join(lines), {"matches": matches, "skipped": skipped, "stopped_by": stopped}
    )
