"""Watching subscribed files: trimcp.skills' polling ``FileWatcher`` against ``watchfiles``.

Run from the repository root (``watchfiles`` must be installed for its rows;
``pip install watchfiles``; without it only the polling rows are printed)::

    python bench/skills_watch.py            # full run, about 2 minutes
    python bench/skills_watch.py --quick    # smoke run, about 20 s

For N = 10, 100 and 1,000 files (50 per folder, in a temporary tree), each way of watching
is measured in its own ``trio.run``:

* idle CPU: process CPU time (``time.process_time``, every thread) over ``--idle`` seconds
  of watching files that do not change, per second of wall time;
* latency: ``--changes`` times, wait a random delay (0 to one interval), append a line to
  a random watched file and time (``perf_counter``) until the watcher reports it (the
  waiting side looks every millisecond);
* for polling also the CPU of one pass over the N files (``look``, median of 20);
* for watchfiles also the set-up time of a watcher over N paths (its path set is fixed, so
  each subscribe or unsubscribe would pay it again);
* for both, whether a file replaced by a rename (how editors and ``write_file`` save) is
  reported, and then still watched: a line appended afterwards is reported too.

Polling uses ``interval`` = ``[skills] watch_interval`` (default 1 s). watchfiles runs with
its defaults (``debounce`` 1,600 ms, ``step`` 50 ms: a lone change is reported after 50 ms
of quiet), watching the N file paths, not recursive.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import trio

# Run as a script, this directory is sys.path[0], where bench/http.py would shadow the
# standard library's http for the imports below.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

from trimcp.config import SkillsSettings
from trimcp.skills._watch import FileWatcher, look
from trimcp.skills.jail import Jail

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.skills.jail import Resolved

PER_FOLDER = 50
SIZES = (10, 100, 1000)


@dataclass
class Row:
    """One measured configuration."""

    way: str
    files: int
    cpu_ms_per_s: float
    latency_ms: list[float]
    extra: str = ""

    def render(self) -> str:
        lat = self.latency_ms
        mean = statistics.fmean(lat) if lat else float("nan")
        worst = max(lat) if lat else float("nan")
        return (
            f"| {self.way} | {self.files:,} | {self.cpu_ms_per_s:.2f} | {mean:.0f} | {worst:.0f} "
            f"| {self.extra} |"
        )


def make_tree(base: Path, count: int) -> list[Path]:
    files = []
    for index in range(count):
        folder = base / f"d{index // PER_FOLDER:03d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"file{index:05d}.txt"
        path.write_text("line\n")
        files.append(path)
    return files


def touch(path: Path) -> None:
    with path.open("a") as file:
        file.write("more\n")


@dataclass
class Arrivals:
    """When a watcher last reported each path, and a way to wait for the next report."""

    at: dict[str, float] = field(default_factory=dict)
    changed: trio.Event = field(default_factory=trio.Event)

    def record(self, path: str) -> None:
        self.at[path] = time.perf_counter()
        self.changed.set()
        self.changed = trio.Event()

    async def change_and_wait(
        self, path: Path, change: Callable[[], object], limit: float
    ) -> float | None:
        """Make ``change``; return ms until ``path`` is reported (None: not within limit)."""
        start = time.perf_counter()
        change()
        with trio.move_on_after(limit):
            while self.at.get(str(path), 0.0) < start:
                await self.changed.wait()
            return (self.at[str(path)] - start) * 1000
        return None

    async def latencies(self, files: list[Path], changes: int, spread: float) -> list[float]:
        """Time ``changes`` appends to random files, each after a random pause."""
        found = []
        for _ in range(changes):
            await trio.sleep(random.uniform(0, spread))
            path = random.choice(files)
            seen = await self.change_and_wait(path, functools.partial(touch, path), 3 * spread + 1)
            if seen is not None:
                found.append(seen)
        return found

    async def rename_over(self, path: Path, limit: float) -> str:
        """Replace ``path`` by a rename, then append to it: were both changes reported?"""
        spare = path.with_name(path.name + ".new")

        def replace() -> None:
            spare.write_text("replaced\n")
            os.replace(spare, path)

        first = await self.change_and_wait(path, replace, limit)
        second = await self.change_and_wait(path, functools.partial(touch, path), limit)
        if first is not None and second is not None:
            return "sees a file replaced by a rename, and after"
        return "misses a file replaced by a rename" + (" (sees the rename)" if first else "")


async def idle_cpu(seconds: float) -> float:
    """CPU ms per wall second of the whole process while sleeping ``seconds``."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await trio.sleep(seconds)
    return (time.process_time() - cpu0) * 1000 / (time.perf_counter() - wall0)


