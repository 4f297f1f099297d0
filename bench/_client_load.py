"""The worker of ``bench/client.py``: one MCP *client* in a fresh process, one job, one JSON line.

Usage (``bench/client.py`` runs it; by hand for a look)::

    python -P bench/_client_load.py '{"kind": "throughput", "client": "trimcp", ...}'

The client is trimcp's (``trimcp.client``, on trio) or the official SDK's (``mcp`` 2.3,
``mcp.client.client.Client`` over ``stdio_client``, ``mode="legacy"``, on anyio's asyncio
backend: its usual home). Both launch the same stdio server (``bench/servers/``) as their
own child process, so the worker's own CPU time (``resource.getrusage(RUSAGE_SELF)``, which
leaves children out) is the client's. Jobs:

* ``throughput`` ``{client, server, depths, warmup, duration, profile?}``: one session;
  for each depth D: D tasks call ``tools/call echo`` back to back, each with its own text
  (``w<task>-<n>``) that the answer must echo. After ``warmup`` seconds, the calls that
  complete within the next ``duration`` seconds are counted and their latencies (call ->
  result) kept. Reports per depth: rate, p50, p99, the client's CPU µs per request and the
  server's (``/proc/<pid>/stat``). ``profile``: a path; cProfile runs during the timed
  windows (trimcp only) and its stats are dumped there.
* ``connect`` ``{client, server, count}``: ``count`` copies of the server. trimcp: a
  ``ConnectionManager`` under ``open_supervisor``, timing ``connect_all()`` (all must be
  ``connected``) and then ``disconnect_all()``. SDK: ``count`` ``Client`` contexts entered
  concurrently in one task group, timing until all are initialized, until each has also
  listed its tools (what trimcp's ``Connection`` does after the handshake: it reads the
  catalog), and then leaving them all.

On SIGTERM the job is cancelled and its servers stopped on the way out (every server also
exits by itself when its stdin closes). A failure prints ``{"error": ...}``.
"""

from __future__ import annotations

import cProfile
import json
import os
import resource
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Awaitable, Callable

    from mcp.client.client import Client

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CALL_TIMEOUT = 30.0  # seconds for one call before the job fails


class LoadError(Exception):
    """A wrong answer, or the job did not finish in time."""


def cpu_self() -> float:
    """This process's CPU seconds (user + system), children left out."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_of(pid: int | None) -> float | None:
    """Another process's CPU seconds (user + system) from ``/proc/<pid>/stat``."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def child_pids() -> list[int]:
    """This process's children (``/proc/<pid>/task/<tid>/children``, Linux)."""
    pids: list[int] = []
    try:
        tids = os.listdir(f"/proc/{os.getpid()}/task")
    except OSError:
        return pids
    for tid in tids:
        try:
            with open(f"/proc/{os.getpid()}/task/{tid}/children") as file:
                pids.extend(int(p) for p in file.read().split())
        except OSError:
            continue
    return pids


# --- the timed window, shared by both clients ------------------------------------------------


@dataclass
class Window:
    """Which calls count: those completing while ``recording``; and the CPU spent meanwhile."""

    server_pid: int | None
    profiler: cProfile.Profile | None = None
    recording: bool = False
    stopping: bool = False
    latencies: list[float] = field(default_factory=list)
    started: float = 0.0
    cpu_started: float = 0.0
    server_cpu_started: float | None = None
    result: dict[str, Any] = field(default_factory=dict)

    def start(self) -> None:
        self.latencies.clear()
        self.server_cpu_started = cpu_of(self.server_pid)
        self.cpu_started = cpu_self()
        if self.profiler is not None:
            self.profiler.enable()
        self.started = time.perf_counter()
        self.recording = True

    def stop(self) -> None:
        self.recording = False
        elapsed = time.perf_counter() - self.started
        if self.profiler is not None:
            self.profiler.disable()
        cpu = cpu_self() - self.cpu_started
        server_cpu = cpu_of(self.server_pid)
        self.stopping = True
        count = len(self.latencies)
        if count == 0:
            raise LoadError("no call completed in the timed window")
        ordered = sorted(self.latencies)
        self.result = {
            "requests": count,
            "rate": count / elapsed,
            "p50_ms": statistics.median(ordered) * 1e3,
            "p99_ms": ordered[min(count - 1, int(count * 0.99))] * 1e3,
            "client_cpu_us": cpu / count * 1e6,
            "server_cpu_us": (
                (server_cpu - self.server_cpu_started) / count * 1e6
                if server_cpu is not None and self.server_cpu_started is not None
                else None
            ),
        }


