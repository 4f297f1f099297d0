"""What the one-shot host commands wait for before they print: a verdict for every server.

The commands' waiting (``trimcp.cli._oneshot.connect_wanted``) over the manager tests' fake
connector, on ``MockClock``: servers that connect at once, connect late, fail their first
start, fail every start, or cannot be started at all. The commands themselves, with real
processes, are in tests/test_host_cli.py.
"""

from __future__ import annotations

import pytest
import trio

from trimcp.cli._oneshot import connect_wanted, problem
from trimcp.client._backoff import BackoffPolicy
from trimcp.errors import UnknownServer

from .test_manager import Upstreams, config, host, make_server

# The commands' own policy (``cli._oneshot._open_host``): one attempt and one retry.
ONE_RETRY = BackoffPolicy(initial=0.5, jitter=0.0, intensity=1)


async def test_every_server_gets_a_verdict_within_the_wait(autojump_clock: object) -> None:
    names = ("quick", "flaky", "dead", "ghost", "late")
    upstreams = Upstreams(
        {name: (lambda n=name: make_server(n)) for name in names},
        failing_starts={"flaky": 1},
        refuse={"dead"},
        missing={"ghost"},
        start_delay={"late": 100.0},
    )
    servers = {name: config(name) for name in names}
    servers["off"] = config("off", enabled=False)
    async with host(upstreams, servers, backoff=ONE_RETRY) as manager:
        statuses = await connect_wanted(manager, None, wait=10.0)
        # The wait ran out for "late" only; everything else had its verdict before.
        assert trio.current_time() == 10.0
        found = {s.name: (s.state, s.restarts) for s in statuses}
        assert found == {
            "quick": ("connected", 0),
            "flaky": ("connected", 1),  # failed its first start: not shown as reconnecting
            "dead": ("failed", 1),  # failed its start and its retry
            "ghost": ("failed", 0),  # not installed: no retry could help
            "late": ("connecting", 0),
        }
        late = next(s for s in statuses if s.name == "late")
        assert problem(late, 10.0) == "still starting after 10 s (it is connecting)"
        assert upstreams.attempts == {"quick": 1, "flaky": 2, "dead": 2, "ghost": 1, "late": 1}


async def test_the_wait_ends_as_soon_as_every_verdict_is_in(autojump_clock: object) -> None:
    upstreams = Upstreams({"dead": lambda: make_server("dead")}, refuse={"dead"})
    async with host(upstreams, {"dead": config("dead")}, backoff=ONE_RETRY) as manager:
        [status] = await connect_wanted(manager, "dead", wait=60.0)
        # Failed at t=0 and again at its retry, 0.5 s later: no need to wait any longer.
        assert (status.state, trio.current_time()) == ("failed", 0.5)
        # Why it gave up first, then the last error.
        assert problem(status, 60.0) == (
            "restart intensity exceeded (1 restart within 60 s; 2 attempts in a row)\n"
            "dead: connection refused"
        )


async def test_a_server_still_starting_says_why_its_last_attempt_failed(
    autojump_clock: object,
) -> None:
    upstreams = Upstreams(
        {"slow": lambda: make_server("slow")}, failing_starts={"slow": 1}, start_delay={"slow": 30}
    )
    async with host(upstreams, {"slow": config("slow")}, backoff=ONE_RETRY) as manager:
        [status] = await connect_wanted(manager, "slow", wait=5.0)
        assert status.state == "connecting"
        assert problem(status, 5.0) == (
            "still starting after 5 s (it is connecting); "
            "the last attempt failed: slow: exited while starting"
        )


async def test_an_unknown_server_is_named_not_wrapped_in_a_group() -> None:
    upstreams = Upstreams({"a": lambda: make_server("a")})
    async with host(upstreams, {"a": config("a")}) as manager:
        with pytest.raises(UnknownServer, match="configured: a"):
            await connect_wanted(manager, "nope", wait=1.0)
