"""``trimcp status``, ``trimcp reload`` and ``trimcp restart UPSTREAM``: the running daemon.

::

    trimcp status                  what trimcp serve is doing: tree, listeners, sessions, upstreams
    trimcp status --json           the admin app's /status document as is, for scripts
    trimcp status --watch [SECONDS]
                                   redrawn every SECONDS (2) until Ctrl-C
    trimcp reload                  re-read sys_config.toml, as SIGHUP does (needs the token)
    trimcp restart github          restart one upstream MCP server (needs the token)

Each asks the daemon's admin app (``trimcp.admin``), found from the sys_config.toml that
``trimcp serve`` reads or from ``--url`` (``_admin_client.py``), and draws the answer
(``_status_view.py``). ``status`` exits 0 when the daemon says it is healthy and ready and 1
otherwise (so ``trimcp status --json`` works as a probe in a script); every command exits 1,
with a sentence on stderr saying why and what to do, when the admin app cannot be reached
or refuses. ``--watch`` keeps going when the daemon goes away (it shows why, and tries again
every interval), and Ctrl-C ends it with status 130, as ``trimcp.cli.main`` ends any command.

The requests run under trio (``httpx``), so that the tests can drive these coroutines with a
real admin app, or a stand-in, in the same trio run.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn, TextIO, final

from trimcp.cli._admin_client import (
    AdminAnswer,
    AdminTarget,
    AdminToken,
    ask,
    locate,
    plain_http_warning,
    resolve_token,
)
from trimcp.cli._output import dump_json, is_terminal
from trimcp.cli._status_view import cell, is_healthy, render_status, upstream_problem
from trimcp.errors import ConfigError, ConnectFailed

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from rich.console import Console, RenderableType

__all__ = [
    "Streams",
    "add_commands",
    "reload_daemon",
    "restart_upstream",
    "show_status",
    "watch_status",
]

_FAILURE = 1
#: ``--watch`` without a number: the dashboard's own default refresh.
DEFAULT_WATCH_INTERVAL = 2.0
#: Bounds of ``--watch SECONDS``: faster only loads the daemon, slower is not watching.
_WATCH_RANGE = (0.1, 3600.0)
#: Columns a table may use when the output is not a terminal (a file, a pipe, a test).
_PLAIN_WIDTH = 200


@final
@dataclass(frozen=True, slots=True)
class Streams:
    """Where a command writes: its answer (``out``), its complaints (``err``), and whether
    ``out`` is drawn as a terminal (colours, a picture redrawn in place); None: whether it is
    one. The defaults are the process's stdout and stderr, read when the command runs."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    terminal: bool | None = None


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``status``, ``reload`` and ``restart`` to the ``trimcp`` parser's subcommands."""
    status = commands.add_parser(
        "status",
        help="show what the running trimcp serve is doing (its admin app)",
        description="Ask the daemon's admin app ([admin] enabled = true) for its status: the"
        " supervision tree, listeners, sessions and upstream MCP servers. Exits 0 when the"
        " daemon is healthy and ready, 1 otherwise or when it cannot be reached.",
    )
    _add_location_options(status, token_help="a file holding a token to send (not needed)")
    shown = status.add_mutually_exclusive_group()
    shown.add_argument(
        "--json",
        action="store_true",
        help="print the /status document as is (exit status 0 if healthy and ready, else 1)",
    )
    shown.add_argument(
        "--watch",
        nargs="?",
        const=DEFAULT_WATCH_INTERVAL,
        type=_interval,
        metavar="SECONDS",
        help=f"redraw every SECONDS (default {DEFAULT_WATCH_INTERVAL:g}) until Ctrl-C",
    )
    status.set_defaults(command=_status)

    reload = commands.add_parser(
        "reload",
        help="make trimcp serve re-read its configuration, as SIGHUP does",
        description="POST /reload to the daemon's admin app, with the admin token, and print"
        " what was reloaded: the upstreams added, removed, restarted and kept, and the tables"
        " whose changes need a restart of trimcp serve.",
    )
    _add_location_options(reload)
    reload.set_defaults(command=_reload)

    restart = commands.add_parser(
        "restart",
        help="restart one upstream MCP server of trimcp serve",
        description="POST /upstreams/UPSTREAM/restart to the daemon's admin app, with the"
        " admin token, and print the upstream's new state.",
    )
    restart.add_argument("upstream", metavar="UPSTREAM", help="the upstream's configured name")
    _add_location_options(restart)
    restart.set_defaults(command=_restart)


