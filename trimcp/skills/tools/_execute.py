"""``run_command``: run an allowed executable (the ``execute`` category, off by default).

Only what ``[skills] commands`` lists may run: a bare name is matched exactly and looked up
on the sanitised ``PATH`` (its relative entries dropped, so a program the model wrote into
the working folder is never picked up by name), an absolute path runs only when it is
listed as that path. Arguments are passed as an array straight to ``execve`` — there is no
shell, so ``;``, ``|``, ``$()`` and globs are plain characters unless the allowlist itself
names a shell. The environment is the stdio launcher's (``trimcp.client.process``): a short
list of variables that hold no secrets, so the API keys the host holds do not reach the
command.

The working folder must be a folder inside the jail; the command itself is not confined to
it (it is a program the user chose to allow, and can do whatever that program does, hence
``openWorldHint`` and ``destructiveHint``). It runs in a session of its own
(``start_new_session``), so on timeout or cancellation one ``killpg`` ends it and everything
it started; that also happens to what it leaves running once it exits. stdout and stderr
are each kept up to ``max_result_bytes``; what is cut is counted and said.

Annotations: MCP 2025-11-25, Server > Tools > Tool annotations
(https://modelcontextprotocol.io/specification/2025-11-25/server/tools).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

import trio

from trimcp.errors import ToolError
from trimcp.protocol import ToolAnnotations
from trimcp.server import Context, ToolResult, parse_docstring
from trimcp.skills._runtime import run_blocking
from trimcp.skills.jail import open_dir, shown

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from trimcp.server import MCPServer
    from trimcp.skills._runtime import Progress, Skills
    from trimcp.skills.jail import Jail

__all__ = ["CommandOutcome", "register"]

# Bytes read from a pipe at once.
_CHUNK = 65536
# Seconds the pipes are still read after the command exited and its group was killed: a
# process that left the group (setsid) may hold them open forever.
_DRAIN_GRACE = 2.0


class CommandOutcome(TypedDict):
    """How one ``run_command`` call ended.

    Attributes:
        command: the executable that ran (its resolved path).
        args: the arguments it got.
        cwd: the working folder, relative to its root.
        exit_code: the exit status; negative when a signal ended it (-9: SIGKILL).
        timed_out: the timeout passed and the process group was killed.
        stdout: standard output (UTF-8, invalid bytes replaced), cut at max_result_bytes.
        stderr: standard error, likewise.
        stdout_bytes: how many bytes the command wrote to stdout in all.
        stderr_bytes: how many bytes it wrote to stderr in all.
    """

    command: str
    args: list[str]
    cwd: str
    exit_code: int
    timed_out: bool
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int


@dataclass(slots=True)
class _Capture:
    """The first ``limit`` bytes of a stream, and how many it had in all."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0

    async def pump(self, stream: trio.abc.ReceiveStream) -> None:
        # Keep reading past the limit (dropping it) so the command never blocks on a full pipe.
        while chunk := await stream.receive_some(_CHUNK):
            self.total += len(chunk)
            room = self.limit - len(self.data)
            if room > 0:
                self.data += chunk[:room]

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    def header(self, name: str) -> str:
        if self.total > len(self.data):
            return (
                f"--- {name} (first {len(self.data)} of {self.total} bytes; the rest was cut "
                "at max_result_bytes) ---"
            )
        return f"--- {name} ({self.total} bytes) ---"


@dataclass(slots=True)
class _Run:
    returncode: int
    timed_out: bool
    stdout: _Capture
    stderr: _Capture


def _search_path(environment: Mapping[str, str]) -> str:
    """The ``PATH`` a name is looked up on: absolute entries only."""
    entries = environment.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(entry for entry in entries if os.path.isabs(entry))


def _executable(command: str, allowed: Sequence[str], path: str) -> str:
    """Return the program ``command`` names, if the allowlist allows it.

    Raises:
        ToolError: not configured, not listed, or not found.
    """
    listed = ", ".join(shown(name) for name in allowed)
    if not allowed:
        raise ToolError(
            "run_command is not configured: the [skills] commands list is empty, so no "
            "command may run; the user can list executables there"
        )
    if command not in allowed:
        raise ToolError(f"{shown(command)} is not an allowed command; allowed: {listed}")
    if os.path.isabs(command):
        if not (os.path.isfile(command) and os.access(command, os.X_OK)):
            raise ToolError(f"{shown(command)} is not an executable file")
        return command
    if "/" in command:
        raise ToolError(
            f"{shown(command)} is neither a name nor an absolute path; the [skills] commands "
            "list takes names (looked up on PATH) or absolute paths"
        )
    found = shutil.which(command, path=path)
    if found is None:
        raise ToolError(f"{shown(command)} is allowed but was not found on PATH ({path})")
    return found


def _kill_group(pid: int) -> None:
    # The command leads its own group (start_new_session), so the group id is its pid; a
    # pid is not reused while a group of that id exists.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _feed(stream: trio.abc.SendStream, data: bytes) -> None:
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        async with stream:
            await stream.send_all(data)


