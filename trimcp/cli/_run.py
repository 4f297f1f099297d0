"""``trimcp run TARGET``: serve the MCPServer of a Python file or module, with no config file.

::

    trimcp run demo.py                    stdio when stdin is not a terminal (a desktop host
                                          starts it so), else HTTP on 127.0.0.1:8000
    trimcp run demo.py --http [--host H] [--port N]
    trimcp run demo.py:server --stdio
    trimcp run myapp.server:make --http --reload

TARGET is loaded by ``_load.py`` (its errors are short messages naming file and line; the
traceback only with ``--debug`` or ``TRIMCP_DEBUG=1``). The first log line says which
transport serves and, for HTTP, the URL and the commands to try next.

``--reload`` (HTTP only): this process imports nothing of the TARGET; it watches the
``.py`` files under the TARGET's folder (the working directory for a module) with
``watchfiles`` and runs the server as a child, ``python -m trimcp run TARGET --http --host H
--port N``, in a process group of its own. On a change it stops the child by PID (SIGTERM,
``STOP_GRACE`` seconds, then SIGKILL, to its group) and starts a new one on the same port
(trio's listeners set SO_REUSEADDR, so the old connections' TIME_WAIT does not block it).
A child that fails (its TARGET does not import, say) is reported, and the next change starts
it again. Sessions live in the child, so clients get 404 for their old session id and
start a new one (MCP 2025-11-25, Transports > Session Management,
https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management).
A stdio client cannot do that, which is why ``--reload`` refuses ``--stdio``.

Exit statuses: 0 stopped by SIGTERM or the end of stdin; 130 stopped by SIGINT (Ctrl-C),
after the same drain, without a traceback; 1 the TARGET cannot be loaded or the port is
taken; 2 the command line is wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import signal
import socket
import subprocess
import sys
import traceback
import typing
from pathlib import Path
from typing import TYPE_CHECKING, final

from trimcp._auth_options import add_auth_options, resource_server_from_args
from trimcp._logging import configure_logging
from trimcp.cli._target import Target, parse_target
from trimcp.config import LoggingSettings
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    import trio

    from trimcp.auth import ResourceServer
    from trimcp.server import MCPServer

__all__ = ["add_command"]

logger = logging.getLogger("trimcp.cli")  # the name users see in the log, whichever module

_FAILURE = 1
_USAGE = 2
#: 128 + SIGINT, as shells report an interrupted program (``trimcp.server.INTERRUPTED``,
#: not imported here so that the parent of ``--reload`` does not load the server runtime).
_INTERRUPTED = 128 + signal.SIGINT
_DEFAULT_HOST = "127.0.0.1"
_DEFAULT_PORT = 8000
#: Seconds a child gets between SIGTERM and SIGKILL when ``--reload`` restarts or stops it.
#: Its drain would wait 30 s for requests in flight; a reload wants the new code now.
STOP_GRACE: typing.Final = 5.0


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` to the ``trimcp`` parser's subcommands."""
    run = commands.add_parser(
        "run",
        help="serve the MCPServer of a Python file or module (no configuration file)",
        description="Serve the MCPServer that TARGET names, over stdio or Streamable HTTP. "
        "Without --http or --stdio: stdio when stdin is not a terminal (a desktop host starts "
        f"it so), else HTTP on {_DEFAULT_HOST}:{_DEFAULT_PORT}.",
    )
    run.add_argument(
        "target",
        metavar="TARGET",
        help="file.py (its one MCPServer), file.py:name or package.module:name; name is an "
        "MCPServer or a function of no arguments returning one",
    )
    transport = run.add_mutually_exclusive_group()
    transport.add_argument("--http", action="store_true", help="serve Streamable HTTP")
    transport.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout")
    run.add_argument("--host", help=f"the address --http binds (default: {_DEFAULT_HOST})")
    run.add_argument(
        "--port", type=_port, help=f"the port --http binds (default: {_DEFAULT_PORT}; 0: any free)"
    )
    run.add_argument(
        "--reload",
        action="store_true",
        help="restart the server when a .py file under TARGET's folder changes (HTTP only)",
    )
    run.add_argument(
        "--debug",
        action="store_true",
        help="show tracebacks of errors in the server's code, and DEBUG logs (or TRIMCP_DEBUG=1)",
    )
    # Given by the --reload parent to its child, whose stdin is a pipe the parent holds: if
    # the parent dies (SIGKILL leaves it no time to stop the child), the child stops too
    # instead of holding the port.
    run.add_argument("--exit-with-stdin", action="store_true", help=argparse.SUPPRESS)
    add_auth_options(run)
    run.set_defaults(command=functools.partial(_run, run))


