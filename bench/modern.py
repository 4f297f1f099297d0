"""MCP 2026-07-28 ``tools/call`` over Streamable HTTP: per-request POSTs against sessions.

Run from the repository root::

    python bench/modern.py              # full run: 3 rounds, then py-spy profiles; 1.5-2.5 min
    python bench/modern.py --quick      # smoke run: 1 round, few calls, no profile
    python bench/modern.py --no-profile
    python bench/modern.py --source DIR    # trimcp from DIR, e.g. a commit exported there

Three rows, in the same run, each a fresh server process per round on 127.0.0.1, all called
by the same client (``bench/_modern_load.py``: raw sockets, h11-built heads, byte checks, a
few tens of µs of CPU per call) with ``tools/call`` of a trivial ``echo`` tool:

* **trimcp, 2026-07-28**: ``bench/servers/modern_trimcp.py`` (``MCPServer`` +
  ``serve_http``); every request a self-contained POST: ``MCP-Protocol-Version:
  2026-07-28``, ``Mcp-Method: tools/call``, ``Mcp-Name: echo``, and ``params._meta``
  (protocol version, client capabilities, client info); no ``initialize``, no session;
* **trimcp, 2025-11-25**: the same server; each connection opens a session (``initialize``,
  ``notifications/initialized``; not timed), then sends calls with its ``Mcp-Session-Id``;
* **SDK, 2026-07-28**: the official Python SDK (``mcp`` 2.3.0), its ``MCPServer`` with the
  same tool, ``streamable_http_app()`` under uvicorn (``bench/servers/modern_sdk.py``),
  sent exactly the same request bytes as the first row: every server of a run listens on
  the same port, so even the ``Host`` header is equal, and the worker reports the SHA-256
  of its first timed request, which the report compares.

Every answer is JSON (both servers run with ``json_response=True``, which only the
2025-11-25 path needs: a 2026-07-28 call that sends nothing before its answer is answered
with JSON either way) and is checked: HTTP 200, ``application/json``, the request's id,
``"isError":false``, its own echoed text. Before the timed part, a ``server/discover``
probe must offer 2026-07-28 and no 2026-07-28 answer may carry an ``Mcp-Session-Id``.

For each C (``--concurrency``, default 1 and 16 keep-alive connections, one request at a
time each): ``--warmup`` calls, then ``--requests`` timed calls. Printed per row and C:
requests/s, p50/p99 latency (send -> end of the answer), the server's CPU per request
(``/proc/<pid>/stat`` over the timed part) and the client's. Rounds (``--repeats``) rotate
the row order; tables show medians, a ratio is the median of the per-round ratios, with
their range: modern/legacy (trimcp) and trimcp-modern/SDK-modern.

Then, unless ``--no-profile`` (or py-spy is missing), the trimcp server is sampled by py-spy
(200 Hz, ``--nonblocking``) for ``--profile-seconds`` under the C = 16 load of each trimcp
row, and the samples are summarised: own time by layer, and the trimcp functions with the
largest inclusive share, converted to µs of server CPU per request.

Only 127.0.0.1. Every job has a time limit. Every process started here is stopped by its
PID (stdin closed, then SIGTERM, then SIGKILL), also on errors, Ctrl-C and SIGTERM; this
script is a child subreaper (Linux) so nothing a child leaves behind escapes.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import platform
import re
import select
import shutil
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
    from collections.abc import Iterator
    from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
WORKER = BENCH / "_modern_load.py"
TRIMCP_SERVER = BENCH / "servers" / "modern_trimcp.py"
SDK_SERVER = BENCH / "servers" / "modern_sdk.py"
START_TIMEOUT = 60.0
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Kind:
    key: str
    label: str
    server: Path
    era: str


KINDS = (
    Kind("modern", "trimcp, 2026-07-28 (per-request POST)", TRIMCP_SERVER, "modern"),
    Kind("legacy", "trimcp, 2025-11-25 (session per connection)", TRIMCP_SERVER, "legacy"),
    Kind("sdk", "official SDK MCPServer, 2026-07-28", SDK_SERVER, "modern"),
)
BY_KEY = {kind.key: kind for kind in KINDS}
SHORT = {"modern": "trimcp-modern", "legacy": "trimcp-legacy", "sdk": "SDK-modern"}


class BenchError(Exception):
    """A server or the worker failed, answered wrongly or ran out of time."""


# --- processes -------------------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def become_subreaper() -> None:
    """Adopt orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``), so none escapes."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def stop(proc: subprocess.Popen[bytes], grace: float = 8.0) -> None:
    """Stop one process we started, by its PID: stdin closed, SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        for how in (None, signal.SIGTERM, signal.SIGKILL):
            if how is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, how)
            try:
                proc.wait(timeout=grace if how is None else 3)
                break
            except subprocess.TimeoutExpired:
                continue
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    _LIVE.discard(proc)


def sweep_orphans() -> list[int]:
    """Kill and reap, by PID, whatever was re-parented here and is not a live child."""
    live = {proc.pid for proc in _LIVE}
    killed = []
    me = os.getpid()
    children: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{me}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{me}/task/{tid}/children") as file:
                children.extend(int(p) for p in file.read().split())
    for pid in children:
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


def _env(source: Path = ROOT) -> dict[str, str]:
    """The environment of a child: ``source`` first on the path (where trimcp comes from)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(source), str(ROOT), env.get("PYTHONPATH")])
    )
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(err: IO[bytes], size: int = 800) -> str:
    err.flush()
    err.seek(0)
    text = err.read().decode(errors="replace").strip()
    return f"; stderr: ...{text[-size:]}" if text else ""


