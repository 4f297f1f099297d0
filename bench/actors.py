"""Micro-benchmarks: trimcp's actor runtime against the raw trio code it replaces.

Run from the repository root::

    python bench/actors.py            # full run, about 30 s
    python bench/actors.py --quick    # smoke run, about 2 s

Everything runs in one ``trio.run``. Each benchmark first sizes itself (a probe grows ``n``
until one run takes ``--seconds``), then does one warm-up run at the final size, then
``--repeats`` timed runs (``time.perf_counter``, after a ``gc.collect()``). A raw baseline and
its trimcp counterpart are timed *interleaved* (raw, trimcp, raw, trimcp, ...) so both see the
same machine load; a ratio is the median over rounds of (trimcp rate / raw rate) from the same
round, and "range" is its min-max. Setup (opening nurseries, spawning servers, building child
specs) is outside the timed part except in the spawn rows, where spawning is the thing timed.

What is compared:

* ping-pong: raw = two tasks and two memory channels of size 1 (A sends, B echoes back);
  trimcp = two actors *casting* to each other (the driver starts the rally with one ``call``
  that the pinger answers with ``DEFER`` once ``n`` round trips are done).
* call: raw = a server task on a memory channel (size 64, like an actor's mailbox) receiving
  ``(msg, reply_send)``; per call the client opens ``open_memory_channel(1)``, sends and waits
  for the reply under ``trio.fail_after(5)``; the server answers with ``await reply.send``.
  trimcp = ``await ref.call(msg, timeout=5)`` to an actor whose ``handle_call`` returns it.
* one-way: raw = ``await send.send(i)`` into a size-64 channel read by a counting task, timed
  until it has received all; trimcp = ``await ref.cast(i)`` to a counting actor, timed until a
  final ``call`` returns the count.
* spawn + stop: ``spawn(nursery, actor)`` + ``await ref.stop()``; with ``trimcp.supervision``
  (when it is importable) ``start_child`` + ``terminate_child``; raw reference: a task started
  with ``nursery.start``, cancelled and waited for.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

import trio

from trimcp.actors import DEFER, Actor, ActorRef, ReplyTo, spawn

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from types import ModuleType

    #: Runs ``n`` operations and returns the elapsed wall time in seconds.
    Bench: TypeAlias = Callable[[int], Awaitable[float]]

MAILBOX = 64  # raw channel size, the same as Actor.mailbox_size
CALL_TIMEOUT = 5.0
TARGET_RATIO = 0.7
TARGET_SPAWN_US = 50.0


# --- raw trio baselines ------------------------------------------------------------------


async def raw_ping_pong(n: int) -> float:
    """Two tasks, two channels of size 1: A sends, B echoes, A waits for the echo."""
    to_b, b_inbox = trio.open_memory_channel[int](1)
    to_a, a_inbox = trio.open_memory_channel[int](1)

    async def echo() -> None:
        async for item in b_inbox:
            await to_a.send(item)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(echo)
        start = time.perf_counter()
        for i in range(n):
            await to_b.send(i)
            await a_inbox.receive()
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return elapsed


async def raw_call(n: int) -> float:
    """Request/reply with a one-shot reply channel and a deadline per call."""
    requests, inbox = trio.open_memory_channel[tuple[int, trio.MemorySendChannel[int]]](MAILBOX)

    async def server() -> None:
        async for message, reply in inbox:
            await reply.send(message)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        start = time.perf_counter()
        for i in range(n):
            reply_send, reply_receive = trio.open_memory_channel[int](1)
            with trio.fail_after(CALL_TIMEOUT):
                await requests.send((i, reply_send))
                await reply_receive.receive()
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return elapsed


async def raw_send(n: int) -> float:
    """One-way sends into a bounded channel, until the consumer has received them all."""
    send, inbox = trio.open_memory_channel[int](MAILBOX)
    done = trio.Event()

    async def consumer() -> None:
        count = 0
        async for _ in inbox:
            count += 1
            if count == n:
                done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        start = time.perf_counter()
        for i in range(n):
            await send.send(i)
        await done.wait()
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return elapsed


async def raw_task_start_stop(n: int) -> float:
    """Reference for spawn: ``nursery.start`` a task, cancel it, wait until it has finished."""

    async def idle(task_status: trio.TaskStatus[tuple[trio.CancelScope, trio.Event]]) -> None:
        finished = trio.Event()
        try:
            with trio.CancelScope() as scope:
                task_status.started((scope, finished))
                await trio.sleep_forever()
        finally:
            finished.set()

    async with trio.open_nursery() as nursery:
        start = time.perf_counter()
        for _ in range(n):
            scope, finished = await nursery.start(idle)
            scope.cancel()
            await finished.wait()
        return time.perf_counter() - start


# --- the same through trimcp -------------------------------------------------------------


class Echo(Actor):
    """Replies to every call with the message itself."""

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        return message


class Counter(Actor):
    """Counts casts; a call returns the count."""

    def __init__(self) -> None:
        self.count = 0

    async def handle_cast(self, message: object) -> None:
        self.count += 1

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        return self.count


class Ponger(Actor):
    """Casts ``None`` back to the ref it was sent."""

    async def handle_cast(self, message: object) -> None:
        assert isinstance(message, ActorRef)
        await message.cast(None)


class Pinger(Actor):
    """A call ``(peer, n)`` starts ``n`` cast round trips with ``peer``; its reply ends them."""

    def __init__(self) -> None:
        self.left = 0
        self.me: ActorRef | None = None
        self.peer: ActorRef | None = None
        self.reply_to: ReplyTo | None = None

    async def init(self) -> None:
        self.me = self.ref

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        assert isinstance(message, tuple)
        self.peer, self.left = message
        self.reply_to = reply_to
        assert self.peer is not None
        await self.peer.cast(self.me)
        return DEFER

    async def handle_cast(self, message: object) -> None:
        self.left -= 1
        if self.left:
            assert self.peer is not None
            await self.peer.cast(self.me)
        else:
            assert self.reply_to is not None
            self.reply_to.reply(None)


class Idle(Actor):
    """Does nothing; for spawn + stop."""


async def trimcp_ping_pong(n: int) -> float:
    async with trio.open_nursery() as nursery:
        pinger = await spawn(nursery, Pinger())
        ponger = await spawn(nursery, Ponger())
        start = time.perf_counter()
        await pinger.call((ponger, n), timeout=3600)
        elapsed = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    return elapsed


async def trimcp_call(n: int) -> float:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Echo())
        start = time.perf_counter()
        for i in range(n):
            await ref.call(i, timeout=CALL_TIMEOUT)
        elapsed = time.perf_counter() - start
        await ref.stop()
    return elapsed


async def trimcp_cast(n: int) -> float:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Counter())
        start = time.perf_counter()
        for i in range(n):
            await ref.cast(i)
        count = await ref.call(None, timeout=3600)
        elapsed = time.perf_counter() - start
        await ref.stop()
    if count != n:
        raise RuntimeError(f"counter saw {count} casts, expected {n}")
    return elapsed


async def trimcp_spawn_stop(n: int) -> float:
    async with trio.open_nursery() as nursery:
        start = time.perf_counter()
        for _ in range(n):
            ref = await spawn(nursery, Idle())
            await ref.stop()
        return time.perf_counter() - start


# --- the supervisor, if trimcp.supervision exists ----------------------------------------
#
# trimcp.supervision was written in parallel with this script, so it is imported lazily: if it
# is missing (or its API changes), that row says why and the other rows still run.


def load_supervision() -> ModuleType | str:
    """Return ``trimcp.supervision``, or why it cannot be used."""
    try:
        module = importlib.import_module("trimcp.supervision")
    except ModuleNotFoundError as exc:
        if exc.name in ("trimcp.supervision", "trimcp"):
            return "not available"
        return f"import failed: {exc!r}"
    except Exception as exc:  # noqa: BLE001  (a half-written module must not end the run)
        return f"import failed: {exc!r}"
    needed = ("open_supervisor", "ChildSpec", "start_child", "terminate_child")
    missing = [name for name in needed if not hasattr(module, name)]
    if missing:
        return f"not available (trimcp.supervision has no {', '.join(missing)})"
    return module


def supervisor_bench(module: ModuleType) -> Bench:
    """``start_child`` + ``terminate_child`` of a temporary idle actor under one supervisor.

    ``temporary`` children are forgotten by ``terminate_child`` (OTP rule), so nothing piles up
    and no ``delete_child`` is needed.
    """

    async def run(n: int) -> float:
        specs = [
            module.ChildSpec.for_actor(f"bench-{i}", Idle, restart="temporary") for i in range(n)
        ]
        async with module.open_supervisor() as supervisor:
            start = time.perf_counter()
            for spec in specs:
                await module.start_child(supervisor, spec)
                await module.terminate_child(supervisor, spec.id)
            return time.perf_counter() - start

    return run


# --- running and reporting ---------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    repeats: int
    seconds_per_repeat: float
    probe_seconds: float


@dataclass
class Result:
    label: str
    n: int = 0
    rates: list[float] = field(default_factory=list)  # operations per second, per repeat
    error: str | None = None

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    @property
    def us(self) -> float:
        return 1e6 / self.rate


async def _attempt(result: Result, step: Awaitable[None], timeout: float) -> None:
    """Run one step of a benchmark; an error (or a hang) becomes the row's text."""
    try:
        with trio.fail_after(timeout):
            await step
    except Exception as exc:  # noqa: BLE001  (report it and carry on with the other rows)
        result.error = f"error: {exc!r}"


