"""The ``trimcp`` command.

::

    trimcp config check [PATH]        validate the configuration; exit 1 if it is wrong
    trimcp config show [PATH] [--json] print the configuration in effect (TOML, or JSON)
    trimcp serve [--config PATH]      run the application until SIGTERM/SIGINT

PATH defaults to ``$TRIMCP_CONFIG``, then ``./sys_config.toml``, then built-in defaults.
The config commands need neither trio nor the runtime, so they work on any machine that
can import trimcp; ``serve`` imports the runtime only when it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import logging
import sys
from typing import TYPE_CHECKING

from trimcp._logging import configure_logging
from trimcp.config import find_config_file, load_config, render_settings
from trimcp.errors import ConfigError, SupervisorError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from trimcp.config import SysConfig

logger = logging.getLogger(__name__)

_FAILURE = 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` if None) and return the exit status.

    Exits with status 2 through SystemExit for usage errors, as argparse does.
    """
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    return command(args)


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
    check.set_defaults(command=_check)
    show = config_commands.add_parser("show", help="print the configuration in effect as TOML")
    show.add_argument("path", nargs="?", metavar="PATH", help=path_help)
    show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    show.set_defaults(command=_show)

    serve = commands.add_parser("serve", help="run the application until SIGTERM or SIGINT")
    serve.add_argument("--config", metavar="PATH", help=path_help)
    serve.set_defaults(command=_serve)
    return parser


def _check(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.path)
    except ConfigError as exc:
        return _report(exc)
    if config.sources:
        sys.stdout.write(f"OK: configuration is valid; read {', '.join(config.sources)}\n")
    else:
        sys.stdout.write("OK: no configuration file found; every setting has its default\n")
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.path)
    except ConfigError as exc:
        return _report(exc)
    if args.json:
        sys.stdout.write(json.dumps(dataclasses.asdict(config), indent=2) + "\n")
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
    configure_logging(config.logging)
    logger.info("configuration read from %s", ", ".join(config.sources) or "defaults only")

    # Imported here, not at the top, so that `trimcp config ...` needs neither trio nor the
    # runtime to be importable.
    import trio

    from trimcp.supervision import run_application

    reload_config = functools.partial(load_config, path)
    run = functools.partial(
        run_application, config, reload_config=reload_config, on_reload=_apply_logging
    )
    try:
        trio.run(run)
    except SupervisorError as exc:
        logger.critical("application %s stopped: %s", config.application.name, exc)
        return _FAILURE
    return 0


async def _apply_logging(application: object, config: SysConfig) -> None:
    # A SIGHUP that changes [logging] takes effect at once; the rest of a reloaded config is
    # the application's business.
    configure_logging(config.logging)


def _report(error: ConfigError) -> int:
    # Printed as is: a ConfigError's message is written for people (see trimcp.errors).
    sys.stderr.write(f"{error}\n")
    return _FAILURE
