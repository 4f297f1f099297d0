"""What to launch for a stdio server (``ProcessSpec``), and launching it under trio.

``prepare_launch`` is the decision (environment, program, command line: no process yet);
``spawn`` starts it: pipes for stdin, stdout and stderr, the working directory, and a session
of its own on POSIX (``start_new_session``: its own process group, which ``_stop``
signals as a whole, and no controlling terminal, so a Ctrl+C meant for the host does not hit
the servers before the host can shut them down in order). On Windows the child gets a new
process group instead (CREATE_NEW_PROCESS_GROUP).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, final

import trio

from trimcp.transports import DEFAULT_MAX_MESSAGE_SIZE

from ._env import child_environment
from ._resolve import ResolvedCommand, resolve_command, spawn_error
from ._stderr import DEFAULT_STDERR_LINES
from ._stop import DEFAULT_CLOSE_GRACE, DEFAULT_TERM_GRACE
from ._text import HIDDEN, LaunchContext, redact_arguments

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.config.mcp_servers import ServerConfig


def _no_variables() -> Mapping[str, str]:
    return MappingProxyType({})


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ProcessSpec:
    """How to launch one stdio MCP server, and how patient to be when stopping it.

    ``repr`` shows ``env``'s names with ``***`` for the values (they are credentials), and
    the arguments with secret-looking values hidden, as every message about a launch does.

    Attributes:
        name: the server's configured name (in every message).
        command: the program: a bare name searched on the server's PATH, or a path
            (relative paths start in ``cwd``).
        args: the arguments after ``command``.
        env: variables set for the server, over the sanitised defaults (``child_environment``).
        env_passthrough: names copied from trimcp's environment when set there.
        cwd: the server's working directory; None means trimcp's own.
        source: where the server was defined, for messages (``ConfigSource.describe()``).
        stderr_lines: stderr lines kept for error messages. Default 50.
        close_grace: seconds to exit after stdin closes, before SIGTERM. Default 2.
        term_grace: seconds to exit after SIGTERM, before SIGKILL. Default 2.
        max_message_size: the longest stdout line accepted, in bytes (longer ones are dropped
            with ``MessageTooLarge``). Default 4 MiB.
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=_no_variables)
    env_passthrough: tuple[str, ...] = ()
    cwd: str | None = None
    source: str | None = None
    stderr_lines: int = DEFAULT_STDERR_LINES
    close_grace: float = DEFAULT_CLOSE_GRACE
    term_grace: float = DEFAULT_TERM_GRACE
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE

    def __post_init__(self) -> None:
        # Checked here, before a process exists that a bad value would leave behind.
        if self.stderr_lines < 1:
            raise ValueError(f"stderr_lines must be >= 1, not {self.stderr_lines}")
        if self.max_message_size < 1:
            raise ValueError(f"max_message_size must be >= 1, not {self.max_message_size}")
        if not (self.close_grace >= 0 and self.term_grace >= 0):
            raise ValueError("close_grace and term_grace must be >= 0 seconds")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "env_passthrough", tuple(self.env_passthrough))

    def __repr__(self) -> str:
        shown = {
            "name": self.name,
            "command": self.command,
            "args": tuple(redact_arguments((self.command, *self.args))[1:]),
            "env": dict.fromkeys(self.env, HIDDEN),
            "env_passthrough": self.env_passthrough,
            "cwd": self.cwd,
            "source": self.source,
        }
        return f"ProcessSpec({', '.join(f'{key}={value!r}' for key, value in shown.items())})"

    @classmethod
    def from_config(cls, config: ServerConfig) -> ProcessSpec:
        """Return the spec of a stdio ``ServerConfig`` whose ``${VAR}`` are already expanded.

        Raises:
            ValueError: ``config`` has no ``command`` (it is not a stdio server).
        """
        if config.command is None:
            raise ValueError(f"server {config.name!r} has no command: it is not a stdio server")
        return cls(
            name=config.name,
            command=config.command,
            args=config.args,
            env=config.env,
            env_passthrough=config.env_passthrough,
            cwd=config.cwd,
            source=config.source.describe(),
        )


@final
@dataclass(frozen=True, slots=True)
class Launch:
    """A launch decided but not started: who, with what environment, running what.

    The environment holds the server's credentials: it is left out of ``repr``.
    """

    context: LaunchContext
    environment: Mapping[str, str] = field(repr=False)
    resolved: ResolvedCommand
    cwd: str | None


def prepare_launch(spec: ProcessSpec, environ: Mapping[str, str] | None = None) -> Launch:
    """Work out the environment and the program for ``spec``; start nothing.

    ``environ`` is trimcp's environment to take variables from (default ``os.environ``).

    Raises:
        CommandNotFound, CommandNotExecutable, LaunchFailed: see ``resolve_command``.
    """
    parent = os.environ if environ is None else environ
    context = LaunchContext(
        server=spec.name, source=spec.source, argv=(spec.command, *spec.args), platform=sys.platform
    )
    environment = child_environment(parent, spec.env, spec.env_passthrough, sys.platform)
    path_from_env = any(key.upper() == "PATH" for key in spec.env)
    resolved = resolve_command(
        context, environment=environment, cwd=spec.cwd, path_from_env=path_from_env
    )
    return Launch(context, environment, resolved, spec.cwd)


async def spawn(launch: Launch) -> trio.Process:
    """Start the process of ``launch`` with piped stdin, stdout and stderr.

    Raises:
        LaunchFailed: the operating system refused (``OSError`` as ``__cause__``).
    """
    try:
        if sys.platform == "win32":  # pragma: no cover
            return await trio.lowlevel.open_process(
                launch.resolved.popen_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=launch.cwd,
                env=launch.environment,
                creationflags=subprocess.CREATE_NEW_PROCESS_GROUP,
            )
        return await trio.lowlevel.open_process(
            launch.resolved.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=launch.environment,
            start_new_session=True,
        )
    except OSError as exc:
        raise spawn_error(launch.context, launch.resolved, exc) from exc
