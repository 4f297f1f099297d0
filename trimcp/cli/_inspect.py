"""``trimcp inspect TARGET``: what one MCP server offers, read over a real session.

::

    trimcp inspect demo.py                    a summary: a tree on a terminal, text otherwise
    trimcp inspect notes --json               a configured server, as a JSON report
    trimcp inspect http://127.0.0.1:8000/mcp
    trimcp inspect -- node server.js

The report holds the server's ``serverInfo``, the negotiated protocol version, its
``instructions`` and capabilities, and every tool (input and output schemas, annotations),
resource, resource template and prompt (with its arguments), each list followed page by page
to its end (``ClientSession.list_*``). Items appear exactly as the server sent them, in MCP's
wire spelling, so the JSON report can be compared with the specification; a listing the
server fails to answer is reported under ``errors`` and the command exits 1, with the rest
of the report still printed.

The server is reached as the host commands reach it (``connect_upstream``: a launched
process, Streamable HTTP or WebSocket), once, without retries: a server that is not
configured, cannot start or does not finish the handshake is explained in plain words, exit
1. Ctrl-C stops the server and exits 130 without a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import sys
from typing import TYPE_CHECKING

from trimcp.cli._inspect_view import print_report
from trimcp.cli._output import dump_json
from trimcp.cli._passthrough import add_passthrough_command, split_command
from trimcp.cli._reach import server_for
from trimcp.cli._target import parse_target
from trimcp.errors import ConfigError, TrimcpError
from trimcp.protocol import implementation_to_wire, server_capabilities_to_wire

if TYPE_CHECKING:
    from trimcp.client import ClientSession
    from trimcp.config.mcp_servers import ServerConfig
    from trimcp.protocol import JsonObject, JsonValue

__all__ = ["add_command", "inspect_server"]

_FAILURE = 1
_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``inspect`` to the ``trimcp`` parser's subcommands (``trimcp.cli._passthrough``)."""
    add_passthrough_command(
        commands, "inspect", "show what an MCP server offers (trimcp inspect --help)", _inspect
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trimcp inspect",
        usage="trimcp inspect [TARGET] [--json] [options] [-- command args...]",
        description="Connect to one MCP server and show its tools, resources, resource "
        "templates and prompts.",
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="TARGET",
        help="a configured server, file.py[:object], package.module:object or URL "
        "(or a command after --)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON report (MCP's wire names)"
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="for starting the server and for each request (default: the server's "
        "startup_timeout and request_timeout, 30 and 60)",
    )
    parser.add_argument(
        "--config",
        action="append",
        metavar="MCPFILE",
        help="an MCP servers file to look a configured TARGET up in; repeatable "
        "(default: the user and project files)",
    )
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:  # also refuses NaN
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, not {text!r}")
    return value


def _inspect(arguments: list[str]) -> int:
    words, command = split_command(arguments)
    options = _parser().parse_args(words)
    try:
        target = parse_target(options.target, command)
        server = server_for(target, options.config)
    except ConfigError as exc:
        sys.stderr.write(f"trimcp inspect: {exc}\n")
        return _FAILURE
    if options.timeout is not None:
        server = dataclasses.replace(
            server, startup_timeout=options.timeout, request_timeout=options.timeout
        )
    # Failures are reported below, in words; the library's log lines would repeat them.
    logging.basicConfig(level=logging.CRITICAL, format="%(levelname)s %(name)s: %(message)s")
    report, problem, interrupted = _run(server)
    if interrupted:
        sys.stderr.write("trimcp inspect: interrupted\n")
        return _INTERRUPTED
    if report is None:
        sys.stderr.write(f"trimcp inspect: cannot inspect {target.text}:\n{problem}\n")
        return _FAILURE
    if options.json:
        dump_json(report)
    else:
        print_report(report)
    errors = report.get("errors")
    if isinstance(errors, dict) and errors:
        for kind, message in errors.items():
            sys.stderr.write(f"trimcp inspect: listing {kind} failed: {message}\n")
        return _FAILURE
    return 0


def _run(server: ServerConfig) -> tuple[JsonObject | None, str, bool]:
    """Inspect ``server`` in a new trio loop: (the report or None, why not, interrupted)."""
    import trio

    report: JsonObject | None = None
    problems: list[str] = []
    interrupted = False
    try:
        report = trio.run(inspect_server, server)
    except* KeyboardInterrupt:
        interrupted = True
    except* (TrimcpError, OSError) as group:
        problems = [str(error) for error in _leaves(group)]
    return report, "\n".join(problems), interrupted


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for error in group.exceptions:
        found += _leaves(error) if isinstance(error, BaseExceptionGroup) else [error]
    return found


async def inspect_server(server: ServerConfig) -> JsonObject:
    """Connect to ``server``, read everything it offers, disconnect; return the report.

    Raises:
        TrimcpError: it could not be reached or started, or did not finish the handshake
            (the message says why); or the connection broke while listing.
    """
    from trimcp.client import connect_upstream

    async with connect_upstream(server, lambda _kind: None) as upstream:
        session = upstream.session
        report: JsonObject = {
            "server": implementation_to_wire(session.server_info),
            "protocolVersion": session.protocol_version,
            "instructions": session.instructions,
            "capabilities": server_capabilities_to_wire(session.server_capabilities),
        }
        errors: JsonObject = {}
        for key, items in (await _listings(session, errors)).items():
            report[key] = items
        if errors:
            report["errors"] = errors
    return report


async def _listings(session: ClientSession, errors: JsonObject) -> dict[str, list[JsonValue]]:
    """Every page of each list, as sent; a list the server refuses goes into ``errors``."""
    from trimcp.errors import JsonRpcError, RemoteProtocolError, RequestTimeout

    listings: dict[str, list[JsonValue]] = {}
    for key in ("tools", "resources", "resourceTemplates", "prompts"):
        try:
            items: list[JsonValue]
            if key == "tools":
                items = [tool.raw for tool in await session.list_tools()]
            elif key == "resources":
                items = [resource.raw for resource in await session.list_resources()]
            elif key == "resourceTemplates":
                items = [template.raw for template in await session.list_resource_templates()]
            else:
                items = [prompt.raw for prompt in await session.list_prompts()]
        except (JsonRpcError, RemoteProtocolError, RequestTimeout) as exc:
            errors[key] = str(exc)
            items = []
        listings[key] = items
    return listings
