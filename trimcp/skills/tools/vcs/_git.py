"""Running ``git`` for the vcs tools: no pager, no hooks, no other program, a clean environment.

The vcs tools run the ``git`` executable (never GitPython: its ``Repo`` objects hand user
strings to git as options, the root of CVE-2026-27735) through ``trio.run_process``, one
command at a time, with these guarantees:

* **A clean environment.** The child's environment is built from scratch: ``PATH``, ``HOME``
  and ``TZ`` from ours, ``LC_ALL=C`` (git's messages stay English, which the error hints
  match), and git's own switches. No ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``,
  ``GIT_EXEC_PATH``, ``GIT_CONFIG_PARAMETERS``, ``GIT_EXTERNAL_DIFF``, ``GIT_SSH*``,
  ``GIT_ALTERNATE_OBJECT_DIRECTORIES``... set in the server's environment reaches git, so
  none can point it at another repository or program. ``GIT_CONFIG_NOSYSTEM=1`` and
  ``GIT_CONFIG_GLOBAL=/dev/null`` leave out the system and user configuration: the result
  does not depend on whose account runs the server, and a user's global pager, textconv or
  fsmonitor settings are never run by a tool call. (The cost: the user's own
  ``safe.directory``, ``mailmap`` and excludes settings are not used either.)
  ``GIT_CEILING_DIRECTORIES`` is the folder above the allowed folder, so git never looks
  for a repository above it (``_git_repo``); ``GIT_OPTIONAL_LOCKS=0`` keeps ``git status``
  from rewriting the index; ``GIT_TERMINAL_PROMPT=0`` and ``GIT_NO_LAZY_FETCH=1`` (git 2.45+;
  ``protocol.allow=never`` covers older ones) keep it off the network.
* **No program but git.** ``--no-pager`` and ``GIT_PAGER``/``PAGER=cat``; on the command
  line, which wins over every configuration file (git-config(1), "Configuration File"),
  the keys that name programs or hooks a read-only command could start are overridden
  (``CONFIG_OVERRIDES``). Two kinds cannot be overridden this way, because an empty value
  makes git try to run the empty program and fail (tried with git 2.39): external diff
  drivers (``diff.external``, ``diff.<driver>.command``) and textconv filters
  (``diff.<driver>.textconv``); every command that prints a diff gets ``--no-ext-diff`` and
  ``--no-textconv`` instead (``DIFF_SAFETY``). Clean/smudge filters (``filter.<driver>.*``,
  run when git hashes a working-tree file for ``status``, ``diff`` or ``blame``) are named
  by ``.gitattributes``, so their drivers are looked up in the repository's configuration
  first and each one is emptied (an empty filter command is skipped) through
  ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>`` (exact names, no ``-c`` quoting).
  Submodules are not looked into (``--ignore-submodules=dirty``): that would run git in
  them with their own configuration.
* **A deadline and a cap.** Every command of one tool call must finish before the call's
  deadline (``git_timeout`` seconds after it started); a command still running then is
  killed and the call fails saying so. At most ``limit + 1`` bytes of output are read, then
  git is killed and ``GitOutput.cut`` says the output went on.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from trimcp.errors import ToolError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "CONFIG_OVERRIDES",
    "DIFF_SAFETY",
    "GitFailed",
    "GitOutput",
    "GitRunner",
    "clean_message",
    "git_argv",
    "git_environment",
    "refuse_option",
]

#: ``-c`` overrides on every git command line: what each could otherwise start or change.
CONFIG_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # no hook runs (post-index-change, reference-transaction...)
    ("core.fsmonitor", "false"),  # a hook program that status and diff would start
    ("core.pager", "cat"),  # belt and braces with --no-pager
    ("protocol.allow", "never"),  # no transport: lazy fetches, ext:: remote helpers, ssh
    ("credential.helper", ""),  # an empty value clears the helper list
    ("log.showSignature", "false"),  # would run gpg.program / gpg.ssh.program
    ("status.submoduleSummary", "false"),  # would run git in each submodule
    ("submodule.recurse", "false"),
    ("safe.bareRepository", "explicit"),  # a bare repository planted in the tree is not used
    ("gc.auto", "0"),  # no background maintenance from a read
    ("maintenance.auto", "false"),
    ("blame.ignoreRevsFile", ""),  # a file named by the repository's config, maybe outside
    ("core.quotePath", "false"),  # UTF-8 names as they are in diffs, not octal escapes
    ("color.ui", "false"),  # no escape codes in what is parsed
    ("i18n.logOutputEncoding", "UTF-8"),
)

#: Options of every command that can print a diff (diff, log, show, blame).
DIFF_SAFETY: tuple[str, ...] = ("--no-ext-diff", "--no-textconv")

# Bytes of git's stderr kept for the error message; the rest is read and dropped.
_STDERR_LIMIT = 64 * 1024
# Characters of a cleaned git message shown to the model.
_MESSAGE_LIMIT = 1500
# An absolute path inside a git message: up to the next blank or quote.
_ABSOLUTE = re.compile(r"(?<![\w.~-])/[^\s'\"`]*")


class GitFailed(ToolError):
    """A git command exited with an error; the message is git's, cleaned, with a hint."""


