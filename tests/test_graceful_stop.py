"""``trimcp serve`` stopped by SIGTERM with a call in flight: the graceful stop, end to end.

A real daemon (``python -m trimcp serve --config <tmp toml>``) serves ``tests/graceful_server``
over Streamable HTTP in a process group of its own. A ``nap`` call is started; once it is in
flight (its marker file exists) the daemon gets SIGTERM by PID. While it drains, a new request
on the session and a new session get 503 with ``Retry-After`` and the JSON-RPC -32000
"shutting down" error; the call completes with its real result; the daemon exits 0 within
``application.stop_timeout`` and leaves no process behind. A second signal stops it at once.

The unit tests of the drain are in tests/supervision, tests/sessions and tests/http
(``test_drain.py``), on the mock clock or with events.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.daemon_process import DaemonProcess
from trimcp.sessions import SHUTTING_DOWN
from trimcp.transports import SSEDecoder

TESTS = Path(__file__).resolve().parent
STOP_TIMEOUT = 10.0
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "graceful-test", "version": "1"},
    },
}

pytestmark = pytest.mark.slow


class Daemon(DaemonProcess):
    """``trimcp serve`` of ``graceful_server``, whose calls leave markers when they start."""

    wait_timeout = 15.0

    def __init__(self, tmp_path: Path, stop_timeout: float) -> None:
        config = tmp_path / "sys_config.toml"
        config.write_text(
            f"[application]\nstop_timeout = {stop_timeout}\n\n"
            f'[server]\nobject = "graceful_server:server"\npath = ["{TESTS}"]\n\n'
            "[http]\nenabled = true\nport = 0\n\n"
            "[skills]\nenabled = false\n",
            encoding="utf-8",
        )
        self.markers = tmp_path / "markers"
        self.markers.mkdir()
        super().__init__(tmp_path, config, {"GRACEFUL_MARKER_DIR": str(self.markers)})

    def wait_started(self, tag: str, timeout: float = 15.0) -> None:
        marker = self.markers / f"started-{tag}"
        deadline = time.monotonic() + timeout
        while not marker.exists():
            assert time.monotonic() < deadline, f"the {tag} call never started"
            time.sleep(0.01)


@pytest.fixture
def daemon(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    stop_timeout = getattr(request, "param", STOP_TIMEOUT)
    running = Daemon(tmp_path, stop_timeout)
    try:
        yield running
    finally:
        running.cleanup()


def _messages(answer: httpx.Response) -> list[dict[str, Any]]:
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        decoder = SSEDecoder()
        events = decoder.feed(answer.content) + decoder.feed_eof()
        return [orjson.loads(event.data) for event in events if event.data.strip()]
    return [orjson.loads(answer.content)] if answer.content else []


def _post(client: httpx.Client, url: str, body: object, session: str | None) -> httpx.Response:
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    return client.post(url, content=orjson.dumps(body), headers=headers)


def _open_session(client: httpx.Client, url: str) -> tuple[str, str]:
    """Initialize; return the session id and the name the nap tool is listed under."""
    answer = _post(client, url, INITIALIZE, None)
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert _post(client, url, note, session).status_code == 202
    listed = _post(client, url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session)
    (reply,) = [m for m in _messages(listed) if m.get("id") == 1]
    (name,) = [t["name"] for t in reply["result"]["tools"] if t["name"].endswith("nap")]
    return session, name


def _nap(request_id: int, name: str, seconds: float, tag: str) -> dict[str, object]:
    params = {"name": name, "arguments": {"seconds": seconds, "tag": tag}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _assert_shutting_down(answer: httpx.Response, request_id: object) -> None:
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == str(int(STOP_TIMEOUT))
    body = answer.json()
    assert body["id"] == request_id
    assert body["error"]["code"] == SHUTTING_DOWN
    assert "shutting down" in body["error"]["message"]


def test_sigterm_lets_the_call_in_flight_finish_and_refuses_new_work(daemon: Daemon) -> None:
    url = daemon.wait_for(r"MCP over Streamable HTTP at (\S+)").group(1)
    with httpx.Client(timeout=30) as client, concurrent.futures.ThreadPoolExecutor(1) as pool:
        session, name = _open_session(client, url)
        in_flight = pool.submit(_post, client, url, _nap(2, name, 2.0, "first"), session)
        daemon.wait_started("first")
        signalled = time.monotonic()
        os.kill(daemon.process.pid, signal.SIGTERM)
        daemon.wait_for(r"draining: no new sessions or requests; waiting up to")

        # While it drains: a new request on the session, a new session: 503, -32000.
        _assert_shutting_down(_post(client, url, _nap(3, name, 0.0, "late"), session), 3)
        _assert_shutting_down(_post(client, url, INITIALIZE, None), 0)

        answer = in_flight.result(timeout=STOP_TIMEOUT)
        assert answer.status_code == 200
        (reply,) = [m for m in _messages(answer) if m.get("id") == 2]
        assert reply["result"]["content"] == [{"type": "text", "text": "slept 2 s"}]
        assert reply["result"].get("isError") is not True

    daemon.process.wait(timeout=STOP_TIMEOUT)
    assert time.monotonic() - signalled < STOP_TIMEOUT
    assert daemon.process.returncode == 0, daemon.log()
    assert not (daemon.markers / "started-late").exists()  # the refused call never ran
    assert not daemon.group_alive()  # no child left
    daemon.wait_for("application trimcp stopped")


def test_a_second_signal_stops_at_once(daemon: Daemon) -> None:
    url = daemon.wait_for(r"MCP over Streamable HTTP at (\S+)").group(1)
    with httpx.Client(timeout=30) as client, concurrent.futures.ThreadPoolExecutor(1) as pool:
        session, name = _open_session(client, url)
        # A call far longer than the stop timeout: only the second signal ends it early.
        in_flight = pool.submit(_post, client, url, _nap(2, name, 600.0, "long"), session)
        daemon.wait_started("long")
        os.kill(daemon.process.pid, signal.SIGTERM)
        daemon.wait_for(r"draining: no new sessions or requests; waiting up to")
        signalled = time.monotonic()
        os.kill(daemon.process.pid, signal.SIGINT)
        daemon.process.wait(timeout=STOP_TIMEOUT)
        assert time.monotonic() - signalled < STOP_TIMEOUT / 2
        assert daemon.process.returncode == 0, daemon.log()
        assert "received again: cancelling everything now" in daemon.log()
        with contextlib.suppress(httpx.HTTPError):
            in_flight.result(timeout=STOP_TIMEOUT)
    assert not daemon.group_alive()


@pytest.mark.parametrize("daemon", [1.0], indirect=True)
def test_a_call_outliving_the_stop_timeout_is_answered_with_an_error(daemon: Daemon) -> None:
    url = daemon.wait_for(r"MCP over Streamable HTTP at (\S+)").group(1)
    with httpx.Client(timeout=30) as client:
        session, name = _open_session(client, url)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            in_flight = pool.submit(_post, client, url, _nap(2, name, 600.0, "long"), session)
            daemon.wait_started("long")
            os.kill(daemon.process.pid, signal.SIGTERM)
            answer = in_flight.result(timeout=STOP_TIMEOUT)
    assert answer.status_code == 200
    (reply,) = [m for m in _messages(answer) if m.get("id") == 2]
    assert reply["error"]["code"] == SHUTTING_DOWN
    assert "cancelled after 1 s (application.stop_timeout)" in reply["error"]["message"]
    daemon.process.wait(timeout=STOP_TIMEOUT)
    assert daemon.process.returncode == 0, daemon.log()
    assert not daemon.group_alive()
