"""Running a host of MCP servers for one command: which servers, connecting them, Ctrl-C.

A one-shot command (``trimcp tools``, ``call``, ...; the parser is ``_host.py``) resolves its
TARGET to a configuration (``resolve_scope``: the mcpServers files for a configured name or
for every server, a definition of its own for a file, module, URL or command), runs a
``ConnectionManager`` over it for as long as the command's body runs (``run_host``), and
waits for a verdict on each server it needs (``connect_wanted``) before it prints anything.

``run_host`` owns what every command shares: each server's log messages go to the command's
``Activity`` (stderr), ``TrimcpError`` is printed as the message it is (exit 1), and Ctrl-C
cancels the body, so that a request in flight is cancelled upstream, then exits with 130
and no traceback.
"""

from __future__ import annotations

import difflib
import functools
import logging
import math
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.cli._output import Activity
from trimcp.cli._target import parse_target
from trimcp.errors import ConfigError, TrimcpError

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
    from contextlib import AbstractAsyncContextManager

    from trimcp.cli._target import Target
    from trimcp.client import (
        CatalogKind,
        ClientConfig,
        ClientSession,
        ConnectionManager,
        ConnectionStatus,
        Connector,
        PermissionPolicy,
        ServerConfig,
        Upstream,
    )
    from trimcp.protocol import JsonObject

__all__ = [
    "CONNECT_WAIT",
    "FAILURE",
    "INTERRUPTED",
    "Scope",
    "catalog_of",
    "check_client_config",
    "configured",
    "connect_one",
    "connect_wanted",
    "did_you_mean",
    "load_host_config",
    "problem",
    "problem_cell",
    "prompt_arguments",
    "report_down",
    "resolve_scope",
    "run_host",
    "say_unknown",
    "session_of",
]

FAILURE = 1
#: The exit status after Ctrl-C: 128 + SIGINT, as shells report a command SIGINT ended.
INTERRUPTED = 130
#: Seconds the one-shot commands wait for every server to connect or fail (``--wait``).
CONNECT_WAIT = 60.0
#: States a connection passes through on its way to ``connected`` or ``failed``.
_STARTING = ("connecting", "reconnecting")
#: Up to this many names, an unknown one is answered with the whole list.
_FEW = 12


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


@final
@dataclass(frozen=True, slots=True)
class Scope:
    """The servers a command runs over, and the one it is about (None: every one)."""

    config: ClientConfig
    server: str | None
    target: Target | None


def resolve_scope(args: argparse.Namespace) -> Scope:
    """Resolve ``args.target`` (or the command after ``--``) to a configuration.

    Raises:
        ConfigError: no such server is configured (with the names that are, and the closest),
            nothing is configured, or the TARGET is malformed.
    """
    if args.target is None and not args.command_line:
        return Scope(configured(args.config, None), None, None)
    target = parse_target(args.target, args.command_line)
    if target.kind != "configured":
        from trimcp.client import ClientConfig

        return Scope(
            ClientConfig(servers={target.name: target.server_config()}), target.name, target
        )
    return Scope(configured(args.config, target.name), target.name, target)


