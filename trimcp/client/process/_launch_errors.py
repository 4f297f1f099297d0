"""Plain-language errors for a server that cannot be started: not found, not runnable, no cwd.

Each function returns the exception for the caller to raise (``raise not_found(...) from
exc`` keeps the ``OSError`` as ``__cause__``). The hints depend on the program's name (npx
comes with Node.js, uvx with uv, ...) and on the platform, since the usual reasons differ:
on POSIX a PATH set in a shell profile that a desktop app never reads, on Windows
``npx.cmd`` and a PATH read only when the host started.
"""

from __future__ import annotations

import errno
import ntpath
import posixpath
from typing import TYPE_CHECKING

from trimcp.errors import CommandNotExecutable, CommandNotFound, LaunchFailed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._text import LaunchContext

# Launchers MCP server configs use most, and what installs them.
_PROVIDERS = {
    "npx": ("Node.js", "https://nodejs.org"),
    "npm": ("Node.js", "https://nodejs.org"),
    "node": ("Node.js", "https://nodejs.org"),
    "uvx": ("uv", "https://docs.astral.sh/uv/"),
    "uv": ("uv", "https://docs.astral.sh/uv/"),
    "pipx": ("pipx", "https://pipx.pypa.io"),
    "docker": ("Docker", "https://docs.docker.com/get-docker/"),
    "bunx": ("Bun", "https://bun.sh"),
    "bun": ("Bun", "https://bun.sh"),
    "deno": ("Deno", "https://deno.com"),
    "python": ("Python", "https://www.python.org"),
    "python3": ("Python", "https://www.python.org"),
}

_WINDOWS_SUFFIXES = (".exe", ".cmd", ".bat", ".com")


def program_stem(program: str, platform: str) -> str:
    """Return the program's bare name: no directory, no Windows suffix, lower case there."""
    if platform != "win32":
        return posixpath.basename(program)
    name = ntpath.basename(program).lower()
    for suffix in _WINDOWS_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def not_found(
    context: LaunchContext,
    *,
    searched: Sequence[str],
    path_from_env: bool,
) -> CommandNotFound:
    """Return the error for a bare command name found in none of the ``searched`` directories.

    ``path_from_env`` says the server's own ``env`` set PATH, replacing trimcp's.
    """
    program = context.program
    windows = context.platform == "win32"
    provider = _PROVIDERS.get(program_stem(program, context.platform))
    which = "where" if windows else "command -v"
    installed = f'"{program}" is not installed'
    causes = [
        f"{installed} (it comes with {provider[0]})" if provider else installed,
        "it is installed, but in a directory that is not on the PATH searched",
    ]
    if path_from_env:
        causes.insert(0, "the server's \"env\" sets PATH, which replaces trimcp's PATH here")
    causes.append(_path_cause(windows=windows))
    fixes = [
        f"install {provider[0]}: {provider[1]}" if provider else f'install "{program}"',
        f"in a terminal where it works, run `{which} {program}` and put that full path in "
        '"command"',
        'or add its directory to PATH for this server with "env": {"PATH": "..."}; list '
        'any other variable it needs from trimcp\'s environment in "env_passthrough"',
    ]
    if windows:
        fixes.append(
            f'on Windows, "{program}" may be "{program}.cmd": make sure PATHEXT lists .CMD, '
            "or give the full path to the .cmd file"
        )
    listed = list(searched) or ["(PATH is empty or not set)"]
    message = context.report(
        f'could not be started: command "{program}" was not found',
        facts=[("searched", listed)],
        causes=causes,
        fixes=fixes,
    )
    return CommandNotFound(
        message, server=context.server, command=context.argv, searched=tuple(searched)
    )


def _path_cause(*, windows: bool) -> str:
    if windows:
        return (
            "it was installed after trimcp (or the app running it) started: Windows hands a "
            "program the PATH of when it started, so restart it"
        )
    return (
        "your shell finds it through a PATH set in a shell profile (~/.bashrc, ~/.zshrc, "
        "nvm, pyenv, asdf), which apps started from a desktop menu or a service never read"
    )


