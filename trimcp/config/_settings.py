"""The settings dataclasses: what ``sys_config.toml`` may contain, with every default.

Each class is one TOML table. Keep the repository's ``sys_config.toml`` in step with this
module: a test checks that it loads to exactly these defaults.

The tables of the MCP listeners (``[server]``, ``[sessions]``, ``[http]``, ``[websocket]``,
``[stdio]``) repeat a few defaults of the layers that use them (the 4 MiB message limit of
``trimcp.protocol``, the loopback allowlists of ``trimcp.transports``), because this package
imports no other part of trimcp; tests check that the copies agree.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ._admin import AdminSettings
from ._auth import AuthSettings
from ._gateway import GatewaySettings
from ._merge import KeyOrigins
from ._otel import OtelSettings
from ._schema import Check, above, at_least, between, internal, non_empty, spec
from ._skills import SkillsSettings

if TYPE_CHECKING:
    from ._toml_text import KeyPath

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LogFormat = Literal["text", "json"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplicationSettings:
    """The ``[application]`` table.

    Attributes:
        name: the application's name, used in logs and as the root supervisor's name.
        stop_timeout: seconds requests in flight get to finish after SIGTERM or SIGINT
            (the drain), and then again the ordered stop before everything still running
            is cancelled.
    """

    name: str = field(
        default="trimcp", metadata=spec(meaning="the application's name in logs", check=non_empty())
    )
    stop_timeout: float = field(
        default=30.0,
        metadata=spec(
            meaning="seconds requests in flight get after SIGTERM/SIGINT (and the stop again)",
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
        requests: log one line per request served (method, id, session, tool, outcome
            and duration), at INFO.
    """

    level: LogLevel = field(
        default="INFO",
        metadata=spec(meaning="the lowest level written, in any case", normalize=str.upper),
    )
    format: LogFormat = field(
        default="text", metadata=spec(meaning='"text" for people, "json" for one object per line')
    )
    requests: bool = field(
        default=False, metadata=spec(meaning="log one line per request served, at INFO")
    )


# The same as trimcp.protocol's DEFAULT_MAX_MESSAGE_SIZE and trimcp.transports' LOCALHOST.
_MAX_MESSAGE_SIZE = 4 * 1024 * 1024
_LOCALHOST = ("localhost:*", "127.0.0.1:*", "[::1]:*")
_PORT = between(0, 65535)
_EXAMPLE_SERVER = "myapp.server:server"


def _is_object_reference(value: str) -> bool:
    if not value:
        return True
    module, colon, attribute = value.partition(":")
    names = [*module.split("."), *attribute.split(".")]
    return bool(colon) and all(name.isidentifier() for name in names)


def _url_path(*, optional: bool) -> Check:
    if optional:
        return Check(
            test=lambda value: value == "" or value.startswith("/"),
            rule='starting with "/", or "" for none',
        )
    return Check(test=lambda value: value.startswith("/"), rule='starting with "/"')


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """The ``[server]`` table: which MCP server ``trimcp serve`` runs.

    Attributes:
        object: ``"module:attribute"`` naming an ``MCPServer`` or a function of no
            arguments returning one, e.g. ``"myapp.server:server"``; ``""`` serves nothing.
        path: folders prepended to ``sys.path`` before the module is imported, relative
            to the folder of the file that sets them.
    """

    object: str = field(
        default="",
        metadata=spec(
            meaning="the MCP server to serve",
            check=Check(
                test=_is_object_reference,
                rule='of the form "package.module:attribute", or "" for none',
            ),
            example=_EXAMPLE_SERVER,
        ),
    )
    path: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="folders searched first for the server's module, relative to this file",
            check=Check(test=lambda value: all(value), rule="of non-empty folder names"),
            example=("src",),
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSettings:
    """The ``[sessions]`` table: limits of every MCP session the daemon serves.

    Attributes:
        idle_timeout: seconds an HTTP session may stay idle before it is ended.
        max_sessions: sessions per listener; at the limit the least recently active idle
            one is evicted, and a new one is refused only when none is idle.
        initialization_timeout: seconds a new session has to finish its handshake.
        request_timeout: seconds a request the server sends the client waits for its answer.
        max_message_size: bytes of the largest message accepted from a client.
    """

    idle_timeout: float = field(
        default=1800.0,
        metadata=spec(meaning="seconds an idle HTTP session lives; inf: forever", check=above(0)),
    )
    max_sessions: int = field(
        default=10_000,
        metadata=spec(meaning="sessions one listener holds at once", check=at_least(1)),
    )
    initialization_timeout: float = field(
        default=60.0,
        metadata=spec(meaning="seconds a new session has for its handshake", check=above(0)),
    )
    request_timeout: float = field(
        default=60.0,
        metadata=spec(
            meaning="seconds a request to the client waits for its answer", check=above(0)
        ),
    )
    max_message_size: int = field(
        default=_MAX_MESSAGE_SIZE,
        metadata=spec(meaning="bytes of the largest message from a client", check=at_least(1)),
    )


