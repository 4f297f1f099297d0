"""The daemon's MCP side: the server ``sys_config.toml`` names, and the listeners serving it.

``trimcp serve`` reads the configuration and asks :func:`daemon_children` for the children of
its root supervisor: the server's notifications, then one per enabled listener, started in
this order and stopped in reverse::

    Application                 root supervisor (trimcp.supervision), one_for_one
    ├── notifications           an MCPServer's NotificationHub (registered as "notify"), and
    │                           the Fanout that subscribes its sessions to it
    │                           (MCPServer.notification_spec)
    ├── http                    [http]: SessionManager + hypercorn (trimcp.http)
    ├── websocket               [websocket]: SessionManager + WebSocket listener
    └── stdio                   [stdio]: one session on stdin/stdout; its end stops the daemon

The hub starts before any session and stops after the last; the root's ``one_for_one`` keeps
a hub restart from touching the listeners (the server notifies sessions directly meanwhile).
A server that is not an ``MCPServer`` (any ``RequestHandler``) gets no hub: nothing of it
would publish there.

The server served is the gateway (``trimcp.gateway``): one MCP server over the built-in
file, search and git tools (``[skills] enabled``, backend ``skills``), the ``[server] object``
(backend named by its ``serverInfo.name``) and every upstream of the main file's
``[upstreams]`` and the user's and project's ``mcpServers`` files, named as ``[gateway]``
says. The gateway's subtree (its connections, then its catalog) takes the place of the
notifications child. A ``[server] object`` with nothing beside it (no ``[skills]``, no
upstream) is served as it is, under its own names, as before the gateway existed.

:func:`load_server` imports the ``[server] object`` ("package.module:attribute": an
``MCPServer``, or a function of no arguments returning one). Everything that can go wrong
while doing so (no such module, no such attribute, not a server, the factory raised) is a
``ConfigError`` that names the setting and says what to change, like every other
configuration error; so is a Host/Origin pattern that ``trimcp.transports.OriginPolicy``
cannot parse, a ``[skills]`` root that does not exist, an ``[auth]`` table whose key file or
secrets are missing, and a listener on a non-loopback address without ``[auth]`` (unless
``allow_unauthenticated``; ``trimcp.auth.check_exposure``) (:func:`check_config`). The HTTP
listener checks bearer tokens as ``[auth]`` says (``trimcp.auth.resource_server_from_config``).
The steps of loading (:func:`import_server_module`, :func:`server_attribute`,
:func:`as_server`) take a :class:`ServerReference` that words their errors, so that ``trimcp
run`` (``trimcp.cli``) loads a TARGET with the same checks and messages in its own terms.

A SIGHUP re-reads the file and hands it to :meth:`Daemon.reload`: the gateway re-reads the
``[upstreams]`` and the ``mcpServers`` files and applies them and ``[gateway]`` while running
(``Gateway.reload``: added upstreams start, removed ones stop, changed ones restart,
unchanged ones keep their process; sessions stay open and get ``list_changed``). Listeners
keep their addresses, sessions their limits and the built-in tools their ``[skills]``
settings until the daemon restarts (:func:`restart_needed` names the tables whose changes
wait for it).

Not here: signals and the ordered stop (``trimcp.supervision.run_application``), the
command line (``trimcp.cli``), the listeners themselves (``trimcp.http``,
``trimcp.transports``) and the sessions (``trimcp.sessions``).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import importlib.metadata
import inspect
import logging
import os
import secrets
import sys
import sysconfig
import traceback
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, final

import trio

from trimcp.actors import SHUTDOWN, whereis
from trimcp.admin import AdminTargets, ListenerWatch, ReloadLog, admin_spec, load_admin_token
from trimcp.auth import check_exposure, resource_server_from_config
from trimcp.client import load_client_config
from trimcp.config import setting_error
from trimcp.errors import ConfigError, SessionLimitReached
from trimcp.gateway import Gateway
from trimcp.http import H1Settings, HttpOptions, http_listener_spec
from trimcp.notify import NotificationHub
from trimcp.server import MCPServer
from trimcp.sessions import (
    ConnectionBound,
    SessionLimits,
    SessionManager,
    SessionOptions,
    serve_stdio,
)
from trimcp.supervision import ChildSpec, supervisor_spec
from trimcp.telemetry import plan_otel
from trimcp.transports import CloseCode, OriginPolicy, serve_websocket

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

    from trimcp.client import ClientConfig
    from trimcp.config import (
        ServerSettings,
        SessionSettings,
        SysConfig,
        WebSocketSettings,
    )
    from trimcp.gateway import ReloadReport
    from trimcp.sessions import RequestHandler
    from trimcp.transports import WebSocketServerInfo, WebSocketStream

__all__ = [
    "Daemon",
    "ServerReference",
    "as_server",
    "build_daemon",
    "check_config",
    "daemon_children",
    "import_server_module",
    "load_configured_server",
    "load_server",
    "restart_needed",
    "server_attribute",
]

logger = logging.getLogger(__name__)

_OBJECT_KEY = ("server", "object")
_PATTERN_KEYS = (
    ("http", "allowed_hosts"),
    ("http", "allowed_origins"),
    ("websocket", "allowed_hosts"),
    ("websocket", "allowed_origins"),
    ("admin", "allowed_hosts"),
    ("admin", "allowed_origins"),
)
_PATTERN_SYNTAX = {
    "allowed_hosts": 'a host pattern: "host", "host:port" or "host:*" (IPv6 in brackets), or'
    ' "*" for any host',
    "allowed_origins": 'an origin pattern: "host", "host:port" or "host:*", optionally after'
    ' "scheme://"; "null"; or "*" for any origin',
}
# What a RequestHandler has (trimcp.sessions); an object with all of them is served as is.
_HANDLER_MEMBERS = (
    "server_info",
    "capabilities",
    "instructions",
    "handle_request",
    "handle_notification",
    "session_opened",
    "session_closed",
)
# Tables a SIGHUP re-reads but that only take effect when the daemon starts.
_START_ONLY = (
    "supervision",
    "actors",
    "server",
    "http",
    "websocket",
    "stdio",
    "sessions",
    "skills",
    "auth",
    "admin",
    "otel",
)
# sys.path entries shown when a module is not found; the rest are elided.
_SHOWN_PATH_ENTRIES = 8


def check_config(config: SysConfig) -> None:
    """Check what the configuration validator cannot: Host/Origin patterns, ``[skills]`` roots,
    ``[auth]``'s key file and secrets, and which listeners may serve without authorization.

    The roots are checked only with ``[skills] enabled``: only then does the daemon use them.

    Raises:
        ConfigError: a pattern is malformed, a root is not a folder, an ``[auth]`` key
            file or secret is missing, the admin token is missing or readable by others, an
            ``OTEL_*`` variable holds a value trimcp cannot use, or a listener would serve a
            non-loopback address without authorization; names the key, e.g.
            ``http.allowed_hosts[1]``, ``skills.roots[0]`` or ``http.host``.
    """
    check_exposure(config)
    resource_server_from_config(config)
    if config.admin.enabled:
        load_admin_token(config)
    # [otel] and the OTEL_* variables that win over it: a value trimcp cannot use is named.
    plan_otel(config.otel, config.application.name)
    if config.skills.enabled:
        _skills_roots(config)
    for table, key in _PATTERN_KEYS:
        for index, pattern in enumerate(getattr(getattr(config, table), key)):
            try:
                if key == "allowed_hosts":
                    OriginPolicy(allowed_hosts=(pattern,))
                else:
                    OriginPolicy(allowed_origins=(pattern,))
            except ValueError as exc:
                path = (table, key, index)
                raise setting_error(
                    config.file_of(path),
                    path,
                    given=pattern,
                    expected=_PATTERN_SYNTAX[key],
                    fix=f'write e.g.  {key} = ["localhost:*", "mcp.example.com:443"]  in the'
                    f" [{table}] table",
                    detail=(str(exc),),
                ) from exc


def load_server(
    setting: ServerSettings, base_dir: Path, *, file: str = "the configuration"
) -> RequestHandler:
    """Import ``setting.object`` and return the server it names.

    ``setting.path`` entries, relative to ``base_dir``, are put at the front of
    ``sys.path`` first (this changes ``sys.path`` for the whole process). A function is
    called once, with no arguments, and must return the server.

    Args:
        setting: the ``[server]`` table; ``object`` must not be empty.
        base_dir: the folder ``setting.path`` is relative to (that of the file setting it).
        file: the file named in error messages.

    Raises:
        ConfigError: the module cannot be imported, has no such attribute, the attribute is
            not a server or a function returning one, or that function raised. The message
            says which, and the ``__cause__`` is the original exception.
    """
    module_name, colon, attribute = setting.object.partition(":")
    if not (module_name and colon and attribute):
        raise _object_error(
            setting,
            file,
            'a string of the form "package.module:attribute"',
            'write e.g.  object = "myapp.server:server"  in the [server] table',
        )
    _extend_sys_path(setting.path, base_dir)
    example = "" if setting.path else ', e.g.  path = ["."]'
    reference = ServerReference(
        text=setting.object,
        owner=module_name,
        search_fix=lambda top: (
            f"add the folder that holds {top}/ or {top}.py to path in the"
            f" [server] table (relative to {base_dir}){example}"
        ),
        point_fix="point object at the MCPServer, or at a function that returns it",
        error=functools.partial(_object_error, setting, file),
    )
    module = import_server_module(reference, module_name)
    return as_server(reference, server_attribute(reference, module, attribute))


def load_configured_server(config: SysConfig) -> RequestHandler | None:
    """Import ``config``'s ``[server] object`` as ``trimcp serve`` does; None if it is unset.

    ``path`` is relative to the folder of the file that set it (the working directory
    without a file). ``trimcp config check`` calls this too, so that it reports what
    ``serve`` would.

    Raises:
        ConfigError: see :func:`load_server`.
    """
    if not config.server.object:
        return None
    path_file = config.file_of(("server", "path"))
    base_dir = Path(path_file).parent if config.sources else Path.cwd()
    return load_server(config.server, base_dir, file=config.file_of(_OBJECT_KEY))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerReference:
    """How the user named an object to serve, so that the errors of loading it speak their terms.

    :func:`load_server` makes one for ``[server] object``, ``trimcp run`` one for its TARGET;
    both then load with :func:`import_server_module`, :func:`server_attribute` and
    :func:`as_server`, whose messages say what went wrong in the same words.

    Attributes:
        text: the reference as written: ``myapp.server:server``, ``demo.py:server``.
        owner: the module as messages name it: ``myapp.server``, ``demo.py``.
        search_fix: how to make the top-level module ``top`` importable (a phrase).
        point_fix: how to name the server instead of what was named (a phrase).
        error: the exception to raise, from what was expected, a fix and detail lines.
    """

    text: str
    owner: str
    search_fix: Callable[[str], str]
    point_fix: str
    error: Callable[[str, str, Sequence[str]], Exception]


@final
@dataclass(frozen=True, slots=True, eq=False)
class Daemon:
    """What ``trimcp serve`` runs, kept by it for SIGHUP (:func:`build_daemon`).

    Attributes:
        children: the root supervisor's children (:func:`daemon_children`).
        gateway: the gateway those children serve; None when a ``[server] object`` is
            served as it is, or nothing is served.
        upstreams: the upstreams given to :func:`build_daemon`, used again on every reload
            (tests); None: the files are re-read.
        reloads: what each reload did to the upstreams (the admin app's ``POST /reload``
            reports it).
        admin: what the admin app looks at, when ``[admin] enabled``.
    """

    children: list[ChildSpec]
    gateway: Gateway | None = None
    upstreams: ClientConfig | None = None
    reloads: ReloadLog = dataclasses.field(default_factory=ReloadLog)
    admin: AdminTargets | None = None

    async def reload(self, config: SysConfig) -> ReloadReport | None:
        """Apply the upstreams and ``[gateway]`` of a re-read ``config`` to the gateway.

        Returns what the gateway did (it logs it too), or None when there is nothing to
        reload or the ``mcpServers`` files cannot be read; then everything keeps running as
        it is and the error is logged, like a bad ``sys_config.toml`` (the daemon never
        stops on a bad reload).
        """
        try:
            upstreams = self.upstreams if self.upstreams is not None else _upstreams(config)
        except ConfigError as exc:
            logger.error(
                "SIGHUP: the MCP servers files cannot be read; the upstreams keep running"
                " as they are\n%s",
                exc,
            )
            self.reloads.record(None, str(exc))
            return None
        if self.gateway is None:
            if upstreams.servers:
                logger.warning(
                    "SIGHUP: upstream MCP servers are configured now (%s); trimcp serve serves"
                    " its [server] object alone until it restarts",
                    ", ".join(upstreams.servers),
                )
            self.reloads.record(None)
            return None
        report = await self.gateway.reload(upstreams, config.gateway)
        self.reloads.record(report)
        return report


def daemon_children(config: SysConfig, *, upstreams: ClientConfig | None = None) -> list[ChildSpec]:
    """Return the children ``trimcp serve`` runs: :func:`build_daemon`'s ``children``."""
    return build_daemon(config, upstreams=upstreams).children


