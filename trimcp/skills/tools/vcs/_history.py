"""The vcs tools that read history: ``git_log``, ``git_show`` and ``git_diff``.

Patches leave out files a ``blocked_paths`` pattern matches: the names a diff touches are
listed first (``--name-only -z --no-renames``, so both sides of a rename are seen), the
blocked ones are excluded from the patch run with ``:(exclude,literal)`` pathspecs, and the
result names them. A pathspec also limits which commits ``git log`` walks, so ``git_log``
lists commits without the exclusions and fetches their patches with one ``git show`` of
the listed hashes; merges are diffed against their first parent in both runs
(``--diff-merges=first-parent``), so the listing and the patch agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypedDict

from trimcp.errors import ToolError
from trimcp.server import Context, Param, ToolResult
from trimcp.skills.jail import shown
from trimcp.skills.tools._output import Budget

from ._git import DIFF_SAFETY, refuse_option
from ._parse import Commit, NumStat, log_format, parse_log, parse_numstat, split_patches
from ._repo import Repository, finish, open_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from trimcp.skills._runtime import Skills

__all__ = ["DiffQuery", "Log", "LogQuery", "history_tools"]

#: Options of every patch printed: what a repository's configuration could otherwise change.
PATCH_OPTIONS: tuple[str, ...] = (
    "--no-color",
    *DIFF_SAFETY,
    "--submodule=short",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-relative",
)

_MAX_LOG = 500
_LOG_FIXED = (
    "--no-color",
    "--encoding=UTF-8",
    "--no-show-signature",
    "--diff-merges=first-parent",
)


@dataclass(frozen=True, slots=True)
class LogQuery:
    """What ``git_log`` was asked for, besides the repository."""

    revision_range: str | None
    path: str | None
    since: str | None
    until: str | None
    author: str | None
    max_count: int
    patch: bool


@dataclass(frozen=True, slots=True)
class DiffQuery:
    """What ``git_diff`` was asked for, besides the repository."""

    staged: bool
    base: str | None
    target: str | None
    path: str | None
    context_lines: int
    stat: bool


class Log(TypedDict):
    """``git_log``: commits, newest first."""

    repository: str
    commits: list[Commit]
    left_out: list[str]
    truncated: bool


def _option_value(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    refuse_option(value, what)
    if not value.strip() or len(value) > 200:
        raise ToolError(f"{what} must be 1 to 200 characters")
    return value


async def _revisions(repository: Repository, value: str | None) -> list[str]:
    """Return ``value`` (a revision or ``A..B``/``A...B``) as full hashes."""
    if value is None:
        return []
    refuse_option(value, "revision_range")
    for separator in ("...", ".."):
        if separator in value:
            left, _, right = value.partition(separator)
            start = await repository.commit(left or "HEAD", "revision_range start")
            end = await repository.commit(right or "HEAD", "revision_range end")
            return [f"{start}{separator}{end}"]
    return [await repository.commit(value, "revision_range")]


async def _commits(
    repository: Repository,
    revisions: Sequence[str],
    pathspecs: Sequence[str],
    options: Sequence[str],
    *,
    patch: bool,
) -> tuple[list[Commit], list[str], bool]:
    """Return the commits ``git log`` lists, with patches when asked, what was left out, cut."""
    marker = repository.marker()
    args = ["log", f"--format={log_format(marker)}", *_LOG_FIXED, *options]
    if patch:
        args += ["--name-only", "-z", "--no-renames"]
    output = await repository.run([*args, "--end-of-options", *revisions, "--", *pathspecs])
    commits = parse_log(output.text, marker, truncated=output.cut)
    if not patch or not commits:
        return commits, [], output.cut
    excludes, left_out = repository.excluded(
        name for commit in commits for name in commit.get("files", [])
    )
    marker = repository.marker()
    shown_ = await repository.run(
        [
            "show",
            f"--format=%x00{marker}%H",
            "--patch",
            "-M",
            *_LOG_FIXED,
            *PATCH_OPTIONS,
            "--end-of-options",
            *(commit["hash"] for commit in commits),
            "--",
            *pathspecs,
            *excludes,
        ]
    )
    patches = split_patches(shown_.text, marker)
    for commit in commits:
        commit["patch"] = patches.get(commit["hash"], "")
    return commits, left_out, output.cut or shown_.cut


def _commit_lines(commit: Commit) -> list[str]:
    refs = f" ({', '.join(commit['refs'])})" if commit["refs"] else ""
    lines = [f"commit {commit['hash']}{refs}"]
    if len(commit["parents"]) > 1:
        lines.append("Merge: " + " ".join(parent[:12] for parent in commit["parents"]))
    lines.append(f"Author: {shown(commit['author'])} <{shown(commit['author_email'])}>")
    lines.append(f"Date:   {commit['date']}")
    lines.append("")
    lines.append(f"    {commit['subject']}")
    if "body" in commit:
        lines.append("")
        lines += [f"    {line}".rstrip() for line in commit["body"].split("\n")]
    if commit.get("patch"):
        lines.append("")
        lines += commit["patch"].split("\n")
    return lines


def _log_text(
    repository: Repository, commits: list[Commit], left_out: list[str], budget: Budget
) -> list[Commit]:
    """Add the commits to ``budget``; return those whose text fits, at least in part."""
    budget.add(f"repository: {shown(str(repository.top))}")
    if left_out:
        names = ", ".join(shown(name) for name in left_out)
        budget.add(
            f"left out of the patches (blocked by the [skills] blocked_paths setting): {names}"
        )
    if not commits:
        budget.add("no commits")
    listed: list[Commit] = []
    for commit in commits:
        if budget.full:
            break
        listed.append(commit)
        budget.add("")
        for line in _commit_lines(commit):
            if not budget.add(line):
                break
    return listed


async def _git_log(skills: Skills, ctx: Context, repo: str, query: LogQuery) -> ToolResult[Log]:
    repository = await open_for(skills, ctx, repo)
    options = [f"--max-count={query.max_count}"]
    for name, value in (("since", query.since), ("until", query.until), ("author", query.author)):
        if _option_value(value, name) is not None:
            options.append(f"--{name}={value}")
    if query.author is not None:
        options.append("--regexp-ignore-case")
    revisions = await _revisions(repository, query.revision_range)
    pathspecs = repository.pathspecs(query.path)
    commits, left_out, cut = await _commits(
        repository, revisions, pathspecs, options, patch=query.patch
    )
    budget = Budget(repository.limit, "lower max_count, give a path or a smaller revision_range")
    listed = _log_text(repository, commits, left_out, budget)
    result = Log(
        repository=str(repository.top),
        commits=listed,
        left_out=left_out,
        truncated=cut or budget.full,
    )
    return ToolResult(finish(budget, cut=cut), result)


async def _git_show(
    skills: Skills, ctx: Context, repo: str, revision: str, path: str | None
) -> str:
    repository = await open_for(skills, ctx, repo)
    commit = await repository.commit(revision)
    budget = Budget(repository.limit, "read the file with read_file, or show a smaller part")
    if path is not None:
        return await _show_path(repository, commit, repository.relative(path), budget)
    commits, left_out, cut = await _commits(
        repository, [commit], [], ["--no-walk", "--max-count=1"], patch=True
    )
    _log_text(repository, commits, left_out, budget)
    return finish(budget, cut=cut)


async def _git_diff(skills: Skills, ctx: Context, repo: str, query: DiffQuery) -> str:
    if query.target is not None and query.base is None:
        raise ToolError("target needs base: give both to compare two commits")
    if query.target is not None and query.staged:
        raise ToolError("staged compares the index; it cannot go with target")
    repository = await open_for(skills, ctx, repo)
    revisions = [] if query.base is None else [await repository.commit(query.base, "base")]
    if query.target is not None:
        revisions.append(await repository.commit(query.target, "target"))
    pathspecs = repository.pathspecs(query.path)
    args = ["diff", *PATCH_OPTIONS, "--ignore-submodules=dirty"]
    if query.staged:
        args.append("--cached")
    budget = Budget(repository.limit, "give a path, or use stat=true first")
    budget.add(f"repository: {shown(str(repository.top))}")
    budget.add(f"diff of {_diff_title(query.staged, revisions)}")
    tail = ["--end-of-options", *revisions, "--", *pathspecs]
    if query.stat:
        output = await repository.run([*args, "--numstat", "-z", "-M", *tail])
        _stat_text(parse_numstat(output.text), budget)
        return finish(budget, cut=output.cut)
    names = await repository.changed_names([*args, "--name-only", "-z", "--no-renames", *tail])
    excludes, left_out = repository.excluded(names)
    output = await repository.run([*args, f"-U{query.context_lines}", "-M", *tail, *excludes])
    if left_out:
        listed = ", ".join(shown(name) for name in left_out)
        budget.add(f"left out (blocked by the [skills] blocked_paths setting): {listed}")
    text = output.text.rstrip("\n")
    if not text:
        budget.add("no differences")
    for line in text.split("\n") if text else []:
        if not budget.add(line):
            break
    return finish(budget, cut=output.cut)


def history_tools(skills: Skills) -> list[Callable[..., Awaitable[object]]]:
    """Return ``git_log``, ``git_diff`` and ``git_show`` over ``skills``, for registration."""

    async def git_log(  # noqa: PLR0913 - one parameter per git log option offered
        ctx: Context,
        repo: str = ".",
        *,
        revision_range: str | None = None,
        path: str | None = None,
        since: str | None = None,
        until: str | None = None,
        author: str | None = None,
        max_count: Annotated[int, Param(ge=1, le=_MAX_LOG)] = 20,
        patch: bool = False,
    ) -> ToolResult[Log]:
        """List commits, newest first: hash, author, date, message, and with patch=true the
        changes (`git log`).

        Args:
            repo: the repository's folder (or a folder inside it).
            revision_range: a branch, tag or commit (its history), or "A..B" (commits in B
                not in A) or "A...B" (in either, not both); default the current branch.
            path: only commits touching this file or folder (relative to the repository's
                top folder, or absolute).
            since: only commits after this date ("2024-01-31", "2 weeks ago").
            until: only commits before this date.
            author: only commits whose author name or email matches this (a regular
                expression, case-insensitive).
            max_count: the most commits listed (1 to 500).
            patch: also show each commit's changes as a patch.
        """
        query = LogQuery(revision_range, path, since, until, author, max_count, patch)
        return await _git_log(skills, ctx, repo, query)

    async def git_diff(  # noqa: PLR0913 - one parameter per git diff option offered
        ctx: Context,
        repo: str = ".",
        *,
        staged: bool = False,
        base: str | None = None,
        target: str | None = None,
        path: str | None = None,
        context_lines: Annotated[int, Param(ge=0, le=1000)] = 3,
        stat: bool = False,
    ) -> str:
        """Show changes as a patch (`git diff`): by default the working tree against the
        index (unstaged changes); staged=true the index against HEAD (staged changes); base
        alone the working tree (or with staged, the index) against that commit; base and
        target between two commits.

        Args:
            repo: the repository's folder (or a folder inside it).
            staged: compare the index (what is staged) instead of the working tree.
            base: the commit to compare against (a branch, tag or hash).
            target: the second commit, compared with base.
            path: only this file or folder (relative to the repository's top folder, or
                absolute).
            context_lines: lines of context around each change.
            stat: list the changed files with added/deleted line counts instead of the patch.
        """
        query = DiffQuery(staged, base, target, path, context_lines, stat)
        return await _git_diff(skills, ctx, repo, query)

    async def git_show(
        ctx: Context, repo: str = ".", revision: str = "HEAD", path: str | None = None
    ) -> str:
        """Show a commit (author, date, message and patch), or with path a file or folder as
        it was at that commit (`git show`).

        Args:
            repo: the repository's folder (or a folder inside it).
            revision: a branch, tag or commit hash (default HEAD).
            path: show this file or folder as of the revision instead of the commit
                (relative to the repository's top folder, or absolute).
        """
        return await _git_show(skills, ctx, repo, revision, path)

    return [git_log, git_diff, git_show]


def _diff_title(staged: bool, revisions: list[str]) -> str:
    if len(revisions) == 2:
        return f"{revisions[0]} (a/) against {revisions[1]} (b/)"
    source = "the index" if staged else "the working tree"
    against = revisions[0] if revisions else ("HEAD" if staged else "the index")
    return f"{source} (b/) against {against} (a/)"


def _stat_text(stats: list[NumStat], budget: Budget) -> None:
    added = deleted = 0
    for stat in stats:
        name = shown(stat["path"])
        if "orig_path" in stat:
            name = f"{shown(stat['orig_path'])} -> {name}"
        if stat["added"] is None:
            budget.add(f"  binary  {name}")
            continue
        added += stat["added"]
        deleted += stat["deleted"] or 0
        budget.add(f"  +{stat['added']} -{stat['deleted']}  {name}")
    budget.add(f"{len(stats)} file(s) changed, {added} insertion(s), {deleted} deletion(s)")


async def _show_path(repository: Repository, commit: str, relative: str, budget: Budget) -> str:
    """The file or folder ``relative`` as of ``commit``: its text, or a listing."""
    spec = f"{commit}:{relative}"
    kind = (await repository.run(["cat-file", "-t", spec])).text.strip()
    name = relative or "(top folder)"
    budget.add(f"repository: {shown(str(repository.top))}")
    if kind == "tree":
        output = await repository.run(["ls-tree", "-z", spec])
        budget.add(f"folder {shown(name)} at {commit}:")
        for entry in output.text.split("\0"):
            info, _, child = entry.partition("\t")
            if child:
                budget.add(f"  {shown(child)}{'/' if info.split(' ')[1:2] == ['tree'] else ''}")
        return finish(budget, cut=output.cut)
    if kind != "blob":
        raise ToolError(f"{shown(name)} at {commit} is a {kind}, not a file or folder")
    size = int((await repository.run(["cat-file", "-s", spec])).text.strip() or 0)
    output = await repository.run(["cat-file", "blob", spec])
    if b"\0" in output.out[:8000]:
        budget.add(f"{shown(name)} at {commit} is a binary file of {size} bytes; not shown")
        return budget.text()
    budget.add(f"file {shown(name)} at {commit} ({size} bytes):")
    text = output.text
    for line in (text[:-1] if text.endswith("\n") else text).split("\n") if text else []:
        if not budget.add(line):
            break
    return finish(budget, cut=output.cut)
