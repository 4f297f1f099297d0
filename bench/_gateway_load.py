"""The worker of ``bench/gateway.py``: trimcp's ``ClientSession`` in a fresh process, one job.

Usage (``bench/gateway.py`` runs it; by hand for a look)::

    python -P bench/_gateway_load.py '{"mode": "http", "url": "http://127.0.0.1:8000/mcp", ...}'

The client is the same in every row, trimcp's ``open_client_session`` on trio, so what differs
between the rows is only what stands between it and the upstream:

* ``mode: "stdio"`` ``{server}``: the client launches the upstream itself
  (``open_server_process(ProcessSpec(...))``) and talks to it over its pipes;
* ``mode: "http"`` ``{url}``: ``open_http_client_stream(url)`` (Streamable HTTP) to a proxy
  (trimcp's gateway or FastMCP's) that the bench started and that runs the upstream.

The job lists the tools first and picks the one tool whose name is ``echo`` or ends in
``_echo`` (a gateway namespaces it, e.g. ``bench__echo``). Then for each ``C`` in
``concurrency``: ``warmup`` calls, then exactly ``requests`` calls, with ``C`` tasks calling
``tools/call`` back to back, each call with its own text that the answer must echo. The timed
part gives req/s (``requests`` / the time from the first call to the last answer) and the
latencies (call -> result: p50, p99); also the client's CPU per request (``getrusage`` of
this process; the stdio upstream it launches is a child and left out) and, for every pid in
``watch`` (``{"proxy": pid, "upstream": pid}``; in stdio mode the upstream is the launched
child), that process's CPU per request (``/proc/<pid>/stat``). Everything runs under
``time_limit`` seconds (``trio.fail_after``). Prints one JSON line; ``{"error": ...}`` on
failure. On SIGTERM the job is cancelled and a launched server stopped on the way out.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Run with -P (bench/http.py would shadow the stdlib's http): bench/ goes last on the path,
# for the helpers shared with bench/client.py's worker.
sys.path.append(str(Path(__file__).resolve().parent))
from _client_load import LoadError, cpu_of, cpu_self, job_main

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.client import ClientSession


LIST_WAIT = 30.0  # seconds for a proxy's upstream to come up and list its tool


def pick_tool(names: list[str]) -> str | None:
    """The upstream's ``echo`` under whatever name the path in between gives it."""
    found = [name for name in names if name == "echo" or name.endswith("_echo")]
    if len(found) > 1:
        raise LoadError(f"expected one echo tool, the server lists {names!r}")
    return found[0] if found else None


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (``/proc/<pid>/task/<tid>/children``, Linux)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tids = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as file:
                    children = [int(p) for p in file.read().split()]
            except OSError:
                continue
            out.extend(children)
            todo.extend(children)
    return out


def find_upstream(proxy: int, marker: str) -> int | None:
    """The proxy's upstream: the one descendant whose command line names ``marker``."""
    found = []
    for pid in descendants(proxy):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                cmdline = file.read()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(pid)
    return found[0] if len(found) == 1 else None


async def measure(
    call: Callable[[str], Awaitable[str]],
    concurrency: int,
    count: int,
    watch: dict[str, int],
) -> dict[str, Any]:
    """``count`` calls with ``concurrency`` in flight; rate, latencies and CPU per request."""
    import trio

    latencies: list[float] = []
    issued = 0
    clock = time.perf_counter

    async def worker(index: int) -> None:
        nonlocal issued
        while issued < count:
            n = issued
            issued += 1
            text = f"c{index}-{n}"
            began = clock()
            answer = await call(text)
            latencies.append(clock() - began)
            if answer != text:
                raise LoadError(f"echo answered {answer!r} to {text!r}")

    cpu_before = {name: cpu_of(pid) for name, pid in watch.items()}
    client_before = cpu_self()
    began = clock()
    async with trio.open_nursery() as nursery:
        for index in range(concurrency):
            nursery.start_soon(worker, index)
    elapsed = clock() - began
    client_cpu = cpu_self() - client_before
    ordered = sorted(latencies)
    result: dict[str, Any] = {
        "requests": len(ordered),
        "seconds": elapsed,
        "rate": len(ordered) / elapsed,
        "p50_ms": statistics.median(ordered) * 1e3,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3,
        "client_cpu_us": client_cpu / len(ordered) * 1e6,
    }
    for name, pid in watch.items():
        before, after = cpu_before[name], cpu_of(pid)
        result[f"{name}_cpu_us"] = (
            None if before is None or after is None else (after - before) / len(ordered) * 1e6
        )
    return result


async def drive(session: ClientSession, job: dict[str, Any], watch: dict[str, int]) -> Any:  # noqa: ANN401
    import trio

    # A proxy may still be starting its upstream: wait for the tool to be listed.
    # Polled: the tool appears in another process, there is no event here to wait on.
    name = None
    for _ in range(int(LIST_WAIT / 0.1)):
        name = pick_tool([tool.name for tool in await session.list_tools()])
        if name is not None:
            break
        await trio.sleep(0.1)
    if name is None:
        listed = [tool.name for tool in await session.list_tools()]
        raise LoadError(f"no echo tool listed after {LIST_WAIT:g} s: {listed!r}")

    async def call(text: str) -> str:
        result = await session.call_tool(name, {"text": text})
        if result.is_error:
            raise LoadError(f"{name} failed: {result.content!r}")
        return result.content[0]["text"]  # type: ignore[return-value]  # checked by the caller

    out: dict[str, Any] = {"tool": name, "concurrency": {}}
    for concurrency in job["concurrency"]:
        if job["warmup"]:
            await measure(call, concurrency, job["warmup"], {})
        if "proxy" in watch and "upstream" not in watch:
            # Looked up after the first calls: a proxy may start its upstream lazily.
            upstream = find_upstream(watch["proxy"], job["upstream_marker"])
            if upstream is not None:
                watch = {**watch, "upstream": upstream}
        out["concurrency"][str(concurrency)] = await measure(
            call, concurrency, job["requests"], watch
        )
    return out


async def run(job: dict[str, Any]) -> dict[str, Any]:
    import trio

    from trimcp.client import (
        ProcessSpec,
        open_client_session,
        open_http_client_stream,
        open_server_process,
    )

    watch = {name: int(pid) for name, pid in job.get("watch", {}).items()}
    with trio.fail_after(job["time_limit"]):
        if job["mode"] == "stdio":
            spec = ProcessSpec(name="bench", command=sys.executable, args=(job["server"],))
            async with (
                open_server_process(spec) as stream,
                open_client_session(stream) as session,
            ):
                return await drive(session, job, {**watch, "upstream": stream.pid})  # type: ignore[no-any-return]
        async with (
            open_http_client_stream(job["url"], read_timeout=60) as http,
            open_client_session(http) as session,
        ):
            return await drive(session, job, watch)  # type: ignore[no-any-return]


def main() -> None:
    job_main(run)


if __name__ == "__main__":
    main()
