"""Tables and profile summaries for ``bench/http.py``.

Where a server's time goes, from either source, grouped by *layer* (which package the code
belongs to):

* a cProfile stats file (deterministic: every call is timed, which slows call-heavy code
  such as trio's scheduler more than system calls, so shares lean towards Python code);
  a builtin's own time counts for the layer that called it, except socket calls and the
  epoll wait, which get rows of their own;
* py-spy's raw (collapsed-stack) output (sampling: undistorted shares; each sample counts
  for the layer of its innermost frame, and for every layer on its stack in the
  "inclusive" table);
* two tracemalloc snapshots: bytes per session by allocation site, named by the innermost
  frame inside trimcp (what trio or the stdlib allocates on trimcp's behalf counts for
  the trimcp line that asked for it).
"""

from __future__ import annotations

import pstats
import re
import tracemalloc
from pathlib import Path
from typing import Any

# Which layer a file belongs to (first match wins; hypercorn before trio, as hypercorn
# has a trio/ folder of its own).
LAYERS = [
    ("hypercorn", "hypercorn/"),
    ("h11", "h11/"),
    ("trimcp.http (McpHttpApp, HttpSessionStream)", "trimcp/http/"),
    ("trimcp.transports (event store, SSE)", "trimcp/transports/"),
    ("trimcp.sessions (session actor, manager)", "trimcp/sessions/"),
    ("trimcp.protocol (codec, lifecycle)", "trimcp/protocol/"),
    ("trimcp.actors + supervision", "trimcp/actors/"),
    ("trimcp.actors + supervision", "trimcp/supervision/"),
    ("trimcp.server (MCPServer, tool handler)", "trimcp/server/"),
    ("jsonschema (argument validation)", "jsonschema"),
    ("trio (scheduler, cancel scopes, sockets)", "trio/"),
    ("bench hooks and tools", "bench/"),
]
SOCKET = "socket system calls (send/recv)"
IDLE = "idle (epoll wait)"
_SOCKET_BUILTINS = ("<method 'send' of", "<method 'recv' of", "<method 'recv_into' of")
_EPOLL_BUILTIN = "<method 'poll' of 'select.epoll' objects>"
# Frames whose inclusive share the py-spy summary shows: what each stage costs in all.
MARKERS = [
    ("hypercorn reads and parses requests (TCPServer._read_data)", "TCPServer._read_data "),
    ("McpHttpApp (the whole ASGI call, sends included)", "McpHttpApp.__call__ "),
    ("hypercorn sends (HTTPStream.app_send, from the app)", "HTTPStream.app_send "),
    ("session actors (Actor._guarded)", "Actor._guarded "),
    ("MCPServer.handle_request", "MCPServer.handle_request "),
    ("event store (MemoryEventStore)", "MemoryEventStore."),
]


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    print(fmt(headers))
    print("-" * len(fmt(headers)))
    for row in rows:
        print(fmt(row))


def layer_of(filename: str) -> str:
    for name, marker in LAYERS:
        if marker in filename:
            return name
    return "other Python (stdlib, attrs, outcome)"


def _layer_table(layers: dict[str, float], unit: str) -> None:
    total = sum(layers.values())
    rows = [
        [name, f"{amount:,.2f}" if unit == "s" else f"{amount:,.0f}", f"{amount / total:.0%}"]
        for name, amount in sorted(layers.items(), key=lambda item: -item[1])
    ]
    print_table(["layer (own time)", unit, "share"], rows)


def cprofile_summary(path: str, title: str) -> None:
    """Print own time by layer and the top functions of a cProfile stats file."""
    raw: dict[tuple[str, int, str], Any] = pstats.Stats(path).stats  # type: ignore[attr-defined]  # no public accessor
    layers: dict[str, float] = {}
    for func, (_cc, _nc, tottime, _ct, callers) in raw.items():
        filename, _line, name = func
        if filename == "~":
            if name == _EPOLL_BUILTIN:
                layers[IDLE] = layers.get(IDLE, 0.0) + tottime
            elif name.startswith(_SOCKET_BUILTINS):
                layers[SOCKET] = layers.get(SOCKET, 0.0) + tottime
            else:  # a builtin (orjson, dict ops, ...) counts for the layer that called it
                for caller, edge in callers.items():
                    layer = layer_of(caller[0])
                    layers[layer] = layers.get(layer, 0.0) + edge[2]
            continue
        layer = layer_of(filename)
        layers[layer] = layers.get(layer, 0.0) + tottime
    print(f"cProfile of the trimcp server, {title}: {sum(layers.values()):.2f} s profiled")
    _layer_table(layers, "s")
    print()
    top = sorted(raw.items(), key=lambda item: -item[1][2])[:15]
    rows = [
        [f"{Path(f[0]).name}:{f[1]}({f[2]})"[:80], f"{e[1]:,}", f"{e[2]:.3f}", f"{e[3]:.3f}"]
        for f, e in top
    ]
    print_table(["function (top 15 by own time)", "calls", "own s", "cum s"], rows)
    print()


