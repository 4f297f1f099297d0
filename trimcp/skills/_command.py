"""The ``trimcp skills`` command: serve the built-in tools over stdio or Streamable HTTP.

::

    trimcp skills [--root DIR]... [--enable CATS]... [--disable CATS]... [--config PATH]
                  [--http [--host H] [--port N]] [--allow-command NAME]... [--log-level L]

The ``[skills]`` table of the configuration file (``--config``, else ``$TRIMCP_CONFIG``, else
``./sys_config.toml``, else the defaults: the file ``trimcp serve`` would read) is the
starting point; the flags override it. Roots written in the file are relative to the file's
folder, roots given as ``--root`` to the working directory; with neither, the working
directory is the one root.

Over stdio (the default) only protocol messages go to stdout and logs go to stderr, as a
desktop host expects. SIGINT and SIGTERM stop the server quietly with status 0, as they stop
``trimcp serve``; so does the client closing stdin.

Exit statuses: 0 stopped normally; 1 the configuration file is wrong (the message is the
usual config error, naming the file and key) or the server could not start (e.g. the port
is taken); 2 the command line is wrong (an unknown category, a root that does not exist, a
port out of range), with argparse's usage line and a message saying what is accepted.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from trimcp._auth_options import add_auth_options, resource_server_from_args
from trimcp._logging import configure_logging
from trimcp.config import (
    SKILL_CATEGORIES,
    SkillsSettings,
    find_config_file,
    load_config,
    setting_error,
)
from trimcp.errors import ConfigError, StartFailed
from trimcp.http import HttpOptions
from trimcp.server import listen_error

from ._server import build_server, resolve_roots

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from trimcp.auth import ResourceServer
    from trimcp.config import LogLevel, SkillCategory, SysConfig
    from trimcp.server import MCPServer

__all__ = ["configured_roots", "main", "settings_from"]

logger = logging.getLogger(__name__)

_FAILURE = 1
_DEFAULT_HOST = "127.0.0.1"
_DEFAULT_PORT = 8000
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_ROOTS_KEY = ("skills", "roots")


def main(argv: Sequence[str]) -> int:
    """Run ``trimcp skills`` with ``argv`` (the arguments after ``skills``); return the status.

    Usage errors exit with status 2 through SystemExit, as argparse does.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _run(args, parser)
    except KeyboardInterrupt:
        # Ctrl-C before the signal receiver was installed (while loading, say): as quiet.
        return 0


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        config = load_config(find_config_file(args.config))
        settings = settings_from(config, args, parser)
    except ConfigError as exc:
        # Printed as is: a ConfigError's message is written for people (see trimcp.errors).
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    level: LogLevel = args.log_level or config.logging.level
    configure_logging(dataclasses.replace(config.logging, level=level))
    if args.allow_command and "execute" not in settings.enable:
        logger.warning("--allow-command has no effect: the execute category is not enabled")
    try:
        auth = resource_server_from_args(args, args.host, http=args.http)
    except ConfigError as exc:
        sys.stderr.write(f"trimcp skills: {exc}\n")
        return _FAILURE
    server = build_server(settings)
    serving = f"{', '.join(settings.enable)}; roots: {', '.join(settings.roots)}"
    if args.skills_dir is not None:
        try:
            server.add_skills(args.skills_dir)
        except ValueError as exc:
            sys.stderr.write(f"trimcp skills: --skills-dir {args.skills_dir}: {exc}\n")
            return _FAILURE
        serving += f"; Agent Skills from {args.skills_dir}"
    run = functools.partial(
        _serve, server, serving, http=args.http, host=args.host, port=args.port, auth=auth
    )
    try:
        trio.run(run)
    except (StartFailed, BaseExceptionGroup) as exc:
        # Binding the port is the one start-up step that fails on its own (address in use,
        # permission denied); it arrives wrapped by the listener's supervisors and nurseries.
        # Anything else is a bug and keeps its traceback.
        cause = listen_error(exc) if args.http else None
        if cause is None:
            raise
        # The listener words it: "cannot listen on HOST:PORT: reason".
        sys.stderr.write(f"trimcp skills: {cause.strerror or cause}; choose another with --port\n")
        return _FAILURE
    return 0


def settings_from(
    config: SysConfig, args: argparse.Namespace, parser: argparse.ArgumentParser | None = None
) -> SkillsSettings:
    """Return ``config.skills`` with the command line's flags applied, roots made absolute.

    Raises:
        ConfigError: a root written in the file does not exist.
        SystemExit: (status 2, through ``parser.error``) a ``--root`` does not exist, or the
            flags leave no category enabled.
    """
    parser = parser or _parser()
    settings = config.skills
    if args.root:
        try:
            roots = tuple(str(path) for path in resolve_roots(tuple(args.root), Path.cwd()))
        except ValueError as exc:
            parser.error(f"--root: {exc}")
    else:
        roots = configured_roots(config)
    enabled: set[SkillCategory] = set(settings.enable)
    if args.enable:
        enabled = {category for given in args.enable for category in given}
    enabled.difference_update(category for given in args.disable or () for category in given)
    if not enabled:
        parser.error(
            "no tool category is left enabled; name some with --enable, e.g."
            " --enable read,search,vcs"
        )
    commands = settings.commands + tuple(
        name for name in dict.fromkeys(args.allow_command or ()) if name not in settings.commands
    )
    return dataclasses.replace(
        settings,
        roots=roots,
        enable=tuple(category for category in SKILL_CATEGORIES if category in enabled),
        commands=commands,
    )