def _port(text: str) -> int:
    if not (text.isdigit() and 0 <= int(text) <= 65535):
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, not {text!r}")
    return int(text)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    debug = args.debug or os.environ.get("TRIMCP_DEBUG", "") not in ("", "0")
    configure_logging(LoggingSettings(level="DEBUG" if debug else "INFO"))
    try:
        target = parse_target(args.target)
    except ConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    if not target.is_python:
        parser.error(
            f"TARGET {args.target!r} is not Python code: give file.py, file.py:name or "
            "package.module:name (to list a configured server's or a URL's tools: trimcp tools)"
        )
    mode = _transport(parser, args, target)._replace(
        host=args.host or _DEFAULT_HOST,
        port=_DEFAULT_PORT if args.port is None else args.port,
        exit_with_stdin=args.exit_with_stdin,
    )
    try:
        auth = resource_server_from_args(args, mode.host, http=mode.http)
    except ConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    if args.reload:
        return _run_reloading(target, mode.host, mode.port, debug=debug, extra=_auth_words(args))
    return _serve(target, mode._replace(auth=auth), debug=debug)


def _auth_words(args: argparse.Namespace) -> list[str]:
    """The ``--auth`` options again, for the ``--reload`` child's command line."""
    words = [word for item in args.auth for word in ("--auth", item)]
    words += ["--auth-file", args.auth_file] if args.auth_file else []
    return [*words, "--allow-unauthenticated"] if args.allow_unauthenticated else words


@final
class _Serving(typing.NamedTuple):
    """How to serve: HTTP or stdio (and why, when no flag said), where, until when."""

    http: bool
    because: str = ""
    host: str = _DEFAULT_HOST
    port: int = _DEFAULT_PORT
    #: Also stop when stdin ends (the child of ``--reload``: ``--exit-with-stdin``).
    exit_with_stdin: bool = False
    #: Bearer tokens checked on every request (``--auth``); None: no authorization.
    auth: ResourceServer | None = None


def _transport(
    parser: argparse.ArgumentParser, args: argparse.Namespace, target: Target
) -> _Serving:
    """HTTP or stdio: from the flags, else from stdin (module docstring)."""
    if args.stdio and (args.host or args.port is not None):
        parser.error("--host and --port are for --http; --stdio serves on stdin/stdout")
    if args.stdio and args.reload:
        parser.error(
            "--reload works with --http only: a reload restarts the server, and a stdio client"
            " cannot start a new session with the new one (it owns the process and its pipes)"
        )
    if args.http or args.reload or args.host or args.port is not None:
        return _Serving(http=True)
    if args.stdio:
        return _Serving(http=False)
    if sys.stdin.isatty():
        host_runs = f"a desktop host runs: trimcp run {target.text} --stdio"
        return _Serving(True, f"stdin is a terminal; {host_runs}")
    return _Serving(False, f"stdin is not a terminal; for HTTP: trimcp run {target.text} --http")


def _serve(target: Target, mode: _Serving, *, debug: bool) -> int:
    # Imported here: the runtime loads only for the commands that serve.
    from trimcp.cli._load import load_target
    from trimcp.server import run_server

    try:
        server = load_target(target)
    except ConfigError as exc:
        if debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__)
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    if not mode.http:
        return run_server(functools.partial(_serve_stdio, server, target, mode), listen_fix="")
    # The listener logs where it listens; the first line of ours says it with what to try.
    logging.getLogger("trimcp.http._serve").setLevel(logging.WARNING)
    fix = f"choose another port: trimcp run {target.text} --port {mode.port + 1}"
    serve = functools.partial(_serve_http, server, target, mode)
    return run_server(serve, listen_fix=fix)


async def _serve_http(server: MCPServer, target: Target, mode: _Serving) -> None:
    import trio

    async with trio.open_nursery() as nursery:
        from trimcp.http import HttpOptions

        options = HttpOptions(auth=mode.auth)
        listen = functools.partial(
            server.serve_http, host=mode.host, port=mode.port, options=options
        )
        listener = await nursery.start(listen)
        url = listener.url
        logger.info(
            "serving %s over Streamable HTTP at %s -- try: trimcp tools %s, then trimcp call"
            " %s TOOL name=value",
            _described(server, target),
            url,
            url,
            url,
        )
        if mode.because:
            logger.info("HTTP because %s", mode.because)
        if mode.exit_with_stdin:
            await _wait_for_end_of_stdin()
            logger.info("stdin closed (the --reload parent is gone): stopping")
            nursery.cancel_scope.cancel()


async def _wait_for_end_of_stdin() -> None:
    import trio

    async with trio.lowlevel.FdStream(os.dup(sys.stdin.fileno())) as stdin:
        while await stdin.receive_some():
            pass