def read_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """One line of ``proc``'s stdout within ``timeout`` seconds (b"" at end of file)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise BenchError(f"no line from pid {proc.pid} in {timeout:g} s")
        chunk = os.read(fd, 1)
        if not chunk:
            return line
        line += chunk
    return line


@contextlib.contextmanager
def server(kind: Kind, port: int, source: Path = ROOT) -> Iterator[int]:
    """Start ``kind``'s server on 127.0.0.1:``port``; yield its pid; stop it by that pid."""
    err = tempfile.TemporaryFile()  # noqa: SIM115  (closed below)
    proc = subprocess.Popen(
        [sys.executable, "-P", str(kind.server), "--port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        cwd=ROOT,
        env=_env(source),
        start_new_session=True,
    )
    _LIVE.add(proc)
    try:
        try:
            said = read_line(proc, START_TIMEOUT).decode().strip()
        except BenchError as exc:
            raise BenchError(f"{kind.label}: {exc}{tail(err)}") from None
        if said != f"PORT {port}":
            raise BenchError(f"{kind.label} said {said!r}, not PORT {port}{tail(err)}")
        try:
            yield proc.pid
        except BenchError as exc:
            raise BenchError(f"{exc}{tail(err)}") from None
        if proc.poll() is not None:
            raise BenchError(f"{kind.label} exited during the run{tail(err)}")
    finally:
        stop(proc)
        left = sweep_orphans()
        err.close()
        if left:
            print(f"    note: {kind.label} left {len(left)} process(es) behind; killed {left}")


def start_worker(job: dict[str, Any]) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    err = tempfile.TemporaryFile()  # noqa: SIM115  (closed by finish_worker)
    # -P: no script directory on sys.path (bench/http.py would shadow the stdlib's http).
    proc = subprocess.Popen(
        [sys.executable, "-P", str(WORKER), json.dumps(job)],
        stdout=subprocess.PIPE,
        stderr=err,
        cwd=ROOT,
        env=_env(),
        start_new_session=True,
    )
    _LIVE.add(proc)
    return proc, err


def finish_worker(proc: subprocess.Popen[bytes], err: IO[bytes], limit: float) -> dict[str, Any]:
    """The worker's last JSON line (``BenchError`` on failure); the worker is stopped."""
    try:
        lines = []
        deadline = time.monotonic() + limit + 15
        while line := read_line(proc, max(0.1, deadline - time.monotonic())):
            lines.append(line)
    except BenchError as exc:
        raise BenchError(f"the worker gave no answer in {limit:.0f} s") from exc
    finally:
        stop(proc)
        why = tail(err)
        err.close()
    if not lines:
        raise BenchError(f"the worker said nothing (exit {proc.returncode}){why}")
    answer: dict[str, Any] = json.loads(lines[-1])
    if "error" in answer:
        raise BenchError(f"worker: {answer['error']}")
    return answer


# --- configuration and rounds ----------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    quick: bool
    repeats: int
    requests: int
    warmup: int
    concurrency: tuple[int, ...]
    time_limit: float
    profile: str | None  # py-spy binary, or None
    profile_seconds: float
    keep_profiles: str | None
    source: Path  # where the servers import trimcp from


@dataclass
class Row:
    kind: Kind
    runs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    sha: list[str] = field(default_factory=list)
    probe: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def ok(self, conc: int) -> bool:
        return self.error is None and bool(self.runs.get(conc))

    def median(self, conc: int, key: str) -> float | None:
        values = [r[key] for r in self.runs.get(conc, []) if r.get(key) is not None]
        return statistics.median(values) if values else None


def job_for(kind: Kind, port: int, pid: int, config: Config) -> dict[str, Any]:
    return {
        "era": kind.era,
        "port": port,
        "concurrency": list(config.concurrency),
        "requests": config.requests,
        "warmup": config.warmup,
        "time_limit": config.time_limit,
        "watch": {"server": pid},
    }


def one_run(kind: Kind, port: int, config: Config) -> dict[str, Any]:
    with server(kind, port, config.source) as pid:
        proc, err = start_worker(job_for(kind, port, pid, config))
        return finish_worker(proc, err, config.time_limit)


def run_rounds(config: Config, port: int) -> dict[str, Row]:
    rows = {kind.key: Row(kind) for kind in KINDS}
    order = list(KINDS)
    for round_no in range(config.repeats):
        shift = round_no % len(order)
        for kind in order[shift:] + order[:shift]:
            row = rows[kind.key]
            if row.error is not None:
                continue
            began = time.perf_counter()
            try:
                answer = one_run(kind, port, config)
            except BenchError as exc:
                row.error = str(exc)
                status = f"error: {row.error[:300]}"
            else:
                row.sha.append(answer["request_sha256"])
                row.probe = answer.get("probe") or row.probe
                parts = []
                for conc in config.concurrency:
                    run = answer["concurrency"][str(conc)]
                    row.runs.setdefault(conc, []).append(run)
                    parts.append(
                        f"C={conc}: {run['rate']:,.0f}/s p50 {run['p50_ms']:.2f} ms "
                        f"server {run['server_cpu_us']:,.0f} µs/req"
                    )
                status = "  ".join(parts)
            print(
                f"  round {round_no + 1}/{config.repeats}  {kind.label}: {status} "
                f"({time.perf_counter() - began:.1f} s)",
                flush=True,
            )
    return rows


# --- reporting ---------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_rows(rows: dict[str, Row], config: Config) -> None:
    table = []
    for row in rows.values():
        for conc in config.concurrency:
            if not row.ok(conc):
                table.append([row.kind.label, str(conc), "error", *["-"] * 6])
                continue
            rates = [r["rate"] for r in row.runs[conc]]
            table.append(
                [
                    row.kind.label,
                    str(conc),
                    f"{row.runs[conc][0]['requests']:,}",
                    _fmt(row.median(conc, "rate"), ",.0f"),
                    f"{min(rates):,.0f}-{max(rates):,.0f}",
                    _fmt(row.median(conc, "p50_ms"), ".3f"),
                    _fmt(row.median(conc, "p99_ms"), ".3f"),
                    _fmt(row.median(conc, "server_cpu_us"), ",.0f"),
                    _fmt(row.median(conc, "client_cpu_us"), ",.0f"),
                ]
            )
    headers = ["row", "C", "N", "req/s", "range", "p50 ms", "p99 ms"]
    print_table([*headers, "server µs/req", "client µs/req"], table)


def ratio_line(rows: dict[str, Row], ours: str, base: str, conc: int, key: str) -> list[str]:
    a, b = rows[ours], rows[base]
    what = {"rate": "req/s", "server_cpu_us": "server CPU/req", "p50_ms": "p50"}[key]
    label = f"{SHORT[ours]} / {SHORT[base]} {what}, C={conc}"
    if not (a.ok(conc) and b.ok(conc)):
        return [label, "-", "-"]
    ratios = [
        o[key] / s[key]
        for o, s in zip(a.runs[conc], b.runs[conc], strict=False)
        if o.get(key) and s.get(key)
    ]
    if not ratios:
        return [label, "-", "-"]
    return [label, f"{statistics.median(ratios):.2f}x", f"{min(ratios):.2f}-{max(ratios):.2f}"]


def print_ratios(rows: dict[str, Row], config: Config) -> None:
    table = []
    for ours, base in (("modern", "legacy"), ("modern", "sdk")):
        for key in ("rate", "p50_ms", "server_cpu_us"):
            table.extend(ratio_line(rows, ours, base, conc, key) for conc in config.concurrency)
    print_table(["ratio (median of per-round ratios)", "median", "range"], table)


def print_identity(rows: dict[str, Row]) -> None:
    modern, sdk = rows["modern"], rows["sdk"]
    if modern.sha and sdk.sha:
        same = set(modern.sha) == set(sdk.sha) and len(set(modern.sha)) == 1
        print(
            f"request bytes, trimcp 2026-07-28 row vs SDK row: "
            f"{'identical' if same else 'DIFFERENT'} (sha256 {modern.sha[0][:16]}...)"
        )
    for key in ("modern", "sdk"):
        probe = rows[key].probe
        if probe:
            info = probe.get("serverInfo") or {}
            print(
                f"probe {rows[key].kind.label}: server/discover offers "
                f"{', '.join(probe.get('supportedVersions', []))}; serverInfo "
                f"{info.get('name')} {info.get('version')}; no Mcp-Session-Id on any "
                "2026-07-28 answer"
            )


# --- profile -----------------------------------------------------------------------------------

# Which layer a file belongs to (first match wins), for a sample's innermost frame.
LAYERS = [
    ("trimcp.http HTTP/1.1 server (_h1*)", re.compile(r"trimcp/http/_h1")),
    ("trimcp.http 2026-07-28 endpoint (_modern)", re.compile(r"trimcp/http/_modern\.py")),
    ("trimcp.http endpoint (app, checks, body, stream)", re.compile(r"trimcp/http/")),
    ("trimcp.sessions (session, ModernRequest, context)", re.compile(r"trimcp/sessions/")),
    ("trimcp.protocol (codec, _meta, connection)", re.compile(r"trimcp/protocol/")),
    ("trimcp.server (MCPServer, dispatch, rounds)", re.compile(r"trimcp/server/")),
    ("trimcp.actors + supervision", re.compile(r"trimcp/(actors|supervision)/")),
    ("trimcp (other)", re.compile(r"trimcp/")),
    ("trio (scheduler, cancel scopes, tasks)", re.compile(r"trio/")),
]
SOCKET = "socket system calls (send/recv)"
OTHER = "other Python (stdlib, contextlib, outcome, attrs)"
# Stages, by the functions that must be on a sample's stack (in this order, not
# necessarily adjacent); a sample counts once per stage. Era: "" both, "m" 2026, "l" 2025.
STAGES: list[tuple[str, str, tuple[str, ...]]] = [
    ("wait for, read and parse the next head (_h1 _next_head)", "", ("_next_head",)),
    ("  of which parse_head", "", ("parse_head",)),
    ("McpHttpApp (the whole ASGI call, answer included)", "", ("McpHttpApp.__call__",)),
    ("  read the body (read_body)", "", ("read_body",)),
    ("  parse the body (read_post_body)", "", ("read_post_body",)),
    ("  era choice (choose_era)", "", ("choose_era",)),
    ("  2026: ModernEndpoint.post", "m", ("ModernEndpoint.post",)),
    ("    _meta + mirrored-header checks (_checked)", "m", ("ModernEndpoint._checked",)),
    ("      of which read_request_meta", "m", ("read_request_meta",)),
    ("      of which check_request_headers", "m", ("check_request_headers",)),
    ("    ModernRequest() (ServerConnection.for_request)", "m", ("ModernRequest.__init__",)),
    ("    nursery enter + exit in _serve", "m", ("ModernEndpoint._serve", "NurseryManager.")),
    ("    ModernRequest.run", "m", ("ModernRequest.run",)),
    ("      serve_modern (trimcp.server)", "m", ("serve_modern",)),
    ("        open_round (params_digest: SHA-256)", "m", ("open_round",)),
    ("  2026: disconnect watcher task (own task)", "m", ("ModernEndpoint._serve.<locals>.watch",)),
    ("  2025: session lookup (McpHttpApp._session)", "l", ("McpHttpApp._session",)),
    ("  2025: McpHttpApp._serve_post", "l", ("McpHttpApp._serve_post",)),
    ("    feed the body to the session (feed)", "l", ("McpHttpApp._serve_post", "feed")),
    ("    wait for the answer and send it (_answer_json)", "l", ("McpHttpApp._answer_json",)),
    ("  2025: session actor task (Actor._guarded)", "l", ("Actor._guarded",)),
    ("MCPServer.handle_request (both eras)", "", ("MCPServer.handle_request",)),
    ("write the answer (send_fixed)", "", ("send_fixed",)),
    ("trio with no trimcp frame on the stack (scheduler)", "", ()),
]
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*):(?P<line>\d+)\)$")


