"""Client side: trimcp's MCP client against the official SDK's, and ``connect_all`` of 20 servers.

Run from the repository root::

    python bench/client.py                          # full run, about 5 minutes
    python bench/client.py --quick                  # smoke run, about 1 minute
    python bench/client.py --profile /tmp/client.prof   # also profile trimcp's client

Both clients talk to the same server, ``bench/servers/trimcp_mcpserver.py`` (trimcp's
``MCPServer`` with an ``echo`` tool, over stdio), which each launches as its own child.
Every measurement is a fresh worker process (``bench/_client_load.py``) that prints one JSON
line; this script only starts workers, one at a time, and reports.

1. ``tools/call`` throughput at 1 and 16 requests in flight. trimcp:
   ``open_server_process(ProcessSpec(...))`` + ``open_client_session(stream)``, then D trio
   tasks calling ``session.call_tool("echo", {"text": ...})`` back to back. SDK (mcp 2.3):
   ``Client(stdio_client(StdioServerParameters(...)), mode="legacy")``, D tasks in an anyio
   task group on asyncio calling ``client.call_tool``. Every answer must echo its own text.
   Per depth: a warm-up, then the calls completing in a timed window give req/s, p50/p99
   (call -> result), the client's CPU per request (``getrusage`` of the worker, which leaves
   its child server out) and the server's (``/proc/<pid>/stat``). One round runs both
   clients, in alternating order; ``--repeats`` rounds (default 5, ``--quick`` 3); tables
   show medians, a ratio is the median of the per-round ratios.
2. ``connect_all`` for 20 stdio servers: trimcp's ``ConnectionManager(connector=
   connect_upstream)`` under ``open_supervisor([manager.spec(servers)])``, timing
   ``connect_all()`` (every status must be ``connected``; each ``Connection`` also reads the
   server's catalog, here one ``tools/list``) and then ``disconnect_all()``. Baseline: the
   SDK entering 20 ``Client`` contexts concurrently in one task group, timed until all are
   initialized and until each has also listed its tools, then leaving them all. Floor: the
   20 servers started with ``subprocess`` and driven over plain pipes (handshake and
   ``tools/list`` written up front), i.e. the servers' own start-up, which no client can
   beat. Rounds rotate the order; medians.

Only stdio and 127.0.0.1 are involved. Every worker runs in its own session with a time
limit; on the way out (also on errors, Ctrl-C and SIGTERM) each live worker is sent SIGTERM
(it stops its servers), then SIGKILL; and, as this script is made a child subreaper (Linux),
any server a killed worker left behind is re-parented here and killed too.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _client_report import cprofile_summary
from _http_report import print_table

if TYPE_CHECKING:
    from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
WORKER = BENCH / "_client_load.py"
SERVER = BENCH / "servers" / "trimcp_mcpserver.py"
DEPTHS = (1, 16)
CLIENTS = ("trimcp", "sdk")
LABELS = {
    "trimcp": "trimcp ClientSession (trio)",
    "sdk": "official SDK Client (asyncio)",
    "raw": "floor: subprocess + plain pipes",
}
CONNECT_LABELS = {
    "raw": "floor: subprocess + plain pipes",
    "trimcp": "trimcp ConnectionManager.connect_all",
    "sdk": "official SDK, 20 Clients in a task group",
}
PR_SET_CHILD_SUBREAPER = 36


class BenchError(Exception):
    """A worker failed, answered wrongly or ran out of time."""


# --- processes -------------------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``), so none escapes."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return False


def own_children() -> list[int]:
    pid = os.getpid()
    children: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as file:
                children.extend(int(p) for p in file.read().split())
    return children


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the worker stops its servers), a grace, then SIGKILL."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=8)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
    _LIVE.discard(proc)


def kill_all() -> None:
    for proc in list(_LIVE):
        stop_worker(proc)
    # Servers of a worker that died are re-parented here (subreaper): kill and reap them.
    for pid in own_children():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def run_worker(job: dict[str, Any], limit: float) -> dict[str, Any]:
    """Run one job in a fresh worker; return its JSON answer (``BenchError`` on failure)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with tempfile.TemporaryFile() as stderr:
        # -P: no script directory on sys.path (bench/http.py would shadow the stdlib's http).
        proc = subprocess.Popen(
            [sys.executable, "-P", str(WORKER), json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        _LIVE.add(proc)
        try:
            out, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{job['client']} {job['kind']}: no answer in {limit:.0f} s") from exc
        finally:
            stop_worker(proc)
        stderr.seek(0)
        tail = stderr.read().decode(errors="replace").strip()[-600:]
    lines = out.decode(errors="replace").strip().splitlines()
    if not lines:
        raise BenchError(
            f"{job['client']} {job['kind']}: no output (exit {proc.returncode}); {tail}"
        )
    answer: dict[str, Any] = json.loads(lines[-1])
    if "error" in answer:
        raise BenchError(f"{job['client']} {job['kind']}: {answer['error']}")
    return answer


# --- configuration and results ---------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    repeats: int
    warmup: float
    duration: float
    connect_repeats: int
    servers: int
    profile: str | None


@dataclass
class Throughput:
    client: str
    runs: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: {d: [] for d in DEPTHS})
    error: str | None = None

    def median(self, depth: int, key: str) -> float | None:
        values = [r[key] for r in self.runs[depth] if r.get(key) is not None]
        return statistics.median(values) if values else None

    def ok(self, depth: int) -> bool:
        return self.error is None and bool(self.runs[depth])


@dataclass
class Connect:
    client: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def median(self, key: str) -> float | None:
        values = [r[key] for r in self.runs if r.get(key) is not None]
        return statistics.median(values) if values else None


# --- the runs ----------------------------------------------------------------------------------


def throughput_rounds(config: Config) -> dict[str, Throughput]:
    results = {client: Throughput(client) for client in CLIENTS}
    limit = len(DEPTHS) * (config.warmup + config.duration) + 90
    for round_no in range(config.repeats):
        order = CLIENTS if round_no % 2 == 0 else tuple(reversed(CLIENTS))
        for client in order:
            result = results[client]
            if result.error is not None:
                continue
            job = {
                "kind": "throughput",
                "client": client,
                "server": str(SERVER),
                "depths": list(DEPTHS),
                "warmup": config.warmup,
                "duration": config.duration,
            }
            began = time.perf_counter()
            try:
                answer = run_worker(job, limit)
            except BenchError as exc:
                result.error = str(exc)
            else:
                for depth in DEPTHS:
                    result.runs[depth].append(answer["depths"][str(depth)])
            rates = "  ".join(
                f"D={d}: {result.runs[d][-1]['rate']:,.0f}/s" for d in DEPTHS if result.ok(d)
            )
            print(
                f"  round {round_no + 1}/{config.repeats}  {LABELS[client]}: "
                f"{'error' if result.error else rates} ({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    return results


def connect_rounds(config: Config) -> dict[str, Connect]:
    keys = ("raw", "trimcp", "sdk")
    results = {key: Connect(key) for key in keys}
    for round_no in range(config.connect_repeats):
        shift = round_no % len(keys)
        for client in keys[shift:] + keys[:shift]:
            result = results[client]
            if result.error is not None:
                continue
            job = {"kind": "connect", "client": client, "server": str(SERVER)}
            job["count"] = config.servers
            began = time.perf_counter()
            try:
                answer = run_worker(job, 240)
            except BenchError as exc:
                result.error = str(exc)
                status = "error"
            else:
                if answer["tools"] != config.servers:
                    result.error = f"{answer['tools']} tools listed, {config.servers} expected"
                result.runs.append(answer)
                status = (
                    f"connect {answer['connect_s']:.2f} s, "
                    f"disconnect {answer['disconnect_s']:.2f} s"
                )
            print(
                f"  round {round_no + 1}/{config.connect_repeats}  {CONNECT_LABELS[client]}: "
                f"{status} ({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    return results


# --- reporting ---------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_throughput(results: dict[str, Throughput]) -> None:
    rows = []
    for client, result in results.items():
        for depth in DEPTHS:
            if not result.ok(depth):
                rows.append([LABELS[client], str(depth), "error", "-", "-", "-", "-", "-"])
                continue
            rates = [r["rate"] for r in result.runs[depth]]
            rows.append(
                [
                    LABELS[client],
                    str(depth),
                    _fmt(result.median(depth, "rate"), ",.0f"),
                    f"{min(rates):,.0f}-{max(rates):,.0f}",
                    _fmt(result.median(depth, "p50_ms"), ".3f"),
                    _fmt(result.median(depth, "p99_ms"), ".3f"),
                    _fmt(result.median(depth, "client_cpu_us"), ",.0f"),
                    _fmt(result.median(depth, "server_cpu_us"), ",.0f"),
                ]
            )
    print_table(
        [
            "client",
            "in flight",
            "req/s",
            "range",
            "p50 ms",
            "p99 ms",
            "client µs/req",
            "server µs/req",
        ],
        rows,
    )
    print()
    ours, base = results["trimcp"], results["sdk"]
    rows = []
    for depth in DEPTHS:
        if not (ours.ok(depth) and base.ok(depth)):
            rows.append([f"trimcp / SDK, {depth} in flight", "-", "-", "-", "-"])
            continue
        pairs = list(zip(ours.runs[depth], base.runs[depth], strict=False))
        ratios = [o["rate"] / b["rate"] for o, b in pairs]
        cpu = [b["client_cpu_us"] / o["client_cpu_us"] for o, b in pairs]
        rows.append(
            [
                f"trimcp / SDK, {depth} in flight",
                f"{statistics.median(ratios):.2f}x",
                f"{min(ratios):.2f}-{max(ratios):.2f}",
                f"{statistics.median(cpu):.2f}x",
                f"{min(cpu):.2f}-{max(cpu):.2f}",
            ]
        )
    print_table(["ratio", "req/s", "range", "client CPU (SDK/trimcp)", "range"], rows)


def print_connect(results: dict[str, Connect], servers: int) -> None:
    rows = []
    for client, result in results.items():
        if not result.runs:
            rows.append([CONNECT_LABELS[client], "error", "-", "-", "-"])
            continue
        times = [r["connect_s"] for r in result.runs]
        rows.append(
            [
                CONNECT_LABELS[client],
                _fmt(result.median("connect_s"), ".2f"),
                f"{min(times):.2f}-{max(times):.2f}",
                _fmt(result.median("initialized_s"), ".2f"),
                _fmt(result.median("disconnect_s"), ".2f"),
            ]
        )
    print_table(
        [
            f"{servers} stdio servers",
            "connected s",
            "range",
            "initialized s",
            "disconnect s",
        ],
        rows,
    )
    print()
    ours, base, floor = results["trimcp"], results["sdk"], results["raw"]
    rows = []
    for label, a, b, key in [
        ("trimcp / SDK, connect (time ratio, < 1 is faster)", ours, base, "connect_s"),
        ("trimcp / SDK, disconnect", ours, base, "disconnect_s"),
        ("trimcp / floor, connect", ours, floor, "connect_s"),
        ("SDK / floor, connect", base, floor, "connect_s"),
    ]:
        pairs = list(zip(a.runs, b.runs, strict=False))
        if not pairs:
            rows.append([label, "-", "-"])
            continue
        ratios = [x[key] / y[key] for x, y in pairs]
        rows.append(
            [label, f"{statistics.median(ratios):.2f}", f"{min(ratios):.2f}-{max(ratios):.2f}"]
        )
    print_table(["ratio (seconds)", "median", "range"], rows)


def profile_run(config: Config) -> None:
    job = {
        "kind": "throughput",
        "client": "trimcp",
        "server": str(SERVER),
        "depths": list(DEPTHS),
        "warmup": config.warmup,
        "duration": config.duration,
        "profile": config.profile,
    }
    answer = run_worker(job, len(DEPTHS) * (config.warmup + config.duration) + 90)
    requests = sum(answer["depths"][str(d)]["requests"] for d in DEPTHS)
    rates = ", ".join(f"{answer['depths'][str(d)]['rate']:,.0f}/s at {d}" for d in DEPTHS)
    assert config.profile is not None
    cprofile_summary(config.profile, f"windows at {DEPTHS} in flight ({rates}, profiled)", requests)


def print_header(config: Config, quick: bool) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"client-side benchmark ({'--quick' if quick else 'full run'}): tools/call at "
        f"{' and '.join(map(str, DEPTHS))} in flight, {config.repeats} rounds of "
        f"{config.warmup:g} s warm-up + {config.duration:g} s window per depth; connect_all of "
        f"{config.servers} servers, {config.connect_repeats} rounds"
    )
    print(
        f"python {platform.python_version()}  trio {_version('trio')}  "
        f"mcp {_version('mcp')}  anyio {_version('anyio')}  server: {SERVER.name}"
    )
    print(f"cpus: os.cpu_count()={os.cpu_count()}  usable={affinity}  load average: {load}")
    print(f"{platform.platform()}")
    print()


def _version(name: str) -> str:
    # Not imported: this directory is sys.path[0], where bench/http.py shadows the stdlib's
    # http, which the SDK needs.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def main(config: Config, quick: bool, skip: set[str]) -> int:
    print_header(config, quick)
    began = time.perf_counter()
    errors: list[str] = []
    if "throughput" not in skip:
        print("tools/call throughput (fresh worker + server per run)")
        throughput = throughput_rounds(config)
        print()
        print_throughput(throughput)
        print()
        errors += [f"{LABELS[k]}: {r.error}" for k, r in throughput.items() if r.error]
    if "connect" not in skip:
        print(f"connect_all: {config.servers} stdio servers (fresh worker per run)")
        connect = connect_rounds(config)
        print()
        print_connect(connect, config.servers)
        print()
        errors += [f"{CONNECT_LABELS[k]}: {r.error}" for k, r in connect.items() if r.error]
    if config.profile:
        try:
            profile_run(config)
        except BenchError as exc:
            errors.append(f"profile run: {exc}")
    for error in errors:
        print(f"error: {error}")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"total wall time: {time.perf_counter() - began:.0f} s; load average now: {load}")
    return 1 if errors else 0


def parse_args(argv: list[str] | None = None) -> tuple[Config, bool, set[str]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run, about 1 minute")
    parser.add_argument("--repeats", type=int, help="throughput rounds (default 5; quick 3)")
    parser.add_argument(
        "--connect-repeats", type=int, help="connect_all rounds (default 3; quick 1)"
    )
    parser.add_argument(
        "--duration", type=float, help="timed window per depth, s (default 5; quick 1.5)"
    )
    parser.add_argument(
        "--servers", type=int, default=20, help="servers for connect_all (default 20)"
    )
    parser.add_argument(
        "--profile", metavar="PATH", help="also profile trimcp's client (cProfile stats to PATH)"
    )
    parser.add_argument(
        "--skip",
        action="append",
        choices=["throughput", "connect"],
        default=[],
        help="leave a part out",
    )
    args = parser.parse_args(argv)
    duration = args.duration or (1.5 if args.quick else 5.0)
    config = Config(
        repeats=max(1, args.repeats or (3 if args.quick else 5)),
        warmup=0.5 if args.quick else 2.0,
        duration=duration,
        connect_repeats=max(1, args.connect_repeats or (1 if args.quick else 3)),
        servers=max(1, args.servers),
        profile=args.profile,
    )
    return config, args.quick, set(args.skip)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    become_subreaper()
    cfg, is_quick, skipped = parse_args()
    try:
        code = main(cfg, is_quick, skipped)
    except KeyboardInterrupt:
        code = 130
    finally:
        kill_all()
    sys.exit(code)