async def caller(window: Window, index: int, call: Callable[[str], Awaitable[str]]) -> None:
    """Call back to back until the window stops; check every answer, time the counted ones."""
    clock = time.perf_counter
    n = 0
    while not window.stopping:
        text = f"w{index}-{n}"
        n += 1
        began = clock()
        answer = await call(text)
        ended = clock()
        if answer != text:
            raise LoadError(f"echo answered {answer!r} to {text!r}")
        if window.recording:
            window.latencies.append(ended - began)


# --- trimcp ------------------------------------------------------------------------------------


async def trimcp_throughput(job: dict[str, Any]) -> dict[str, Any]:
    import trio

    from trimcp.client import ProcessSpec, open_client_session, open_server_process

    spec = ProcessSpec(name="bench", command=sys.executable, args=(job["server"],))
    profiler = cProfile.Profile() if job.get("profile") else None
    out: dict[str, Any] = {}
    async with (
        open_server_process(spec) as stream,
        open_client_session(stream) as session,
    ):

        async def call(text: str) -> str:
            result = await session.call_tool("echo", {"text": text})
            return result.content[0]["text"]  # type: ignore[return-value]  # checked by caller

        for depth in job["depths"]:
            window = Window(server_pid=stream.pid, profiler=profiler)
            with trio.fail_after(job["warmup"] + job["duration"] + CALL_TIMEOUT):
                async with trio.open_nursery() as nursery:
                    for index in range(depth):
                        nursery.start_soon(caller, window, index, call)
                    await trio.sleep(job["warmup"])
                    window.start()
                    await trio.sleep(job["duration"])
                    window.stop()
            out[str(depth)] = window.result
    if profiler is not None:
        profiler.dump_stats(job["profile"])
    return {"depths": out}


async def trimcp_connect(job: dict[str, Any]) -> dict[str, Any]:
    import trio

    from trimcp.client import ConnectionManager, ServerConfig, connect_upstream
    from trimcp.supervision import open_supervisor

    servers = {
        f"s{i}": ServerConfig(
            name=f"s{i}", transport="stdio", command=sys.executable, args=(job["server"],)
        )
        for i in range(job["count"])
    }
    manager = ConnectionManager(connector=connect_upstream, name="bench-host")
    async with open_supervisor([manager.spec(servers)]):
        with trio.fail_after(120):
            began = time.perf_counter()
            statuses = await manager.connect_all()
            connected = time.perf_counter() - began
            bad = [(s.name, s.state, s.last_error) for s in statuses if not s.connected]
            if len(statuses) != job["count"] or bad:
                raise LoadError(f"not all connected: {bad!r}")
            if not all(manager.is_connected(name) for name in servers):
                raise LoadError("connect_all returned before every server was connected")
            tools = sum(s.tools for s in statuses)
            began = time.perf_counter()
            await manager.disconnect_all()
            disconnected = time.perf_counter() - began
            left = [name for name in servers if manager.is_connected(name)]
            if left:
                raise LoadError(f"still connected after disconnect_all: {left!r}")
    return {"connect_s": connected, "disconnect_s": disconnected, "tools": tools}


# --- the official SDK ------------------------------------------------------------------------


