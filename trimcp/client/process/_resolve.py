"""Find the program a stdio server runs, the way the server's own environment would.

``resolve_command`` looks the command up before anything is started, so that a missing or
unrunnable program gets a precise message instead of the bare ``FileNotFoundError`` that
``subprocess`` raises (which cannot tell a missing program from a missing ``#!`` interpreter
or working directory):

* a bare name (``npx``) is searched with ``shutil.which`` on the PATH of the *child's*
  environment (``child_environment``), not trimcp's: that is the PATH the server will live
  with. ``shutil.which`` honours PATHEXT on Windows, so ``npx`` finds ``npx.cmd``;
* a path (``./server.sh``, ``bin/server``, ``~/tools/server``) is taken from the server's
  working directory, as a shell started there would;
* on Windows a ``.cmd`` or ``.bat`` file runs through ``cmd.exe /d /s /c`` (CreateProcess
  cannot run batch files itself). Its command line is built once and handed over verbatim,
  as Node's ``child_process`` does, because ``cmd`` strips quotes by its own rules: the
  arguments then pass through ``cmd``'s parsing, so ``& | < > ^ %`` in them mean what they
  mean to ``cmd``. They come from the user's own configuration, never from a server.

``spawn_error`` explains an ``OSError`` raised when starting a resolved program anyway (the
file vanished, or its ``#!`` interpreter is missing).
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import shutil
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from ._env import variable
from ._launch_errors import (
    missing_interpreter,
    no_such_file,
    no_working_directory,
    not_executable,
    not_found,
    spawn_failed,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from trimcp.errors import LaunchFailed

    from ._text import LaunchContext

_BATCH_SUFFIXES = (".cmd", ".bat")

# A #! line longer than this is not read whole; Linux itself stops at 256 bytes.
_SHEBANG_LIMIT = 256


@final
@dataclass(frozen=True, slots=True)
class ResolvedCommand:
    """The program found for a server, and what to execute to run it.

    Attributes:
        program: the program's absolute path.
        argv: what is executed: ``program`` and the arguments, or ``cmd.exe /d /s /c ...``
            for a Windows batch file.
        verbatim: for a Windows batch file, the whole command line handed to CreateProcess
            as is; None otherwise.
    """

    program: str
    argv: tuple[str, ...]
    verbatim: str | None = None

    def popen_command(self) -> str | tuple[str, ...]:
        """Return what to hand ``trio.lowlevel.open_process`` as its command."""
        return self.verbatim if self.verbatim is not None else self.argv


def resolve_command(
    context: LaunchContext,
    *,
    environment: Mapping[str, str],
    cwd: str | None,
    path_from_env: bool = False,
) -> ResolvedCommand:
    """Find ``context.argv[0]`` for a child with ``environment`` in ``cwd`` (None: ours).

    ``path_from_env`` says the server's own ``env`` set PATH (the not-found message says so).

    Raises:
        LaunchFailed: ``cwd`` is not an existing directory.
        CommandNotFound: no such program on the child's PATH, or no file at the given path.
        CommandNotExecutable: found, but not executable (or a directory).
    """
    if cwd is not None and not os.path.isdir(cwd):
        raise no_working_directory(context, cwd=cwd)
    program = context.program
    if _names_a_path(program, context.platform):
        found = _locate_file(context, environment=environment, cwd=cwd)
    else:
        found = _search_path(context, environment=environment, path_from_env=path_from_env)
    return runnable(found, context.argv[1:], environment=environment, platform=context.platform)


def runnable(
    program: str, args: Sequence[str], *, environment: Mapping[str, str], platform: str
) -> ResolvedCommand:
    """Return how to execute ``program`` with ``args``: directly, or a batch file via cmd."""
    if platform != "win32" or not program.lower().endswith(_BATCH_SUFFIXES):
        return ResolvedCommand(program, (program, *args))
    shell = variable(environment, "COMSPEC", platform)
    if not shell:
        root = variable(environment, "SYSTEMROOT", platform)
        shell = ntpath.join(root, "System32", "cmd.exe") if root else "cmd.exe"
    inner = subprocess.list2cmdline([program, *args])
    # /d: skip the AutoRun commands of the registry; /s with the outer quotes: cmd strips
    # exactly those and runs the rest as written.
    verbatim = f'{subprocess.list2cmdline([shell])} /d /s /c "{inner}"'
    return ResolvedCommand(program, (shell, "/d", "/s", "/c", program, *args), verbatim)


def _names_a_path(program: str, platform: str) -> bool:
    if "/" in program or program.startswith("~"):
        return True
    return platform == "win32" and ("\\" in program or ":" in program)


def _locate_file(context: LaunchContext, *, environment: Mapping[str, str], cwd: str | None) -> str:
    """Check a command given as a path; relative paths start in the child's ``cwd``."""
    path = _expand_home(context.program, environment, context.platform)
    base = None if os.path.isabs(path) else (cwd or os.getcwd())
    full = os.path.normpath(path if base is None else os.path.join(base, path))
    found = shutil.which(full)  # checks the execute bit (and PATHEXT on Windows)
    if found is not None:
        return os.path.abspath(found)
    if os.path.isdir(full):
        raise not_executable(context, path=full, directory=True)
    if os.path.exists(full):
        raise not_executable(context, path=full, directory=False)
    raise no_such_file(context, path=full, relative_to=base)


