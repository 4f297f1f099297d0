"""The ``trimcp`` command.

::

    trimcp config check [PATH] [--config MCPFILE]...
                                      validate sys_config.toml and the MCP servers files
    trimcp config show [PATH] [--json] print the configuration in effect (TOML, or JSON)
    trimcp serve [--config PATH]      run the application until SIGTERM/SIGINT
    trimcp skills [--root DIR]... [--http] ...
                                      serve the built-in file, search and git tools
                                      (``trimcp.skills``; ``trimcp skills --help``)
    trimcp servers | tools | call | resources | prompts | shell
                                      the configured MCP servers (``trimcp.cli._host``)

PATH defaults to ``$TRIMCP_CONFIG``, then ``./sys_config.toml``, then built-in defaults.
``serve`` runs the MCP server of ``[server] object`` on the listeners the file enables
(``trimcp.daemon``); ``config check`` checks the same settings, Host/Origin patterns
included, without importing the server. The daemon and the runtime are imported only by
the commands that need them, so that ``config show`` starts fast; ``skills`` hands its
arguments to ``trimcp.skills.main``, which parses them, for the same reason.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import logging
import os
import sys
from typing import TYPE_CHECKING

from trimcp._logging import configure_logging
from trimcp.cli import _inspect, _install, _run
from trimcp.cli._host import add_host_commands, check_client_config
from trimcp.config import find_config_file, load_config, render_settings
from trimcp.errors import ConfigError, SupervisorError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from trimcp.config import SysConfig
    from trimcp.daemon import Daemon

logger = logging.getLogger("trimcp.cli")  # the name users see in the log, whichever module

_FAILURE = 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` if None) and return the exit status.

    Exits with status 2 through SystemExit for usage errors, as argparse does.
    """
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except BrokenPipeError:
        # Whoever read stdout went away (`trimcp call ... | head`): stop quietly, as cat does,
        # and point stdout at /dev/null so the interpreter's final flush cannot fail again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return _FAILURE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trimcp", description="A Model Context Protocol runtime: supervised actors on trio."
    )
    commands = parser.add_subparsers(metavar="COMMAND", required=True)

    config = commands.add_parser("config", help="check or show the configuration")
    config_commands = config.add_subparsers(metavar="ACTION", required=True)
    path_help = "the file to read (default: $TRIMCP_CONFIG, else ./sys_config.toml)"
    check = config_commands.add_parser("check", help="validate the configuration")
    check.add_argument("path", nargs="?", metavar="PATH", help=path_help)
    check.add_argument(
        "--config",
        action="append",
        metavar="MCPFILE",
        help="an MCP servers file to check; repeatable (default: the user and project files)",
    )
    check.set_defaults(command=_check)
    show = config_commands.add_parser("show", help="print the configuration in effect as TOML")
    show.add_argument("path", nargs="?", metavar="PATH", help=path_help)
    show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    show.set_defaults(command=_show)

    serve = commands.add_parser("serve", help="run the application until SIGTERM or SIGINT")
    serve.add_argument("--config", metavar="PATH", help=path_help)
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
    _run.add_command(commands)
    _install.add_command(commands)
    _inspect.add_command(commands)
    return parser


def _check(args: argparse.Namespace) -> int:
    try:
        config = _load_checked(args.path)
    except ConfigError as exc:
        status = _report(exc)
    else:
        status = 0
        if config.sources:
            sys.stdout.write(f"OK: configuration is valid; read {', '.join(config.sources)}\n")
        else:
            sys.stdout.write("OK: no configuration file found; every setting has its default\n")
    # The MCP servers the host commands use, from the same files they read. With a broken
    # sys_config.toml only their problems are added, so that stdout stays empty on failure.
    servers_ok, report = check_client_config(args.config, sys_config=args.path)
    if not servers_ok:
        sys.stderr.write(report + "\n")
    elif status == 0:
        sys.stdout.write(report + "\n")
    return status or (0 if servers_ok else _FAILURE)


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
    from trimcp.supervision import run_application

    try:
        daemon = build_daemon(config)
    except ConfigError as exc:
        return _report(exc)
    stdio = bool(getattr(args, "stdio", False))
    run = functools.partial(
        run_application,
        config,
        children=daemon.children,
        reload_config=functools.partial(_load_checked, path, stdio=stdio),
        on_reload=functools.partial(_apply_reload, config, daemon),
    )
    try:
        trio.run(run)
    except SupervisorError as exc:
        logger.critical("application %s stopped: %s", config.application.name, exc)
        return _FAILURE
    return 0


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
