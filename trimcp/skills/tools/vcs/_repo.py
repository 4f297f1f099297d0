"""``Repository``: a git repository the jail accepts, and the checked values git gets for it.

Which repositories the vcs tools use: the one git finds from the ``repo`` folder, if

* its top folder (``git rev-parse --show-toplevel``) lies inside the allowed folders. git is
  told not to look above the allowed folder (``GIT_CEILING_DIRECTORIES`` is the folder above
  it), so when the allowed folder is a subfolder of a repository, git finds none and the
  tools say there is no repository there: using it would show the history and changes of
  files outside the allowed folders. ``core.worktree`` pointing elsewhere is refused the same
  way;
* its git folder and common git folder (``--absolute-git-dir``, ``--git-common-dir``) lie
  inside them too: a ``.git`` file saying ``gitdir: /elsewhere`` (or a linked worktree of an
  outside repository) is refused;
* it borrows no objects from outside them (``objects/info/alternates``, followed as git
  does, five levels deep);
* it is not bare (``safe.bareRepository=explicit``).

Values from the model reach git only once checked. Revisions are refused when they start
with ``-`` and then resolved to a full commit hash with ``git rev-parse --verify
--end-of-options <rev>^{commit}``; only that hash goes on later command lines. Paths are
resolved by the jail (inside the allowed folders, not blocked) and must lie inside the
repository; git gets them relative to the top folder after ``--``, as ``:(literal)``
pathspecs so no name is read as pathspec magic. Relative paths start at the repository's
top folder, like the paths the tools print.

``blocked_paths`` hold for history too: ``excluded`` lists the files of a diff that a
blocked pattern matches, and the tools leave them out with ``:(exclude,literal)`` pathspecs.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from trimcp.errors import PathRefused, ToolError
from trimcp.protocol import ToolAnnotations
from trimcp.skills.jail import describe_roots, read_regular, shown

from ._git import GitFailed, GitOutput, GitRunner, clean_message, git_environment, refuse_option

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from trimcp.server import Context
    from trimcp.skills._runtime import Skills
    from trimcp.skills.jail import Jail
    from trimcp.skills.tools._output import Budget

__all__ = ["READ_ONLY", "Repository", "finish", "open_for", "open_repository"]

#: The truthful annotations of every vcs tool (MCP 2025-11-25, Server > Tools > Tool
#: Annotations): they change nothing, twice is the same as once, and touch only local files.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


# Bytes read of git's answer to an internal question (names of changed files, config keys).
_INTERNAL_LIMIT = 16 * 1024 * 1024
# Longest revision expression accepted.
_MAX_REVISION = 512
# git follows alternates this deep (object-file.c refuses a sixth level).
_ALTERNATE_DEPTH = 5
# Excluded pathspecs on one command line at most.
_MAX_EXCLUDES = 2000


@dataclass(slots=True)
class Repository:
    """A repository inside the jail, and how to run git in it for one tool call."""

    jail: Jail
    top: Path
    root: Path
    git: GitRunner
    limit: int

    async def run(self, args: Sequence[str], *, limit: int | None = None) -> GitOutput:
        """Run git in the top folder; raise ``GitFailed`` with a hint when it fails."""
        output = await self.git.run(args, self.limit if limit is None else limit)
        if output.code != 0 and not output.cut:
            raise self.failed(args[0], output.err)
        return output

    def failed(self, command: str, stderr: str) -> GitFailed:
        """Return the error of a failed ``git <command>``: git's words, cleaned, and a hint."""
        message = clean_message(stderr, self.jail.roots)
        return GitFailed(f"git {command} failed: {message}{_hint(message)}")

    async def commit(self, revision: str, what: str = "revision") -> str:
        """Return the full hash of the commit ``revision`` names.

        Raises:
            ToolError: it starts with ``-``, is too long, or names no commit.
        """
        refuse_option(revision, what)
        if not revision.strip() or len(revision) > _MAX_REVISION:
            raise ToolError(f"{what} must be 1 to {_MAX_REVISION} characters, not {len(revision)}")
        output = await self.git.run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
            4096,
        )
        full = output.text.strip()
        if output.code != 0 or len(full) not in (40, 64):
            raise ToolError(
                f"{what} {shown(revision)} names no commit in this repository; give a branch, "
                "tag or commit hash (git_branches lists branches, git_log lists commits)"
            )
        return full

    def relative(self, path: str) -> str:
        """Return ``path`` (relative to the top folder, or absolute) relative to the top.

        ``""`` is the top folder itself.

        Raises:
            PathRefused: outside the allowed folders, blocked, or outside the repository.
        """
        joined = path if path.startswith(("/", "~")) else os.path.join(self.top, path)
        try:
            resolved = self.jail.resolve(joined)
        except PathRefused as exc:
            # The jail names the joined path; the model wrote ``path``.
            raise PathRefused(str(exc).replace(shown(joined), shown(path), 1)) from None
        if not resolved.real.is_relative_to(self.top):
            raise PathRefused(
                f"{shown(path)} is outside the repository {shown(str(self.top))}; give a path "
                "inside it (relative paths start at its top folder)"
            )
        relative = resolved.real.relative_to(self.top).as_posix()
        return "" if relative == "." else relative

    def pathspecs(self, path: str | None) -> list[str]:
        """Return the pathspecs of ``path`` for after ``--`` (none for the whole repository)."""
        if path is None:
            return []
        relative = self.relative(path)
        return [f":(literal){relative}"] if relative else []

    def is_blocked(self, relative: str) -> bool:
        """Whether a blocked pattern matches ``relative`` (to the top) or a folder above it."""
        parts = self.top.relative_to(self.root).parts + tuple(relative.split("/"))
        below = len(self.top.relative_to(self.root).parts)
        return any(
            self.jail.is_blocked(parts[:depth], "read", is_dir=depth < len(parts))
            for depth in range(below + 1, len(parts) + 1)
        )

    def excluded(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Return exclude pathspecs and the shown names of the blocked ones among ``names``.

        Raises:
            ToolError: too many blocked files to leave out on one command line.
        """
        blocked = sorted({name for name in names if name and self.is_blocked(name)})
        if len(blocked) > _MAX_EXCLUDES:
            raise ToolError(
                f"{len(blocked)} files of this diff are blocked by the [skills] blocked_paths "
                "setting, too many to leave out; narrow the request with a path"
            )
        return [f":(exclude,literal){name}" for name in blocked], blocked

    async def changed_names(self, args: Sequence[str]) -> list[str]:
        """Return the names ``git <args> --name-only -z`` lists (for the blocked check).

        Raises:
            ToolError: too many names to check.
        """
        output = await self.run(args, limit=_INTERNAL_LIMIT)
        if output.cut:
            raise ToolError(
                "this diff touches too many files to check them against blocked_paths; "
                "narrow the request with a path or a smaller range"
            )
        return [name for name in output.text.split("\0") if name]

    @staticmethod
    def marker() -> str:
        """Return a random record marker git output cannot hold by chance."""
        return "trimcp-" + secrets.token_hex(16)


def _hint(message: str) -> str:
    lowered = message.lower()
    for needle, hint in _HINTS:
        if needle in lowered:
            return "; " + hint
    return ""


_HINTS: tuple[tuple[str, str], ...] = (
    ("does not have any commits yet", "the repository has no commits yet"),
    ("unknown revision", "check the name with git_branches or git_log"),
    ("bad revision", "check the name with git_branches or git_log"),
    ("exists on disk, but not in", "the file did not exist at that revision; see git_log"),
    ("does not exist in", "the file did not exist at that revision; see git_log with path"),
    ("no such path", "the file is not in that revision; see git_log with path"),
    ("has only", "the file has fewer lines; lower start_line/end_line"),
    ("dubious ownership", "another user owns the repository and git refuses to use it"),
    ("is in submodule", "that path is inside a submodule; give the submodule as repo"),
)


def _ceiling(jail: Jail, folder: Path) -> list[Path]:
    """The folder above the outermost root holding ``folder`` (none for ``/``)."""
    holding = [root for root in jail.roots if folder.is_relative_to(root)]
    outer = min(holding, key=lambda root: len(root.parts))
    return [] if outer.parent == outer else [outer.parent]


async def _filter_drivers(git: GitRunner, roots: Sequence[Path]) -> list[tuple[str, str]]:
    """Return configuration that empties every clean/smudge/process filter the repo defines."""
    output = await git.run(
        ["config", "-z", "--name-only", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"],
        _INTERNAL_LIMIT,
    )
    if output.code not in (0, 1) or output.cut:  # 1: no such key
        message = clean_message(output.err, roots)
        raise ToolError(f"git config could not read the repository's configuration: {message}")
    drivers = {name.rsplit(".", 1)[0] for name in output.text.split("\0") if name}
    config: list[tuple[str, str]] = []
    for driver in sorted(drivers):
        # An empty command is skipped (convert.c); required=false keeps git from failing then.
        config += [(f"{driver}.{key}", "") for key in ("clean", "smudge", "process")]
        config.append((f"{driver}.required", "false"))
    return config


def _alternates_outside(jail: Jail, objects: Path, depth: int = 0) -> bool:
    """Whether ``objects`` borrows objects from outside the jail (``info/alternates``)."""
    listing = objects / "info" / "alternates"
    if depth > _ALTERNATE_DEPTH or not os.path.lexists(listing):
        return False
    try:
        data, _ = read_regular(jail.resolve(str(listing)), 1024 * 1024)
    except PathRefused:
        return True
    for line in data.decode("utf-8", "replace").splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith('"'):
            return True  # a C-quoted path: not worth decoding, refuse
        real = Path(os.path.realpath(objects / entry))
        if jail.root_of(real) is None or _alternates_outside(jail, real, depth + 1):
            return True
    return False


def _checked_top(jail: Jail, repo: str, found: str) -> tuple[Path, Path]:
    """Return the top folder and its root from ``rev-parse``'s three lines, once checked.

    Raises:
        PathRefused: the working tree, git folder, common git folder or borrowed objects
            lie outside the jail.
    """
    top, git_dir, common = (Path(os.path.realpath(line)) for line in found.split("\n")[:3])
    roots = describe_roots(jail.roots)
    root = jail.root_of(top)
    if root is None:
        raise PathRefused(
            f"the repository of {shown(repo)} has its working tree outside the allowed folders "
            f"({roots}) (core.worktree); it is not used"
        )
    if jail.root_of(git_dir) is None or jail.root_of(common) is None:
        raise PathRefused(
            f"the repository of {shown(repo)} keeps its git folder outside the allowed folders "
            f"({roots}) (a .git file saying gitdir: elsewhere, or a worktree of an outside "
            "repository); it is not used"
        )
    if _alternates_outside(jail, common / "objects"):
        raise PathRefused(
            f"the repository of {shown(repo)} borrows objects from outside the allowed folders "
            f"({roots}) (objects/info/alternates); it is not used"
        )
    return top, root


def _not_a_repository(jail: Jail, repo: str, output: GitOutput) -> ToolError:
    message = clean_message(output.err, jail.roots)
    if output.code != 0 and "not a git repository" not in message:
        return ToolError(f"git rev-parse failed in {shown(repo)}: {message}{_hint(message)}")
    return ToolError(
        f"{shown(repo)} is not in a git repository inside the allowed folders "
        f"({describe_roots(jail.roots)}); give the folder of a repository (or a folder in "
        "one) whose top folder lies inside them. A repository whose top folder lies above "
        "them is not used: most of its files would be outside them"
    )


async def open_repository(jail: Jail, repo: str, *, timeout: float, limit: int) -> Repository:
    """Find and check the repository holding the folder ``repo``.

    Every git command of the call must finish within ``timeout`` seconds from now.

    Raises:
        PathRefused: ``repo`` is outside the allowed folders, or the repository reaches
            outside them.
        ToolError: no repository there, or git failed.
    """
    folder = jail.resolve(repo).real
    if not folder.is_dir():
        raise PathRefused(f"repo {shown(repo)} is not a folder; give the repository's folder")
    ceiling = _ceiling(jail, folder)
    git = GitRunner(folder, git_environment(ceiling), trio.current_time() + timeout, timeout)
    output = await git.run(
        [
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
        ],
        64 * 1024,
    )
    # Three lines; a folder name holding a line feed would make more: not supported.
    if output.code != 0 or output.cut or output.text.count("\n") != 3:
        raise _not_a_repository(jail, repo, output)
    top, root = _checked_top(jail, repo, output.text)
    git = git.moved(top, git.env)
    drivers = await _filter_drivers(git, jail.roots)
    return Repository(jail, top, root, git.moved(top, git_environment(ceiling, drivers)), limit)


async def open_for(skills: Skills, ctx: Context, repo: str) -> Repository:
    """Return the checked repository of ``repo`` for this call's jail and limits."""
    jail = await skills.jail_for(ctx)
    return await open_repository(
        jail, repo, timeout=skills.settings.git_timeout, limit=skills.settings.max_result_bytes
    )


def finish(budget: Budget, *, cut: bool) -> str:
    """Return ``budget``'s text; when git's output was cut too, one note saying so."""
    if not cut:
        return budget.text()
    note = (
        f"[output cut at {budget.limit} bytes (max_result_bytes): git had more to show; "
        f"{budget.hint}]"
    )
    return "\n".join([*budget.lines, note])
