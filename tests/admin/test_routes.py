"""The admin app over real sockets: every route, its status codes and the contract's fields."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

import orjson
import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from trimcp.transports import open_websocket_stream

from ._harness import (
    MCP_HEADERS,
    TOKEN,
    config_text,
    initialize,
    open_daemon,
    tiny,
    wait_for_upstream,
)

if TYPE_CHECKING:
    from pathlib import Path

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_health_ready_status_without_upstreams(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        health = await client.get("/healthz")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        ready = await client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["ready"] is True
        assert ready.json()["checks"] == [
            {"check": "listener http", "ok": True, "detail": f"bound at {running.mcp_url}"}
        ]
        status = (await client.get("/status")).json()
        assert set(status) == {
            "application",
            "health",
            "tree",
            "listeners",
            "sessions",
            "sessions_total",
            "upstreams",
            "event_store",
            "tasks",
        }
        app = status["application"]
        assert app["name"] == "trimcp"
        assert app["pid"] == os.getpid()
        assert app["state"] == "running"
        assert app["started_at"].endswith("+00:00")
        assert isinstance(app["uptime"], float)
        assert status["health"] == {"healthy": True, "ready": True, "not_ready": []}
        assert status["upstreams"] == []
        # The gateway holds no task of its own, and has no in-process backend here.
        assert status["tasks"] == {"stored": 0, "running": 0, "limit": None}
        (listener,) = status["listeners"]
        assert listener["name"] == "http"
        assert listener["bound"] is True
        assert listener["address"] == running.mcp_url
        assert not listener["address"].endswith(":0/mcp")  # the real port, not 0
        assert listener["sessions"] == 0
        tree = status["tree"]
        assert (tree["id"], tree["kind"], tree["state"]) == ("trimcp", "supervisor", "running")
        assert tree["strategy"] == "one_for_one"
        assert [c["id"] for c in tree["children"]] == ["gateway", "http", "admin"]
        store = status["event_store"]
        assert store["limit"] == 33554432
        assert store["bytes"] == 0


async def test_sessions_listed_with_their_facts_and_bounded(tmp_path: Path) -> None:
    text = config_text(extra="").replace("[admin]\n", "[admin]\nmax_listed_sessions = 3\n")
    async with open_daemon(tmp_path, text) as running, running.client() as client:
        for n in range(5):
            await running.open_session(client, name=f"client-{n}")
        status = (await client.get("/status")).json()
        assert status["sessions_total"] == 5
        assert status["listeners"][0]["sessions"] == 5
        assert status["listeners"][0]["created"] == 5
        listed = status["sessions"]
        assert len(listed) == 3  # max_listed_sessions
        # The most recently active first.
        assert [s["client"] for s in listed] == ["client-4 1.2", "client-3 1.2", "client-2 1.2"]
        first = listed[0]
        assert first["listener"] == "http"
        assert len(first["id"]) == 8
        assert first["protocol_version"] == "2025-11-25"
        assert first["mailbox"]["capacity"] == 64
        assert first["streams"] == 0
        assert first["in_flight"] == 0
        assert first["dropped_notifications"] == 0
        assert first["subscriptions"] == 0  # the gateway counts them
        assert isinstance(first["age"], float)
        assert isinstance(first["idle"], float)


async def test_tree_lists_at_most_fifty_dynamic_children(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        for _ in range(53):
            await running.open_session(client)
        tree = (await client.get("/status")).json()["tree"]
        (http,) = [c for c in tree["children"] if c["id"] == "http"]
        (manager,) = [c for c in http["children"] if c["id"] == "session-manager"]
        (sessions,) = manager["children"]
        assert sessions["id"] == "sessions"
        assert sessions["strategy"] == "simple_one_for_one"
        assert sessions["children_total"] == 53
        assert len(sessions["children"]) == 50


async def test_mcp_port_has_no_admin_routes(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        base = running.mcp_url.removesuffix("/mcp")
        for path in ("/status", "/healthz", "/readyz", "/metrics", "/"):
            answer = await client.get(base + path)
            assert answer.status_code == 404, path
        refused = await client.post(base + "/reload", headers=AUTH)
        assert refused.status_code == 404


async def test_metrics_parse_and_name_the_live_figures(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        await running.open_session(client)
        answer = await client.get("/metrics")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain")
        families = {f.name: f for f in text_string_to_metric_families(answer.text)}
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for f in families.values()
            for s in f.samples
        }
        assert samples[("trimcp_sessions_open", (("listener", "http"),))] == 1
        assert samples[("trimcp_sessions_created_total", (("listener", "http"),))] == 1
        assert samples[("trimcp_listener_bound", (("listener", "http"),))] == 1
        assert samples[("trimcp_up", ())] == 1
        assert samples[("trimcp_ready", ())] == 1
        assert samples[("trimcp_event_store_limit_bytes", ())] == 33554432
        assert (
            "trimcp_supervisor_child_restarts_total",
            (("child", "http"), ("supervisor", "trimcp")),
        ) in samples
        assert "process_cpu_seconds" in families
        build = list(families["trimcp_build_info"].samples)
        assert build[0].value == 1
        # Request metrics (trimcp.telemetry) are in the same registry.
        assert "trimcp_requests" in families
        assert "trimcp_request_duration_seconds" in families
        # No session id is ever a label value.
        assert all(
            "session" not in key for f in families.values() for s in f.samples for key in s.labels
        )


async def test_unknown_route_and_method(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        missing = await client.get("/nothing")
        assert missing.status_code == 404
        assert "no such admin route" in missing.json()["error"]
        wrong = await client.get("/reload")
        assert wrong.status_code == 405


async def test_token_rules_on_the_post_routes(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        missing = await client.post("/reload")
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith('Bearer realm="trimcp-admin"')
        assert "error" in missing.json()
        wrong = await client.post("/reload", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert "www-authenticate" in wrong.headers
        right = await client.post("/reload", headers=AUTH)
        assert right.status_code == 200
        assert right.json()["reloaded"] is True
        restart = await client.post("/upstreams/x/restart")
        assert restart.status_code == 401


async def test_post_routes_refused_without_a_token(tmp_path: Path) -> None:
    async with open_daemon(tmp_path, config_text(admin="")) as running, running.client() as c:
        for path in ("/reload", "/upstreams/tiny/restart"):
            refused = await c.post(path, headers=AUTH)
            assert refused.status_code == 403
            assert refused.json()["error"].startswith("no admin token is configured")


async def test_host_and_origin_checks(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        bad_host = await client.get("/status", headers={"Host": "evil.example"})
        assert bad_host.status_code == 421
        assert "admin.allowed_hosts" in bad_host.json()["error"]
        bad_origin = await client.get("/status", headers={"Origin": "http://evil.example"})
        assert bad_origin.status_code == 403
        assert "admin.allowed_origins" in bad_origin.json()["error"]
        good = await client.get("/status", headers={"Origin": "http://localhost:3000"})
        assert good.status_code == 200


async def test_reload_reports_a_change_and_an_error(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        text = running.path.read_text().replace(
            "[http]\nenabled = true\n", "[http]\nenabled = true\nmax_connections = 7\n"
        )
        running.path.write_text(text)
        answer = await client.post("/reload", headers=AUTH)
        assert answer.status_code == 200
        body = answer.json()
        assert body["reloaded"] is True
        assert body["sources"] == [str(running.path)]
        assert body["restart_needed"] == ["[http]"]
        assert body["upstreams"] == {"added": [], "removed": [], "restarted": [], "kept": []}
        in_force = running.app.config
        assert in_force.http.max_connections == 7
        # A broken file: reported, nothing changes.
        running.path.write_text(text + "\n[http]\nport = 'x'\n")
        broken = await client.post("/reload", headers=AUTH)
        assert broken.status_code == 400
        assert str(running.path) in broken.json()["error"]
        assert running.app.config is in_force


def test_token_rules_at_start(tmp_path: Path) -> None:
    from trimcp.config import load_config
    from trimcp.daemon import build_daemon
    from trimcp.errors import ConfigError

    token_file = tmp_path / "admin.token"
    token_file.write_text("file-token\n")
    token_file.chmod(0o644)
    path = tmp_path / "sys_config.toml"
    path.write_text(config_text(admin='token_file = "admin.token"'))
    with pytest.raises(ConfigError, match="0644") as caught:
        build_daemon(load_config(path))
    assert "chmod 600" in str(caught.value)
    assert "admin.token_file" in str(caught.value)
    token_file.chmod(0o600)
    daemon = build_daemon(load_config(path))
    assert daemon.admin is not None
    token_file.write_text("\n")
    with pytest.raises(ConfigError, match=r"is empty"):
        build_daemon(load_config(path))
    token_file.unlink()
    with pytest.raises(ConfigError, match="cannot be read"):
        build_daemon(load_config(path))
    path.write_text(config_text(admin='host = "0.0.0.0"'))
    with pytest.raises(ConfigError, match=r"admin\.host") as exposed:
        build_daemon(load_config(path))
    assert "token" in str(exposed.value)
    path.write_text(config_text(admin='host = "0.0.0.0"\ntoken = "t"'))
    assert build_daemon(load_config(path)).admin is not None


@pytest.mark.slow
async def test_upstream_pid_restart_and_failed_reported(tmp_path: Path) -> None:
    async with (
        open_daemon(tmp_path, upstreams={"tiny": tiny()}) as running,
        running.client() as client,
    ):
        entry = await wait_for_upstream(running, "tiny", "connected")
        pid = entry["pid"]
        assert isinstance(pid, int)
        assert entry["transport"] == "stdio"
        os.kill(pid, 0)  # a live process
        missing = await client.post("/upstreams/nope/restart", headers=AUTH)
        assert missing.status_code == 404
        assert missing.json()["error"] == "no upstream named 'nope'; configured: tiny"
        restarted = await client.post("/upstreams/tiny/restart", headers=AUTH)
        assert restarted.status_code == 200
        body = restarted.json()
        assert body["restarted"] == "tiny"
        assert body["status"]["state"] == "connected"
        assert isinstance(body["status"]["pid"], int)
        assert body["status"]["pid"] != pid
        killed = body["status"]["pid"]
        os.kill(killed, signal.SIGKILL)
        after = await wait_for_upstream(running, "tiny", "connected", not_pids=(pid, killed))
        assert after["restarts"] == 1


async def test_websocket_listener_and_its_sessions(tmp_path: Path) -> None:
    text = config_text(extra="[websocket]\nenabled = true\nport = 0\n")
    async with open_daemon(tmp_path, text) as running, running.client() as client:
        status = (await client.get("/status")).json()
        (ws,) = [x for x in status["listeners"] if x["name"] == "websocket"]
        assert ws["bound"] is True
        assert ws["transport"] == "websocket"
        assert ws["address"].startswith("ws://127.0.0.1:")
        assert not ws["address"].endswith(":0/mcp/ws")
        with trio.fail_after(10):
            async with open_websocket_stream(ws["address"]) as stream:
                await stream.send_message(orjson.dumps(initialize("ws-client")))
                assert orjson.loads(await stream.receive_message())["id"] == 1
                status = (await client.get("/status")).json()
        (session,) = [s for s in status["sessions"] if s["listener"] == "websocket"]
        assert session["client"] == "ws-client 1.2"
        assert session["streams"] == 1
        checks = (await client.get("/readyz")).json()["checks"]
        assert [c["check"] for c in checks] == ["listener http", "listener websocket"]


async def test_healthz_says_stopping_once_a_graceful_stop_began(tmp_path: Path) -> None:
    async with open_daemon(tmp_path) as running, running.client() as client:
        running.app.drain.begin()
        health = await client.get("/healthz")
        assert health.status_code == 503
        assert health.json() == {
            "status": "stopping",
            "reason": "trimcp is stopping (a graceful stop has begun)",
        }
        ready = await client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["not_ready"] == [
            "application: trimcp is stopping (a graceful stop has begun)"
        ]


TASKY = """
import trio
from trimcp.server import MCPServer

server = MCPServer("tasky")
gate = trio.Event()


@server.tool(task_support="optional")
async def wait() -> str:
    await gate.wait()
    return "done"
"""


async def test_tasks_are_counted_in_status_and_metrics(tmp_path: Path) -> None:
    (tmp_path / "tasky.py").write_text(TASKY)
    text = config_text(extra='[server]\nobject = "tasky:server"\npath = ["."]\n')
    async with open_daemon(tmp_path, text) as running, running.client() as client:
        session = await running.open_session(client)
        headers = {**MCP_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await client.post(running.mcp_url, json=note, headers=headers)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {}, "task": {"ttl": 60_000}},
        }
        created = await client.post(running.mcp_url, json=call, headers=headers)
        assert created.status_code == 200, created.text
        assert "taskId" in created.text
        status = (await client.get("/status")).json()
        assert status["tasks"] == {"stored": 1, "running": 1, "limit": 1000}
        metrics = (await client.get("/metrics")).text
        samples = {
            (s.name, tuple(s.labels.items())): s.value
            for f in text_string_to_metric_families(metrics)
            for s in f.samples
        }
        assert samples[("trimcp_tasks", (("state", "kept"),))] == 1
        assert samples[("trimcp_tasks", (("state", "running"),))] == 1