def _frame(text: str) -> tuple[str, str]:
    match = _FRAME.match(text)
    return (text, "") if match is None else (match["func"], match["file"])


@dataclass
class Profile:
    """One py-spy raw file, the trio thread's samples only."""

    title: str
    cpu_us: float | None
    total: int = 0
    own: dict[str, int] = field(default_factory=dict)
    stages: dict[str, int] = field(default_factory=dict)
    leaves: dict[str, int] = field(default_factory=dict)

    def us(self, count: int) -> str:
        if not self.total:
            return "-"
        share = count / self.total
        return f"{share:.0%}" if self.cpu_us is None else f"{share * self.cpu_us:,.0f}"


def _on_stack(funcs: list[str], wanted: tuple[str, ...]) -> bool:
    at = 0
    for func in funcs:
        if at < len(wanted) and (
            func == wanted[at] or (wanted[at].endswith(".") and func.startswith(wanted[at]))
        ):
            at += 1
    return at == len(wanted)


def read_profile(path: str, title: str, cpu_us: float | None) -> Profile:
    prof = Profile(title, cpu_us)
    for line in Path(path).read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = [_frame(text) for text in stack.split(";")]
        funcs = [func for func, _ in frames]
        if "unrolled_run" not in funcs:
            continue  # not the trio thread (e.g. the one blocked reading stdin)
        count = int(count_text)
        prof.total += count
        func, filename = frames[-1]
        if filename.endswith("trio/_socket.py") and "nonblocking" in func:
            layer = SOCKET
        else:
            layer = next((n for n, rx in LAYERS if rx.search(filename)), OTHER)
        prof.own[layer] = prof.own.get(layer, 0) + count
        where = filename[filename.rfind("site-packages/") + 14 :] if "site-" in filename else ""
        leaf = f"{func} ({where or filename.rsplit('/main/', 1)[-1]})"
        prof.leaves[leaf] = prof.leaves.get(leaf, 0) + count
        trimcp_frame = any("trimcp/" in f for _, f in frames)
        for label, _, wanted in STAGES:
            hit = _on_stack(funcs, wanted) if wanted else not trimcp_frame
            if hit:
                prof.stages[label] = prof.stages.get(label, 0) + count
    return prof


