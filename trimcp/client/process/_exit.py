"""Explain a server process that ended on its own, in plain language (pure).

The exit status says more than it seems: a signal (SIGKILL is usually the out-of-memory
killer), exit code 127 (a wrapper script could not find a program), exit code 0 before the
handshake (not an MCP server, or it wants a ``stdio`` argument). Together with the last lines
of its stderr and whether it died starting or in use, that is usually enough for a person to
fix it without reading trimcp's logs.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

from trimcp.errors import ServerExited

from ._launch_errors import program_stem

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._text import LaunchContext

Phase = Literal["start", "operation"]
"""``start`` until the initialize handshake finished, ``operation`` after."""

Pipe = Literal["input", "output"]
"""The server's stdin ("input") or stdout ("output")."""

_CLOSED: dict[Pipe, str] = {
    "output": "closed its standard output",
    "input": "closed its standard input",
}

_PHASE_WORDS: dict[Phase, str] = {"start": "while starting", "operation": "while in use"}

_CRASH_SIGNALS = frozenset({"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT", "SIGSYS"})
_STOP_SIGNALS = frozenset({"SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"})

# NTSTATUS values a crashed Windows program exits with.
_WINDOWS_STATUS = {
    0xC0000005: "an access violation (a crash)",
    0xC0000135: "a DLL it needs was not found",
    0xC0000409: "a stack buffer overrun (a crash)",
    0xC00000FD: "a stack overflow (a crash)",
    0xC000013A: "Ctrl+C or the console closing",
}

# Launchers that download the server first; their failures look like the server's.
_DOWNLOADERS = frozenset({"npx", "uvx", "bunx", "pipx", "docker"})


def signal_name(returncode: int | None, platform: str) -> str | None:
    """Return ``SIGKILL`` for a POSIX returncode of -9, None when no signal ended it."""
    if returncode is None or returncode >= 0 or platform == "win32":
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExitFacts:
    """What is known about a server that went away by itself.

    Attributes:
        returncode: its exit status, negative for a signal on POSIX; None if it closed a pipe
            but was still running.
        stderr: the last lines it wrote to stderr.
        stderr_total: how many lines it wrote to stderr in all.
        during: whether the initialize handshake had finished.
        pipe: which pipe ended, for a server still running.
    """

    returncode: int | None
    stderr: tuple[str, ...] = ()
    stderr_total: int = 0
    during: Phase = "start"
    pipe: Pipe = "output"


def exit_error(context: LaunchContext, facts: ExitFacts) -> ServerExited:
    """Return the plain-language error for a server that exited (or closed a pipe) by itself."""
    returncode, during = facts.returncode, facts.during
    name = signal_name(returncode, context.platform)
    when = _PHASE_WORDS[during]
    if returncode is None:
        summary = f"{_CLOSED[facts.pipe]} {when}, without exiting"
        words = f"still running; it {_CLOSED[facts.pipe]}"
    elif name is not None:
        summary = f"was stopped by {name} {when}"
        words = f"killed by signal {name} (exit status {returncode})"
    else:
        status = _status(returncode, context.platform)
        summary = f"exited {when} with exit code {status}"
        words = f"code {status}"
    shown: list[tuple[str, Sequence[str]]] = [("exit", [words])]
    blocks: list[tuple[str, Sequence[str]]] = []
    if facts.stderr:
        blocks.append((_stderr_heading(len(facts.stderr), facts.stderr_total), facts.stderr))
    else:
        shown.append(("stderr", ["(it wrote nothing to stderr)"]))
    message = context.report(
        summary,
        facts=shown,
        blocks=blocks,
        causes=_causes(context, facts, name),
        fixes=_fixes(name, during, has_stderr=bool(facts.stderr)),
    )
    return ServerExited(
        message,
        server=context.server,
        command=context.argv,
        returncode=returncode,
        signal=name,
        stderr_tail=facts.stderr,
        during=during,
    )


def _status(returncode: int, platform: str) -> str:
    if platform == "win32" and returncode >= 0x80000000:
        return f"0x{returncode:08X}"
    return str(returncode)


def _stderr_heading(kept: int, total: int) -> str:
    if total > kept:
        return f"stderr (last {kept} of {total} lines)"
    return f"stderr ({kept} line{'' if kept == 1 else 's'})"


def _causes(context: LaunchContext, facts: ExitFacts, name: str | None) -> list[str]:
    returncode, during = facts.returncode, facts.during
    if returncode is None:
        return [
            f"it {_CLOSED[facts.pipe]}, which MCP over stdio needs open: it (or a library it "
            "uses) closed or redirected it"
        ]
    if name is not None:
        return [_signal_cause(name)]
    causes = [_code_cause(returncode, during, context.platform)]
    if during == "start" and program_stem(context.program, context.platform) in _DOWNLOADERS:
        causes.append(
            f"{context.program} may have failed to fetch the server: offline, behind a proxy, "
            "or a misspelt package or image name"
        )
    if during == "start" and returncode != 0:
        causes.append(
            "it needs an environment variable (an API key, a config path) that it did not get: "
            "servers start with only a few of trimcp's variables (PATH, HOME, ...)"
        )
    return causes


def _signal_cause(name: str) -> str:
    if name == "SIGKILL":
        return (
            "it was killed outright: most often by the out-of-memory killer (see `dmesg` or "
            "`journalctl -k`), or by someone running kill -9"
        )
    if name in _CRASH_SIGNALS:
        return f"it crashed ({name}): a bug in it or in a native library it loads"
    if name in _STOP_SIGNALS:
        return (
            f"something else stopped it ({name}): another program, a logout, or a closed terminal"
        )
    return f"it received {name}, which ended it"


# What an exit code says by convention (POSIX shells: 126 and 127).
_CODE_CAUSES = {
    127: "a program it runs (from a wrapper script, say) was not found: 127 means that",
    126: "a program it runs could not be executed: 126 means permission denied",
}

_DEFAULT_CAUSES: dict[tuple[bool, Phase], str] = {
    (True, "start"): (
        "it finished without an error before answering: it may not be an MCP server, or "
        "it needs an argument to serve over stdio (many take `stdio` or `--stdio`)"
    ),
    (True, "operation"): "it ended on its own without an error (some servers exit when idle)",
    (False, "start"): (
        "it failed while starting: a missing dependency, a wrong argument, or an "
        "unsupported runtime version; its stderr usually says which"
    ),
    (False, "operation"): "it crashed while in use; its stderr usually says why",
}


def _code_cause(returncode: int, during: Phase, platform: str) -> str:
    if platform == "win32" and returncode in _WINDOWS_STATUS:
        return f"it ended with {_WINDOWS_STATUS[returncode]}"
    if returncode in _CODE_CAUSES:
        return _CODE_CAUSES[returncode]
    return _DEFAULT_CAUSES[returncode == 0, during]


def _fixes(name: str | None, during: Phase, *, has_stderr: bool) -> list[str]:
    fixes = [
        "run the command line above in a terminal to see its whole output"
        + ("" if has_stderr else ", or make it log to stderr")
    ]
    if during == "start":
        fixes.append(
            'list variables it needs from trimcp\'s environment in "env_passthrough", or '
            'set them in "env"'
        )
    if name == "SIGKILL":
        fixes.append("give it more memory, or find out what makes it use so much")
    elif during == "operation":
        fixes.append("if it keeps happening, report the lines above to the server's authors")
    return fixes