def build_daemon(config: SysConfig, *, upstreams: ClientConfig | None = None) -> Daemon:
    """Build what ``trimcp serve`` runs (module docstring).

    The server is the gateway (``trimcp.gateway``) over the built-in tools (``[skills]
    enabled``), the ``[server] object`` and every upstream: ``upstreams``, or by default the
    ``[upstreams]`` of the first file read plus the user's and project's ``mcpServers`` files
    (the files ``trimcp servers`` reads). A ``[server] object`` with nothing else beside it
    is served as it is, under its own names. With no listener enabled there are no children
    (and no gateway to reload).

    Raises:
        ConfigError: see :func:`check_config` and :func:`load_server`; an ``mcpServers``
            file that cannot be read.
    """
    check_config(config)
    fixed = upstreams
    backends: list[tuple[str, RequestHandler]] = []
    described: list[str] = []
    own = load_configured_server(config)
    if own is not None:
        backends.append((own.server_info.name, own))
        described.append(f"{own.server_info.name} ([server] object = {config.server.object})")
    if config.skills.enabled:
        roots = _skills_roots(config)
        backends.append(("skills", _skills_server(config)))
        described.append(f"skills (the built-in tools; they can read {', '.join(roots)})")
    if upstreams is None:
        upstreams = _upstreams(config)
    described.extend(
        f"{server.name} ({server.transport}, from {server.source.describe()})"
        for server in upstreams.servers.values()
    )
    handler: RequestHandler
    if own is not None and len(backends) == 1 and not upstreams.servers:
        handler = own
    else:
        handler = Gateway(
            upstreams,
            local=backends,
            settings=config.gateway,
            name=config.application.name,
            version=_version(),
        )
    watches = _watches(config) if config.admin.enabled else {}
    children = _listeners(config, handler, watches)
    if not children:
        if described:
            logger.warning(
                "%s is loaded but not served: enable [http], [websocket] or [stdio]",
                ", ".join(described),
            )
        return Daemon(children, upstreams=fixed)
    info = handler.server_info
    source = "the gateway" if isinstance(handler, Gateway) else config.server.object
    logger.info(
        "serving %s %s (%s) over %s",
        info.name,
        info.version,
        source,
        ", ".join(child.id for child in children),
    )
    logger.info("listening at %s", ", ".join(_address(config, child.id) for child in children))
    logger.info(
        "backends: %s",
        "; ".join(described) or "none (configure [upstreams], mcpServers files or [skills])",
    )
    gateway = handler if isinstance(handler, Gateway) else None
    if isinstance(handler, MCPServer):
        children.insert(0, handler.notification_spec(NotificationHub()))
    elif gateway is not None:
        children.insert(0, gateway.spec())
    daemon = Daemon(children, gateway, fixed)
    if config.admin.enabled:
        targets = AdminTargets(
            listeners=list(watches.values()),
            gateway=gateway,
            reloads=daemon.reloads,
            restart_needed=restart_needed,
            version=_version(),
            tasks=handler.task_counts if isinstance(handler, MCPServer | Gateway) else None,
        )
        # Last: it starts once everything it looks at runs, and stops first.
        children.append(admin_spec(config, targets))
        daemon = dataclasses.replace(daemon, admin=targets)
    return daemon