def _add_location_options(parser: argparse.ArgumentParser, *, token_help: str = "") -> None:
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="the sys_config.toml trimcp serve reads, for [admin] host, port and token"
        " (default: $TRIMCP_CONFIG, else ./sys_config.toml)",
    )
    parser.add_argument(
        "--url",
        metavar="URL",
        help="the admin app's address, as trimcp serve logs it (http://127.0.0.1:8002)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help=token_help
        or "a file (chmod 600) holding the admin token (default: $TRIMCP_ADMIN_TOKEN, else"
        " [admin] token_file or token of the config file)",
    )


def _interval(text: str) -> float:
    low, high = _WATCH_RANGE
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text} is not between {low:g} and {high:g} seconds")
    return value


# --- the commands, as main() runs them ----------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    import trio

    try:
        target = _located(args)
        token = resolve_token(args.token_file, target) if args.token_file else None
    except ConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    if args.watch is not None:
        trio.run(lambda: watch_status(target, args.watch, token=token))
    return trio.run(lambda: show_status(target, as_json=args.json, token=token))


def _reload(args: argparse.Namespace) -> int:
    return _with_token(args, reload_daemon)


def _restart(args: argparse.Namespace) -> int:
    return _with_token(args, lambda target, token: restart_upstream(target, args.upstream, token))


def _with_token(
    args: argparse.Namespace, act: Callable[[AdminTarget, AdminToken], Awaitable[int]]
) -> int:
    """Find the admin app and its token as the options say, then run ``act`` with them."""
    import trio

    try:
        target = _located(args)
        token = resolve_token(args.token_file, target)
    except ConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    return trio.run(act, target, token)


def _located(args: argparse.Namespace) -> AdminTarget:
    target = locate(args.config, args.url)
    warning = plain_http_warning(target.url)
    if warning:
        sys.stderr.write(warning + "\n")
    return target


# --- status -----------------------------------------------------------------------------------


async def show_status(
    target: AdminTarget,
    *,
    as_json: bool = False,
    token: AdminToken | None = None,
    streams: Streams | None = None,
) -> int:
    """Print the daemon's status once; 0 if it is healthy and ready, else 1."""
    shown = streams or Streams()
    document, problem = await _fetch_status(target, token)
    if document is None:
        shown.err.write(problem + "\n")
        return _FAILURE
    if as_json:
        dump_json(document, shown.out)
    else:
        _console(shown).print(render_status(document))
    return 0 if is_healthy(document) else _FAILURE


async def watch_status(
    target: AdminTarget,
    interval: float,
    *,
    token: AdminToken | None = None,
    streams: Streams | None = None,
) -> NoReturn:
    """Redraw the status every ``interval`` seconds until cancelled (Ctrl-C).

    On a terminal the picture is redrawn in place (``rich.live.Live``); elsewhere each one
    is printed after the last. When the admin app cannot be reached, or refuses, the picture
    says so and the next attempt comes an interval later: the daemon may be restarting.
    """
    import trio

    console = _console(streams or Streams())
    if not console.is_terminal:
        while True:
            console.print(await _snapshot(target, token, interval))
            console.file.flush()
            await trio.sleep(interval)
    from rich.live import Live

    with Live(
        console=console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False
    ) as live:
        while True:
            live.update(await _snapshot(target, token, interval), refresh=True)
            await trio.sleep(interval)


async def _snapshot(
    target: AdminTarget, token: AdminToken | None, interval: float
) -> RenderableType:
    import time

    from rich.console import Group
    from rich.text import Text

    document, problem = await _fetch_status(target, token)
    line = Text(
        f"{target.url}  {time.strftime('%H:%M:%S')}  every {interval:g} s; Ctrl-C to stop",
        style="dim",
    )
    if document is None:
        return Group(line, Text(problem, style="bold red"), Text(f"trying again in {interval:g} s"))
    return Group(line, render_status(document))


async def _fetch_status(
    target: AdminTarget, token: AdminToken | None
) -> tuple[Mapping[str, object] | None, str]:
    """The /status document, or None and why there is none."""
    try:
        answer = await ask(target, "GET /status", token=token)
    except ConnectFailed as exc:
        return None, exc.problem
    if answer.status != 200:
        return None, _refusal(answer, target, token, "GET /status")
    if not isinstance(answer.document.get("application"), dict):
        return None, (
            f"{target.url} answered GET /status with something other than trimcp's status"
            f" document ({cell(answer.text[:80]) or 'a JSON object without application'}); is"
            " that address the admin app of trimcp serve?"
        )
    return answer.document, ""


def _console(streams: Streams) -> Console:
    from rich.console import Console

    terminal = streams.terminal
    on_terminal = is_terminal(streams.out) if terminal is None else terminal
    return Console(
        file=streams.out,
        force_terminal=on_terminal,
        no_color=not on_terminal,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        width=None if on_terminal else _PLAIN_WIDTH,
    )


