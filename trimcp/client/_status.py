"""What a ``Connection`` reports about itself: ``ConnectionStatus``, and the words for failures.

Users of MCP gateways keep reporting the same lie: an upstream that died long ago shown as
up, or one that gave up shown as "restarting" forever. A status here says what the actor is
actually doing, with the facts a person needs to act on it:

- ``connecting`` / ``connected``: the attempt under way, or how long it has been up;
- ``reconnecting``: when the next attempt is (seconds from now, and the wall-clock time for
  a display) and which attempt it will be;
- ``failed``: why it gave up (the restart intensity was spent, or the failure is one no retry
  can cure), the last error, and for a process that exited its exit code or signal and the
  last lines of its stderr. A failed connection is retried by ``reconnect`` and by ``reload``;
- ``stopped``: no connection runs.

The times come from trio's clock (monotonic; ``MockClock`` in tests); the wall-clock time is
only for showing, computed when the status is taken.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, final

from trimcp.errors import (
    CommandNotExecutable,
    CommandNotFound,
    ConfigError,
    ServerExited,
    SignInRequired,
)

__all__ = [
    "ConnectionState",
    "ConnectionStatus",
    "ExitFacts",
    "describe",
    "exit_facts",
    "permanent",
    "wall_clock",
]

ConnectionState = Literal["connecting", "connected", "reconnecting", "failed", "stopped"]

#: Lines of the server's stderr a status keeps (the process keeps more for its own errors).
STDERR_TAIL_LINES = 10


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionStatus:
    """One server's connection, for ``status()``, the CLI's table and a gateway's health.

    Attributes:
        name: the configured server name.
        state: see the module docstring.
        pid: the process id of the server's process while one runs (stdio servers), else
            None.
        restarts: reconnects after a failure since the last manual connect.
        tools: tools offered now (0 while not connected).
        resources: resources offered now.
        prompts: prompts offered now.
        last_error: why the last connection failed or ended, in plain words.
        connected_for: seconds since it connected, or ``None``.
        attempt: the attempt under way (``connecting``), next (``reconnecting``), or that
            connected or failed last, counted from 1 since the last manual connect; 0 when
            none was made.
        next_attempt_in: seconds from now until the next attempt (``reconnecting`` only).
        next_attempt_at: that moment as a local ISO 8601 time, for display only.
        failure: why the connection gave up (``failed`` only): the restart intensity was
            spent, or retrying cannot cure the error. ``last_error`` says what the error was.
        exit_code: the exit status of the server's process, when the last error was its
            exit (negative: killed by a signal on POSIX).
        exit_signal: the signal that ended it (``SIGKILL``), if one did.
        stderr_tail: the last lines it wrote to stderr before that exit.
    """

    name: str
    state: ConnectionState
    pid: int | None = None
    restarts: int = 0
    tools: int = 0
    resources: int = 0
    prompts: int = 0
    last_error: str | None = None
    connected_for: float | None = None
    attempt: int = 0
    next_attempt_in: float | None = None
    next_attempt_at: str | None = None
    failure: str | None = None
    exit_code: int | None = None
    exit_signal: str | None = None
    stderr_tail: tuple[str, ...] = ()

    @property
    def connected(self) -> bool:
        return self.state == "connected"

    def summary(self) -> str:
        """One line on why it is not connected, for a table cell (empty when connected).

        ``reconnecting``: the next attempt and the last error; ``failed``: the verdict, the
        exit and the last error. The full text stays in ``last_error`` and ``stderr_tail``.
        """
        last = _first_line(self.last_error)
        parts: list[str] = []
        if self.state == "reconnecting" and self.next_attempt_in is not None:
            clock = self.next_attempt_at[11:19] if self.next_attempt_at else ""
            at = f" (at {clock})" if clock else ""
            parts.append(f"attempt {self.attempt} in {self.next_attempt_in:.1f} s{at}")
        elif self.state == "failed" and self.failure:
            parts.append(self.failure)
        if self.state in ("reconnecting", "failed"):
            exited = self.exit_words()
            if exited and exited not in last:
                parts.append(exited)
        if last and not self.connected:
            parts.append(last)
        return "; ".join(parts)

    def exit_words(self) -> str:
        """``exit code 3`` / ``killed by SIGKILL`` and the last stderr line; empty if none."""
        return ExitFacts(self.exit_code, self.exit_signal, self.stderr_tail).words()

    def as_json(self) -> dict[str, object]:
        """Every field as JSON-ready values (``trimcp servers --json``, a health endpoint)."""
        return {
            "name": self.name,
            "state": self.state,
            "pid": self.pid,
            "restarts": self.restarts,
            "attempt": self.attempt,
            "tools": self.tools,
            "resources": self.resources,
            "prompts": self.prompts,
            "connected_for": self.connected_for,
            "next_attempt_in": self.next_attempt_in,
            "next_attempt_at": self.next_attempt_at,
            "failure": self.failure,
            "last_error": self.last_error,
            "exit_code": self.exit_code,
            "exit_signal": self.exit_signal,
            "stderr_tail": list(self.stderr_tail),
        }


@final
@dataclass(frozen=True, slots=True)
class ExitFacts:
    """What a failure says about the server's process, if it exited."""

    code: int | None = None
    signal: str | None = None
    stderr_tail: tuple[str, ...] = ()

    def words(self) -> str:
        """``exit code 3`` / ``killed by SIGKILL`` and the last stderr line; empty if none."""
        if self.signal:
            words = f"killed by {self.signal}"
        elif self.code is not None:
            words = f"exit code {self.code}"
        else:
            return ""
        if self.stderr_tail:
            words += f", stderr: {self.stderr_tail[-1].strip()}"
        return words