def _watches(config: SysConfig) -> dict[str, ListenerWatch]:
    """A ``ListenerWatch`` per enabled listener, for the admin app."""
    watches: dict[str, ListenerWatch] = {}
    if config.http.enabled:
        http = config.http
        watches["http"] = ListenerWatch(
            "http",
            "http",
            _address(config, "http"),
            store_limit=http.max_event_store_bytes if http.resumable else None,
        )
    if config.websocket.enabled:
        watches["websocket"] = ListenerWatch(
            "websocket", "websocket", _address(config, "websocket")
        )
    if config.stdio.enabled:
        watches["stdio"] = ListenerWatch("stdio", "stdio", "stdio")
    return watches


def _upstreams(config: SysConfig) -> ClientConfig:
    """The ``[upstreams]`` of the main file and the user's and project's mcpServers files."""
    found = load_client_config(sys_config=config.sources[0] if config.sources else None)
    read = ", ".join(source.describe() for source in found.sources) or "no file"
    logger.info("upstream MCP servers read from %s: %s", read, ", ".join(found.servers) or "none")
    return found


def _address(config: SysConfig, listener: str) -> str:
    if listener == "http":
        return f"http://{config.http.host}:{config.http.port}{config.http.path}"
    if listener == "websocket":
        ws = config.websocket
        return f"ws://{ws.host}:{ws.port}{ws.path}"
    return listener