#: The HTTP servers a listener can run on.
HttpEngine = Literal["trimcp", "hypercorn"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpSettings:
    """The ``[http]`` table: the Streamable HTTP listener (``trimcp.http.HttpOptions``).

    Attributes:
        enabled: whether ``trimcp serve`` listens for HTTP at all.
        host: the address to bind; the loopback address by default.
        port: the TCP port; 0 picks a free one.
        path: the MCP endpoint.
        websocket_path: MCP over WebSocket on the same port; ``""`` turns it off.
        json_response: answer each POST with one JSON body instead of an SSE stream.
        stateless: no sessions; every POST stands alone.
        max_body_size: bytes of the largest POST body.
        keepalive_interval: seconds between SSE keep-alive comments; 0 turns them off.
        retry_ms: the ``retry:`` sent on SSE streams, in milliseconds.
        resumable: keep SSE events so that clients can resume with ``Last-Event-ID``.
        max_events_per_stream: events kept per stream for resuming.
        event_ttl: seconds an event is kept for resuming.
        max_event_store_bytes: bytes the kept events may take across all sessions.
        allowed_hosts: ``Host`` header patterns accepted (DNS-rebinding protection).
        allowed_origins: ``Origin`` header patterns accepted.
        legacy_sse: also serve the 2024-11-05 HTTP+SSE transport for old clients.
        engine: the HTTP server: ``"trimcp"`` (its own HTTP/1.1 server) or ``"hypercorn"``.
        max_connections: open connections at most (the idle ones give way first).
        keep_alive_timeout: seconds an idle connection is kept for its next request.
        head_timeout: seconds a whole request head may take to arrive.
        body_timeout / min_body_rate: a body must arrive within ``body_timeout`` seconds
            plus one second per ``min_body_rate`` bytes of it.
    """

    enabled: bool = field(default=False, metadata=spec(meaning="serve MCP over HTTP"))
    host: str = field(
        default="127.0.0.1", metadata=spec(meaning="the address to bind", check=non_empty())
    )
    port: int = field(
        default=8000, metadata=spec(meaning="the TCP port; 0 picks a free one", check=_PORT)
    )
    path: str = field(
        default="/mcp",
        metadata=spec(meaning="the URL path of the MCP endpoint", check=_url_path(optional=False)),
    )
    websocket_path: str = field(
        default="/mcp/ws",
        metadata=spec(
            meaning="the URL path of MCP over WebSocket on the HTTP port",
            check=_url_path(optional=True),
        ),
    )
    json_response: bool = field(
        default=False, metadata=spec(meaning="answer with one JSON body instead of SSE")
    )
    stateless: bool = field(default=False, metadata=spec(meaning="serve without sessions"))
    max_body_size: int = field(
        default=_MAX_MESSAGE_SIZE,
        metadata=spec(meaning="bytes of the largest POST body", check=at_least(1)),
    )
    keepalive_interval: float = field(
        default=15.0,
        metadata=spec(meaning="seconds between SSE keep-alives; 0: none", check=at_least(0)),
    )
    retry_ms: int = field(
        default=1000,
        metadata=spec(meaning="milliseconds a client waits to reconnect", check=at_least(0)),
    )
    resumable: bool = field(
        default=True, metadata=spec(meaning="keep SSE events for Last-Event-ID")
    )
    max_events_per_stream: int = field(
        default=1000,
        metadata=spec(meaning="events kept per stream for resuming", check=at_least(1)),
    )
    event_ttl: float = field(
        default=300.0,
        metadata=spec(meaning="seconds an event is kept for resuming", check=above(0)),
    )
    max_event_store_bytes: int = field(
        default=32 * 1024 * 1024,
        metadata=spec(
            meaning="bytes the kept events may take across all sessions", check=at_least(1)
        ),
    )
    allowed_hosts: tuple[str, ...] = field(
        default=_LOCALHOST, metadata=spec(meaning="Host header patterns accepted")
    )
    allowed_origins: tuple[str, ...] = field(
        default=_LOCALHOST, metadata=spec(meaning="Origin header patterns accepted")
    )
    legacy_sse: bool = field(
        default=False,
        metadata=spec(meaning="also serve the 2024-11-05 HTTP+SSE transport (/sse, /messages)"),
    )
    engine: HttpEngine = field(
        default="trimcp",
        metadata=spec(meaning="the HTTP server: trimcp's own HTTP/1.1 server, or hypercorn"),
    )
    max_connections: int = field(
        default=1024,
        metadata=spec(meaning="open HTTP connections at most", check=at_least(1)),
    )
    keep_alive_timeout: float = field(
        default=30.0,
        metadata=spec(meaning="seconds an idle connection is kept open", check=above(0)),
    )
    head_timeout: float = field(
        default=10.0,
        metadata=spec(meaning="seconds a whole request head may take", check=above(0)),
    )
    body_timeout: float = field(
        default=30.0,
        metadata=spec(
            meaning="seconds a request body may take, plus its size at min_body_rate",
            check=above(0),
        ),
    )
    min_body_rate: int = field(
        default=64 * 1024,
        metadata=spec(meaning="bytes per second a request body must arrive at", check=at_least(1)),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSocketSettings:
    """The ``[websocket]`` table: MCP over WebSocket on a port of its own.

    Attributes:
        enabled: whether ``trimcp serve`` listens for WebSocket connections.
        host: the address to bind.
        port: the TCP port; 0 picks a free one.
        path: the only URL path accepted.
        allowed_hosts: ``Host`` header patterns accepted at the handshake.
        allowed_origins: ``Origin`` header patterns accepted at the handshake.
    """

    enabled: bool = field(
        default=False, metadata=spec(meaning="serve MCP over WebSocket on its own port")
    )
    host: str = field(
        default="127.0.0.1", metadata=spec(meaning="the address to bind", check=non_empty())
    )
    port: int = field(
        default=8001, metadata=spec(meaning="the TCP port; 0 picks a free one", check=_PORT)
    )
    path: str = field(
        default="/mcp/ws",
        metadata=spec(meaning="the URL path clients connect to", check=_url_path(optional=False)),
    )
    allowed_hosts: tuple[str, ...] = field(
        default=_LOCALHOST, metadata=spec(meaning="Host header patterns accepted")
    )
    allowed_origins: tuple[str, ...] = field(
        default=_LOCALHOST, metadata=spec(meaning="Origin header patterns accepted")
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioSettings:
    """The ``[stdio]`` table.

    Attributes:
        enabled: serve one session on the daemon's stdin and stdout; the daemon stops when
            the client closes stdin.
    """

    enabled: bool = field(default=False, metadata=spec(meaning="serve one session on stdin/stdout"))


@dataclass(frozen=True, slots=True, kw_only=True)
class SysConfig:
    """The whole configuration, read once at start (and anew on SIGHUP).

    Attributes:
        sources: the files read, in merge order; empty when only defaults apply.
        written_by: which file set each key, for messages about settings (``file_of``).
        application: the ``[application]`` table.
        supervision: the ``[supervision]`` table.
        actors: the ``[actors]`` table.
        logging: the ``[logging]`` table.
        server: the ``[server]`` table.
        http: the ``[http]`` table.
        websocket: the ``[websocket]`` table.
        stdio: the ``[stdio]`` table.
        sessions: the ``[sessions]`` table.
        skills: the ``[skills]`` table (``trimcp.skills``).
        gateway: the ``[gateway]`` table (``trimcp.gateway``).
        auth: the ``[auth]`` table (``trimcp.auth``): bearer tokens on the HTTP listener.
        admin: the ``[admin]`` table (``trimcp.admin``): health, status, metrics.
        otel: the ``[otel]`` table (``trimcp.telemetry``): OpenTelemetry export.
    """

    sources: tuple[str, ...] = field(default=(), metadata=internal())
    # Not compared: two configurations with the same values are equal wherever they came from.
    written_by: KeyOrigins = field(
        default=KeyOrigins("built-in defaults"), compare=False, repr=False, metadata=internal()
    )
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
    server: ServerSettings = field(
        default_factory=ServerSettings, metadata=spec(meaning="the MCP server to serve")
    )
    http: HttpSettings = field(
        default_factory=HttpSettings, metadata=spec(meaning="the Streamable HTTP listener")
    )
    websocket: WebSocketSettings = field(
        default_factory=WebSocketSettings,
        metadata=spec(meaning="the WebSocket listener on its own port"),
    )
    stdio: StdioSettings = field(
        default_factory=StdioSettings, metadata=spec(meaning="one session on stdin/stdout")
    )
    sessions: SessionSettings = field(
        default_factory=SessionSettings, metadata=spec(meaning="limits of MCP sessions")
    )
    skills: SkillsSettings = field(
        default_factory=SkillsSettings,
        metadata=spec(meaning="the built-in file, search and git tools"),
    )
    gateway: GatewaySettings = field(
        default_factory=GatewaySettings,
        metadata=spec(meaning="how the daemon names what its backends offer"),
    )
    auth: AuthSettings = field(
        default_factory=AuthSettings,
        metadata=spec(meaning="OAuth 2.1 bearer tokens on the HTTP listener"),
    )
    admin: AdminSettings = field(
        default_factory=AdminSettings,
        metadata=spec(meaning="the admin app: health, status, metrics, dashboard"),
    )
    otel: OtelSettings = field(
        default_factory=OtelSettings,
        metadata=spec(meaning="OpenTelemetry traces and metrics"),
    )

    def file_of(self, key: KeyPath) -> str:
        """Return the file that set ``key`` (e.g. ``("http", "port")``) or the table around it.

        A key no file set belongs to the first file read (``"built-in defaults"`` when none
        was): that is where a person would add it.
        """
        return self.written_by.file_of(key)

    def as_dict(self) -> dict[str, object]:
        """Return the settings as plain data: ``dataclasses.asdict`` without ``written_by``.

        This is what ``trimcp config show --json`` prints.
        """
        data = dataclasses.asdict(self)
        del data["written_by"]
        return data
