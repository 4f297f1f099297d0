"""``ConnectionStatus`` tells the truth: when the next attempt is, which one, and why it failed.

The connector is the in-memory one of ``test_manager``; time runs on ``MockClock``
(autojump), so the backoff delays are exact.
"""

from __future__ import annotations

import logging
from datetime import datetime

import pytest
import trio
import trio.testing

from trimcp.client._backoff import BackoffPolicy
from trimcp.client._status import ConnectionStatus, exit_facts, wall_clock
from trimcp.errors import ConnectionLost, NotConnected, ServerExited

from .test_manager import Upstreams, config, host, make_server

POLICY = BackoffPolicy(initial=1.0, factor=2.0, jitter=0.0, intensity=2, period=60.0)


def exited(code: int, *stderr: str) -> ServerExited:
    return ServerExited(
        f'MCP server "a" exited with code {code} while starting',
        server="a",
        command=["a"],
        returncode=code,
        signal=None,
        stderr_tail=stderr,
        during="start",
    )


async def test_reconnecting_says_when_and_which_attempt_then_failed_says_why(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")}, refuse={"a"})
    async with host(upstreams, {"a": config("a")}, backoff=POLICY) as manager:
        first = await manager.connect("a")
        # Failed at t=0; the first delay is 1 s: attempt 2 at t=1.
        assert first.state == "reconnecting"
        assert (first.attempt, first.next_attempt_in, first.restarts) == (2, 1.0, 1)
        assert first.failure is None
        at = datetime.fromisoformat(first.next_attempt_at or "")
        assert at.tzinfo is not None
        assert abs(at.timestamp() - (datetime.now().timestamp() + 1.0)) < 5
        assert "attempt 2 in 1.0 s" in first.summary()
        assert "connection refused" in first.summary()

        await trio.sleep(0.25)
        assert (await manager.status_of("a")).next_attempt_in == pytest.approx(0.75)

        # Attempt 2 fails at t=1; the next delay is 2 s: attempt 3 at t=3.
        await trio.sleep(1.0)
        second = await manager.status_of("a")
        assert (second.state, second.attempt, second.restarts) == ("reconnecting", 3, 2)
        assert second.next_attempt_in == pytest.approx(1.75)

        # Attempt 3 fails at t=3: a third failure within the period is over the intensity.
        verdict = await manager.wait_connected("a")
        assert trio.current_time() == pytest.approx(3.0)
        assert (verdict.state, verdict.attempt) == ("failed", 3)
        assert verdict.next_attempt_in is None
        assert verdict.next_attempt_at is None
        assert verdict.failure == (
            "restart intensity exceeded (2 restarts within 60 s; 3 attempts in a row)"
        )
        assert "connection refused" in (verdict.last_error or "")
        assert verdict.summary().startswith("restart intensity exceeded")
        with pytest.raises(NotConnected, match=r"(?s)It gave up: restart intensity.*reload"):
            await manager.get_connection("a")

        # Failed is not forever: reconnect starts afresh (attempts counted from 1 again).
        upstreams.refuse.clear()
        with caplog.at_level(logging.INFO, logger="trimcp.client"):
            again = await manager.reconnect("a")
        assert "MCP server 'a' connected (attempt 1): 1 tools" in caplog.text
        assert (again.state, again.attempt, again.restarts, again.failure) == (
            "connected",
            1,
            0,
            None,
        )
        assert again.summary() == ""


async def test_a_permanent_failure_says_it_is_not_retried(autojump_clock: object) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")}, missing={"a"})
    async with host(upstreams, {"a": config("a")}, backoff=POLICY) as manager:
        status = await manager.connect("a")
        assert (status.state, status.attempt) == ("failed", 1)
        assert (status.failure or "").startswith("not retried")
        assert 'command "a-bin" was not found' in status.summary()


async def test_reload_retries_a_failed_server_whose_definition_did_not_change(
    autojump_clock: object,
) -> None:
    upstreams = Upstreams(
        {"a": lambda: make_server("a"), "b": lambda: make_server("b")}, refuse={"a"}
    )
    servers = {"a": config("a"), "b": config("b")}
    async with host(upstreams, servers, backoff=POLICY) as manager:
        await manager.connect_all()
        assert (await manager.wait_connected("a")).state == "failed"
        attempts = upstreams.attempts["a"]
        await trio.sleep(600)
        assert upstreams.attempts["a"] == attempts  # failed waits, nothing in the background
        upstreams.refuse.clear()  # the cause is fixed (a server started, a token renewed)
        diff = await manager.reload(dict(servers))
        assert diff["unchanged"] == {"a", "b"}
        status = await manager.status_of("a")
        assert (status.state, status.tools) == ("connected", 1)
        # The connected one kept its connection.
        assert upstreams.opened["b"] == 1


async def test_a_failed_server_still_failing_on_reload_is_failed_again_with_its_reason(
    autojump_clock: object,
) -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")}, refuse={"a"})
    async with host(upstreams, {"a": config("a")}, backoff=POLICY) as manager:
        await manager.connect("a")
        assert (await manager.wait_connected("a")).state == "failed"
        before = upstreams.attempts["a"]
        await manager.reload({"a": config("a")})
        assert upstreams.attempts["a"] == before + 1
        assert (await manager.status_of("a")).state == "reconnecting"
        status = await manager.wait_connected("a")
        assert status.state == "failed"
        assert "restart intensity exceeded" in (status.failure or "")


def test_exit_facts_are_found_behind_wrappers() -> None:
    error = exited(3, "starting", "boom: missing API_URL")
    lost = ConnectionLost("the server exited", method="tools/call")
    lost.__cause__ = error
    for wrapped in (error, lost, ExceptionGroup("", [ValueError("x"), lost])):
        facts = exit_facts(wrapped)
        assert (facts.code, facts.signal) == (3, None)
        assert facts.stderr_tail == ("starting", "boom: missing API_URL")
    assert exit_facts(ConnectionRefusedError("refused")).code is None
    status = ConnectionStatus(
        name="a",
        state="failed",
        failure="restart intensity exceeded",
        last_error="it died",
        exit_code=3,
        stderr_tail=("boom",),
    )
    assert status.summary() == "restart intensity exceeded; exit code 3, stderr: boom; it died"
    assert status.as_json()["stderr_tail"] == ["boom"]
    killed = ConnectionStatus(name="a", state="reconnecting", exit_code=-9, exit_signal="SIGKILL")
    assert killed.exit_words() == "killed by SIGKILL"


def test_wall_clock_is_local_iso_with_an_offset() -> None:
    text = wall_clock(90.0, now=0.0)
    moment = datetime.fromisoformat(text)
    assert moment.timestamp() == 90.0
    assert moment.utcoffset() is not None
