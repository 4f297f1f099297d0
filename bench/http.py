"""Streamable HTTP: tools/call throughput, memory per idle session, SSE progress rate.

Run from the repository root::

    python bench/http.py                 # full run, about 7 minutes
    python bench/http.py --quick         # smoke run, about 1.5 minutes
    python bench/http.py --profile /tmp/trimcp-http.prof   # also profile trimcp (16 conns)

Servers (``bench/servers/``), each a fresh subprocess on 127.0.0.1 and a free port, telling
its port on stdout and exiting when its stdin closes:

* ``bare_h11.py``: trio + h11, no ASGI: the raw floor, and the load generator's check;
* ``bare_hypercorn.py``: hypercorn's trio worker and a do-nothing ASGI app, configured as
  trimcp's listener configures hypercorn: the floor under trimcp (its answer has a
  ``Content-Length``; ``--chunked``, an info row, shows what chunked framing adds);
* ``trimcp_http_server.py``: trimcp ``MCPServer.serve_http`` (SSE answers, the default;
  and ``--json-response``: ``HttpOptions(json_response=True)``);
* ``sdk_http_server.py``: the official SDK (mcp 2.3.0) low-level ``Server`` and its
  ``streamable_http_app`` under uvicorn (SSE answers, the default; and ``--json-response``).

The load generator is a separate process (``bench/_http_load.py``: trio, raw sockets,
request heads built once per session with h11, responses parsed just enough), so the
server under test has one core to itself on a 2-core machine. Measurements:

1. Throughput: C = 1 and 16 keep-alive connections, each with its own initialized MCP
   session (plain POSTs for the bare servers), sending ``tools/call echo`` back to back;
   after a warm-up, the responses completed in a fixed window give req/s and p50/p99
   latency (send -> end of the response). Every response is checked (status 200, a
   ``result``, the echoed text, which differs per request). Also printed: the server's
   CPU per request (``/proc/<pid>/stat``) and the generator's. Servers run in rounds
   (``--repeats``, default 3), in a rotated order each round; the table shows medians, a
   ratio is the median of the per-round ratios.
2. Memory per idle session: after a warm-up (10 sessions opened, used, deleted), 1,000
   sessions are opened (``initialize`` + ``notifications/initialized``) and left idle; the
   server reports (tool ``bench_memory``, after ``gc.collect()``) its VmRSS and, in a
   second fresh process run under ``PYTHONTRACEMALLOC=1``, tracemalloc's current bytes.
   Then all 1,000 are deleted (``DELETE``) and it reports again.
3. SSE progress rate: one ``tools/call`` of ``progress_flood`` (10,000
   ``notifications/progress``) with a progress token; the rate is timed at the client from
   the first progress event's arrival to the last's.

``--profile PATH`` adds, for trimcp (SSE answers): a 16-connection throughput run and a
progress run with cProfile on in the server (tool ``bench_profile``; stats in ``PATH`` and
``PATH.progress``), printing where the time went grouped by layer; and a memory run under
``PYTHONTRACEMALLOC=12`` whose snapshots (``PATH.before|loaded|after``) give the bytes per
idle session by allocation site. With ``--py-spy BINARY`` (py-spy is not a dependency of
the project: ``pip install --target DIR py-spy`` gives ``DIR/bin/py-spy``), the two runs are
sampled by py-spy instead, which does not slow the server down or skew the shares towards
call-heavy code as cProfile does.

Every process this script starts is stopped when it ends, also on errors and Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from _http_report import cprofile_summary, memory_breakdown, print_table, pyspy_summary

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
SERVERS = BENCH / "servers"
LOAD = BENCH / "_http_load.py"
START_TIMEOUT = 120.0  # seconds for a server to tell its port (slow under tracemalloc)
CONCURRENCY = (1, 16)

# Targets from the issue (the Streamable HTTP performance targets).
TARGET_VS_SDK = 2.5
TARGET_VS_HYPERCORN = 0.9
TARGET_BYTES_PER_SESSION = 10_000
TARGET_PROGRESS_RATE = 24_000.0


@dataclass(frozen=True)
class ServerSpec:
    key: str
    label: str
    script: str
    args: tuple[str, ...] = ()
    mcp: bool = True  # False: plain POSTs, no session


SPECS = [
    ServerSpec("floor", "trio + h11 (raw floor)", "bare_h11.py", mcp=False),
    ServerSpec("hypercorn", "hypercorn-trio, bare ASGI app", "bare_hypercorn.py", mcp=False),
    ServerSpec(
        "hypercorn-chunked",
        "hypercorn-trio, bare app, chunked",
        "bare_hypercorn.py",
        ("--chunked",),
        mcp=False,
    ),
    ServerSpec("trimcp-sse", "trimcp serve_http (SSE)", "trimcp_http_server.py"),
    ServerSpec(
        "trimcp-json",
        "trimcp serve_http (json_response)",
        "trimcp_http_server.py",
        ("--json-response",),
    ),
    ServerSpec("sdk-sse", "official SDK + uvicorn (SSE)", "sdk_http_server.py"),
    ServerSpec(
        "sdk-json",
        "official SDK + uvicorn (json_response)",
        "sdk_http_server.py",
        ("--json-response",),
    ),
]
BY_KEY = {spec.key: spec for spec in SPECS}


class BenchError(Exception):
    """A server or the load generator misbehaved; the row reports it."""


# --- processes -----------------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    _LIVE.discard(proc)


def kill_all() -> None:
    for proc in list(_LIVE):
        _kill(proc)


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


class ServerProcess:
    """One server subprocess: started, its port read from stdout, stopped on close()."""

    def __init__(self, spec: ServerSpec, env: dict[str, str] | None = None) -> None:
        self.spec = spec
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed in close())
        # -P: no script directory on sys.path (this file's name would shadow the stdlib's).
        self.proc = subprocess.Popen(
            [sys.executable, "-P", str(SERVERS / spec.script), *spec.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=ROOT,
            env=_env(env),
        )
        _LIVE.add(self.proc)
        self.port = self._read_port()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read_port(self) -> int:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + START_TIMEOUT
        seen = b""
        while b"\n" not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise BenchError(f"{self.spec.label} did not start{self.stderr_tail()}")
            chunk = os.read(fd, 256)
            if not chunk:
                raise BenchError(f"{self.spec.label} exited at start{self.stderr_tail()}")
            seen += chunk
        line = seen.split(b"\n", 1)[0].decode()
        if not line.startswith("PORT "):
            raise BenchError(f"{self.spec.label} said {line!r} instead of its port")
        return int(line.split()[1])

    def stderr_tail(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace").strip()
        return f"; stderr: ...{text[-600:]}" if text else ""

    def close(self) -> None:
        """Close stdin (the server's cue to exit), give it a moment, then kill it."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=3)
        _kill(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.stderr.close()


def start_load(job: dict[str, Any]) -> subprocess.Popen[bytes]:
    """Start one load-generator job in its own process."""
    proc = subprocess.Popen(
        [sys.executable, "-P", str(LOAD), json.dumps(job)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=_env(),
    )
    _LIVE.add(proc)
    return proc


def finish_load(proc: subprocess.Popen[bytes], timeout: float) -> dict[str, Any]:
    """Wait for a load-generator job; return its JSON answer."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError(f"the load generator ran over {timeout:g} s") from None
    finally:
        _kill(proc)
    lines = out.decode().strip().splitlines()
    if not lines:
        raise BenchError(f"the load generator said nothing: {err.decode()[-600:]}")
    answer: dict[str, Any] = json.loads(lines[-1])
    if "error" in answer:
        raise BenchError(f"load generator: {answer['error']}")
    return answer


def run_load(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run one load-generator job in its own process; return its JSON answer."""
    return finish_load(start_load(job), timeout)


@contextlib.contextmanager
def server(spec: ServerSpec, env: dict[str, str] | None = None) -> Iterator[ServerProcess]:
    proc = ServerProcess(spec, env)
    try:
        yield proc
    except BenchError as exc:
        raise BenchError(f"{exc}{proc.stderr_tail()}") from None
    finally:
        proc.close()


# --- configuration and results -------------------------------------------------------------

#: The benchmark's parts, selectable with ``--only``.
PARTS = ("throughput", "memory", "progress")


@dataclass(frozen=True)
class Config:
    quick: bool
    repeats: int
    warmup: float
    duration: float
    sessions: int
    progress_count: int
    progress_repeats: int
    profile: str | None
    sampler: str | None
    parts: frozenset[str] = frozenset(PARTS)


@dataclass
class Rows:
    """Per (server, connections): the measurements of every round."""

    runs: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def add(self, key: str, conns: int, run: dict[str, Any]) -> None:
        self.runs.setdefault((key, conns), []).append(run)

    def get(self, key: str, conns: int) -> list[dict[str, Any]]:
        return self.runs.get((key, conns), [])

    def median(self, key: str, conns: int, name: str) -> float:
        return statistics.median(run[name] for run in self.get(key, conns))


# --- 1. throughput -------------------------------------------------------------------------


def throughput_round(spec: ServerSpec, config: Config, rows: Rows) -> None:
    with server(spec) as proc:
        for conns in CONCURRENCY:
            job = {
                "kind": "throughput",
                "port": proc.port,
                "pid": proc.pid,
                "mode": "mcp" if spec.mcp else "plain",
                "connections": conns,
                "warmup": config.warmup,
                "duration": config.duration,
            }
            rows.add(spec.key, conns, run_load(job, config.warmup + config.duration + 60))


def run_throughput(config: Config) -> Rows:
    rows = Rows()
    for round_no in range(config.repeats):
        shift = round_no % len(SPECS)
        for spec in SPECS[shift:] + SPECS[:shift]:
            if spec.key in rows.errors:
                continue
            began = time.perf_counter()
            try:
                throughput_round(spec, config, rows)
            except BenchError as exc:
                rows.errors[spec.key] = str(exc)
            status = "error" if spec.key in rows.errors else "ok"
            print(
                f"  round {round_no + 1}/{config.repeats}  {spec.label}: {status} "
                f"({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    return rows


def throughput_table(rows: Rows) -> None:
    table = []
    for spec in SPECS:
        for conns in CONCURRENCY:
            runs = rows.get(spec.key, conns)
            if not runs or spec.key in rows.errors:
                table.append([spec.label, str(conns), "error", "-", "-", "-", "-", "-"])
                continue
            rates = [run["rate"] for run in runs]
            table.append(
                [
                    spec.label,
                    str(conns),
                    f"{rows.median(spec.key, conns, 'rate'):,.0f}",
                    f"{min(rates):,.0f}-{max(rates):,.0f}",
                    f"{rows.median(spec.key, conns, 'p50_ms'):.2f}",
                    f"{rows.median(spec.key, conns, 'p99_ms'):.2f}",
                    f"{rows.median(spec.key, conns, 'server_cpu_us'):,.0f}",
                    f"{rows.median(spec.key, conns, 'gen_cpu_us'):,.0f}",
                ]
            )
    headers = ["server", "conns", "req/s", "range", "p50 ms", "p99 ms"]
    print_table([*headers, "server µs/req", "gen µs/req"], table)


def ratio_row(rows: Rows, ours: str, base: str, conns: int, target: float | None) -> list[str]:
    label = f"{BY_KEY[ours].label} / {BY_KEY[base].label}, {conns} conn"
    target_text = f">= {target:g}x" if target is not None else "(info)"
    mine, theirs = rows.get(ours, conns), rows.get(base, conns)
    if not mine or not theirs or ours in rows.errors or base in rows.errors:
        return [label, "-", "-", "-", "-", target_text, "MISS" if target else ""]
    ratios = [o["rate"] / b["rate"] for o, b in zip(mine, theirs, strict=False)]
    ratio = statistics.median(ratios)
    verdict = "" if target is None else ("PASS" if ratio >= target else "MISS")
    return [
        label,
        f"{rows.median(ours, conns, 'rate'):,.0f}",
        f"{rows.median(base, conns, 'rate'):,.0f}",
        f"{ratio:.2f}x",
        f"{min(ratios):.2f}-{max(ratios):.2f}",
        target_text,
        verdict,
    ]


def throughput_ratios(rows: Rows) -> None:
    table = []
    for mode in ("sse", "json"):
        ours = f"trimcp-{mode}"
        table.append(ratio_row(rows, ours, f"sdk-{mode}", 16, TARGET_VS_SDK))
        table.append(ratio_row(rows, ours, "hypercorn", 16, TARGET_VS_HYPERCORN))
        table.append(ratio_row(rows, ours, f"sdk-{mode}", 1, None))
        table.append(ratio_row(rows, ours, "hypercorn", 1, None))
    table.append(ratio_row(rows, "hypercorn-chunked", "hypercorn", 16, None))
    table.append(ratio_row(rows, "hypercorn", "floor", 16, None))
    print_table(["ratio (req/s)", "ours", "base", "ratio", "range", "target", "result"], table)


def generator_note(rows: Rows, config: Config) -> None:
    runs = rows.get("floor", 16)
    if not runs or "floor" in rows.errors:
        return
    cpu = rows.median("floor", 16, "gen_cpu_us")
    rate = rows.median("floor", 16, "rate")
    busy = statistics.median(run["gen_cpu_s"] for run in runs) / config.duration
    print(
        f"load generator: {cpu:.0f} µs CPU per request against the raw trio + h11 floor at "
        f"16 connections, i.e. at most ~{1e6 / cpu:,.0f} req/s on one core; it was {busy:.0%} "
        f"busy while the floor ran at {rate:,.0f} req/s"
        + (" (so the floor figure is a lower bound)." if busy > 0.8 else ".")
    )


# --- 2. memory per idle session --------------------------------------------------------------


def run_memory(config: Config) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (server, measure): the memory job's answer; measure is "rss" or "traced"."""
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for measure in ("rss", "traced"):
        env = {"PYTHONTRACEMALLOC": "1"} if measure == "traced" else None
        for key in ("trimcp-sse", "sdk-sse"):
            began = time.perf_counter()
            job: dict[str, Any] = {"kind": "memory", "sessions": config.sessions}
            job["connections"] = 8
            try:
                with server(BY_KEY[key], env) as proc:
                    job["port"] = proc.port
                    results[key, measure] = run_load(job, 600)
                status = "ok"
            except BenchError as exc:
                results[key, measure] = {"error": str(exc)}
                status = "error"
            print(
                f"  memory ({measure})  {BY_KEY[key].label}: {status} "
                f"({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    return results


def memory_table(results: dict[tuple[str, str], dict[str, Any]]) -> None:
    table = []
    verdicts = []
    for (key, measure), answer in results.items():
        label = BY_KEY[key].label
        name = "VmRSS" if measure == "rss" else "tracemalloc"
        if "error" in answer:
            table.append([label, name, "error", "-", "-", "-", "-", "-"])
            continue
        before, loaded, after = (answer[k][measure] for k in ("before", "loaded", "after"))
        n = answer["sessions"]
        per_session = (loaded - before) / n
        table.append(
            [
                label,
                name,
                f"{before / 1e6:.1f} MB",
                f"{loaded / 1e6:.1f} MB",
                f"{per_session / 1e3:,.1f} KB",
                f"{after / 1e6:.1f} MB",
                f"{(after - before) / n / 1e3:,.1f} KB",
                f"{answer['create_s'] / n * 1e3:.1f}",
            ]
        )
        if key.startswith("trimcp"):
            verdict = "PASS" if per_session <= TARGET_BYTES_PER_SESSION else "MISS"
            verdicts.append(f"trimcp {name}: {per_session / 1e3:.1f} KB/session -> {verdict}")
        if answer["loaded"]["sessions"] != answer["before"]["sessions"] + n:
            print(f"note: {label} counted {answer['loaded']['sessions']} sessions while loaded")
    headers = ["server", "measure", "baseline", "1k idle", "per session", "after DELETE"]
    print_table([*headers, "left/session", "ms/initialize"], table)
    print(f"target <= {TARGET_BYTES_PER_SESSION / 1e3:g} KB/session: " + "; ".join(verdicts))


# --- 3. SSE progress rate ------------------------------------------------------------------


def run_progress(config: Config) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {"trimcp-sse": [], "sdk-sse": []}
    for _ in range(config.progress_repeats):
        for key in results:
            job = {"kind": "progress", "count": config.progress_count}
            try:
                with server(BY_KEY[key]) as proc:
                    job["port"] = proc.port
                    results[key].append(run_load(job, 300))
            except BenchError as exc:
                results[key].append({"error": str(exc)})
    return results


def progress_table(results: dict[str, list[dict[str, Any]]], config: Config) -> None:
    table = []
    rates: dict[str, float] = {}
    for key, runs in results.items():
        good = [run for run in runs if "error" not in run]
        if not good:
            table.append([BY_KEY[key].label, "error", "-", "-"])
            continue
        values = [run["rate"] for run in good]
        rates[key] = statistics.median(values)
        table.append(
            [
                BY_KEY[key].label,
                f"{rates[key]:,.0f}",
                f"{min(values):,.0f}-{max(values):,.0f}",
                f"{statistics.median(run['total_s'] for run in good):.2f}",
            ]
        )
    print_table(["server", "progress/s", "range", f"call s ({config.progress_count:,} ev.)"], table)
    ours = rates.get("trimcp-sse")
    if ours is not None:
        verdict = "PASS" if ours >= TARGET_PROGRESS_RATE else "MISS"
        vs_sdk = f"; {ours / rates['sdk-sse']:.2f}x the SDK" if "sdk-sse" in rates else ""
        print(f"target >= {TARGET_PROGRESS_RATE:,.0f}/s: trimcp {ours:,.0f}/s -> {verdict}{vs_sdk}")


# --- profile -------------------------------------------------------------------------------


def pyspy_argv(config: Config, pid: int, out: str) -> list[str]:
    assert config.sampler is not None
    argv = [config.sampler, "record", "--pid", str(pid), "--rate", "200", "--nonblocking"]
    return [*argv, "--format", "raw", "--output", out]


def start_pyspy(config: Config, pid: int, out: str) -> subprocess.Popen[bytes]:
    """Start sampling ``pid`` until SIGINT (py-spy writes its output then)."""
    argv = pyspy_argv(config, pid, out)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _LIVE.add(proc)
    return proc


def run_pyspy(config: Config, pid: int, out: str, seconds: float) -> None:
    """Sample ``pid`` for ``seconds``."""
    argv = [*pyspy_argv(config, pid, out), "--duration", str(round(seconds))]
    subprocess.run(argv, capture_output=True, timeout=seconds + 60, check=True)


def profile_throughput(config: Config, path: str) -> None:
    seconds = max(config.duration, 5.0)
    job: dict[str, Any] = {"kind": "throughput", "mode": "mcp", "connections": 16}
    job.update(warmup=config.warmup, duration=seconds)
    with server(BY_KEY["trimcp-sse"]) as proc:
        job.update(port=proc.port, pid=proc.pid)
        if config.sampler is None:
            job["profile"] = path
            answer = run_load(job, seconds + 120)
        else:
            job["duration"] = seconds + 2  # the sampler starts a second into the window
            load = start_load(job)
            time.sleep(config.warmup + 1)
            run_pyspy(config, proc.pid, path, seconds)
            answer = finish_load(load, seconds + 120)
    how = "cProfile" if config.sampler is None else "py-spy"
    print(
        f"throughput under {how}: {answer['rate']:,.0f} req/s "
        f"({answer['server_cpu_us']:,.0f} µs server CPU per request)"
    )
    if config.sampler is None:
        cprofile_summary(path, "SSE answers, 16 connections")
    else:
        pyspy_summary(path, "SSE answers, 16 connections")


def profile_progress(config: Config, path: str) -> None:
    count = config.progress_count
    if config.sampler is not None:
        count = max(count * 3, 20_000)  # some seconds of samples at 200 Hz
    job: dict[str, Any] = {"kind": "progress", "count": count}
    with server(BY_KEY["trimcp-sse"]) as proc:
        job["port"] = proc.port
        if config.sampler is None:
            job["profile"] = path
            answer = run_load(job, 300)
        else:
            sampler = start_pyspy(config, proc.pid, path)
            time.sleep(1.0)  # py-spy attaches
            answer = run_load(job, 300)
            sampler.send_signal(signal.SIGINT)
            sampler.wait(timeout=30)
            _LIVE.discard(sampler)
    title = f"one call sending {count:,} progress notifications"
    print(f"progress under {'cProfile' if config.sampler is None else 'py-spy'}: ", end="")
    print(f"{answer['rate']:,.0f}/s")
    if config.sampler is None:
        cprofile_summary(path, title)
    else:
        pyspy_summary(path, title)


def run_profile(config: Config) -> None:
    assert config.profile is not None
    path = str(Path(config.profile).resolve())
    profile_throughput(config, path)
    profile_progress(config, f"{path}.progress")
    job = {"kind": "memory", "sessions": config.sessions, "connections": 8, "snapshot": path}
    with server(BY_KEY["trimcp-sse"], {"PYTHONTRACEMALLOC": "12"}) as proc:
        job["port"] = proc.port
        run_load(job, 600)
    memory_breakdown(path, config.sessions)


# --- main ----------------------------------------------------------------------------------


def print_header(config: Config) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    mode = "--quick" if config.quick else "full run"
    print(
        f"Streamable HTTP benchmark ({mode}; {config.repeats} round(s) of fresh processes, "
        f"{config.warmup:g} s warm-up + {config.duration:g} s window per measurement)"
    )
    print(f"python {platform.python_version()}  {platform.platform()}")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"cpus: os.cpu_count()={os.cpu_count()}  usable={affinity}  load average: {load}")
    print()


def report_throughput(config: Config) -> bool:
    print("1. tools/call echo throughput")
    rows = run_throughput(config)
    print()
    throughput_table(rows)
    print()
    throughput_ratios(rows)
    generator_note(rows, config)
    for key, error in rows.errors.items():
        print(f"note: {BY_KEY[key].label}: {error}")
    print()
    return bool(rows.errors)


def report_memory(config: Config) -> bool:
    print(f"2. memory per idle session ({config.sessions:,} sessions)")
    memory = run_memory(config)
    print()
    memory_table(memory)
    for (key, measure), answer in memory.items():
        if "error" in answer:
            print(f"note: {BY_KEY[key].label} ({measure}): {answer['error']}")
    print()
    return any("error" in a for a in memory.values())


def report_progress(config: Config) -> bool:
    print(f"3. progress notifications over SSE ({config.progress_count:,} in one call)")
    progress = run_progress(config)
    progress_table(progress, config)
    for key, runs in progress.items():
        for run in runs:
            if "error" in run:
                print(f"note: {BY_KEY[key].label}: {run['error']}")
    return False


def main(config: Config) -> int:
    print_header(config)
    began = time.perf_counter()
    reports = {
        "throughput": report_throughput,
        "memory": report_memory,
        "progress": report_progress,
    }
    failed = [part for part in PARTS if part in config.parts and reports[part](config)]
    if config.profile:
        print()
        print("4. profile")
        run_profile(config)
    print()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"total wall time: {time.perf_counter() - began:.0f} s; load average now: {load}")
    return 1 if failed else 0


def parse_args(argv: list[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, short windows")
    parser.add_argument("--repeats", type=int, help="throughput rounds (default 3; quick 1)")
    parser.add_argument("--duration", type=float, help="seconds per window (default 4)")
    parser.add_argument("--sessions", type=int, help="idle sessions (default 1,000)")
    parser.add_argument("--profile", metavar="PATH", help="also profile trimcp; stats to PATH")
    parser.add_argument(
        "--py-spy",
        metavar="BINARY",
        help="with --profile: sample with this py-spy instead of running cProfile",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=PARTS,
        help="run only this part (repeatable; default: all three)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    return Config(
        quick=quick,
        repeats=max(1, args.repeats or (1 if quick else 3)),
        warmup=0.5 if quick else 1.0,
        duration=args.duration or (1.5 if quick else 4.0),
        sessions=args.sessions or (200 if quick else 1_000),
        progress_count=2_000 if quick else 10_000,
        progress_repeats=1 if quick else 3,
        profile=args.profile,
        sampler=args.py_spy,
        parts=frozenset(args.only or PARTS),
    )


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    cfg = parse_args()
    try:
        code = main(cfg)
    finally:
        kill_all()
    sys.exit(code)