def no_such_file(context: LaunchContext, *, path: str, relative_to: str | None) -> CommandNotFound:
    """Return the error for a command given as a path that does not exist.

    ``relative_to`` is the directory a relative command was taken from, None for an absolute one.
    """
    causes = ["the path is misspelt, or the program was moved or not built yet"]
    if relative_to is not None:
        causes.append(
            f"a relative command is taken from the server's working directory ({relative_to}), "
            "not from the folder of the config file"
        )
    message = context.report(
        f"could not be started: the program {path} does not exist",
        facts=[("program", [path])],
        causes=causes,
        fixes=['correct the path in "command"; an absolute path works from anywhere'],
    )
    return CommandNotFound(message, server=context.server, command=context.argv, searched=[path])


def missing_interpreter(
    context: LaunchContext, *, path: str, line: str, interpreter: str
) -> CommandNotFound:
    """Return the error for a script whose ``#!`` line names a program that does not exist.

    ``line`` is the ``#!`` line without ``#!``; ``interpreter`` the program's bare name.
    """
    message = context.report(
        f'could not be started: "{interpreter}", which runs its script, was not found',
        facts=[("program", [path]), ("shebang", [f"#!{line}"])],
        causes=[
            f'the script exists, but "{interpreter}" named on its #! line is not installed '
            "or not on the server's PATH (npm-installed commands need node there, for example)",
        ],
        fixes=[
            f'install "{interpreter}", or add its directory to PATH for this server with '
            '"env": {"PATH": "..."}',
            f'or give the full path of "{interpreter}" as "command", with the script as the '
            'first of "args"',
        ],
    )
    return CommandNotFound(
        message, server=context.server, command=context.argv, searched=[interpreter]
    )


def not_executable(context: LaunchContext, *, path: str, directory: bool) -> CommandNotExecutable:
    """Return the error for a program that exists but may not be run (or is a directory)."""
    if directory:
        summary = f"could not be started: {path} is a directory, not a program"
        causes = ['"command" names a folder (the program inside it, or a typo?)']
        fixes = ['put the path of the program file itself in "command"']
    else:
        summary = f"could not be started: permission denied running {path}"
        causes = [
            "the file is not marked executable",
            "or its file system does not allow running programs (mounted noexec), or a "
            "folder on the way is not readable for this user",
        ]
        fixes = (
            ["check the file's permissions, or give the full path to the real .exe"]
            if context.platform == "win32"
            else [
                f"make it executable: chmod +x {path}",
                'or run it through its interpreter: "command": "bash" (or python3, node), '
                'with the script as the first of "args"',
            ]
        )
    message = context.report(summary, facts=[("program", [path])], causes=causes, fixes=fixes)
    return CommandNotExecutable(message, server=context.server, command=context.argv)


def no_working_directory(context: LaunchContext, *, cwd: str) -> LaunchFailed:
    """Return the error for a ``cwd`` that does not exist or is not a directory."""
    message = context.report(
        "could not be started: its working directory does not exist",
        facts=[("cwd", [cwd])],
        causes=['"cwd" is misspelt, or the folder was moved or deleted'],
        fixes=[
            'create the folder, or correct "cwd" (a relative cwd is taken from the folder '
            "of the config file)"
        ],
    )
    return LaunchFailed(message, server=context.server, command=context.argv)


def spawn_failed(context: LaunchContext, *, path: str, error: OSError) -> LaunchFailed:
    """Return the error for any other failure of the operating system to start the program."""
    reason = error.strerror or str(error)
    causes = [f"the operating system refused to start it: {reason}"]
    if error.errno == errno.ENOEXEC:
        causes = [
            "the file is not a program this system can run: built for another CPU or operating "
            "system, or a script without a #! line naming its interpreter",
        ]
    message = context.report(
        f"could not be started: {reason}",
        facts=[("program", [path])],
        causes=causes,
        fixes=["run the command line above in a terminal to see the problem directly"],
    )
    return LaunchFailed(message, server=context.server, command=context.argv)
