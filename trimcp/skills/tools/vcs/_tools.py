"""The vcs tools: read-only git (``git_status``, ``git_log``, ``git_diff``, ``git_show``,
``git_blame``, ``git_branches``).

Each call finds and checks the repository (``_git_repo.open_repository``: inside the
allowed folders, git folder and objects included), resolves every revision it is given to a
commit hash, checks every path with the jail and against the repository, and runs git with
the safety of ``_git`` (no pager, hooks, filters or external programs; a clean environment;
the ``git_timeout`` deadline; output read up to ``max_result_bytes``). Results are text a
model reads, plus ``structuredContent`` where there is a shape (status, log, blame,
branches), per MCP 2025-11-25, Server > Tools > Structured Content
(https://modelcontextprotocol.io/specification/2025-11-25/server/tools#structured-content).
Paths in results are relative to the repository's top folder, which every result names.
Files matching ``blocked_paths`` are left out of every patch (and said so): their content
is no more readable through history than on disk.

This module holds the tools that look at the present (status, blame, branches) and the
registration; ``_vcs_history`` holds log, diff and show; ``_vcs_parse`` reads git's output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypedDict

from trimcp.errors import ToolError
from trimcp.server import Context, Param, ToolResult
from trimcp.skills.jail import shown
from trimcp.skills.tools._output import Budget

from ._history import history_tools
from ._parse import (
    BRANCH_FIELDS,
    BlameLine,
    Branch,
    Status,
    StatusEntry,
    parse_blame,
    parse_branches,
    parse_status,
)
from ._repo import READ_ONLY, finish, open_for

if TYPE_CHECKING:
    from trimcp.server import MCPServer
    from trimcp.skills._runtime import Skills

__all__ = ["register"]


class BlameResult(TypedDict):
    """``git_blame``: who last changed each line."""

    repository: str
    path: str
    revision: str | None
    lines: list[BlameLine]
    truncated: bool


class Branches(TypedDict):
    """``git_branches``: local or remote-tracking branches."""

    repository: str
    remote: bool
    branches: list[Branch]
    detached_head: str | None


def _where(status: Status) -> str:
    if status["head"] is None:
        where = f"branch {shown(status['branch'] or '?')} (no commits yet)"
    elif status["branch"] is None:
        where = f"HEAD detached at {status['head']}"
    else:
        where = f"branch {shown(status['branch'])} at {status['head'][:12]}"
    if status["upstream"] is not None:
        track = (
            f", ahead {status['ahead']}, behind {status['behind']}"
            if status["ahead"] is not None
            else ", upstream gone"
        )
        where += f" (upstream {shown(status['upstream'])}{track})"
    return where


def _status_text(status: Status, budget: Budget) -> None:
    budget.add(f"repository: {shown(status['repository'])}")
    budget.add(_where(status))
    if status["stash"]:
        budget.add(f"stash: {status['stash']} entr{'y' if status['stash'] == 1 else 'ies'}")
    sections: list[tuple[str, list[StatusEntry]]] = [
        ("conflicted", status["conflicted"]),
        ("staged (to be committed)", status["staged"]),
        ("not staged", status["unstaged"]),
    ]
    for title, entries in sections:
        if entries:
            budget.add(f"{title} ({len(entries)}):")
        for entry in entries:
            name = shown(entry["path"])
            if "orig_path" in entry:
                name = f"{shown(entry['orig_path'])} -> {name}"
            budget.add(f"  {entry['status']}: {name}")
    if status["untracked"]:
        budget.add(f"untracked ({len(status['untracked'])}):")
    for path in status["untracked"]:
        budget.add(f"  {shown(path)}")
    if not (status["conflicted"] or status["staged"] or status["unstaged"] or status["untracked"]):
        budget.add("nothing to commit, working tree clean")


async def _git_status(skills: Skills, ctx: Context, repo: str) -> ToolResult[Status]:
    repository = await open_for(skills, ctx, repo)
    output = await repository.run(
        [
            "status",
            "--porcelain=v2",
            "-z",
            "--branch",
            "--show-stash",
            "--untracked-files=normal",
            "--ignore-submodules=dirty",
        ]
    )
    status = parse_status(output.text, str(repository.top), truncated=output.cut)
    budget = Budget(repository.limit, "give a smaller repo folder or commit some changes")
    _status_text(status, budget)
    return ToolResult(finish(budget, cut=output.cut), status)


async def _git_blame(  # noqa: PLR0913 - the tool's parameters, passed on
    skills: Skills,
    ctx: Context,
    *,
    path: str,
    repo: str,
    lines: tuple[int | None, int | None],
    revision: str | None,
) -> ToolResult[BlameResult]:
    repository = await open_for(skills, ctx, repo)
    relative = repository.relative(path)
    if not relative:
        raise ToolError("path is the repository's top folder; give a file to blame")
    args = ["blame", "--porcelain", "--no-textconv"]
    start, end = lines
    if start is not None or end is not None:
        if start is not None and end is not None and end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        args.append(f"-L{start or 1},{'' if end is None else end}")
    commit = None if revision is None else await repository.commit(revision)
    if commit is not None:
        args.append(commit)  # a full hash: blame has no --end-of-options in git 2.39
    output = await repository.run([*args, "--", relative])
    blamed = parse_blame(output.out)
    if output.cut and blamed:
        blamed.pop()  # the last line may be cut short
    budget = Budget(repository.limit, "ask for fewer lines with start_line/end_line")
    budget.add(f"repository: {shown(str(repository.top))}")
    budget.add(f"blame of {shown(relative)} at {commit or 'the working tree'}")
    listed: list[BlameLine] = []
    for line in blamed:
        text = (
            f"{line['hash'][:12]} ({line['author']} {line['date'][:10]} {line['line']:>5}) "
            f"{line['content']}"
        )
        if not budget.add(text):
            break
        listed.append(line)
    result = BlameResult(
        repository=str(repository.top),
        path=relative,
        revision=commit,
        lines=listed,
        truncated=output.cut or budget.full,
    )
    return ToolResult(finish(budget, cut=output.cut), result)


async def _git_branches(
    skills: Skills, ctx: Context, repo: str, remote: bool
) -> ToolResult[Branches]:
    repository = await open_for(skills, ctx, repo)
    fields = "%00".join(BRANCH_FIELDS) + "%00"
    pattern = "refs/remotes/" if remote else "refs/heads/"
    output = await repository.run(["for-each-ref", f"--format={fields}", pattern])
    branches = parse_branches(output.text)
    if output.cut and branches:
        branches.pop()
    detached = None
    if not remote and not any(branch["current"] for branch in branches):
        head = await repository.git.run(["rev-parse", "--verify", "--quiet", "HEAD"], 4096)
        detached = head.text.strip() or None
    budget = Budget(repository.limit, "use git_log with a revision_range for one branch")
    budget.add(f"repository: {shown(str(repository.top))}")
    if detached:
        budget.add(f"HEAD detached at {detached}")
    if not branches:
        budget.add("no remote-tracking branches" if remote else "no branches yet")
    listed: list[Branch] = []
    for branch in branches:
        if not budget.add(_branch_line(branch)):
            break
        listed.append(branch)
    result = Branches(
        repository=str(repository.top), remote=remote, branches=listed, detached_head=detached
    )
    return ToolResult(finish(budget, cut=output.cut), result)


def register(server: MCPServer, skills: Skills) -> None:
    """Register the vcs tools on ``server``."""

    async def git_status(ctx: Context, repo: str = ".") -> ToolResult[Status]:
        """Show the branch, its upstream (ahead/behind) and the staged, unstaged, untracked
        and conflicted files of a git repository, like `git status`.

        Paths are relative to the repository's top folder. Changes inside submodules are
        not looked into.

        Args:
            repo: the repository's folder (or a folder inside it).
        """
        return await _git_status(skills, ctx, repo)

    async def git_blame(  # noqa: PLR0913 - one parameter per git blame option offered
        ctx: Context,
        path: str,
        *,
        repo: str = ".",
        start_line: Annotated[int | None, Param(ge=1)] = None,
        end_line: Annotated[int | None, Param(ge=1)] = None,
        revision: str | None = None,
    ) -> ToolResult[BlameResult]:
        """Show who last changed each line of a file, and in which commit (`git blame`).

        Args:
            path: the file, relative to the repository's top folder (or absolute).
            repo: the repository's folder (or a folder inside it).
            start_line: the first line to show (1-based; default the first).
            end_line: the last line to show (default the last).
            revision: blame the file as of this commit (default: the working tree, where
                uncommitted lines show as "Not Committed Yet").
        """
        return await _git_blame(
            skills, ctx, path=path, repo=repo, lines=(start_line, end_line), revision=revision
        )

    async def git_branches(
        ctx: Context, repo: str = ".", remote: bool = False
    ) -> ToolResult[Branches]:
        """List the branches with the current one marked (*), each one's upstream (ahead and
        behind) and last commit, like `git branch -vv`.

        Args:
            repo: the repository's folder (or a folder inside it).
            remote: list the remote-tracking branches (refs/remotes) instead of local ones.
        """
        return await _git_branches(skills, ctx, repo, remote)

    git_log, git_diff, git_show = history_tools(skills)
    for tool in (git_status, git_log, git_diff, git_show, git_blame, git_branches):
        server.add_tool(tool, annotations=READ_ONLY)


def _branch_line(branch: Branch) -> str:
    mark = "*" if branch["current"] else " "
    if "points_to" in branch:
        return f"{mark} {shown(branch['name'])} -> {shown(branch['points_to'])}"
    track = ""
    if branch["upstream"] is not None:
        state = (
            "gone"
            if branch["upstream_gone"]
            else f"ahead {branch['ahead']}, behind {branch['behind']}"
        )
        track = f" [{shown(branch['upstream'])}: {state}]"
    return (
        f"{mark} {shown(branch['name'])} {branch['hash'][:12]}{track} {branch['date']} "
        f"{shown(branch['subject']) if branch['subject'] else ''}"
    ).rstrip()