def _version() -> str:
    try:
        return importlib.metadata.version("trimcp")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def restart_needed(running: SysConfig, new: SysConfig) -> list[str]:
    """Return the tables (``"[http]"``, ...) that differ but take effect only at start.

    A SIGHUP applies ``[logging]``, ``application.stop_timeout``, ``[gateway]`` and the
    upstreams (:meth:`Daemon.reload`); listeners are not rebound, the supervision tree keeps
    the limits it started with and the built-in tools their ``[skills]``.
    """
    changed = [f"[{name}]" for name in _START_ONLY if getattr(running, name) != getattr(new, name)]
    if running.application.name != new.application.name:
        changed.insert(0, "application.name")
    return changed


# --- loading the server ---------------------------------------------------------------------


def _skills_roots(config: SysConfig) -> tuple[str, ...]:
    # Imported here: trimcp.skills is needed only when [skills] is enabled.
    from trimcp.skills import configured_roots

    return configured_roots(config)


def _skills_server(config: SysConfig) -> MCPServer:
    from trimcp.skills import build_server

    settings = dataclasses.replace(config.skills, roots=_skills_roots(config))
    return build_server(settings)


def _object_error(
    setting: ServerSettings,
    file: str,
    expected: str,
    fix: str,
    detail: Sequence[str] = (),
) -> ConfigError:
    return setting_error(
        file, _OBJECT_KEY, given=setting.object, expected=expected, fix=fix, detail=detail
    )