async def _calibrate(bench: Bench, result: Result, config: Config) -> None:
    """Grow ``n`` until a run takes ``probe_seconds``, size it, then warm up once."""
    n = 50
    elapsed = await bench(n)
    while elapsed < config.probe_seconds:
        n *= 4
        elapsed = await bench(n)
    result.n = max(50, round(n * config.seconds_per_repeat / elapsed))
    await bench(result.n)  # warm-up at the final size


async def _timed(bench: Bench, result: Result) -> None:
    gc.collect()
    result.rates.append(result.n / await bench(result.n))


async def measure_group(cases: list[tuple[str, Bench]], config: Config) -> list[Result]:
    """Calibrate and warm up each case, then time them *interleaved*, one round per repeat.

    Interleaving puts a raw baseline and its trimcp counterpart under the same machine load,
    so their per-round ratio is meaningful even when the load drifts between rounds.
    """
    timeout = 60 + 20 * config.seconds_per_repeat
    results = [Result(label) for label, _ in cases]
    for (_, bench), result in zip(cases, results, strict=True):
        await _attempt(result, _calibrate(bench, result, config), timeout)
    for _ in range(config.repeats):
        for (_, bench), result in zip(cases, results, strict=True):
            if result.error is None:
                await _attempt(result, _timed(bench, result), timeout)
    return results


