"""The host commands of ``trimcp``: the MCP servers of the ``mcpServers`` configuration.

::

    trimcp servers [--json]            status of every configured server (connects them)
    trimcp tools [SERVER] [--json] [--export openai|openai-responses|anthropic|gemini]
    trimcp call SERVER TOOL [JSON]     call one tool; progress on stderr; exit 1 on isError
    trimcp resources [SERVER]          resources of every connected server (or one)
    trimcp prompts [SERVER]            prompts of every connected server (or one)
    trimcp shell                       an interactive prompt with /mcp commands

Every command takes ``--config PATH`` (repeatable: later files win); without it the user and
project files are read (``trimcp.client.default_config_sources``), after the
``[upstreams]`` table of sys_config.toml when there is one. Configuration problems are
printed as the friendly messages ``trimcp config check`` shows, and exit 1.

The one-shot commands print a verdict, not a moment: they wait until every server they need
is connected or has failed for good (after one retry, or at once when retrying cannot help,
such as a command that is not installed), for at most ``--wait`` seconds (default 60). A
server still starting then is shown as such ("still starting after 60 s", with its next
attempt), never as failed; a failed one with why it gave up, its exit code and the last line
of its stderr. ``env`` and ``headers`` values are never printed (``servers --json`` shows
their names with ``***``).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from trimcp.errors import ConfigError, TrimcpError

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from trimcp.client import ClientConfig, ConnectionManager, ConnectionStatus, Progress

__all__ = ["add_host_commands", "check_client_config"]

logger = logging.getLogger(__name__)

_FAILURE = 1
#: Seconds the one-shot commands wait for every server to connect or fail (``--wait``).
CONNECT_WAIT = 60.0
#: States a connection passes through on its way to ``connected`` or ``failed``.
_STARTING = ("connecting", "reconnecting")


def add_host_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the host commands to the ``trimcp`` parser's subcommands."""

    def command(
        name: str, help_text: str, run: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument(
            "--config",
            action="append",
            metavar="PATH",
            help="an MCP servers file (mcpServers JSON, TOML or YAML); repeatable, later wins "
            "(default: the user and project files)",
        )
        if name != "shell":
            parser.add_argument(
                "--wait",
                type=_seconds,
                default=CONNECT_WAIT,
                metavar="SECONDS",
                help="how long to wait for the servers to connect or fail "
                f"(default: {CONNECT_WAIT:g})",
            )
        parser.set_defaults(command=run)
        return parser

    servers = command("servers", "show every configured MCP server and its state", _servers)
    servers.add_argument(
        "--json",
        action="store_true",
        help="print each server's configuration (env and headers values as ***) and status as JSON",
    )
    tools = command("tools", "list the tools of the connected servers", _tools)
    tools.add_argument("server", nargs="?", help="only this server")
    tools.add_argument("--json", action="store_true", help="print the tool definitions as JSON")
    tools.add_argument(
        "--export",
        choices=["openai", "openai-responses", "anthropic", "gemini"],
        help="print the tools as function definitions for an LLM API",
    )
    call = command("call", "call one tool of one server", _call)
    call.add_argument("server")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as JSON")
    resources = command("resources", "list the resources of the connected servers", _resources)
    resources.add_argument("server", nargs="?", help="only this server")
    prompts = command("prompts", "list the prompts of the connected servers", _prompts)
    prompts.add_argument("server", nargs="?", help="only this server")
    command("shell", "an interactive prompt for driving servers by hand", _shell)


def _seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0:  # also refuses NaN
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, not {text!r}")
    return value


# --- configuration ------------------------------------------------------------------------------


def _sys_config_path(path: str | None = None) -> str | None:
    from trimcp.config import find_config_file

    found = find_config_file(path)
    return str(found) if found is not None and found.exists() else None


def load_host_config(paths: Sequence[str] | None) -> ClientConfig:
    """Read the MCP servers configuration the commands use (module docstring)."""
    from trimcp.client import load_client_config

    return load_client_config(paths, sys_config=_sys_config_path())


def check_client_config(
    paths: Sequence[str] | None, *, sys_config: str | None = None
) -> tuple[bool, str]:
    """Return whether the MCP servers configuration is valid, and the report to print.

    ``sys_config`` names the sys_config.toml whose ``[upstreams]`` are read first (default:
    the one ``trimcp serve`` would read).
    """
    from trimcp.client import inspect_client_config

    report = inspect_client_config(paths, sys_config=_sys_config_path(sys_config))
    read = ", ".join(source.describe() for source in report.config.sources) or "no file"
    names = ", ".join(report.config.servers) or "none"
    lines = [report.render()] if report.render() else []
    if report.ok:
        lines.append(f"OK: MCP servers configuration is valid ({read}); servers: {names}")
    return report.ok, "\n".join(lines)


# --- running a host for one command -------------------------------------------------------------


@asynccontextmanager
async def _host(config: ClientConfig) -> AsyncIterator[ConnectionManager]:
    import trio

    from trimcp.client import BackoffPolicy, ConnectionManager, connect_upstream
    from trimcp.supervision import open_supervisor

    # One attempt and a retry: a command should report a broken server, not wait for it.
    manager = ConnectionManager(
        connector=connect_upstream, backoff=BackoffPolicy(initial=0.5, intensity=1)
    )
    async with open_supervisor([manager.spec(config)]):
        try:
            yield manager
        finally:
            with trio.CancelScope(shield=True):
                await manager.disconnect_all()


def _run(args: argparse.Namespace, body: Callable[[ConnectionManager], Awaitable[int]]) -> int:
    import trio

    try:
        config = load_host_config(args.config)
    except ConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    if not config.servers:
        sys.stderr.write(
            "no MCP servers are configured: add an mcpServers file (./.mcp.json, or "
            "~/.config/trimcp/mcp.json) or name one with --config\n"
        )
        return _FAILURE

    async def main() -> int:
        async with _host(config) as manager:
            return await body(manager)

    # The commands report failures themselves (tables, messages); the log would repeat them.
    logging.basicConfig(level=logging.CRITICAL, format="%(levelname)s %(name)s: %(message)s")
    try:
        return trio.run(main)
    except TrimcpError as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE


async def _connect_wanted(
    manager: ConnectionManager, server: str | None, wait: float
) -> list[ConnectionStatus]:
    """Connect ``server`` (default: every enabled server with auto_connect) and wait for each.

    A one-shot command prints what it found and exits, so a state about to change (a server
    ``reconnecting`` a moment before it is ``failed``) must not be its answer: each server is
    waited for until it is connected or has failed for good, all within ``wait`` seconds from
    now. A server still starting then is returned as it is, in a starting state.

    Raises:
        UnknownServer: ``server`` is not configured.
    """
    import trio

    if server is not None:
        names = [server]
    else:
        configs = (await manager.servers()).values()
        names = [config.name for config in configs if config.enabled and config.auto_connect]
    deadline = trio.current_time() + wait
    verdicts: dict[str, ConnectionStatus] = {}

    async def one(name: str) -> None:
        with trio.move_on_at(deadline):
            # The deadline is this scope's; wait_connected's own timeout must not fire first.
            verdicts[name] = await manager.wait_connected(name, timeout=math.inf)
            return
        verdicts[name] = await manager.status_of(name)

    # Started before the deadline applies, so even ``--wait 0`` reports servers that are
    # starting, not ones that were never asked to.
    for name in names:
        await manager.start_connecting(name)
    async with trio.open_nursery() as nursery:
        for name in names:
            nursery.start_soon(one, name)
    return [verdicts[name] for name in names]


def _problem(status: ConnectionStatus, wait: float) -> str:
    """Why ``status`` is not connected, in plain words (empty if it is).

    A failed server's verdict (why it gave up, its exit) comes first, then the last error
    in full; one still starting says so, with its next attempt.
    """
    last = (status.last_error or "").strip()
    if status.state == "failed":
        verdict = "; ".join(part for part in (status.failure, status.exit_words()) if part)
        return f"{verdict}\n{last}".strip() if verdict else last
    if status.state not in _STARTING:
        return last
    starting = f"still starting after {wait:g} s (it is {status.state})"
    if status.next_attempt_in is not None:
        starting += f"; attempt {status.attempt} in {status.next_attempt_in:.1f} s"
    return f"{starting}; the last attempt failed: {last}" if last else starting


def _problem_cell(status: ConnectionStatus, wait: float) -> str:
    """The table's one-line PROBLEM: the verdict and the last error's first line."""
    if status.state == "failed":
        return status.summary()
    problem = _problem(status, wait).splitlines()
    return problem[0] if problem else ""


def _report_down(statuses: Sequence[ConnectionStatus], wait: float) -> None:
    for status in statuses:
        if not status.connected:
            label = "still starting" if status.state in _STARTING else status.state
            sys.stderr.write(f"{status.name}: {label}\n{_indent(_problem(status, wait))}\n")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


# --- the commands ---------------------------------------------------------------------------


def _servers(args: argparse.Namespace) -> int:
    async def body(manager: ConnectionManager) -> int:
        servers = await manager.servers()
        verdicts = {s.name: s for s in await _connect_wanted(manager, None, args.wait)}
        rows = [
            ("SERVER", "TRANSPORT", "STATE", "TOOLS", "RESOURCES", "PROMPTS", "RESTARTS", "PROBLEM")
        ]
        listing: list[dict[str, object]] = []
        for name in sorted(servers):
            config = servers[name]
            status = verdicts[name] if name in verdicts else await manager.status_of(name)
            state: str = status.state if config.enabled else "disabled"
            if config.enabled and not config.auto_connect and status.state == "stopped":
                state = "not auto-connected"
            # The configuration as shown anywhere: env and headers values are ***.
            shown = {"config": config.shown(), "source": config.source.describe()}
            listing.append({**status.as_json(), "state": state, **shown})
            rows.append(
                (
                    status.name,
                    config.transport,
                    state,
                    str(status.tools),
                    str(status.resources),
                    str(status.prompts),
                    str(status.restarts),
                    _problem_cell(status, args.wait),
                )
            )
        if args.json:
            sys.stdout.write(json.dumps(listing, indent=2) + "\n")
        else:
            _table(rows)
        return 0 if all(s.connected for s in verdicts.values()) else 1

    return _run(args, body)


def _tools(args: argparse.Namespace) -> int:
    async def body(manager: ConnectionManager) -> int:
        statuses = await _connect_wanted(manager, args.server, args.wait)
        _report_down(statuses, args.wait)
        tools = [t for t in await manager.all_tools() if args.server in (None, t.server)]
        if args.export:
            from trimcp.client import export_tools

            sys.stdout.write(json.dumps(export_tools(tools, args.export), indent=2) + "\n")
        elif args.json:
            listing = [
                {
                    "name": t.qualified_name,
                    "server": t.server,
                    "tool": t.name,
                    "title": t.title,
                    "description": t.description,
                    "inputSchema": dict(t.input_schema),
                }
                for t in tools
            ]
            sys.stdout.write(json.dumps(listing, indent=2) + "\n")
        else:
            rows = [("TOOL", "DESCRIPTION")]
            rows += [(t.qualified_name, _first_line(t.description or t.title or "")) for t in tools]
            _table(rows)
        return 0 if all(s.connected for s in statuses) else 1

    return _run(args, body)


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


def _call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        sys.stderr.write(
            f"the arguments are not valid JSON: {exc.msg} at column {exc.colno}\n"
            f"  given: {args.arguments}\n"
            '  expected: a JSON object, e.g. \'{"text": "hello"}\' (quote it for the shell)\n'
        )
        return _FAILURE
    if not isinstance(arguments, dict):
        sys.stderr.write('the arguments must be a JSON object, e.g. \'{"text": "hello"}\'\n')
        return _FAILURE

    async def body(manager: ConnectionManager) -> int:
        from trimcp.client import qualify

        [status] = await _connect_wanted(manager, args.server, args.wait)
        if not status.connected:
            _report_down([status], args.wait)
            return _FAILURE
        result = await manager.call_tool(
            qualify(args.server, args.tool), arguments, on_progress=_show_progress
        )
        _print_result(result)
        return _FAILURE if result.get("isError") else 0

    return _run(args, body)


def _show_progress(progress: Progress) -> None:
    total = f"/{progress.total:g}" if progress.total is not None else ""
    message = f" {progress.message}" if progress.message else ""
    sys.stderr.write(f"progress {progress.progress:g}{total}{message}\n")


def _print_result(result: dict[str, object] | object) -> None:
    if not isinstance(result, dict):
        sys.stdout.write(f"{result}\n")
        return
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            sys.stdout.write(f"{block.get('text', '')}\n")
        elif isinstance(block, dict):
            shown = {k: v for k, v in block.items() if k not in ("data", "blob")}
            sys.stdout.write(f"[{block.get('type')}] {json.dumps(shown)}\n")
    structured = result.get("structuredContent")
    if structured is not None:
        sys.stdout.write(json.dumps(structured, indent=2) + "\n")


def _resources(args: argparse.Namespace) -> int:
    async def body(manager: ConnectionManager) -> int:
        statuses = await _connect_wanted(manager, args.server, args.wait)
        _report_down(statuses, args.wait)
        rows = [("SERVER", "URI", "NAME")]
        for server, item in await manager.all_resources():
            if args.server in (None, server):
                rows.append((server, str(item.get("uri", "")), str(item.get("name", ""))))
        _table(rows)
        # As for tools: a listing that misses a server that is down is not a success.
        return 0 if all(s.connected for s in statuses) else 1

    return _run(args, body)


def _prompts(args: argparse.Namespace) -> int:
    async def body(manager: ConnectionManager) -> int:
        statuses = await _connect_wanted(manager, args.server, args.wait)
        _report_down(statuses, args.wait)
        rows = [("SERVER", "PROMPT", "DESCRIPTION")]
        for server, item in await manager.all_prompts():
            if args.server in (None, server):
                rows.append(
                    (
                        server,
                        str(item.get("name", "")),
                        _first_line(str(item.get("description", ""))),
                    )
                )
        _table(rows)
        return 0 if all(s.connected for s in statuses) else 1

    return _run(args, body)


def _table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        sys.stdout.write("  ".join(cells).rstrip() + "\n")


def _shell(args: argparse.Namespace) -> int:
    from trimcp.cli._shell import run_shell

    reload = functools.partial(load_host_config, args.config)
    return _run(args, functools.partial(run_shell, reload_config=reload))