def _expand_home(path: str, environment: Mapping[str, str], platform: str) -> str:
    """Replace a leading ``~`` by the child's home folder (else trimcp's)."""
    if path != "~" and not path.startswith(("~/", "~\\")):
        return os.path.expanduser(path)
    home = variable(environment, "USERPROFILE" if platform == "win32" else "HOME", platform)
    return (home + path[1:]) if home else os.path.expanduser(path)


def _search_path(
    context: LaunchContext, *, environment: Mapping[str, str], path_from_env: bool
) -> str:
    """Search the child's PATH (``os.defpath`` when it has none) for a bare program name."""
    search = variable(environment, "PATH", context.platform)
    if search is None:
        search = os.defpath
    # In order, each once: a PATH often names a directory twice.
    directories = list(dict.fromkeys(entry for entry in search.split(os.pathsep) if entry))
    program = context.program
    found = shutil.which(program, path=search) if directories else None
    if found is not None:
        return os.path.abspath(found)
    if context.platform != "win32":
        # shutil.which skips files without the execute bit, as execvp does; say so.
        for directory in directories:
            candidate = os.path.join(directory, program)
            if os.path.isfile(candidate):
                raise not_executable(context, path=candidate, directory=False)
    raise not_found(context, searched=directories, path_from_env=path_from_env)


def spawn_error(context: LaunchContext, resolved: ResolvedCommand, error: OSError) -> LaunchFailed:
    """Return the plain-language error for ``error``, raised starting ``resolved``."""
    program = resolved.program
    if isinstance(error, FileNotFoundError):
        line = _shebang(program)
        if line is not None:
            return missing_interpreter(
                context, path=program, line=line, interpreter=_interpreter(line)
            )
        return no_such_file(context, path=program, relative_to=None)
    if isinstance(error, PermissionError):
        return not_executable(context, path=program, directory=False)
    return spawn_failed(context, path=program, error=error)


def _shebang(path: str) -> str | None:
    """Return the ``#!`` line of the file at ``path`` without ``#!``, or None."""
    try:
        with open(path, "rb") as file:
            head = file.read(_SHEBANG_LIMIT)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    return head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()


def _interpreter(line: str) -> str:
    """Return the program a ``#!`` line runs: ``node`` for ``/usr/bin/env -S node --x``."""
    words = line.split()
    if not words:
        return line
    if posixpath.basename(words[0]) == "env":
        names = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        if names:
            return names[0]
    return words[0]