def fmt_rate(rate: float) -> str:
    return f"{rate:,.0f}/s"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    line = "  ".join(
        h.ljust(w) if i == 0 else h.rjust(w)
        for i, (h, w) in enumerate(zip(headers, widths, strict=True))
    )
    print(line)
    print("-" * len(line))
    for row in rows:
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def throughput_row(result: Result) -> list[str]:
    if result.error is not None:
        return [result.label, "-", "error", "-", "-", "-"]
    return [
        result.label,
        f"{result.n:,}",
        fmt_rate(result.rate),
        fmt_rate(min(result.rates)),
        fmt_rate(max(result.rates)),
        f"{result.us:.2f} µs",
    ]


def ratio_row(label: str, ours: Result, raw: Result) -> list[str]:
    """Ratio = median over rounds of (trimcp rate / raw rate) measured in the same round."""
    target = f">= {TARGET_RATIO}x"
    if ours.error is not None or raw.error is not None:
        return [label, "-", "-", "-", "-", target, "MISS"]
    ratios = [o / r for o, r in zip(ours.rates, raw.rates, strict=True)]
    ratio = statistics.median(ratios)
    verdict = "PASS" if ratio >= TARGET_RATIO else "MISS"
    return [
        label,
        fmt_rate(ours.rate),
        fmt_rate(raw.rate),
        f"{ratio:.2f}x",
        f"{min(ratios):.2f}-{max(ratios):.2f}",
        target,
        verdict,
    ]


def spawn_row(result: Result, *, reference: bool = False) -> list[str]:
    target = "(reference)" if reference else f"<= {TARGET_SPAWN_US:.0f} µs"
    if result.error is not None:
        unavailable = result.error.startswith("supervisor: not available")
        text, verdict = ("not available", "n/a") if unavailable else ("error", "MISS")
        return [result.label, "-", text, "-", "-", target, "" if reference else verdict]
    verdict = "" if reference else ("PASS" if result.us <= TARGET_SPAWN_US else "MISS")
    return [
        result.label,
        f"{result.n:,}",
        f"{result.us:.1f} µs",
        f"{1e6 / max(result.rates):.1f} µs",
        f"{1e6 / min(result.rates):.1f} µs",
        target,
        verdict,
    ]