@dataclass(frozen=True, slots=True)
class GitOutput:
    """What one git command printed.

    Attributes:
        out: standard output, at most ``limit`` bytes of it.
        err: standard error, decoded (at most 64 KiB of it).
        code: the exit status (negative when git was killed because its output went on).
        cut: the output went past ``limit`` and git was stopped there.
    """

    out: bytes
    err: str
    code: int
    cut: bool

    @property
    def text(self) -> str:
        """Standard output decoded as UTF-8 (bad bytes replaced)."""
        return self.out.decode("utf-8", "replace")


def refuse_option(value: str, what: str) -> str:
    """Return ``value`` if git cannot read it as an option; else raise.

    Raises:
        ToolError: ``value`` starts with ``-`` or holds a control character.
    """
    if value.startswith("-"):
        raise ToolError(
            f"git option injection refused: {what} {_shown(value)} starts with '-', which git "
            "would read as an option; give a name, hash or path (for a ref whose name starts "
            "with '-', write it in full: refs/heads/<name>)"
        )
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise ToolError(f"{what} {_shown(value)} holds a control character; git refuses those")
    return value


def _shown(text: str) -> str:
    return repr(text) if not text.isprintable() or len(text) > 200 else text


@functools.cache
def _git_executable() -> str | None:
    return shutil.which("git")


def git_environment(
    ceiling: Sequence[Path], extra_config: Sequence[tuple[str, str]] = ()
) -> dict[str, str]:
    """Return the whole environment of a git child: nothing inherited but PATH, HOME and TZ.

    Args:
        ceiling: folders git must not climb into looking for a repository.
        extra_config: configuration given through ``GIT_CONFIG_KEY_<n>``/``_VALUE_<n>``
            (names with any characters, unlike ``-c name=value``).
    """
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.environ.get("HOME", "/nonexistent"),
        "LC_ALL": "C",
        "LANG": "C",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_SYSTEM": os.devnull,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_CEILING_DIRECTORIES": os.pathsep.join(str(path) for path in ceiling),
    }
    if "TZ" in os.environ:
        env["TZ"] = os.environ["TZ"]
    if extra_config:
        env["GIT_CONFIG_COUNT"] = str(len(extra_config))
        for index, (key, value) in enumerate(extra_config):
            env[f"GIT_CONFIG_KEY_{index}"] = key
            env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def git_argv(git: str, args: Sequence[str]) -> list[str]:
    """Return the full command line: git, the global safety options, then ``args``."""
    argv = [git, "--no-pager"]
    for key, value in CONFIG_OVERRIDES:
        argv += ["-c", f"{key}={value}"]
    return argv + list(args)