# --- reload and restart -----------------------------------------------------------------------


async def reload_daemon(
    target: AdminTarget, token: AdminToken, *, streams: Streams | None = None
) -> int:
    """POST /reload and print what changed; 0 on success, 1 with the reason otherwise."""
    shown = streams or Streams()
    try:
        answer = await ask(target, "POST /reload", token=token)
    except ConnectFailed as exc:
        shown.err.write(exc.problem + "\n")
        return _FAILURE
    if answer.status != 200 or answer.document.get("reloaded") is not True:
        shown.err.write(_refusal(answer, target, token, "POST /reload") + "\n")
        return _FAILURE
    shown.out.write(_reload_report(answer.document))
    return 0


def _reload_report(document: Mapping[str, object]) -> str:
    sources = _names(document.get("sources"))
    lines = [f"reloaded {sources}" if sources else "reloaded: no file, every setting its default"]
    upstreams = document.get("upstreams")
    changes = upstreams if isinstance(upstreams, dict) else {}
    for change in ("added", "removed", "restarted", "kept"):
        names = _names(changes.get(change))
        if names:
            lines.append(f"upstreams {change}: {names}")
    pending = _names(document.get("restart_needed"))
    if pending:
        lines.append(f"changes to {pending} take effect only when trimcp serve restarts")
    return "".join(line + "\n" for line in lines)


def _names(value: object) -> str:
    return ", ".join(cell(item) for item in value) if isinstance(value, list) else ""


async def restart_upstream(
    target: AdminTarget,
    name: str,
    token: AdminToken,
    *,
    streams: Streams | None = None,
) -> int:
    """POST /upstreams/NAME/restart and print its new state; 1 with the reason on failure."""
    import urllib.parse

    shown = streams or Streams()
    request = f"POST /upstreams/{urllib.parse.quote(name, safe='')}/restart"
    try:
        answer = await ask(target, request, token=token)
    except ConnectFailed as exc:
        shown.err.write(exc.problem + "\n")
        return _FAILURE
    if answer.status != 200:
        shown.err.write(_refusal(answer, target, token, request) + "\n")
        return _FAILURE
    status = answer.document.get("status")
    upstream: Mapping[str, object] = status if isinstance(status, dict) else {}
    state = cell(upstream.get("state"))
    pid = f", pid {cell(upstream.get('pid'))}" if upstream.get("pid") is not None else ""
    problem = upstream_problem(upstream) if upstream else ""
    why = f"; {problem}" if problem else ""
    shown.out.write(f"restarted {cell(name)}: {state}{pid}{why}\n")
    return _FAILURE if state == "failed" else 0


# --- refusals in words ------------------------------------------------------------------------


def _refusal(
    answer: AdminAnswer, target: AdminTarget, token: AdminToken | None, request: str
) -> str:
    """What a non-200 answer means, with the fix (the token itself is never shown)."""
    said = cell(answer.error()) or "no explanation"
    status = answer.status
    if status == 401:
        sent = f"the token from {token.source}" if token is not None else "no token"
        return (
            f"the admin app at {target.url} refused {request} with {sent} (HTTP 401: {said});"
            " use the token trimcp serve reads from [admin] token_file (or token) of its"
            " sys_config.toml: pass --token-file PATH, or set $TRIMCP_ADMIN_TOKEN"
        )
    if status == 403:
        return (
            f"the admin app at {target.url} refused {request} (HTTP 403: {said}); it accepts"
            " POST requests only once it has an admin token: set [admin] token_file in"
            f" {target.file_words()} to a file only you can read (chmod 600), restart trimcp"
            " serve, and pass the same file with --token-file"
        )
    if status in (404, 421):
        return _not_here(answer, target, request, said)
    if request.endswith("/reload") and status in (400, 500):
        return f"the reload failed and nothing changed (HTTP {status}): {said}"
    return f"the admin app at {target.url} answered {request} with HTTP {status}: {said}"


def _not_here(answer: AdminAnswer, target: AdminTarget, request: str, said: str) -> str:
    """404 and 421: no such route or upstream here, or not this Host."""
    if answer.status == 421:
        return (
            f"the admin app at {target.url} refused the Host header (HTTP 421: {said}); use the"
            " address it listens on, or add this host to [admin] allowed_hosts in"
            f" {target.file_words()}"
        )
    if answer.document.get("error"):
        return said  # the app's own words: "no upstream named 'x'; configured: a, b"
    return (
        f"{target.url} has no {request} (HTTP 404): is that address the admin app of a"
        " trimcp serve as recent as this trimcp?"
    )