def _sdk_client(server: str) -> Client:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    # The server's stderr goes to the worker's (kept by bench/client.py for error messages).
    params = StdioServerParameters(command=sys.executable, args=[server])
    errlog = sys.stderr
    return Client(
        stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT, mode="legacy"
    )


async def sdk_throughput(job: dict[str, Any]) -> dict[str, Any]:
    import anyio
    import mcp_types as types

    out: dict[str, Any] = {}
    before = set(child_pids())
    async with _sdk_client(job["server"]) as client:
        spawned = [pid for pid in child_pids() if pid not in before]
        server_pid = spawned[0] if len(spawned) == 1 else None

        async def call(text: str) -> str:
            result = await client.call_tool("echo", {"text": text})
            block = result.content[0]
            return block.text if isinstance(block, types.TextContent) else repr(block)

        for depth in job["depths"]:
            window = Window(server_pid=server_pid)
            with anyio.fail_after(job["warmup"] + job["duration"] + CALL_TIMEOUT):
                async with anyio.create_task_group() as group:
                    for index in range(depth):
                        group.start_soon(caller, window, index, call)
                    await anyio.sleep(job["warmup"])
                    window.start()
                    await anyio.sleep(job["duration"])
                    window.stop()
            out[str(depth)] = window.result
    return {"depths": out}


async def sdk_connect(job: dict[str, Any]) -> dict[str, Any]:
    import contextlib

    import anyio

    count = job["count"]
    initialized: list[float] = []
    listed: list[float] = []
    tools = 0
    all_listed = anyio.Event()
    leave = anyio.Event()

    async def one(stack: contextlib.AsyncExitStack) -> None:
        nonlocal tools
        client = await stack.enter_async_context(_sdk_client(job["server"]))
        initialized.append(time.perf_counter())
        listing = await client.list_tools()
        tools += len(listing.tools)  # not `tools += len(await ...)`: that reads tools first
        listed.append(time.perf_counter())
        if len(listed) == count:
            all_listed.set()
        await leave.wait()

    async def hold() -> None:
        # Each client is entered and left in its own task (anyio cancel scopes must be left
        # in the task that entered them).
        async with contextlib.AsyncExitStack() as stack:
            await one(stack)

    with anyio.fail_after(120):
        began = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(hold)
            await all_listed.wait()
            ended_connect = time.perf_counter()
            leave.set()
        ended = time.perf_counter()
    return {
        "initialized_s": max(initialized) - began,
        "connect_s": max(listed) - began,
        "disconnect_s": ended - ended_connect,
        "tools": tools,
    }


# --- the floor: plain pipes, no MCP client library -----------------------------------------

RAW_HANDSHAKE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
)


# What the servers see, as with the SDK's default environment (trimcp's is sanitised
# likewise): not the bench's own (its PYTHONPATH and the like).
_SERVER_ENV = {
    key: os.environ[key]
    for key in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
    if key in os.environ
}


def _start_raw(server: str, count: int, procs: list[subprocess.Popen[bytes]]) -> None:
    """Start ``count`` servers into ``procs`` and write each its opening messages."""
    import subprocess

    for _ in range(count):
        proc = subprocess.Popen(
            [sys.executable, server],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            env=_SERVER_ENV,
            # Each in its own session, as trimcp and the SDK start theirs: with the kernel's
            # autogroup scheduling a session is a CPU-share group, so 20 servers in one
            # session would share one group's CPU on a busy machine.
            start_new_session=True,
        )
        procs.append(proc)
        assert proc.stdin is not None
        proc.stdin.write(RAW_HANDSHAKE)