def _extend_sys_path(folders: Sequence[str], base_dir: Path) -> None:
    for folder in reversed(folders):
        entry = str((base_dir / folder).resolve())
        if entry in sys.path:
            sys.path.remove(entry)
        sys.path.insert(0, entry)
    # A folder's listing may be cached from before its module was written.
    importlib.invalidate_caches()


def import_server_module(reference: ServerReference, name: str) -> ModuleType:
    """Import the module ``name`` (from ``sys.path`` as it is), which runs the user's code.

    Raises:
        Exception: ``reference.error(...)``, saying that the module is not found (with
            ``sys.path``), that one of its imports is not installed, or what it raised and
            where; ``__cause__`` is the original exception.
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or name
        top = missing.partition(".")[0]
        if name == missing or name.startswith(missing + "."):
            raise _not_found(reference, missing) from exc
        raise reference.error(
            "a module whose imports are installed",
            f"install {top} into the environment trimcp runs in ({sys.prefix}), or"
            f" {reference.search_fix(top)}",
            (f"importing {name!r} failed: it imports {missing!r}, which is not installed",),
        ) from exc
    # The user's module runs here: whatever it raises is reported as this reference's problem.
    except Exception as exc:
        raise reference.error(
            "a module that imports without errors",
            "correct the module at the place shown above",
            (f"importing {name!r} raised {_one_line(exc)}", *_where(exc)),
        ) from exc


def _not_found(reference: ServerReference, missing: str) -> Exception:
    shown = [f"  {entry or '(the current directory)'}" for entry in sys.path]
    if len(shown) > _SHOWN_PATH_ENTRIES:
        shown[_SHOWN_PATH_ENTRIES:] = [f"  ... and {len(shown) - _SHOWN_PATH_ENTRIES} more"]
    return reference.error(
        "an importable module",
        f"{reference.search_fix(missing.partition('.')[0])}; or install the package",
        (f"no module named {missing!r} on sys.path:", *shown),
    )


def server_attribute(reference: ServerReference, module: object, attribute: str) -> object:
    """Return ``module``'s ``attribute``, a dotted path (``Holder.server``).

    Raises:
        Exception: ``reference.error(...)``: no such attribute; the fix suggests a close
            name, or lists the servers the owner holds.
    """
    target = module
    done: list[str] = []
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as exc:
            owner = ".".join([reference.owner, *done])
            prefix = f"{reference.owner}:{''.join(p + '.' for p in done)}"
            raise reference.error(
                "the name of an attribute of the module",
                _attribute_fix(target, part, prefix),
                (f"{owner!r} has no attribute {part!r}",),
            ) from exc
        done.append(part)
    return target


def _attribute_fix(owner: object, wanted: str, prefix: str) -> str:
    names = [name for name in dir(owner) if not name.startswith("_")]
    close = difflib.get_close_matches(wanted, names, n=1)
    if close:
        return f'did you mean "{prefix}{close[0]}"?'
    servers = [name for name in names if isinstance(getattr(owner, name, None), MCPServer)]
    if servers:
        listed = ", ".join(f'"{prefix}{name}"' for name in servers)
        return f"it holds these servers: {listed}"
    return "define it there, or correct the name after the colon"


def as_server(reference: ServerReference, target: object) -> RequestHandler:
    """Return ``target`` if it is a server, else what it returns when called with no arguments.

    Raises:
        Exception: ``reference.error(...)``: ``target`` is neither a server nor a function
            (an async function says so), the call raised (what, and where), or it returned
            something else.
    """
    if _is_handler(target):
        return typing.cast("RequestHandler", target)
    expected = "an MCPServer, or a function of no arguments returning one"
    if inspect.iscoroutinefunction(target):
        raise reference.error(
            expected,
            "make it a plain function (def, not async def) that builds and returns the server",
            (f"{reference.text} is an async function",),
        )
    if not callable(target):
        raise reference.error(
            expected, reference.point_fix, (f"{reference.text} is {_kind(target)}",)
        )
    try:
        made = target()
    # The user's factory runs here: whatever it raises is reported as this reference's problem.
    except Exception as exc:
        raise reference.error(
            expected,
            "the function is called with no arguments; correct it, or name the server itself",
            (f"calling {reference.text}() raised {_one_line(exc)}", *_where(exc)),
        ) from exc
    if _is_handler(made):
        return typing.cast("RequestHandler", made)
    if inspect.iscoroutine(made):
        made.close()
    raise reference.error(
        expected,
        "return the MCPServer from the function",
        (f"{reference.text}() returned {_kind(made)}, not a server",),
    )


def _is_handler(value: object) -> bool:
    if isinstance(value, MCPServer):
        return True
    if isinstance(value, type) or inspect.ismodule(value):
        return False
    return all(hasattr(value, member) for member in _HANDLER_MEMBERS)


def _kind(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    if inspect.ismodule(value):
        return f"the module {value.__name__}"
    return f"a value of type {type(value).__qualname__}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _where(exc: BaseException) -> tuple[str, ...]:
    """Return where ``exc`` was raised, as one ``at file:line`` line (none if unknown).

    The line is the last one of the user's own code on the way, not of the library it
    called (``json.loads('{')`` is reported where it is written, not inside ``json``); the
    deepest line if all were library code; none if ``exc`` came from the call made here.
    """
    if isinstance(exc, SyntaxError) and exc.filename:
        return (f"at {exc.filename}:{exc.lineno}",)
    frames = traceback.extract_tb(exc.__traceback__)
    own = [frame for frame in frames if not _is_library(frame.filename)]
    chosen = own[-1] if own else (frames[-1] if frames else None)
    if chosen is None or chosen.filename == __file__:
        return ()
    return (f"at {chosen.filename}:{chosen.lineno}",)


def _is_library(filename: str) -> bool:
    """Python's own modules, installed packages, trimcp itself, or frozen code."""
    if filename.startswith("<"):
        return True
    return any(filename.startswith(folder) for folder in _library_folders())