_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*):(?P<line>\d+)\)$")


def _parse_frame(frame: str) -> tuple[str, str, str]:
    match = _FRAME.match(frame)
    if match is None:
        return frame, "", ""
    return match["func"], match["file"], match["line"]


def pyspy_summary(path: str, title: str) -> None:
    """Print own and inclusive shares by layer, and the hottest lines, of py-spy raw output."""
    stacks: list[tuple[list[str], int]] = []
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            stacks.append((stack.split(";"), int(count)))
    total = sum(count for _, count in stacks)
    if not total:
        print(f"py-spy recorded no samples for {title}")
        return
    own: dict[str, float] = {}
    leaves: dict[str, int] = {}
    inclusive = dict.fromkeys((label for label, _ in MARKERS), 0)
    for frames, count in stacks:
        func, filename, line = _parse_frame(frames[-1])
        if func.endswith("_nonblocking_helper") and filename.endswith("trio/_socket.py"):
            layer = SOCKET
        elif "epoll" in func or func.endswith("get_events"):
            layer = IDLE
        else:
            layer = layer_of(filename)
        own[layer] = own.get(layer, 0) + count
        leaf = f"{func} ({filename}:{line})"
        leaves[leaf] = leaves.get(leaf, 0) + count
        joined = ";".join(frames)
        for label, marker in MARKERS:
            if marker in joined:
                inclusive[label] += count
    print(f"py-spy samples of the trimcp server, {title}: {total:,} samples")
    _layer_table(own, "samples")
    print()
    rows = [[label, f"{count / total:.0%}"] for label, count in inclusive.items()]
    print_table(["stage (inclusive: samples with this frame on the stack)", "share"], rows)
    print()
    top = sorted(leaves.items(), key=lambda item: -item[1])[:10]
    rows = [[leaf[:90], f"{count / total:.1%}"] for leaf, count in top]
    print_table(["innermost frame (top 10)", "share"], rows)
    print()


def allocation_site(trace: tracemalloc.Traceback) -> str:
    """Name the newest frame in trimcp (else the newest frame) of an allocation."""
    frames = list(reversed(trace))  # newest first
    chosen = next((f for f in frames if "/trimcp/" in f.filename), frames[0])
    filename = chosen.filename
    if "/trimcp/" in filename:
        shown = filename[filename.rfind("/trimcp/") + 1 :]
    elif "site-packages/" in filename:
        shown = filename[filename.rfind("site-packages/") + len("site-packages/") :]
    else:
        shown = Path(filename).name
    return f"{shown}:{chosen.lineno}"


def memory_breakdown(prefix: str, sessions: int) -> None:
    """Print bytes per session by allocation site, loaded and after the deletes."""
    before = tracemalloc.Snapshot.load(f"{prefix}.before")
    for stage, label in (("loaded", "per idle session"), ("after", "left per deleted session")):
        later = tracemalloc.Snapshot.load(f"{prefix}.{stage}")
        sites: dict[str, int] = {}
        for diff in later.compare_to(before, "traceback"):
            site = allocation_site(diff.traceback)
            sites[site] = sites.get(site, 0) + diff.size_diff
        total = sum(sites.values())
        top = sorted(sites.items(), key=lambda item: -item[1])[:12]
        rows = [[site, f"{size / sessions:,.0f}"] for site, size in top]
        rows.append(["(all sites)", f"{total / sessions:,.0f}"])
        print_table([f"trimcp allocation site ({label})", "bytes/session"], rows)
        print()
