"""Upstreams and listeners as the admin app reports them: a real process killed past its restart
intensity, and the requests in flight a listener counts.

The gateway runs under the admin app with a restart intensity of 1 in 60 s: the first kill
is restarted, the second makes the connection give up (``failed``). ``/readyz`` must say so
within a second of that kill, ``/status`` must show it failed with the signal that killed
it, and ``/metrics`` must put its state gauge on ``failed``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from typing import TYPE_CHECKING

import httpx
import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from trimcp.admin import AdminTargets, ListenerWatch, serve_admin
from trimcp.client import BackoffPolicy
from trimcp.config import AdminSettings, SysConfig
from trimcp.gateway import Gateway
from trimcp.server import MCPServer
from trimcp.supervision import ChildSpec, open_application, which_children

from ._harness import tiny

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


async def _status(client: httpx.AsyncClient) -> dict[str, object]:
    answer = await client.get("/status")
    assert answer.status_code == 200
    body: dict[str, object] = answer.json()
    return body


async def _upstream(client: httpx.AsyncClient) -> dict[str, object]:
    upstreams = (await _status(client))["upstreams"]
    assert isinstance(upstreams, list)
    (entry,) = upstreams
    assert isinstance(entry, dict)
    return entry


async def _until(
    client: httpx.AsyncClient, state: str, not_pid: object = None
) -> dict[str, object]:
    with trio.fail_after(20):
        while True:
            entry = await _upstream(client)
            pid = entry["pid"]
            # A connected upstream's process may have died a moment ago, before its
            # connection noticed: its pid is then None already. Wait for a live one.
            live = state != "connected" or (isinstance(pid, int) and pid != not_pid)
            if entry["state"] == state and live:
                return entry
            await trio.sleep(0.02)


@contextlib.asynccontextmanager
async def _serving(
    gateway: Gateway, listeners: list[ListenerWatch] | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    config = SysConfig(admin=AdminSettings(enabled=True, port=0))
    targets = AdminTargets(gateway=gateway, listeners=listeners or [])
    children = [gateway.spec(), ChildSpec("admin", serve_admin, args=(config, targets))]
    async with open_application(config, children=children) as app:
        infos = {info.id: info.value for info in await which_children(app.supervisor)}
        urls = infos["admin"]
        assert isinstance(urls, list)
        await gateway.wait_settled()
        async with httpx.AsyncClient(base_url=urls[0], timeout=10) as client:
            yield client
        app.request_stop()


@pytest.mark.slow
async def test_readyz_turns_503_within_a_second_of_the_upstream_giving_up() -> None:
    gateway = Gateway({"tiny": tiny()}, backoff=BackoffPolicy(initial=0.05, intensity=1))
    async with _serving(gateway) as client:
        first = await _until(client, "connected")
        assert (await client.get("/readyz")).status_code == 200
        os.kill(int(str(first["pid"])), signal.SIGKILL)
        second = await _until(client, "connected", not_pid=first["pid"])
        assert second["restarts"] == 1
        assert (await client.get("/readyz")).status_code == 200
        os.kill(int(str(second["pid"])), signal.SIGKILL)
        killed_at = trio.current_time()
        with trio.fail_after(5):
            while True:
                ready = await client.get("/readyz")
                if ready.status_code != 200:
                    break
                await trio.sleep(0.01)
        assert trio.current_time() - killed_at < 1.0
        assert ready.status_code == 503
        body = ready.json()
        assert body["ready"] is False
        (reason,) = body["not_ready"]
        assert reason.startswith("upstream tiny: failed: restart intensity exceeded")
        failed = await _upstream(client)
        assert failed["state"] == "failed"
        assert failed["pid"] is None
        assert failed["exit_signal"] == "SIGKILL"
        assert failed["failure"] is not None
        status = await _status(client)
        assert status["health"] == {"healthy": True, "ready": False, "not_ready": [reason]}
        metrics = (await client.get("/metrics")).text
        states = {
            s.labels["state"]: s.value
            for f in text_string_to_metric_families(metrics)
            if f.name == "trimcp_upstream_state"
            for s in f.samples
        }
        assert states == {
            "connecting": 0,
            "connected": 0,
            "reconnecting": 0,
            "failed": 1,
            "stopped": 0,
        }
        # A manual restart brings it back: ready again.
        restarted = await client.post("/upstreams/tiny/restart")
        assert restarted.status_code == 403  # no token configured for this app


async def test_a_listener_not_bound_is_not_ready() -> None:
    never = ListenerWatch("http", "http", "http://127.0.0.1:8000/mcp")
    async with _serving(Gateway(), [never]) as client:
        ready = await client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["not_ready"] == ["listener http: not bound"]
        assert (await client.get("/healthz")).status_code == 200
        listeners = (await _status(client))["listeners"]
        assert listeners == [
            {
                "name": "http",
                "transport": "http",
                "address": "http://127.0.0.1:8000/mcp",
                "bound": False,
                "sessions": None,
                "in_flight": None,
                "created": None,
                "expired": None,
                "evicted": None,
                "refused": None,
                "terminated": None,
            }
        ]
        never.started("http://127.0.0.1:8000/mcp")
        assert (await client.get("/readyz")).status_code == 200
        never.stopped()
        assert (await client.get("/readyz")).status_code == 503


async def test_a_listener_counts_the_2026_07_28_requests_in_flight() -> None:
    # They belong to no session: the listener's own count must include them.
    server = MCPServer("held", "1.0")
    started, release = trio.Event(), trio.Event()

    @server.tool()
    async def hold() -> str:
        """Wait until released."""
        started.set()
        await release.wait()
        return "released"

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "hold",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "hold",
    }
    async with trio.open_nursery() as nursery:
        serve = functools.partial(server.serve_http, host="127.0.0.1", port=0)
        listener = await nursery.start(serve)
        watch = ListenerWatch("http", "http", listener.url)
        watch.http_started(listener)
        async with (
            _serving(Gateway(), [watch]) as client,
            httpx.AsyncClient(timeout=None) as mcp,
            trio.open_nursery() as calls,
        ):
            answers: list[httpx.Response] = []

            async def call() -> None:
                answers.append(await mcp.post(listener.url, json=body, headers=headers))

            calls.start_soon(call)
            await started.wait()
            (look,) = (await _status(client))["listeners"]  # type: ignore[misc]
            assert look["in_flight"] == 1
            metrics = text_string_to_metric_families((await client.get("/metrics")).text)
            (gauge,) = [f for f in metrics if f.name == "trimcp_requests_in_flight"]
            assert [(s.labels, s.value) for s in gauge.samples] == [({"listener": "http"}, 1)]
            release.set()
        assert answers[0].json()["result"]["content"][0]["text"] == "released"
        nursery.cancel_scope.cancel()