@functools.cache
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders.add(str(Path(__file__).resolve().parent))  # trimcp's own package
    return tuple(os.path.join(folder, "") for folder in folders)


# --- the listeners --------------------------------------------------------------------------


def _listeners(
    config: SysConfig, handler: RequestHandler, watches: dict[str, ListenerWatch]
) -> list[ChildSpec]:
    options = _session_options(config.sessions, handler)
    limits = SessionLimits(
        idle_timeout=config.sessions.idle_timeout, max_sessions=config.sessions.max_sessions
    )
    children: list[ChildSpec] = []
    if config.http.enabled:
        http = config.http
        http_options = HttpOptions(
            path=http.path,
            websocket_path=http.websocket_path or None,
            json_response=http.json_response,
            stateless=http.stateless,
            max_body_size=http.max_body_size,
            keepalive_interval=http.keepalive_interval or None,
            retry_ms=http.retry_ms,
            resumable=http.resumable,
            max_events_per_stream=http.max_events_per_stream,
            event_ttl=http.event_ttl,
            max_event_store_bytes=http.max_event_store_bytes,
            allowed_hosts=http.allowed_hosts,
            allowed_origins=http.allowed_origins,
            legacy_sse=http.legacy_sse,
            auth=resource_server_from_config(config),
        )
        children.append(
            http_listener_spec(
                handler,
                on_started=watches["http"].http_started if "http" in watches else None,
                engine=http.engine,
                connections=H1Settings(
                    max_connections=http.max_connections,
                    keep_alive_timeout=http.keep_alive_timeout,
                    head_timeout=http.head_timeout,
                    body_timeout=http.body_timeout,
                    min_body_rate=http.min_body_rate,
                ),
                host=http.host,
                port=http.port,
                options=http_options,
                limits=limits,
                session_options=options,
            )
        )
    if config.websocket.enabled:
        children.append(
            _websocket_spec(handler, config.websocket, options, limits, watches.get("websocket"))
        )
    if config.stdio.enabled:
        children.append(
            _stdio_spec(handler, options, config.application.name, watches.get("stdio"))
        )
    return children