async def _serve_stdio(server: MCPServer, target: Target, mode: _Serving) -> None:
    logger.info("serving %s over stdio (stdin/stdout)", _described(server, target))
    if mode.because:
        logger.info("stdio because %s", mode.because)
    await server.serve_stdio()
    logger.info("stdin closed: stopped")


def _described(server: MCPServer, target: Target) -> str:
    info = server.server_info
    return f"{info.name} {info.version} ({target.text})"


# --- --reload --------------------------------------------------------------------------------


def _run_reloading(target: Target, host: str, port: int, *, debug: bool, extra: list[str]) -> int:
    import trio

    folder = target.path.parent if target.path is not None else Path.cwd()
    if port == 0:
        # The child binds the same port after every restart, so that clients keep their URL.
        port = _free_port(host)
    command = [sys.executable, "-m", "trimcp", "run", target.run_spec(), "--http"]
    command += ["--host", host, "--port", str(port), "--exit-with-stdin"]
    command += ["--debug"] if debug else []
    command += extra
    shown = f"[{host}]" if ":" in host else host
    logger.info(
        "serving %s at http://%s:%d/mcp, restarted when a .py file under %s changes",
        target.text,
        shown,
        port,
        folder,
    )
    # Its INFO line for each batch of changes would repeat ours.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    try:
        return trio.run(_reload_loop, _ServerProcess(command), folder)
    except KeyboardInterrupt:
        # trio raises it for a SIGINT that came before the receiver was open.
        return _INTERRUPTED


def _free_port(host: str) -> int:
    family, kind, _, _, address = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, kind) as probe:
        probe.bind(address)
        port: int = probe.getsockname()[1]
        return port


async def _reload_loop(server: _ServerProcess, folder: Path) -> int:
    """Run the server, restart it on changes, stop it on SIGINT/SIGTERM; return the status."""
    import trio

    stopped_by = signal.SIGTERM
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        try:
            async with trio.open_nursery() as nursery:
                await server.start(nursery)
                # Set before cancelling: the watcher's thread returns within a step (50 ms)
                # instead of at its next timeout, and the cancellation waits for that thread.
                stop_watching = trio.Event()
                nursery.start_soon(_restart_on_changes, server, folder, nursery, stop_watching)
                async for signum in signals:
                    stopped_by = signal.Signals(signum)
                    logger.info("%s received: stopping the server", stopped_by.name)
                    stop_watching.set()
                    nursery.cancel_scope.cancel()
                    break
        finally:
            with trio.CancelScope(shield=True):
                await server.stop()
    return _INTERRUPTED if stopped_by == signal.SIGINT else 0


async def _restart_on_changes(
    server: _ServerProcess, folder: Path, nursery: trio.Nursery, stop: trio.Event
) -> None:
    import watchfiles

    changes = watchfiles.awatch(
        folder, watch_filter=watchfiles.PythonFilter(), stop_event=stop, rust_timeout=1_000
    )
    async for batch in changes:
        changed = sorted({_shown(Path(path), folder) for _, path in batch})
        await server.stop()
        await server.start(nursery)
        logger.info("reloaded after change to %s", ", ".join(changed))


def _shown(path: Path, folder: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(folder.resolve()))
    return str(path)


@final
class _ServerProcess:
    """The server's current child process: started, watched, and stopped by PID."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.process: trio.Process | None = None

    async def start(self, nursery: trio.Nursery) -> None:
        """Start a child in a process group of its own; report it if it exits by itself."""
        import trio

        # stdin: a pipe only this process writes to; its end tells the child we are gone.
        process = await trio.lowlevel.open_process(
            self.command, stdin=subprocess.PIPE, start_new_session=True
        )
        self.process = process
        nursery.start_soon(self._report_exit, process)

    async def _report_exit(self, process: trio.Process) -> None:
        status = await process.wait()
        if process is self.process:  # not stopped by stop(), which forgets it first
            self.process = None
            logger.error(
                "the server exited with status %d; it starts again when a .py file changes",
                status,
            )

    async def stop(self) -> None:
        """SIGTERM to the child's group, ``STOP_GRACE`` seconds, then SIGKILL; wait for it."""
        import trio

        process, self.process = self.process, None
        if process is None:
            return
        _signal_group(process.pid, signal.SIGTERM)
        with trio.move_on_after(STOP_GRACE):
            await process.wait()
        if process.returncode is None:
            logger.warning("the server did not stop within %g s of SIGTERM: killing it", STOP_GRACE)
        # Whatever is left of its group too. Safe after the wait: a pid is not reused while
        # a process group of that id exists.
        _signal_group(process.pid, signal.SIGKILL)
        await process.wait()
        if process.stdin is not None:
            await process.stdin.aclose()


def _signal_group(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