def exit_facts(error: BaseException | None) -> ExitFacts:
    """The exit of the server's process behind ``error``, if it was one (``ServerExited``).

    The exit may be wrapped: a ``ConnectionLost`` caused by it, or a group from the
    connector's nurseries; the first ``ServerExited`` found, depth first, is used.
    """
    exited = _find_exit(error, set())
    if exited is None:
        return ExitFacts()
    tail = tuple(exited.stderr_tail[-STDERR_TAIL_LINES:])
    return ExitFacts(exited.returncode, exited.signal, tail)


def _find_exit(error: BaseException | None, seen: set[int]) -> ServerExited | None:
    if error is None or id(error) in seen:
        return None
    seen.add(id(error))
    if isinstance(error, ServerExited):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _find_exit(inner, seen)
            if found is not None:
                return found
    return _find_exit(error.__cause__, seen) or _find_exit(error.__context__, seen)


def describe(error: BaseException) -> str:
    """The plain-words line(s) of a connection failure (the error's own message first).

    Exception groups from the connector's nurseries are unwrapped to the errors inside.
    """
    if isinstance(error, BaseExceptionGroup):
        return "\n".join(describe(inner) for inner in error.exceptions)
    text = str(error).strip()
    if not text:
        text = type(error).__name__
    return text


#: Failures that come back the same on every attempt until someone changes something: a
#: program that is not installed or not executable, a ``${VAR}`` that is not set (trimcp's
#: environment does not change while it runs), a server that needs a user's sign-in when no
#: browser step is there (``trimcp login NAME`` cures it). Everything else (a crash, a
#: refused or dropped connection, a slow handshake, an HTTP error) may pass, and is retried.
_PERMANENT: tuple[type[Exception], ...] = (
    CommandNotFound,
    CommandNotExecutable,
    ConfigError,
    SignInRequired,
)


def permanent(error: BaseException) -> bool:
    """Whether retrying cannot cure ``error`` (``_PERMANENT``), looking inside groups.

    In a group, one such error is enough: the others are what it brought down with it.
    """
    if isinstance(error, BaseExceptionGroup):
        return any(permanent(inner) for inner in error.exceptions)
    return isinstance(error, _PERMANENT)


def wall_clock(seconds_from_now: float, now: float | None = None) -> str:
    """The local time ``seconds_from_now`` from now, ISO 8601 to the second, with its offset."""
    moment = (time.time() if now is None else now) + seconds_from_now
    return datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0].strip() if lines else ""