async def measure_nothing(idle: float) -> Row:
    """The baseline: the process with trio sleeping and nothing watched."""
    return Row("nothing watched (baseline)", 0, await idle_cpu(idle), [])


async def measure_polling(files: list[Path], interval: float, idle: float, changes: int) -> Row:
    jail = Jail([files[0].parent.parent])
    resolved: dict[str, Resolved] = {str(path): jail.resolve(str(path)) for path in files}
    arrivals = Arrivals()

    async def notify(uri: str) -> None:
        arrivals.record(uri)

    watcher = FileWatcher(notify, resolved.keys, limit=len(files), interval=interval)
    for uri, item in resolved.items():
        await watcher.watch(uri, item)
    per_pass = []
    items = list(resolved.values())
    for _ in range(20):
        start = time.process_time()
        look(items)
        per_pass.append((time.process_time() - start) * 1e6)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher.run)
        cpu = await idle_cpu(idle)
        latencies = await arrivals.latencies(files, changes, interval)
        renamed = await arrivals.rename_over(files[0], 3 * interval + 1)
        nursery.cancel_scope.cancel()
    extra = f"one pass {statistics.median(per_pass):,.0f} µs CPU; {renamed}"
    return Row(f"polling every {interval:g} s (FileWatcher)", len(files), cpu, latencies, extra)


async def measure_watchfiles(files: list[Path], idle: float, changes: int, folders: bool) -> Row:
    """watchfiles over the file paths, or over their folders (events filtered by name)."""
    import anyio
    import watchfiles
    from watchfiles._rust_notify import RustNotify

    paths = sorted({str(path.parent) for path in files}) if folders else [str(p) for p in files]
    started = time.perf_counter()
    with RustNotify(paths, False, False, 300, False, False):
        setup_ms = (time.perf_counter() - started) * 1000
    stop = anyio.Event()
    arrivals = Arrivals()
    wanted = {str(path) for path in files}

    async def consume() -> None:
        async for batch in watchfiles.awatch(*paths, stop_event=stop, recursive=False):
            for _, where in batch:
                if where in wanted:
                    arrivals.record(where)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consume)
        await trio.sleep(1.0)  # let its thread start watching
        cpu = await idle_cpu(idle)
        latencies = await arrivals.latencies(files, changes, 1.0)
        renamed = await arrivals.rename_over(files[0], 3.0)
        stop.set()  # its thread sees it within rust_timeout (5 s); cancelling would wait too
    way = "watchfiles on the folders" if folders else "watchfiles on the files"
    extra = f"set-up {setup_ms:,.1f} ms; {renamed}"
    return Row(way, len(files), cpu, latencies, extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="short idle periods, few changes")
    parser.add_argument("--idle", type=float, help="seconds of idle watching per row")
    parser.add_argument("--changes", type=int, help="changes timed per row")
    args = parser.parse_args()
    idle = args.idle or (2.0 if args.quick else 10.0)
    changes = args.changes or (3 if args.quick else 10)
    interval = SkillsSettings().watch_interval
    have_watchfiles = importlib.util.find_spec("watchfiles") is not None
    print(f"# {platform.python_version()} {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"# idle {idle:g} s per row, {changes} changes timed per row")
    print("| way | files | idle CPU ms/s | mean latency ms | worst ms | notes |")
    print("|---|---|---|---|---|---|")
    print(trio.run(measure_nothing, idle).render(), flush=True)
    for count in SIZES:
        with tempfile.TemporaryDirectory() as base:
            files = make_tree(Path(base), count)
            print(trio.run(measure_polling, files, interval, idle, changes).render(), flush=True)
        for folders in (False, True) if have_watchfiles else ():
            with tempfile.TemporaryDirectory() as base:
                files = make_tree(Path(base), count)
                row = trio.run(measure_watchfiles, files, idle, changes, folders)
                print(row.render(), flush=True)
    if not have_watchfiles:
        print("# watchfiles is not installed: pip install watchfiles for its rows", file=sys.stderr)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