async def _run(  # noqa: PLR0913
    argv: list[str],
    *,
    cwd: str,
    environment: dict[str, str],
    stdin: bytes | None,
    timeout: float,
    limit: int,
) -> _Run:
    """Run ``argv`` in its own process group; kill the group on timeout or cancellation.

    Raises:
        ToolError: the program could not be started.
    """
    try:
        process = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environment,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise ToolError(f"{shown(argv[0])} could not be started: {reason}") from None
    out, err = _Capture(limit), _Capture(limit)
    exited = False
    try:
        with trio.move_on_after(timeout):
            async with trio.open_nursery() as nursery:
                drained = trio.Event()

                async def drain() -> None:
                    assert process.stdout is not None
                    assert process.stderr is not None
                    async with trio.open_nursery() as pumps:
                        pumps.start_soon(out.pump, process.stdout)
                        pumps.start_soon(err.pump, process.stderr)
                    drained.set()

                nursery.start_soon(drain)
                if stdin is not None:
                    assert process.stdin is not None
                    nursery.start_soon(_feed, process.stdin, stdin)
                await process.wait()
                exited = True
                _kill_group(process.pid)  # what it left running would hold our pipes
                with trio.move_on_after(_DRAIN_GRACE):
                    await drained.wait()
                nursery.cancel_scope.cancel()
    finally:
        _kill_group(process.pid)
        with trio.CancelScope(shield=True):
            await process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    await stream.aclose()
    returncode = process.returncode
    assert returncode is not None
    return _Run(returncode, not exited, out, err)


def _status(run: _Run, timeout: float, configured: float) -> str:
    code = run.returncode
    lines: list[str] = []
    if run.timed_out:
        limit = (
            f"the command_timeout of {configured:g} s"
            if timeout >= configured
            else "the timeout asked for"
        )
        lines.append(
            f"timed out after {timeout:g} s ({limit}): the process and everything it "
            "started were killed"
        )
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        lines.append(f"exit code {code} (ended by {name})")
    else:
        lines.append(f"exit code {code}")
    return "\n".join(lines)


def register(server: MCPServer, skills: Skills) -> None:
    """Register ``run_command`` on ``server``."""
    # Imported here: only a server offering execute pays for the client package.
    from trimcp.client.process import child_environment

    settings = skills.settings
    allowed = settings.commands

    async def run_command(  # noqa: PLR0913, PLR0917 - the tool's arguments
        ctx: Context,
        command: str,
        args: tuple[str, ...] = (),
        cwd: str = ".",
        timeout: float | None = None,
        stdin: str | None = None,
    ) -> ToolResult[CommandOutcome]:
        """Run an allowed program with arguments (no shell) and return its exit code and output.

        Arguments are passed to the program as they are: shell syntax (;, |, $VAR, *) is not
        interpreted. On timeout the program and everything it started are killed.

        Args:
            command: the program, exactly as the allowlist names it.
            args: its arguments, one string each.
            cwd: the working folder, inside the allowed folders.
            timeout: seconds to let it run (at most the configured command_timeout).
            stdin: text to send to its standard input (none: it reads nothing).
        """
        if sys.platform == "win32":  # pragma: no cover
            raise ToolError("run_command needs process groups, which Windows does not have")
        if timeout is not None and timeout <= 0:
            raise ToolError(f"timeout must be more than 0 seconds, not {timeout:g}")
        limit = min(timeout, settings.command_timeout) if timeout else settings.command_timeout
        environment = child_environment(os.environ, {}, (), sys.platform)
        path = _search_path(environment)
        environment["PATH"] = path
        program = _executable(command, allowed, path)
        jail = await skills.jail_for(ctx)

        def folder(progress: Progress) -> tuple[str, str]:
            return _working_folder(jail, cwd)

        real, relative = await run_blocking(ctx, folder)
        data = None if stdin is None else stdin.encode("utf-8", "replace")
        run = await _run(
            [program, *args],
            cwd=real,
            environment=environment,
            stdin=data,
            timeout=limit,
            limit=settings.max_result_bytes,
        )
        text = "\n".join(
            [
                "$ " + shlex.join([command, *args]),
                _status(run, limit, settings.command_timeout),
                run.stdout.header("stdout"),
                run.stdout.text,
                run.stderr.header("stderr"),
                run.stderr.text,
            ]
        )
        outcome = CommandOutcome(
            command=program,
            args=list(args),
            cwd=relative,
            exit_code=run.returncode,
            timed_out=run.timed_out,
            stdout=run.stdout.text,
            stderr=run.stderr.text,
            stdout_bytes=run.stdout.total,
            stderr_bytes=run.stderr.total,
        )
        return ToolResult(text, outcome)

    if allowed:
        description = "Allowed commands: " + ", ".join(allowed) + "."
    else:
        description = "No command is allowed yet ([skills] commands is empty)."
    server.add_tool(
        run_command,
        description=(parse_docstring(run_command.__doc__).description or "") + "\n\n" + description,
        annotations=ToolAnnotations(
            title="Run command",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=True,
        ),
    )


def _working_folder(jail: Jail, cwd: str) -> tuple[str, str]:
    """Return the real path and the relative name of the folder ``cwd``.

    Raises:
        PathRefused: outside the jail, blocked, missing or not a folder.
    """
    resolved = jail.resolve(cwd, "read")
    os.close(open_dir(resolved))  # a folder, reached without following a symlink
    return str(resolved.real), resolved.relative
