"""The settings dataclasses: what ``sys_config.toml`` may contain, with every default.

Each class is one TOML table. Keep the repository's ``sys_config.toml`` in step with this
module: a test checks that it loads to exactly these defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._schema import above, at_least, internal, non_empty, spec

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LogFormat = Literal["text", "json"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplicationSettings:
    """The ``[application]`` table.

    Attributes:
        name: the application's name, used in logs and as the root supervisor's name.
        stop_timeout: seconds the daemon gives the whole ordered stop after SIGTERM or
            SIGINT before it cancels everything that is still running.
    """

    name: str = field(
        default="trimcp", metadata=spec(meaning="the application's name in logs", check=non_empty())
    )
    stop_timeout: float = field(
        default=30.0,
        metadata=spec(
            meaning="seconds the ordered stop after SIGTERM/SIGINT may take",
            check=above(0),
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SupervisionSettings:
    """The ``[supervision]`` table: defaults for supervisors that do not set their own.

    Attributes:
        intensity: restarts allowed within ``period`` seconds; one more and the supervisor
            stops its children and fails (OTP's ``intensity``, default 1).
        period: the sliding window, in seconds, over which restarts are counted
            (OTP's ``period``, default 5).
        shutdown: seconds a child gets to stop after its scope is cancelled before it is
            cancelled hard (OTP's worker ``shutdown``, 5000 ms).
    """

    intensity: int = field(
        default=1,
        metadata=spec(
            meaning="the number of restarts allowed within supervision.period", check=at_least(0)
        ),
    )
    period: float = field(
        default=5.0,
        metadata=spec(
            meaning="seconds over which supervision.intensity is counted", check=above(0)
        ),
    )
    shutdown: float = field(
        default=5.0,
        metadata=spec(
            meaning="seconds a child gets to stop before it is cancelled hard", check=at_least(0)
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ActorSettings:
    """The ``[actors]`` table: defaults for actors that do not set their own.

    Attributes:
        mailbox_size: messages an actor's bounded mailbox holds before ``cast`` waits.
        call_timeout: seconds ``call`` waits for a reply before raising ``CallTimeout``.
    """

    mailbox_size: int = field(
        default=64,
        metadata=spec(meaning="messages a mailbox holds before senders wait", check=at_least(1)),
    )
    call_timeout: float = field(
        default=5.0, metadata=spec(meaning="seconds a call waits for its reply", check=above(0))
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggingSettings:
    """The ``[logging]`` table, applied once by ``trimcp serve``.

    Attributes:
        level: the lowest level written; given in any case, stored upper-case.
        format: ``"text"`` for people, ``"json"`` for one JSON object per line.
    """

    level: LogLevel = field(
        default="INFO",
        metadata=spec(meaning="the lowest level written, in any case", normalize=str.upper),
    )
    format: LogFormat = field(
        default="text", metadata=spec(meaning='"text" for people, "json" for one object per line')
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SysConfig:
    """The whole configuration, read once at start (and anew on SIGHUP).

    Attributes:
        sources: the files read, in merge order; empty when only defaults apply.
        application: the ``[application]`` table.
        supervision: the ``[supervision]`` table.
        actors: the ``[actors]`` table.
        logging: the ``[logging]`` table.
    """

    sources: tuple[str, ...] = field(default=(), metadata=internal())
    application: ApplicationSettings = field(
        default_factory=ApplicationSettings,
        metadata=spec(meaning="settings of the application as a whole"),
    )
    supervision: SupervisionSettings = field(
        default_factory=SupervisionSettings,
        metadata=spec(meaning="default restart limits of supervisors"),
    )
    actors: ActorSettings = field(
        default_factory=ActorSettings, metadata=spec(meaning="default limits of actors")
    )
    logging: LoggingSettings = field(
        default_factory=LoggingSettings, metadata=spec(meaning="log level and format")
    )