async def _kill(process: trio.Process) -> None:
    # run_process's default sends SIGTERM and waits 5 s; a git past its deadline goes now.
    process.kill()
    await process.wait()


async def _drain(stream: trio.abc.ReceiveStream, keep: int, into: bytearray) -> None:
    while chunk := await stream.receive_some(65536):
        if len(into) < keep:
            into += chunk[: keep - len(into)]


@dataclass(frozen=True, slots=True)
class GitRunner:
    """Where and how git runs for one tool call: folder, environment, deadline.

    Attributes:
        cwd: the folder git runs in.
        env: its whole environment (``git_environment``).
        deadline: ``trio.current_time()`` by which every command must have finished.
        timeout: the ``git_timeout`` setting the deadline came from, for the message.
    """

    cwd: Path
    env: Mapping[str, str]
    deadline: float
    timeout: float

    def moved(self, cwd: Path, env: Mapping[str, str]) -> GitRunner:
        """The same deadline, in another folder with another environment."""
        return GitRunner(cwd, env, self.deadline, self.timeout)

    async def run(self, args: Sequence[str], limit: int) -> GitOutput:
        """Run ``git <args>`` and return what it printed (at most ``limit`` bytes).

        Raises:
            ToolError: git is not installed, or the command was still running at the
                deadline (it is killed).
        """
        git = _git_executable()
        if git is None:
            raise ToolError("git is not installed (no 'git' on PATH), so the git tools cannot run")
        out = bytearray()
        err = bytearray()
        cut = False
        with trio.move_on_at(self.deadline) as scope:
            async with trio.open_nursery() as nursery:
                process: trio.Process = await nursery.start(
                    functools.partial(
                        trio.run_process,
                        git_argv(git, args),
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        cwd=self.cwd,
                        env=dict(self.env),
                        check=False,
                        deliver_cancel=_kill,
                    )
                )
                assert process.stdout is not None
                assert process.stderr is not None
                nursery.start_soon(_drain, process.stderr, _STDERR_LIMIT, err)
                # At most limit + 1 bytes: the one past the limit only says there was more.
                while chunk := await process.stdout.receive_some(min(65536, limit + 1 - len(out))):
                    out += chunk
                    if len(out) > limit:
                        cut = True
                        del out[limit:]
                        process.kill()
                        break
                await process.wait()
        if scope.cancelled_caught:
            command = next((arg for arg in args if not arg.startswith("-")), "git")
            raise ToolError(
                f"git {command} did not finish within the {self.timeout:g} s allowed (the "
                "[skills] git_timeout setting) and was stopped; narrow the request (a path, a "
                "smaller range or max_count) or raise git_timeout"
            )
        code = process.returncode if process.returncode is not None else -1
        return GitOutput(bytes(out), err.decode("utf-8", "replace"), code, cut)


def clean_message(stderr: str, roots: Sequence[Path]) -> str:
    """Return git's error text fit for the model: its own lines, no paths outside ``roots``.

    ``hint:`` and usage lines go; ``fatal:``/``error:`` prefixes go; an absolute path that
    does not lie inside one of ``roots`` becomes ``<a path outside the allowed folders>``.
    """
    lines: list[str] = []
    for raw in stderr.splitlines():
        line = raw.strip()
        if not line or line.startswith(("hint:", "Use '--' to separate", "'git <command>")):
            continue
        for prefix in ("fatal: ", "error: ", "warning: "):
            line = line.removeprefix(prefix)
        lines.append(_ABSOLUTE.sub(lambda match: _shown_path(match.group(0), roots), line))
    text = "; ".join(lines) or "no message"
    if len(text) > _MESSAGE_LIMIT:
        text = text[:_MESSAGE_LIMIT] + "..."
    return text


def _shown_path(text: str, roots: Sequence[Path]) -> str:
    path = Path(os.path.normpath(text.rstrip(".,;:)")))
    if any(path.is_relative_to(root) for root in roots):
        return text
    return "<a path outside the allowed folders>"