def configured(paths: Sequence[str] | None, wanted: str | None) -> ClientConfig:
    """Read the mcpServers files (``paths``, or the defaults); check that ``wanted`` is there.

    Raises:
        ConfigError: a file is invalid, no server is configured at all, or none is called
            ``wanted`` (the message has the closest names, every name and the files read).
    """
    config = load_host_config(paths)
    if not config.servers:
        named = f'no MCP server named "{wanted}": ' if wanted else ""
        raise ConfigError(
            f"{named}no MCP servers are configured: add an mcpServers file (./.mcp.json, or "
            "~/.config/trimcp/mcp.json) or name one with --config; or give the server as a "
            "TARGET: a file.py, a module:name, a URL, or a command after --"
        )
    if wanted is not None and wanted not in config.servers:
        read = ", ".join(source.describe() for source in config.sources) or "no file"
        raise ConfigError(
            f'no MCP server named "{wanted}" is configured'
            f"{did_you_mean(wanted, list(config.servers))} "
            f"(configured: {', '.join(config.servers)}; read {read})"
        )
    return config


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """``; did you mean "x"?`` for the names of ``known`` close to ``name``, or nothing."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f'"{match}"' for match in close) + "?"


def say_unknown(server: str, what: str, name: str, known: Sequence[str], listing: str) -> int:
    """Say that ``server`` has no ``what`` called ``name``, what is close, and what it has."""
    message = f'{server} has no {what} "{name}"{did_you_mean(name, known)}'
    if not known:
        message += f" (it offers no {what}s)"
    elif len(known) <= _FEW:
        message += f" (its {what}s: {', '.join(known)})"
    else:
        message += f" ({listing} lists its {len(known)} {what}s)"
    sys.stderr.write(message + "\n")
    return FAILURE


def _showing(activity: Activity) -> Connector:
    """The commands' connector: ``connect_upstream``, with each server's log shown."""
    from trimcp.client import ClientHandlers, connect_upstream

    def connect(
        config: ServerConfig, on_list_changed: Callable[[CatalogKind], None]
    ) -> AbstractAsyncContextManager[Upstream]:
        handlers = ClientHandlers(on_log=functools.partial(activity.log, config.name))
        return connect_upstream(config, on_list_changed, handlers=handlers)

    return connect


@asynccontextmanager
async def _open_host(
    config: ClientConfig, activity: Activity, permissions: PermissionPolicy | None
) -> AsyncIterator[ConnectionManager]:
    import trio

    from trimcp.client import BackoffPolicy, ConnectionManager, PermissionPolicy
    from trimcp.supervision import open_supervisor

    # One attempt and a retry: a command should report a broken server, not wait for it.
    manager = ConnectionManager(
        connector=_showing(activity),
        backoff=BackoffPolicy(initial=0.5, intensity=1),
        permissions=permissions or PermissionPolicy(),
    )
    async with open_supervisor([manager.spec(config)]):
        try:
            yield manager
        finally:
            with trio.CancelScope(shield=True):
                await manager.disconnect_all()


async def _interruptible(run: Callable[[], Awaitable[int]]) -> int:
    """Return what ``run`` returns; Ctrl-C (SIGINT) cancels it instead, and gives 130.

    Only ``run`` is cancelled, not the host around it: a request it was waiting for is
    cancelled by the session, which tells the server (``notifications/cancelled``) before
    the host disconnects. A second Ctrl-C meanwhile is raised as KeyboardInterrupt when
    this returns (trio delivers what its receiver left pending); the host still disconnects.
    """
    import signal

    import trio

    status = INTERRUPTED
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        async with trio.open_nursery() as nursery:

            async def body() -> None:
                nonlocal status
                status = await run()
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(watch)
            nursery.start_soon(body)
    return status


def run_host(
    config: ClientConfig,
    body: Callable[[ConnectionManager], Awaitable[int]],
    *,
    activity: Activity | None = None,
    permissions: PermissionPolicy | None = None,
) -> int:
    """Run ``body`` with a host of ``config``'s servers; its status, 1 on an error, 130 on ^C."""
    import trio

    shown = activity or Activity(logs=False)

    async def main() -> int:
        async with _open_host(config, shown, permissions) as manager:
            return await _interruptible(functools.partial(body, manager))

    # The commands report failures themselves (tables, messages); the log would repeat them.
    logging.basicConfig(level=logging.CRITICAL, format="%(levelname)s %(name)s: %(message)s")
    status, interrupted, errors = FAILURE, False, []
    try:
        status = trio.run(main)
    except* KeyboardInterrupt:
        interrupted = True
    except* TrimcpError as group:
        errors = list(_leaves(group))
    finally:
        shown.close()
    for error in errors:
        sys.stderr.write(f"{error}\n")
    if interrupted or status == INTERRUPTED:
        sys.stderr.write("interrupted\n")
        return INTERRUPTED
    return FAILURE if errors else status


def _leaves(group: BaseExceptionGroup[TrimcpError]) -> Iterator[TrimcpError]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


async def connect_wanted(
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


async def connect_one(manager: ConnectionManager, server: str, wait: float) -> bool:
    """Connect the one server a request goes to; say why not, and return False, if it fails."""
    [status] = await connect_wanted(manager, server, wait)
    if not status.connected:
        report_down([status], wait)
    return status.connected


def problem(status: ConnectionStatus, wait: float) -> str:
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


def problem_cell(status: ConnectionStatus, wait: float) -> str:
    """The table's one-line PROBLEM: the verdict and the last error's first line."""
    if status.state == "failed":
        return status.summary()
    lines = problem(status, wait).splitlines()
    return lines[0] if lines else ""


def report_down(statuses: Sequence[ConnectionStatus], wait: float) -> None:
    for status in statuses:
        if not status.connected:
            label = "still starting" if status.state in _STARTING else status.state
            sys.stderr.write(f"{status.name}: {label}\n{_indent(problem(status, wait))}\n")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


async def session_of(manager: ConnectionManager, server: str) -> ClientSession:
    """The live session to ``server`` (the commands' connector makes only sessions)."""
    from trimcp.client import SessionUpstream

    upstream = await manager.get_connection(server)
    assert isinstance(upstream, SessionUpstream)
    return upstream.session


async def catalog_of(
    manager: ConnectionManager, server: str, kind: CatalogKind
) -> list[JsonObject]:
    """``server``'s items of ``kind`` (``prompts``, ``resourceTemplates``, ...), as it sent them."""
    for name, catalog in await manager.live_catalogs():
        if name == server:
            return list(catalog[kind])
    return []


def prompt_arguments(prompt: JsonObject | dict[str, object]) -> list[tuple[str, bool]]:
    """``(name, required)`` of each argument a prompt declares."""
    declared = prompt.get("arguments")
    return [
        (str(item.get("name", "")), item.get("required") is True)
        for item in (declared if isinstance(declared, list) else [])
        if isinstance(item, dict)
    ]