def print_profiles(modern: Profile, legacy: Profile) -> None:
    """Side by side: own time by layer, stages, and each profile's hottest innermost lines."""
    unit = "µs/req" if modern.cpu_us is not None and legacy.cpu_us is not None else "share"
    for prof in (modern, legacy):
        per = "" if prof.cpu_us is None else f"; {prof.cpu_us:,.0f} µs of server CPU per request"
        print(f"py-spy, {prof.title}: {prof.total:,} samples of the trio thread{per}")
    print("(µs/req = share of the trio thread's samples x that profile's server CPU per request)")
    print()
    layers = sorted(set(modern.own) | set(legacy.own), key=lambda k: -modern.own.get(k, 0))
    rows = [
        [name, modern.us(modern.own.get(name, 0)), legacy.us(legacy.own.get(name, 0))]
        for name in layers
    ]
    rows.append(["total", modern.us(modern.total), legacy.us(legacy.total)])
    print_table([f"layer (own time, {unit})", "2026-07-28", "2025-11-25"], rows)
    print()
    rows = []
    for label, era, _ in STAGES:
        cells = [
            "" if era == "l" else modern.us(modern.stages.get(label, 0)),
            "" if era == "m" else legacy.us(legacy.stages.get(label, 0)),
        ]
        rows.append([label, *cells])
    print_table([f"stage (inclusive, {unit})", "2026-07-28", "2025-11-25"], rows)
    print()
    for prof in (modern, legacy):
        top = sorted(prof.leaves.items(), key=lambda item: -item[1])[:8]
        rows = [[leaf[:90], prof.us(count)] for leaf, count in top]
        print_table([f"innermost frame, {prof.title.split(',')[1].strip()} (top 8)", unit], rows)
        print()


