"""Where trimcp's *client* spends its time: a cProfile stats file grouped by layer.

Used by ``bench/client.py --profile``. A function's own time counts for the layer of its
file; a builtin's own time (orjson, dict operations, ...) counts for the layer that called
it, except the pipe system calls (``os.read`` / ``os.write``) and the epoll wait, which get
rows of their own. cProfile times every call, which slows call-heavy code (trio's
scheduler, small helpers) more than system calls: shares lean towards Python code.
"""

from __future__ import annotations

import pstats
from pathlib import Path
from typing import Any

from _http_report import print_table

# First match wins.
LAYERS = [
    ("trimcp.client (ClientSession, ServerProcess)", "trimcp/client/"),
    ("trimcp.transports (StdioStream)", "trimcp/transports/"),
    ("trimcp.protocol (codec, client connection)", "trimcp/protocol/"),
    ("trimcp.actors + supervision", "trimcp/actors/"),
    ("trimcp.actors + supervision", "trimcp/supervision/"),
    ("trimcp other", "trimcp/"),
    ("trio (scheduler, cancel scopes, pipes)", "trio/"),
    ("bench worker (caller loop)", "bench/"),
]
PIPES = "pipe system calls (os.read/os.write)"
IDLE = "idle (epoll wait)"
_PIPE_BUILTINS = ("<built-in method posix.read>", "<built-in method posix.write>")
_EPOLL_BUILTIN = "<method 'poll' of 'select.epoll' objects>"


def layer_of(filename: str) -> str:
    for name, marker in LAYERS:
        if marker in filename:
            return name
    return "other Python (stdlib, outcome, attrs)"


def cprofile_summary(path: str, title: str, requests: int) -> None:
    """Print own time by layer (also per request) and the top functions of a stats file."""
    raw: dict[tuple[str, int, str], Any] = pstats.Stats(path).stats  # type: ignore[attr-defined]  # no public accessor
    layers: dict[str, float] = {}
    for func, (_cc, _nc, tottime, _ct, callers) in raw.items():
        filename, _line, name = func
        if filename == "~":
            if name == _EPOLL_BUILTIN:
                layers[IDLE] = layers.get(IDLE, 0.0) + tottime
            elif name in _PIPE_BUILTINS:
                layers[PIPES] = layers.get(PIPES, 0.0) + tottime
            else:
                for caller, edge in callers.items():
                    layer = layer_of(caller[0])
                    layers[layer] = layers.get(layer, 0.0) + edge[2]
            continue
        layer = layer_of(filename)
        layers[layer] = layers.get(layer, 0.0) + tottime
    total = sum(layers.values())
    print(
        f"cProfile of the trimcp client, {title}: {total:.2f} s profiled, "
        f"{requests:,} requests counted"
    )
    rows = [
        [
            name,
            f"{amount:,.2f}",
            f"{amount / max(requests, 1) * 1e6:,.0f}",
            f"{amount / total:.0%}",
        ]
        for name, amount in sorted(layers.items(), key=lambda item: -item[1])
    ]
    print_table(["layer (own time)", "s", "µs/req (profiled)", "share"], rows)
    print()
    top = sorted(raw.items(), key=lambda item: -item[1][2])[:20]
    rows = [
        [f"{Path(f[0]).name}:{f[1]}({f[2]})"[:80], f"{e[1]:,}", f"{e[2]:.3f}", f"{e[3]:.3f}"]
        for f, e in top
    ]
    print_table(["function (top 20 by own time)", "calls", "own s", "cum s"], rows)
    print()