def _await_listings(procs: list[subprocess.Popen[bytes]], deadline: float) -> None:
    """Wait until every server has answered ``tools/list`` (id 2) with its ``echo`` tool."""
    import selectors

    with selectors.DefaultSelector() as selector:
        buffers: dict[int, bytes] = {}
        for proc in procs:
            assert proc.stdout is not None
            buffers[proc.stdout.fileno()] = b""
            selector.register(proc.stdout.fileno(), selectors.EVENT_READ)
        waiting = set(buffers)
        while waiting:
            events = selector.select(max(0.0, deadline - time.perf_counter()))
            if not events:
                raise LoadError(f"{len(waiting)} servers did not answer tools/list")
            for key, _ in events:
                fd = int(key.fd)
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise LoadError("a server exited during its start")
                buffers[fd] += chunk
                if b'"id":2' in buffers[fd] and b'"echo"' in buffers[fd]:
                    waiting.discard(fd)
                    selector.unregister(fd)


def raw_connect(job: dict[str, Any]) -> dict[str, Any]:
    """Start ``count`` servers with ``subprocess``, write the handshake and a ``tools/list``
    up front, and wait (``selectors``) for every server's ``tools/list`` answer: the time the
    servers themselves need to start and answer, with next to no client."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        began = time.perf_counter()
        _start_raw(job["server"], job["count"], procs)
        _await_listings(procs, began + 120)
        connected = time.perf_counter() - began
        began = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in procs:
            proc.wait(timeout=30)
        disconnected = time.perf_counter() - began
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
    return {"connect_s": connected, "disconnect_s": disconnected, "tools": job["count"]}


# --- entry -----------------------------------------------------------------------------------


def run_trio(job: dict[str, Any]) -> dict[str, Any]:
    jobs = {"throughput": trimcp_throughput, "connect": trimcp_connect}
    return run_cancellable(jobs[job["kind"]], job)


def run_cancellable(
    run: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]], job: dict[str, Any]
) -> dict[str, Any]:
    """``trio.run(run, job)``, cancelled by SIGTERM (the parent stops a worker past its time)."""
    import trio

    async def main() -> dict[str, Any]:
        result: dict[str, Any] = {}
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                with trio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            result = await run(job)
            nursery.cancel_scope.cancel()
        return result

    return trio.run(main)


def job_main(
    run: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]], *, hard_exit: bool = False
) -> None:
    """A load worker's entry: the job is JSON in ``argv[1]``, the answer one JSON line.

    Any failure is answered as ``{"error": ...}`` (the parent reports it as a row error).
    ``hard_exit``: leave at once once answered, without waiting for stray threads.
    """
    job = json.loads(sys.argv[1])
    try:
        answer = run_cancellable(run, job)
    except Exception as exc:  # noqa: BLE001  (reported to the parent as a row error)
        answer = {"error": "; ".join(describe(exc))[:2000]}
    print(json.dumps(answer), flush=True)
    if hard_exit:
        os._exit(0)


def run_anyio(job: dict[str, Any]) -> dict[str, Any]:
    import anyio

    async def main() -> dict[str, Any]:
        result: dict[str, Any] = {}
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()

            group.start_soon(watch)
            jobs = {"throughput": sdk_throughput, "connect": sdk_connect}
            result = await jobs[job["kind"]](job)
            group.cancel_scope.cancel()
        return result

    return anyio.run(main, backend="asyncio")


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def describe(exc: BaseException) -> list[str]:
    """The leaf exceptions of ``exc`` (groups flattened), one ``Type: message`` each."""
    if isinstance(exc, BaseExceptionGroup):
        return [text for inner in exc.exceptions for text in describe(inner)]
    return [f"{type(exc).__name__}: {exc}"]


def main() -> None:
    job = json.loads(sys.argv[1])
    try:
        if job["client"] == "raw":
            signal.signal(signal.SIGTERM, _terminate)
            result = raw_connect(job)
        elif job["client"] == "trimcp":
            result = run_trio(job)
        else:
            result = run_anyio(job)
    except Exception as exc:  # noqa: BLE001  (reported to the parent as a row error)
        result = {"error": "; ".join(describe(exc))[:2000]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