def profile(kind: Kind, port: int, config: Config, out: str) -> dict[str, Any] | None:
    """Sample the server under C = max load for ``profile_seconds``; return the load's figures."""
    assert config.profile is not None
    conc = max(config.concurrency)
    seconds = config.profile_seconds
    with server(kind, port, config.source) as pid:
        job = job_for(kind, port, pid, config)
        job.update(concurrency=[conc], requests=10_000_000, seconds=seconds + 2.0, announce=True)
        job["time_limit"] = seconds + 60
        proc, err = start_worker(job)
        try:
            said = read_line(proc, 60).strip()
            if json.loads(said or b"{}").get("warm") is not True:
                raise BenchError(f"the worker said {said[:300]!r} instead of warming up")
            time.sleep(0.5)
            # Blocking sampling (py-spy pauses the process per sample): consistent stacks.
            argv = [config.profile, "record", "--pid", str(pid), "--rate", "200"]
            argv += ["--format", "raw", "--output", out, "--duration", str(round(seconds))]
            spy = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _LIVE.add(spy)
            try:
                _, spy_err = spy.communicate(timeout=seconds + 30)
            except subprocess.TimeoutExpired:
                spy_err = b"timed out"
            finally:
                stop(spy)
        except BaseException:
            stop(proc)
            err.close()
            raise
        answer = finish_worker(proc, err, job["time_limit"])
    if spy.returncode != 0 or not Path(out).exists():
        print(f"  py-spy failed ({spy.returncode}): {spy_err.decode(errors='replace')}")
        return None
    return dict(answer["concurrency"][str(conc)])