def print_notes(results: list[Result]) -> None:
    for result in results:
        if result.error is not None:
            prefix = "" if result.error.startswith("supervisor:") else f"{result.label}: "
            print(f"note: {prefix}{result.error}")


def print_header(config: Config, quick: bool) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    print(
        f"trimcp actor benchmarks  ({'--quick' if quick else 'full run'}; median of "
        f"{config.repeats} repeats after a warm-up, ~{config.seconds_per_repeat:g} s per repeat)"
    )
    print(
        f"python {platform.python_version()} ({sys.implementation.name})  trio {trio.__version__}"
    )
    print(f"cpus: os.cpu_count()={os.cpu_count()}  usable={affinity}  {platform.platform()}")
    print()


async def main(config: Config, quick: bool) -> None:
    print_header(config, quick)
    began = time.perf_counter()
    raw_pp, our_pp = await measure_group(
        [
            ("raw ping-pong (2 tasks, 2 channels size 1)", raw_ping_pong),
            ("trimcp ping-pong (2 actors casting)", trimcp_ping_pong),
        ],
        config,
    )
    raw_c, our_c = await measure_group(
        [
            ("raw call (reply channel + fail_after)", raw_call),
            ("trimcp ref.call round trip", trimcp_call),
        ],
        config,
    )
    raw_s, our_s = await measure_group(
        [
            ("raw one-way send (channel size 64)", raw_send),
            ("trimcp ref.cast (+ final call)", trimcp_cast),
        ],
        config,
    )
    spawn_cases: list[tuple[str, Bench]] = [
        ("raw task start + cancel + join", raw_task_start_stop),
        ("spawn + ref.stop (no supervisor)", trimcp_spawn_stop),
    ]
    supervision = load_supervision()
    sup_label = "supervisor start_child + terminate_child"
    if not isinstance(supervision, str):
        spawn_cases.append((sup_label, supervisor_bench(supervision)))
    raw_spawn, bare, *rest = await measure_group(spawn_cases, config)
    sup = rest[0] if rest else Result(sup_label, error=f"supervisor: {supervision}")

    print_table(
        ["benchmark", "n/repeat", "median", "min", "max", "per op"],
        [throughput_row(r) for r in (raw_pp, our_pp, raw_c, our_c, raw_s, our_s)],
    )
    print()
    print_table(
        ["spawn + stop (one actor)", "n/repeat", "median", "best", "worst", "target", "result"],
        [spawn_row(raw_spawn, reference=True), spawn_row(bare), spawn_row(sup)],
    )
    print()
    print_table(
        ["ratio (trimcp / raw)", "trimcp", "raw", "ratio", "range", "target", "result"],
        [
            ratio_row("call / raw call", our_c, raw_c),
            ratio_row("cast / raw one-way send", our_s, raw_s),
            ratio_row("ping-pong / raw ping-pong", our_pp, raw_pp),
        ],
    )
    print()
    print_notes([raw_pp, our_pp, raw_c, our_c, raw_s, our_s, raw_spawn, bare, sup])
    print(f"total wall time: {time.perf_counter() - began:.1f} s")


def parse_args(argv: list[str] | None = None) -> tuple[Config, bool]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smoke run, about 2 s in total")
    parser.add_argument("--repeats", type=int, help="timed runs per benchmark (default 5, quick 3)")
    parser.add_argument("--seconds", type=float, help="target seconds per timed run")
    args = parser.parse_args(argv)
    if args.quick:
        config = Config(repeats=3, seconds_per_repeat=0.025, probe_seconds=0.005)
    else:
        config = Config(repeats=5, seconds_per_repeat=0.45, probe_seconds=0.05)
    if args.repeats is not None:
        config = Config(args.repeats, config.seconds_per_repeat, config.probe_seconds)
    if args.seconds is not None:
        config = Config(config.repeats, args.seconds, min(config.probe_seconds, args.seconds / 4))
    return config, args.quick


if __name__ == "__main__":
    cfg, is_quick = parse_args()
    trio.run(main, cfg, is_quick)
