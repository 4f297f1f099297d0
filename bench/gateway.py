"""The gateway: tools/call through ``trimcp serve`` against the upstream direct and FastMCP's proxy.

Run from the repository root::

    python bench/gateway.py                 # full run, 3 rounds, about 6 minutes
    python bench/gateway.py --quick         # smoke run, 1 round, about 45 seconds
    python bench/gateway.py --only direct --only gateway

One upstream, ``bench/servers/trimcp_mcpserver.py`` (trimcp's ``MCPServer`` with an ``echo``
tool, over stdio), reached three ways in the same run by the same client with the same load:

* **direct**: the client launches the upstream and calls it over its pipes;
* **gateway**: ``python -m trimcp serve --config <tmp>/sys_config.toml`` with ``[http]`` on
  127.0.0.1 and a free port, ``[skills] enabled = false`` and the upstream as
  ``[upstreams.bench]``; the client calls ``bench__echo`` over Streamable HTTP at ``/mcp``.
  Run in an empty folder with ``XDG_CONFIG_HOME`` pointing at an empty one, so no user or
  project ``mcpServers`` file adds servers. Skipped, with a note, while ``trimcp.gateway``
  does not exist;
* **fastmcp**: FastMCP's proxy (``create_proxy`` over the same upstream written as an
  ``mcpServers`` file, ``bench/servers/fastmcp_proxy.py``) over Streamable HTTP. Skipped, with
  a note, when ``fastmcp`` is not installed (``pip install 'trimcp[bench]'``).

And, for information, **http**: the same kind of tool served by trimcp's ``serve_http`` itself
(``bench/servers/trimcp_http_server.py``, no upstream, no hop): what the HTTP transport alone
costs this client, so that gateway - http is the hop (routing plus the stdio upstream).

Two clients run every row, each the same program for every row, so that what differs
between rows is only what stands between the client and the upstream:

* **raw** (``bench/_gateway_raw.py``): C keep-alive HTTP/1.1 connections with a session
  each (request heads built by h11 once, answers read by a small parser and checked with
  byte searches), or C calls in flight on the upstream's pipes for direct. It costs about
  0.2 ms of CPU per call on these machines, so the proxies, not the client, set the pace:
  the targets are read on its rows.
* **session** (``bench/_gateway_load.py``): trimcp's own ``ClientSession`` (stdio for
  direct, ``open_http_client_stream`` for the HTTP rows), what an application using
  trimcp.client gets. Its HTTP side (httpx on trio, SSE answers) costs about ten times its
  stdio side per call (the "client µs/req" column): on a small machine its HTTP rows are
  bound by the client as much as by the server, which the "info: serve_http" row shows.

For each number of calls in flight C (``--concurrency``, default 1 and 16): ``--warmup`` calls,
then exactly N calls (``--requests``; FastMCP's row ``--fastmcp-requests``, as it is two orders
of magnitude slower), every answer checked against its own text. Printed per row: req/s,
p50/p99 latency (call -> result), and CPU per request of the client, the proxy and the
upstream (``/proc/<pid>/stat``). Rounds (``--repeats``) rotate the order; tables show
medians, a ratio is the median of the per-round ratios.

Targets (issue 13): gateway throughput >= 0.6x direct and >= 3x FastMCP's proxy, read at the
highest C (a throughput figure); p50 added latency (gateway p50 - direct p50) <= 0.3 ms, read
at C = 1 (unloaded latency). The other C are printed for information.

Only 127.0.0.1. Every job has a time limit (``--time-limit``). Every process started here is
stopped by its PID on the way out (also on errors, Ctrl-C and SIGTERM): a proxy gets its
polite cue (SIGTERM for ``trimcp serve``, stdin closed for the FastMCP script), then SIGKILL;
this script is a child subreaper (Linux), so an upstream a killed proxy left behind is
re-parented here and killed by its PID too.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import json
import os
import platform
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from _http_report import print_table

if TYPE_CHECKING:
    from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
WORKERS = {"raw": BENCH / "_gateway_raw.py", "session": BENCH / "_gateway_load.py"}
CLIENTS = tuple(WORKERS)
CLIENT_LABELS = {
    "raw": "raw client (bench/_gateway_raw.py: h11 heads, byte checks; ~0.2 ms CPU per call)",
    "session": "trimcp ClientSession (bench/_gateway_load.py: trimcp.client; ~2 ms CPU per "
    "call over HTTP)",
}
UPSTREAM = BENCH / "servers" / "trimcp_mcpserver.py"
FASTMCP_PROXY = BENCH / "servers" / "fastmcp_proxy.py"
HTTP_SERVER = BENCH / "servers" / "trimcp_http_server.py"
UPSTREAM_NAME = "bench"
START_TIMEOUT = 60.0
PR_SET_CHILD_SUBREAPER = 36

MODES = ("direct", "http", "gateway", "fastmcp")
LABELS = {
    "direct": "direct: client -> stdio upstream",
    "http": "info: trimcp serve_http, no hop",
    "gateway": "trimcp serve gateway (HTTP -> stdio)",
    "fastmcp": "FastMCP proxy (HTTP -> stdio)",
}

# Targets from issue 13.
TARGET_VS_DIRECT = 0.6
TARGET_ADDED_P50_MS = 0.3
TARGET_VS_FASTMCP = 3.0


class BenchError(Exception):
    """A proxy or the worker failed, answered wrongly or ran out of time."""


# --- processes -------------------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``), so none escapes."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return False


def own_children() -> list[int]:
    pid = os.getpid()
    children: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as file:
                children.extend(int(p) for p in file.read().split())
    return children


def _reap(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def stop(proc: subprocess.Popen[bytes], polite: str = "sigterm", grace: float = 8.0) -> None:
    """Stop one process we started: its polite cue, a grace period, then SIGKILL."""
    if proc.poll() is None:
        if polite == "stdin" and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        else:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        if not _reap(proc, grace):
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            if not _reap(proc, 3):
                proc.kill()
                _reap(proc, 5)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    _LIVE.discard(proc)


def sweep_orphans() -> list[int]:
    """Kill and reap whatever was re-parented here (an upstream a killed proxy left)."""
    live = {proc.pid for proc in _LIVE}
    killed = []
    for pid in own_children():
        if pid in live:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return killed


def kill_all() -> None:
    for proc in list(_LIVE):
        stop(proc, grace=3)
    sweep_orphans()


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(proc: subprocess.Popen[bytes], port: int, what: str, err: IO[bytes]) -> None:
    """Return once 127.0.0.1:``port`` accepts connections; fail if ``proc`` exits first."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"{what} exited with status {proc.returncode}{tail(err)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise BenchError(f"{what} did not listen on port {port} in {START_TIMEOUT:g} s{tail(err)}")


def tail(err: IO[bytes], size: int = 800) -> str:
    err.flush()
    err.seek(0)
    text = err.read().decode(errors="replace").strip()
    return f"; stderr: ...{text[-size:]}" if text else ""


def run_worker(job: dict[str, Any], limit: float, client: str) -> dict[str, Any]:
    """Run one job in a fresh worker; return its JSON answer (``BenchError`` on failure)."""
    with tempfile.TemporaryFile() as stderr:
        # -P: no script directory on sys.path (bench/http.py would shadow the stdlib's http).
        proc = subprocess.Popen(
            [sys.executable, "-P", str(WORKERS[client]), json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=ROOT,
            env=_env(),
            start_new_session=True,
        )
        _LIVE.add(proc)
        try:
            out, _ = proc.communicate(timeout=limit + 15)
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{job['mode']}: the worker gave no answer in {limit:.0f} s") from exc
        finally:
            stop(proc)
        why = tail(stderr)
    lines = out.decode(errors="replace").strip().splitlines()
    if not lines:
        raise BenchError(f"the worker said nothing (exit {proc.returncode}){why}")
    answer: dict[str, Any] = json.loads(lines[-1])
    if "error" in answer:
        raise BenchError(f"worker: {answer['error']}")
    return answer


# --- the three ways ----------------------------------------------------------------------------


def gateway_available() -> str | None:
    """None when ``trimcp serve`` has a gateway; else why the row is skipped."""
    if importlib.util.find_spec("trimcp.gateway") is None:
        return "trimcp.gateway does not exist yet (issue 13's gateway has not landed): pending"
    return None


def fastmcp_available() -> str | None:
    if importlib.util.find_spec("fastmcp") is None:
        return "fastmcp is not installed (pip install 'trimcp[bench]')"
    return None


def sys_config_text(port: int) -> str:
    """The gateway's sys_config.toml: a listener, no built-in tools, one stdio upstream."""
    return (
        "# Written by bench/gateway.py.\n"
        "[application]\nstop_timeout = 5.0\n\n"
        f'[http]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\n\n'
        "[skills]\nenabled = false\n\n"
        f"[upstreams.{UPSTREAM_NAME}]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(UPSTREAM))}]\n"
    )


def mcp_json_text() -> str:
    """The same upstream as an ``mcpServers`` file, for FastMCP."""
    server = {"command": sys.executable, "args": [str(UPSTREAM)]}
    return json.dumps({"mcpServers": {UPSTREAM_NAME: server}}, indent=2)


@contextlib.contextmanager
def proxy(mode: str, workdir: Path) -> Any:  # noqa: ANN401  (a generator context manager)
    """Start the gateway or FastMCP's proxy; yield (url, pid); stop it (and its upstream)."""
    err = tempfile.TemporaryFile()  # noqa: SIM115  (closed below)
    xdg = workdir / "xdg"
    xdg.mkdir(exist_ok=True)
    port = 0
    if mode == "gateway":
        port = free_port()
        config = workdir / "sys_config.toml"
        config.write_text(sys_config_text(port))
        argv = [sys.executable, "-m", "trimcp", "serve", "--config", str(config)]
        polite = "sigterm"
    elif mode == "fastmcp":
        config = workdir / "mcp.json"
        config.write_text(mcp_json_text())
        argv = [sys.executable, "-P", str(FASTMCP_PROXY), str(config)]
        polite = "stdin"
    else:
        argv = [sys.executable, "-P", str(HTTP_SERVER)]
        polite = "stdin"
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL if mode == "gateway" else subprocess.PIPE,
        stderr=err,
        cwd=workdir,  # no project ./.mcp.json
        env=_env({"XDG_CONFIG_HOME": str(xdg)}),  # no user mcp.json
        start_new_session=True,
    )
    _LIVE.add(proc)
    try:
        if mode != "gateway":
            port = read_port(proc, err, LABELS[mode])
        wait_listening(proc, port, LABELS[mode], err)
        try:
            yield f"http://127.0.0.1:{port}/mcp", proc.pid
        except BenchError as exc:
            raise BenchError(f"{exc}{tail(err)}") from None
        if proc.poll() is not None:
            raise BenchError(f"{LABELS[mode]} exited during the run{tail(err)}")
    finally:
        stop(proc, polite)
        left = sweep_orphans()
        err.close()
        if left:
            print(f"    note: {LABELS[mode]} left {len(left)} process(es) behind; killed {left}")


def read_port(proc: subprocess.Popen[bytes], err: IO[bytes], what: str) -> int:
    """The ``PORT <n>`` line a bench server prints on stdout once it listens."""
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + START_TIMEOUT
    fd = proc.stdout.fileno()
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise BenchError(f"{what} did not tell its port{tail(err)}")
        chunk = os.read(fd, 1)
        if not chunk:
            raise BenchError(f"{what} exited at start{tail(err)}")
        line += chunk
    text = line.decode().strip()
    if not text.startswith("PORT "):
        raise BenchError(f"{what} said {text!r} instead of its port")
    return int(text.split()[1])


# --- configuration and results -----------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    quick: bool
    repeats: int
    requests: int
    fastmcp_requests: int
    warmup: int
    concurrency: tuple[int, ...]
    time_limit: float
    modes: tuple[str, ...]
    clients: tuple[str, ...]


@dataclass
class Row:
    mode: str
    client: str
    runs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None

    def ok(self, conc: int) -> bool:
        return self.error is None and self.skipped is None and bool(self.runs.get(conc))

    def median(self, conc: int, key: str) -> float | None:
        values = [r[key] for r in self.runs.get(conc, []) if r.get(key) is not None]
        return statistics.median(values) if values else None


def job_for(mode: str, config: Config) -> dict[str, Any]:
    requests = config.fastmcp_requests if mode == "fastmcp" else config.requests
    return {
        "mode": "stdio" if mode == "direct" else "http",
        "concurrency": list(config.concurrency),
        "requests": requests,
        "warmup": min(config.warmup, requests),
        "time_limit": config.time_limit,
        "upstream_marker": UPSTREAM.name,
    }


def one_run(mode: str, client: str, config: Config) -> dict[str, Any]:
    job = job_for(mode, config)
    if mode == "direct":
        job["server"] = str(UPSTREAM)
        return run_worker(job, config.time_limit, client)
    with (
        tempfile.TemporaryDirectory(prefix="trimcp-bench-gw-") as tmp,
        proxy(mode, Path(tmp)) as (
            url,
            pid,
        ),
    ):
        job["url"] = url
        # serve_http has no upstream: its own CPU is the server's, shown as the upstream's.
        job["watch"] = {"upstream" if mode == "http" else "proxy": pid}
        return run_worker(job, config.time_limit, client)


def round_status(row: Row, answer: dict[str, Any], config: Config) -> str:
    parts = []
    for conc in config.concurrency:
        run = answer["concurrency"][str(conc)]
        row.runs.setdefault(conc, []).append(run)
        parts.append(f"C={conc}: {run['rate']:,.0f}/s p50 {run['p50_ms']:.2f} ms")
    return "  ".join(parts) + f"  (tool {answer['tool']})"


def run_rounds(config: Config) -> dict[str, dict[str, Row]]:
    """Every mode with every client, ``repeats`` times; the order rotates between rounds."""
    results = {c: {m: Row(m, c) for m in config.modes} for c in config.clients}
    checks = {"gateway": gateway_available, "fastmcp": fastmcp_available}
    skipped = {m: checks[m]() if m in checks else None for m in config.modes}
    for mode, why in skipped.items():
        if why:
            print(f"  skipping {LABELS[mode]}: {why}")
        for rows in results.values():
            rows[mode].skipped = why
    runs = [(m, c) for m in config.modes if skipped[m] is None for c in config.clients]
    for round_no in range(config.repeats):
        shift = round_no % max(1, len(runs))
        for mode, client in runs[shift:] + runs[:shift]:
            row = results[client][mode]
            if row.error is not None:
                continue
            began = time.perf_counter()
            try:
                status = round_status(row, one_run(mode, client, config), config)
            except BenchError as exc:
                row.error = str(exc)
                status = f"error: {row.error[:300]}"
            print(
                f"  round {round_no + 1}/{config.repeats}  {LABELS[mode]} [{client}]: {status} "
                f"({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    return results


# --- reporting ---------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_rows(rows: dict[str, Row], config: Config) -> None:
    table = []
    for mode, row in rows.items():
        for conc in config.concurrency:
            if not row.ok(conc):
                why = "skipped" if row.skipped else "error"
                table.append([LABELS[mode], str(conc), why, "-", "-", "-", "-", "-", "-", "-"])
                continue
            rates = [r["rate"] for r in row.runs[conc]]
            table.append(
                [
                    LABELS[mode],
                    str(conc),
                    f"{row.runs[conc][0]['requests']:,}",
                    _fmt(row.median(conc, "rate"), ",.0f"),
                    f"{min(rates):,.0f}-{max(rates):,.0f}",
                    _fmt(row.median(conc, "p50_ms"), ".3f"),
                    _fmt(row.median(conc, "p99_ms"), ".3f"),
                    _fmt(row.median(conc, "client_cpu_us"), ",.0f"),
                    _fmt(row.median(conc, "proxy_cpu_us"), ",.0f"),
                    _fmt(row.median(conc, "upstream_cpu_us"), ",.0f"),
                ]
            )
    headers = ["path", "in flight", "N", "req/s", "range", "p50 ms", "p99 ms"]
    print_table([*headers, "client µs/req", "proxy µs/req", "upstream µs/req"], table)


def _paired(a: Row, b: Row, conc: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    if not (a.ok(conc) and b.ok(conc)):
        return []
    return list(zip(a.runs[conc], b.runs[conc], strict=False))


def rate_ratio(
    rows: dict[str, Row], ours: str, base: str, conc: int, target: float | None
) -> list[str]:
    label = f"{ours} / {base} req/s, C={conc}"
    target_text = f">= {target:g}x" if target is not None else "(info)"
    pairs = _paired(rows[ours], rows[base], conc) if ours in rows and base in rows else []
    if not pairs:
        return [label, "-", "-", target_text, "pending" if target is not None else ""]
    ratios = [o["rate"] / b["rate"] for o, b in pairs]
    ratio = statistics.median(ratios)
    verdict = "" if target is None else ("PASS" if ratio >= target else "MISS")
    return [label, f"{ratio:.2f}x", f"{min(ratios):.2f}-{max(ratios):.2f}", target_text, verdict]


def added_latency(rows: dict[str, Row], ours: str, conc: int, target: float | None) -> list[str]:
    label = f"{ours} p50 - direct p50, C={conc}"
    target_text = f"<= {target:g} ms" if target is not None else "(info)"
    pairs = _paired(rows[ours], rows["direct"], conc) if ours in rows and "direct" in rows else []
    if not pairs:
        return [label, "-", "-", target_text, "pending" if target is not None else ""]
    added = [o["p50_ms"] - d["p50_ms"] for o, d in pairs]
    value = statistics.median(added)
    verdict = "" if target is None else ("PASS" if value <= target else "MISS")
    return [label, f"{value:+.3f} ms", f"{min(added):+.3f}-{max(added):+.3f}", target_text, verdict]


def print_ratios(rows: dict[str, Row], config: Config) -> None:
    top, low = max(config.concurrency), min(config.concurrency)
    cs = config.concurrency
    table = [
        *(
            rate_ratio(rows, "gateway", "direct", c, TARGET_VS_DIRECT if c == top else None)
            for c in cs
        ),
        *(
            rate_ratio(rows, "gateway", "fastmcp", c, TARGET_VS_FASTMCP if c == top else None)
            for c in cs
        ),
        *(rate_ratio(rows, "fastmcp", "direct", c, None) for c in cs),
        *(rate_ratio(rows, "gateway", "http", c, None) for c in cs),
        *(added_latency(rows, "gateway", c, TARGET_ADDED_P50_MS if c == low else None) for c in cs),
        *(added_latency(rows, "http", c, None) for c in cs),
        *(added_latency(rows, "fastmcp", c, None) for c in cs),
    ]
    print_table(["ratio", "median", "range (per round)", "target", "verdict"], table)


def print_header(config: Config) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    mode = "--quick" if config.quick else "full run"
    print(
        f"Gateway benchmark ({mode}; {config.repeats} round(s) of fresh processes; "
        f"N = {config.requests:,} calls per row and C (FastMCP {config.fastmcp_requests:,}) "
        f"after {config.warmup:,} warm-up calls; C = {', '.join(map(str, config.concurrency))})"
    )
    print(f"python {platform.python_version()}  {platform.platform()}")
    versions = []
    for name in ("fastmcp", "mcp"):
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            versions.append(f"{name} {version(name)}")
    if versions:
        print("  ".join(versions))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"cpus: os.cpu_count()={os.cpu_count()}  usable={affinity}  load average: {load}")
    for client in config.clients:
        print(f"client {client}: {CLIENT_LABELS[client]}")
    print()


def main(config: Config) -> int:
    print_header(config)
    began = time.perf_counter()
    print("tools/call echo, one stdio upstream")
    results = run_rounds(config)
    failed = False
    for client, rows in results.items():
        print()
        print(f"== client: {CLIENT_LABELS[client]}")
        print_rows(rows, config)
        print()
        print_ratios(rows, config)
        for mode, row in rows.items():
            if row.error:
                print(f"note: {LABELS[mode]} [{client}]: {row.error}")
                failed = True
            elif row.skipped:
                print(f"note: {LABELS[mode]} [{client}]: skipped: {row.skipped}")
    print()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"total wall time: {time.perf_counter() - began:.0f} s; load average now: {load}")
    return 1 if failed else 0


def parse_args(argv: list[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, fewer calls")
    parser.add_argument("--repeats", type=int, help="rounds (default 3; quick 1)")
    parser.add_argument("--requests", type=int, help="timed calls per row and C (default 3,000)")
    parser.add_argument(
        "--fastmcp-requests", type=int, help="timed calls for FastMCP's row (default 300)"
    )
    parser.add_argument("--warmup", type=int, help="warm-up calls before each C (default 300)")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", help="calls in flight (default: 1 16)"
    )
    parser.add_argument(
        "--time-limit", type=float, default=180.0, help="seconds per job (default 180)"
    )
    parser.add_argument(
        "--only", action="append", choices=MODES, help="run only this path (repeatable)"
    )
    parser.add_argument(
        "--client",
        action="append",
        choices=CLIENTS,
        help="run only with this client (repeatable; default: both)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    requests = max(1, args.requests or (500 if quick else 3_000))
    conc = tuple(sorted(set(args.concurrency or (1, 16))))
    if min(conc) < 1:
        parser.error("--concurrency must be >= 1")
    return Config(
        quick=quick,
        repeats=max(1, args.repeats or (1 if quick else 3)),
        requests=requests,
        fastmcp_requests=max(1, args.fastmcp_requests or (100 if quick else 300)),
        warmup=max(0, args.warmup if args.warmup is not None else (50 if quick else 300)),
        concurrency=conc,
        time_limit=args.time_limit,
        modes=tuple(m for m in MODES if m in (args.only or MODES)),
        clients=tuple(c for c in CLIENTS if c in (args.client or CLIENTS)),
    )


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    become_subreaper()
    cfg = parse_args()
    try:
        code = main(cfg)
    finally:
        kill_all()
    sys.exit(code)