def run_profiles(config: Config, port: int) -> None:
    if config.profile is None:
        return
    folder = config.keep_profiles or tempfile.mkdtemp(prefix="trimcp-bench-modern-")
    Path(folder).mkdir(parents=True, exist_ok=True)
    conc = max(config.concurrency)
    found: dict[str, Profile] = {}
    for key in ("modern", "legacy"):
        kind = BY_KEY[key]
        out = str(Path(folder) / f"pyspy-{key}.txt")
        try:
            load = profile(kind, port, config, out)
        except BenchError as exc:
            print(f"profile of {kind.label}: error: {exc}")
            continue
        if load is not None:
            title = (
                f"{kind.label}, C={conc}, {config.profile_seconds:g} s at 200 Hz, "
                f"{load['rate']:,.0f} req/s while sampled"
            )
            found[key] = read_profile(out, title, load.get("server_cpu_us"))
    if config.keep_profiles is None:
        shutil.rmtree(folder, ignore_errors=True)
    if len(found) == 2:
        print()
        print_profiles(found["modern"], found["legacy"])
    if config.keep_profiles is not None:
        print(f"py-spy raw output kept in {folder}")


# --- main --------------------------------------------------------------------------------------


def print_header(config: Config) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    mode = "--quick" if config.quick else "full run"
    print(
        f"MCP 2026-07-28 tools/call benchmark ({mode}; {config.repeats} round(s) of fresh "
        f"servers; N = {config.requests:,} timed calls per row and C after {config.warmup:,} "
        f"warm-up calls; C = {', '.join(map(str, config.concurrency))} keep-alive connections)"
    )
    print(f"python {platform.python_version()}  {platform.platform()}")
    versions = []
    from importlib.metadata import PackageNotFoundError, version

    for name in ("trio", "mcp", "uvicorn", "starlette", "h11", "orjson"):
        with contextlib.suppress(PackageNotFoundError):
            versions.append(f"{name} {version(name)}")
    print("  ".join(versions))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"cpus: os.cpu_count()={os.cpu_count()}  usable={affinity}  load average: {load}")
    print(f"trimcp imported from {config.source / 'trimcp'}{describe_source(config.source)}")
    print()