def configured_roots(config: SysConfig) -> tuple[str, ...]:
    """Return the ``[skills]`` roots as absolute, resolved folders.

    Relative roots start at the folder of the file that wrote them; no roots means the
    working directory (not the file's folder: a file shared by several projects serves the
    one it is started in).

    Raises:
        ConfigError: a root is not an existing folder; worded like every config error,
            naming the file and the key (``skills.roots[1]``).
    """
    file = config.file_of(_ROOTS_KEY)
    base = Path(file).parent if config.skills.roots and config.sources else Path.cwd()
    roots: list[str] = []
    # One at a time, so that the error names the entry that is wrong.
    for index, root in enumerate(config.skills.roots or (".",)):
        try:
            roots.extend(str(path) for path in resolve_roots((root,), base))
        except ValueError as exc:
            raise setting_error(
                file,
                (*_ROOTS_KEY, index),
                given=root,
                expected=f"an existing folder (a relative one starts at {base})",
                fix="create the folder, or correct or remove it in roots in the [skills] table",
                detail=(str(exc),),
            ) from exc
    return tuple(roots)


# --- serving ----------------------------------------------------------------------------------


async def _serve(  # noqa: PLR0913  # how and where to serve, each named
    server: MCPServer,
    serving: str,
    *,
    http: bool,
    host: str,
    port: int,
    auth: ResourceServer | None = None,
) -> None:
    """Serve until the client closes stdin (stdio), or until SIGINT or SIGTERM.

    The first line logged (stdio) or printed (HTTP) comes once the signals are handled, so a
    Ctrl-C after it always stops the server quietly.
    """
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_on_signal, received, nursery.cancel_scope)
            if http:
                serve_http = functools.partial(
                    server.serve_http, host=host, port=port, options=HttpOptions(auth=auth)
                )
                listener = await nursery.start(serve_http)
                logger.info("serving %s", serving)
                # Printed whatever the log level: it is what the user needs to connect.
                sys.stderr.write(f"trimcp skills: MCP over Streamable HTTP at {listener.url}\n")
                sys.stderr.flush()
            else:
                logger.info("serving %s over stdio", serving)
                await server.serve_stdio()
                logger.info("stdin closed: stopping")
                nursery.cancel_scope.cancel()


async def _stop_on_signal(received: AsyncIterator[int], scope: trio.CancelScope) -> None:
    async for signum in received:
        logger.info("%s received: stopping", signal.Signals(signum).name)
        scope.cancel()
        return


# --- the command line -------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    categories = ", ".join(SKILL_CATEGORIES)
    defaults = ", ".join(SkillsSettings().enable)
    parser = argparse.ArgumentParser(
        prog="trimcp skills",
        description=(
            "Serve the built-in file, search and git tools (MCP) over stdio, or over"
            " Streamable HTTP with --http. Reads the [skills] table of the configuration"
            " file; the flags override it."
        ),
        epilog=(
            f"Categories: {categories} (default: {defaults}). Every path is confined to the"
            " roots; see the README for the rules."
        ),
    )
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        help="a folder the tools may use; repeatable; replaces [skills] roots"
        " (default: the file's roots, else the working directory)",
    )
    parser.add_argument(
        "--enable",
        action="append",
        type=_categories,
        metavar="CATS",
        help=f"the categories to offer, comma-separated, from {categories}; replaces"
        " [skills] enable",
    )
    parser.add_argument(
        "--disable",
        action="append",
        type=_categories,
        metavar="CATS",
        help="categories not to offer, comma-separated (applied after --enable)",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="the configuration file (default: $TRIMCP_CONFIG, else ./sys_config.toml)",
    )
    parser.add_argument(
        "--skills-dir",
        metavar="DIR",
        help="also serve the Agent Skills in DIR (folders with a SKILL.md) per the MCP Skills"
        " extension: skills/list, skills/get and skill:// resources",
    )
    parser.add_argument(
        "--http", action="store_true", help="serve Streamable HTTP instead of stdio"
    )
    parser.add_argument(
        "--host",
        type=_host,
        default=_DEFAULT_HOST,
        help=f"the address --http binds (default: {_DEFAULT_HOST})",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=_DEFAULT_PORT,
        help=f"the port --http listens on; 0 picks a free one (default: {_DEFAULT_PORT})",
    )
    parser.add_argument(
        "--allow-command",
        action="append",
        type=_command_name,
        metavar="NAME",
        help="an executable run_command may run (execute category); repeatable; added to"
        " [skills] commands",
    )
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=_LOG_LEVELS,
        metavar="LEVEL",
        help=f"the lowest log level written to stderr, one of {', '.join(_LOG_LEVELS)}"
        " (default: [logging] level)",
    )
    add_auth_options(parser)
    return parser


def _categories(text: str) -> tuple[SkillCategory, ...]:
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"name at least one category, from {', '.join(SKILL_CATEGORIES)}"
        )
    chosen: list[SkillCategory] = []
    for name in names:
        known = [category for category in SKILL_CATEGORIES if category == name]
        if not known:
            close = difflib.get_close_matches(name, SKILL_CATEGORIES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listed = ", ".join(SKILL_CATEGORIES)
            raise argparse.ArgumentTypeError(
                f"unknown category {name!r}{hint}; the categories are {listed}"
            )
        chosen.extend(known)
    return tuple(chosen)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port: give an integer from 0 to 65535 (0 picks a free one)"
        )
    return port


def _host(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("give an address to bind, e.g. 127.0.0.1")
    return text.strip()


def _command_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("give an executable's name or absolute path")
    return text.strip()
