"""The ``trimcp`` command.

::

    trimcp --version                   print ``trimcp <version>``
    trimcp config check [PATH] [--config MCPFILE]...
                                       validate sys_config.toml (importing its [server] object)
                                       and the MCP servers files; warn about what would not run
    trimcp config show [PATH] [--json] print the configuration in effect (TOML, or JSON)
    trimcp serve [--config PATH]      run the application until SIGTERM/SIGINT
    trimcp run TARGET [--http | --stdio] [--reload]
                                       serve a file's or module's MCPServer (``_run.py``)
    trimcp skills [--root DIR]... [--http] ...
                                       serve the built-in file, search and git tools
                                       (``trimcp.skills``; ``trimcp skills --help``)
    trimcp servers | tools | call | resources | prompts | read | get-prompt | complete | shell
                                       MCP servers: configured, or a TARGET (``_host``)
    trimcp inspect TARGET | install HOST TARGET
                                       what a server offers; a host's config entry for it
    trimcp login SERVER | logout SERVER
                                       OAuth sign-in for a configured server (``_login.py``)
    trimcp status [--json | --watch [SECONDS]] | reload | restart UPSTREAM
                                       the running daemon, through its admin app
                                       (``_admin_commands.py``)

Two kinds of file, one per family of commands: ``serve``, ``skills`` and ``config show``
read a sys_config.toml (``--config PATH``, or ``config``'s PATH), which defaults to
``$TRIMCP_CONFIG``, then ``./sys_config.toml``, then built-in defaults; the commands over
MCP servers (``servers``, ``tools``, ``call``, ...) read MCP servers files (``--config
MCPFILE``: mcpServers JSON, TOML or YAML), which default to the user's and the project's.
``config check`` checks both: its PATH is the first kind, its ``--config`` the second.

``serve`` runs the MCP server of ``[server] object`` on the listeners the file enables
(``trimcp.daemon``); ``config check`` imports that object the same way and checks the same
settings, Host/Origin patterns included. The daemon and the runtime are imported only by the
commands that need them, so that ``config show`` starts fast; ``skills`` hands its arguments
to ``trimcp.skills.main``, which parses them, for the same reason.

Ctrl-C ends ``serve`` and ``run`` with status 130 and no traceback, after their drain
(``trimcp.server.StopSignal`` notes that SIGINT began the stop); a ``KeyboardInterrupt`` that
reaches ``main`` from any command (one loading a module, say) ends it the same way, without
the traceback. (``skills`` handles its signals itself, and exits 0.) An unknown command gets
the closest names (``trimcp tols``: did you mean "tools"?).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import functools
import importlib.metadata
import json
import logging
import os
import re
import shutil
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp._logging import configure_logging
from trimcp.cli._admin_commands import add_commands as add_admin_commands
from trimcp.cli._host import add_host_commands, check_client_config
from trimcp.cli._inspect import add_command as add_inspect_command
from trimcp.cli._install import add_command as add_install_command
from trimcp.cli._login import add_commands as add_login_commands
from trimcp.cli._run import add_command as add_run_command
from trimcp.config import find_config_file, load_config, render_settings
from trimcp.errors import ConfigError, SupervisorError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence

    from trimcp.client import ServerConfig
    from trimcp.config import SysConfig
    from trimcp.daemon import Daemon

logger = logging.getLogger("trimcp.cli")  # the name users see in the log, whichever module

_FAILURE = 1
#: 128 + SIGINT: the status shells give a program stopped by Ctrl-C.
_INTERRUPTED = 128 + signal.SIGINT
# package.module:name, which `trimcp run` serves.
_MODULE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_PATH_HELP = "the sys_config.toml to read (default: $TRIMCP_CONFIG, else ./sys_config.toml)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` if None) and return the exit status.

    Exits with status 2 through SystemExit for usage errors, as argparse does, an unknown
    command included (with the closest names).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    parser, commands = _build_parser()
    _refuse_unknown_command(parser, words, commands)
    args = parser.parse_args(words)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except KeyboardInterrupt:
        # Ctrl-C where no signal handler of ours runs (loading a module, say): the shell's
        # status for it, and no traceback; the user knows what they pressed.
        return _INTERRUPTED
    except BaseExceptionGroup as group:
        # trio raises that KeyboardInterrupt in whichever task was running: from inside a
        # nursery it comes in a group. Anything else in the group is a real failure.
        if group.split(KeyboardInterrupt)[1] is None:
            return _INTERRUPTED
        raise
    except BrokenPipeError:
        # Whoever read stdout went away (`trimcp call ... | head`): stop quietly, as cat does,
        # and point stdout at /dev/null so the interpreter's final flush cannot fail again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return _FAILURE


def _parser() -> argparse.ArgumentParser:
    return _build_parser()[0]


def _build_parser() -> tuple[argparse.ArgumentParser, dict[str, Collection[str]]]:
    """Return the parser, and the command names at each level ("" the top, "config")."""
    parser = argparse.ArgumentParser(
        prog="trimcp",
        description="A Model Context Protocol runtime: supervised actors on trio.",
        epilog="--config names a sys_config.toml for serve and skills, and an MCP servers file"
        " (mcpServers JSON, TOML or YAML) for the commands over MCP servers (servers, tools,"
        " call, ...); each command's --help says which.",
    )
    parser.add_argument("--version", action="version", version=f"trimcp {_version()}")
    commands = parser.add_subparsers(metavar="COMMAND", required=True)

    config = commands.add_parser("config", help="check or show the configuration")
    config_commands = config.add_subparsers(metavar="ACTION", required=True)
    check = config_commands.add_parser(
        "check",
        help="validate the configuration, importing the [server] object as serve would",
        description="Validate a sys_config.toml (PATH) and the MCP servers files (--config),"
        " import its [server] object as trimcp serve would, and warn about what would not run:"
        " a server no listener serves, an upstream whose command is not on PATH.",
    )
    check.add_argument("path", nargs="?", metavar="PATH", help=_PATH_HELP)
    check.add_argument(
        "--config",
        action="append",
        metavar="MCPFILE",
        help="an MCP servers file (mcpServers JSON, TOML or YAML) to check instead of the"
        " user's and the project's; repeatable",
    )
    check.set_defaults(command=_check)
    show = config_commands.add_parser("show", help="print the configuration in effect as TOML")
    show.add_argument("path", nargs="?", metavar="PATH", help=_PATH_HELP)
    show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    show.set_defaults(command=_show)

    serve = commands.add_parser("serve", help="run the application until SIGTERM or SIGINT")
    serve.add_argument("--config", metavar="PATH", help=_PATH_HELP)
    serve.add_argument(
        "--stdio",
        action="store_true",
        help="serve one session on stdin/stdout only (for desktop hosts: "
        '"command": "trimcp", "args": ["serve", "--stdio"]); the file\'s listeners stay off',
    )
    serve.set_defaults(command=_serve)

    # Parsed by trimcp.skills.main, imported only when the command runs. A prefix character
    # no argument can start with makes this parser pass every argument on, options included.
    skills = commands.add_parser(
        "skills",
        help="serve the built-in file, search and git tools (trimcp skills --help)",
        add_help=False,
        prefix_chars="\0",
    )
    skills.add_argument("arguments", nargs=argparse.REMAINDER)
    skills.set_defaults(command=_skills)
    add_host_commands(commands)
    add_run_command(commands)
    add_install_command(commands)
    add_inspect_command(commands)
    add_login_commands(commands)
    add_admin_commands(commands)
    return parser, {"": list(commands.choices), "config": list(config_commands.choices)}


def _version() -> str:
    try:
        return importlib.metadata.version("trimcp")
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown: the package is not installed)"


def _refuse_unknown_command(
    parser: argparse.ArgumentParser, words: Sequence[str], names: Mapping[str, Collection[str]]
) -> None:
    """Stop with status 2 and the closest names if the command (or config's ACTION) is unknown.

    Only the top level takes options before the command (``--help``, ``--version``), so the
    first word that is not an option is the command.
    """
    positional = [word for word in words if not word.startswith("-")]
    level = ""
    for word in positional[:2]:
        known = names.get(level)
        if known is None:
            return
        if word not in known:
            parser.error(_unknown(word, level, known))
        level = word


def _unknown(word: str, level: str, known: Collection[str]) -> str:
    """The message for ``word``, not a command (``level`` "") or an action of ``level``."""
    what = f'action "{word}" for trimcp {level}' if level else f'command "{word}"'
    if not level and (word.endswith(".py") or ".py:" in word or _MODULE.match(word)):
        return f'unknown {what}; did you mean "trimcp run {word}"?'
    close = difflib.get_close_matches(word, known, n=3)
    if not close:
        return f"unknown {what}; choose one of: {', '.join(known)}"
    quoted = " or ".join(f'"{name}"' for name in close)
    return f"unknown {what}; did you mean {quoted}?"


def _check(args: argparse.Namespace) -> int:
    config: SysConfig | None = None
    try:
        config = _load_checked(args.path)
        served = _import_server(config)
    except ConfigError as exc:
        status = _report(exc)
    else:
        status = 0
        if config.sources:
            sys.stdout.write(f"OK: configuration is valid; read {', '.join(config.sources)}\n")
        else:
            sys.stdout.write("OK: no configuration file found; every setting has its default\n")
        if served:
            sys.stdout.write(f"OK: [server] object = {config.server.object} imports: {served}\n")
    # The MCP servers the host commands use, from the same files they read. With a broken
    # sys_config.toml only their problems are added, so that stdout stays empty on failure.
    servers_ok, report = check_client_config(args.config, sys_config=args.path)
    if not servers_ok:
        sys.stderr.write(report + "\n")
    elif status == 0:
        sys.stdout.write(report + "\n")
    upstreams = _upstreams(args.config, args.path)
    warnings = [*_unserved(config, upstreams), *_missing_commands(upstreams)] if config else []
    for warning in warnings:
        sys.stderr.write(f"warning: {warning}\n")
    return status or (0 if servers_ok else _FAILURE)


def _import_server(config: SysConfig) -> str:
    """Import ``[server] object`` as ``serve`` will; return "name version", or "" if unset."""
    if not config.server.object:
        return ""
    from trimcp.daemon import load_configured_server

    server = load_configured_server(config)
    if server is None:
        return ""
    return f"{server.server_info.name} {server.server_info.version}"


def _upstreams(paths: Sequence[str] | None, sys_config: str | None) -> list[ServerConfig]:
    from trimcp.client import inspect_client_config

    found = find_config_file(sys_config)
    main_file = str(found) if found is not None and found.exists() else None
    servers = inspect_client_config(paths, sys_config=main_file).config.servers
    return [server for server in servers.values() if server.enabled]


def _unserved(config: SysConfig, upstreams: Sequence[ServerConfig]) -> list[str]:
    """What the file asks ``serve`` to load but no listener would serve (``build_daemon``
    warns the same at start)."""
    if config.http.enabled or config.websocket.enabled or config.stdio.enabled:
        return []
    loaded = [f"[server] object = {config.server.object}"] if config.server.object else []
    loaded += ["[skills]"] if config.skills.enabled else []
    # Only the file's own [upstreams]: the mcpServers files serve the host commands too
    # (trimcp tools, call, ...), which need no listener.
    loaded += [
        f"[upstreams.{server.name}]" for server in upstreams if server.source.layer == "sys_config"
    ]
    if not loaded:
        return []
    where = f" in {config.sources[0]}" if config.sources else ""
    return [
        f"{', '.join(loaded)} would be loaded but not served: no listener is enabled; enable"
        f" [http], [websocket] or [stdio]{where}, or run  trimcp serve --stdio"
    ]


def _missing_commands(upstreams: Sequence[ServerConfig]) -> list[str]:
    """An upstream whose program is not found where its process would look for it."""
    from trimcp.client import expand_server

    found: list[str] = []
    for raw in upstreams:
        if raw.transport != "stdio" or not raw.command:
            continue
        try:
            server = expand_server(raw, os.environ)
        except ConfigError:
            continue  # an unset variable: the report above warns about it already
        problem = _command_problem(server.command or "", server)
        if problem:
            found.append(f'upstream "{server.name}" ({server.source.describe()}): {problem}')
    return found


def _command_problem(command: str, server: ServerConfig) -> str:
    """Why ``command`` would not start, looked up as the launcher will (or "")."""
    from trimcp.client.process import child_environment

    if os.sep in command or (os.altsep and os.altsep in command):
        # A path is taken from the server's working directory, as a shell there would.
        path = Path(server.cwd or os.getcwd()) / Path(command).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return ""
        return f'command "{command}" is not an executable file ({path})'
    # A name is searched on the PATH of the server's own environment, not trimcp's.
    env = child_environment(os.environ, server.env, server.env_passthrough, sys.platform)
    search = env.get("PATH", os.defpath)
    if shutil.which(command, path=search) is not None:
        return ""
    return (
        f'command "{command}" is not found on PATH ({search}); install it, or write its full'
        ' path in "command"'
    )


def _show(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.path)
    except ConfigError as exc:
        return _report(exc)
    if args.json:
        sys.stdout.write(json.dumps(config.as_dict(), indent=2) + "\n")
        return 0
    read = ", ".join(config.sources) or "no file; all defaults"
    sys.stdout.write(f"# the configuration in effect (read: {read})\n\n")
    sys.stdout.write(render_settings(config))
    return 0


def _serve(args: argparse.Namespace) -> int:
    # Pin the file now: SIGHUP re-reads this very file, whatever the working directory is then.
    path = find_config_file(args.config)
    try:
        config = load_config(path)
    except ConfigError as exc:
        return _report(exc)
    if getattr(args, "stdio", False):
        config = _stdio_only(config)
    configure_logging(config.logging)
    logger.info("configuration read from %s", ", ".join(config.sources) or "defaults only")

    # Imported here, not at the top, so that `trimcp config ...` does not load the runtime.
    import trio

    from trimcp.daemon import build_daemon
    from trimcp.server import StopSignal, listen_error
    from trimcp.supervision import run_application
    from trimcp.telemetry import start_telemetry

    try:
        daemon = build_daemon(config)
        # [otel]: exporters and the observer, for the whole run (None when it is off).
        telemetry = start_telemetry(config)
    except ConfigError as exc:
        return _report(exc)
    stdio = bool(getattr(args, "stdio", False))
    stop = StopSignal()
    run = functools.partial(
        run_application,
        config,
        # First: it must open its signal receiver inside run_application's, before anything
        # else can stop the application.
        children=[stop.spec(), *daemon.children],
        reload_config=functools.partial(_load_checked, path, stdio=stdio),
        on_reload=functools.partial(_apply_reload, config, daemon),
    )
    try:
        trio.run(run)
    except SupervisorError as exc:
        error = listen_error(exc)
        if error is not None:
            sys.stderr.write(f"trimcp serve: {error.strerror or error}; {_port_fix(config)}\n")
            return _FAILURE
        logger.critical("application %s stopped: %s", config.application.name, exc)
        return _FAILURE
    finally:
        if telemetry is not None:
            # Exports what the batch processors still hold, within their own timeouts.
            telemetry.shutdown()
    return stop.exit_status


def _port_fix(config: SysConfig) -> str:
    tables = [name for name in ("http", "websocket") if getattr(config, name).enabled]
    keys = " or ".join(f"[{table}] port" for table in tables) or "[http] port"
    file = config.sources[0] if config.sources else "sys_config.toml (trimcp serve --config PATH)"
    return f"stop what uses that port, or choose another: {keys} in {file}"


def _stdio_only(config: SysConfig) -> SysConfig:
    """``serve --stdio``: the same server, on stdin/stdout only (stdout carries only MCP)."""
    return dataclasses.replace(
        config,
        http=dataclasses.replace(config.http, enabled=False),
        websocket=dataclasses.replace(config.websocket, enabled=False),
        stdio=dataclasses.replace(config.stdio, enabled=True),
    )


def _skills(args: argparse.Namespace) -> int:
    from trimcp.skills import main as skills_main

    arguments: list[str] = args.arguments
    return skills_main(arguments)


def _load_checked(path: str | os.PathLike[str] | None, *, stdio: bool = False) -> SysConfig:
    """Load the configuration and check what only the daemon can (Host/Origin patterns).

    ``stdio``: the daemon runs ``serve --stdio``; the listeners are read as it set them.
    """
    from trimcp.daemon import check_config

    config = load_config(path)
    check_config(config)
    return _stdio_only(config) if stdio else config


async def _apply_reload(
    started: SysConfig, daemon: Daemon | None, application: object, config: SysConfig
) -> None:
    # What a SIGHUP changes at once: [logging] here; application.stop_timeout, which the
    # application reads when it stops; the upstreams and [gateway], which the daemon's gateway
    # applies (it logs what it added, removed, restarted and kept). Listeners keep their
    # sockets and sessions their limits.
    from trimcp.daemon import restart_needed

    configure_logging(config.logging)
    pending = restart_needed(started, config)
    if pending:
        logger.warning(
            "SIGHUP: changes to %s take effect only when trimcp serve restarts",
            ", ".join(pending),
        )
    if daemon is not None:
        try:
            await daemon.reload(config)
        # This runs in the signal handler's task: whatever went wrong, the daemon carries on
        # with what runs (a bad file is the usual cause, and is reported as such there).
        except Exception:
            logger.exception("SIGHUP: reloading the upstream MCP servers failed")
    logger.info("SIGHUP: applied [logging] and application.stop_timeout; listeners are not rebound")


def _report(error: ConfigError) -> int:
    # Printed as is: a ConfigError's message is written for people (see trimcp.errors).
    sys.stderr.write(f"{error}\n")
    return _FAILURE