def describe_source(source: Path) -> str:
    """The commit and whether trimcp/ has uncommitted changes, when ``source`` is the repo."""
    if source != ROOT:
        return ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        git = ["git", "-C", str(ROOT)]
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--", "trimcp"], capture_output=True, text=True
        ).stdout.strip()
        return f" (HEAD {head}{', with uncommitted changes in trimcp/' if dirty else ''})"
    return ""


def main(config: Config) -> int:
    print_header(config)
    began = time.perf_counter()
    port = free_port()  # every server of the run listens here, one at a time
    print(f"tools/call echo on 127.0.0.1:{port}/mcp, JSON answers")
    rows = run_rounds(config, port)
    print()
    print_rows(rows, config)
    print()
    print_ratios(rows, config)
    print()
    print_identity(rows)
    failed = False
    for row in rows.values():
        if row.error:
            print(f"note: {row.kind.label}: {row.error}")
            failed = True
    run_profiles(config, port)
    print()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"total wall time: {time.perf_counter() - began:.0f} s; load average now: {load}")
    return 1 if failed else 0


def find_pyspy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def parse_args(argv: list[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, few calls")
    parser.add_argument("--repeats", type=int, help="rounds (default 3; quick 1)")
    parser.add_argument("--requests", type=int, help="timed calls per row and C (default 3,000)")
    parser.add_argument("--warmup", type=int, help="warm-up calls before each C (default 300)")
    parser.add_argument("--concurrency", type=int, nargs="+", help="connections (default 1 16)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds per job")
    parser.add_argument("--no-profile", action="store_true", help="skip the py-spy profiles")
    parser.add_argument("--py-spy", help="py-spy binary (default: beside python, else PATH)")
    parser.add_argument(
        "--profile-seconds", type=float, default=5.0, help="py-spy sampling time (default 5)"
    )
    parser.add_argument("--keep-profiles", help="keep py-spy's raw output in this folder")
    parser.add_argument(
        "--source",
        type=Path,
        default=ROOT,
        help="import trimcp from this folder (default: the repository), e.g. an export of a "
        "commit (git archive HEAD trimcp | tar -x -C DIR) while others edit the working tree",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    conc = tuple(sorted(set(args.concurrency or (1, 16))))
    if min(conc) < 1:
        parser.error("--concurrency must be >= 1")
    sampler = None if args.no_profile or quick else (args.py_spy or find_pyspy())
    return Config(
        quick=quick,
        repeats=max(1, args.repeats or (1 if quick else 3)),
        requests=max(1, args.requests or (500 if quick else 3_000)),
        warmup=max(0, args.warmup if args.warmup is not None else (50 if quick else 300)),
        concurrency=conc,
        time_limit=args.time_limit,
        profile=sampler,
        profile_seconds=args.profile_seconds,
        keep_profiles=args.keep_profiles,
        source=args.source.resolve(),
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