def _session_options(settings: SessionSettings, handler: RequestHandler) -> SessionOptions:
    # Keep what the server asks for itself (legacy_aliases, ...); the table sets the limits.
    base = getattr(handler, "session_options", None)
    if not isinstance(base, SessionOptions):
        base = SessionOptions()
    return dataclasses.replace(
        base,
        initialization_timeout=settings.initialization_timeout,
        request_timeout=settings.request_timeout,
        max_message_size=settings.max_message_size,
    )


def _websocket_spec(
    handler: RequestHandler,
    settings: WebSocketSettings,
    options: SessionOptions,
    limits: SessionLimits,
    watch: ListenerWatch | None = None,
) -> ChildSpec:
    """Return the WebSocket listener's supervisor, shaped like the HTTP listener's.

    ``rest_for_one``: if the manager fails, the listener restarts with the new one.
    """
    holder: list[SessionManager] = []

    def build_manager() -> SessionManager:
        manager = SessionManager(handler, options, limits)
        holder[:] = [manager]
        return manager

    async def listen(
        task_status: trio.TaskStatus[WebSocketServerInfo] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        manager = holder[0]

        async def on_stream(stream: WebSocketStream) -> None:
            await _serve_connection(manager, stream)

        try:
            await serve_websocket(
                on_stream,
                host=settings.host,
                port=settings.port,
                path=settings.path,
                allowed_hosts=settings.allowed_hosts,
                allowed_origins=settings.allowed_origins,
                max_message_size=options.max_message_size,
                task_status=_Noting(task_status, watch, manager),
            )
        finally:
            if watch is not None:
                watch.stopped()

    children = [
        ChildSpec.for_actor("session-manager", build_manager),
        ChildSpec("websocket-listener", listen),
    ]
    return supervisor_spec("websocket", children, strategy="rest_for_one", intensity=3, period=10.0)


async def _serve_connection(manager: SessionManager, stream: WebSocketStream) -> None:
    try:
        record = await manager.create_session(secrets.token_hex(16), ConnectionBound(stream))
    except SessionLimitReached as exc:
        # The limit, or a drain after SIGTERM: the message says which. A close reason holds
        # at most 123 bytes (RFC 6455 section 5.5).
        reason = str(exc).encode()[:120].decode("utf-8", "ignore")
        await stream.aclose(code=CloseCode.TRY_AGAIN_LATER, reason=reason)
        return
    await record.ref.wait_exited()


@final
class _Noting(trio.TaskStatus["WebSocketServerInfo"]):
    """Passes the WebSocket listener's start on, telling the admin app's watch where it is."""

    def __init__(
        self,
        inner: trio.TaskStatus[WebSocketServerInfo],
        watch: ListenerWatch | None,
        manager: SessionManager,
    ) -> None:
        self._inner = inner
        self._watch = watch
        self._manager = manager

    def started(self, value: WebSocketServerInfo | None = None) -> None:
        if self._watch is not None and value is not None:
            self._watch.started(value.url, self._manager)
        self._inner.started(value)  # type: ignore[arg-type]


def _stdio_spec(
    handler: RequestHandler,
    options: SessionOptions,
    application: str,
    watch: ListenerWatch | None = None,
) -> ChildSpec:
    async def serve() -> None:
        if watch is not None:
            watch.started("stdio")
        try:
            await serve_stdio(handler, options=options)
        finally:
            if watch is not None:
                watch.stopped()
        # A stdio server's client owns the process: when it closes stdin, the daemon goes.
        logger.info("stdin closed: stopping %s", application)
        root = whereis(application)
        if root is not None:
            root.request_stop(SHUTDOWN)

    return ChildSpec("stdio", serve, restart="temporary")
