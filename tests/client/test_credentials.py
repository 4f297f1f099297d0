"""Credentials stay put, and a failed server says why: real server processes.

An upstream's ``env`` (literal or ``${VAR}``-expanded) reaches its own process only: not
another upstream's, not a log line, not an error a downstream client could see. Headers the
same: a dial that fails does not quote them. A server that exits at every start is reported
``failed`` with the restart intensity, its exit code and its stderr.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import textwrap
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.client._backoff import BackoffPolicy
from trimcp.client._manager import ConnectionManager
from trimcp.client._upstream import connect_upstream
from trimcp.config.mcp_servers._model import ServerConfig
from trimcp.errors import NotConnected
from trimcp.supervision import open_supervisor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.slow

LITERAL_SECRET = "sk-literal-0f3a9c"
EXPANDED_SECRET = "sk-expanded-77b2e1"
HEADER_SECRET = "Bearer sk-header-5d1c"

# An MCP server whose one tool answers with its whole environment.
PRINTS_ITS_ENVIRONMENT = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, {root!r})
    from trimcp.server import MCPServer

    server = MCPServer("printer", "1.0")

    @server.tool()
    def environment() -> str:
        '''This process's environment, as JSON.'''
        return json.dumps(dict(os.environ))

    server.run_stdio()
    """
)

# Exits at once with a reason on stderr, as a server missing its database would.
EXITS_3 = "import sys; sys.stderr.write('boom: cannot reach the database\\n'); sys.exit(3)"


@asynccontextmanager
async def open_host(
    servers: Mapping[str, ServerConfig], backoff: BackoffPolicy | None = None
) -> AsyncIterator[ConnectionManager]:
    manager = ConnectionManager(
        connector=connect_upstream,
        name="credentials-host",
        backoff=backoff or BackoffPolicy(initial=0.05, maximum=0.2, intensity=2),
    )
    async with open_supervisor([manager.spec(servers)]):
        try:
            yield manager
        finally:
            with trio.CancelScope(shield=True):
                await manager.disconnect_all()


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Every log line captured, formatted as a handler would write it, with tracebacks."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(record) for record in caplog.records)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_an_upstreams_env_never_reaches_another_upstream_or_the_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("TRIMCP_TEST_TOKEN", EXPANDED_SECRET)
    printer = tmp_path / "printer.py"
    printer.write_text(PRINTS_ITS_ENVIRONMENT.format(root=str(ROOT)))
    servers = {
        # The keeper holds both secrets, one written out and one from trimcp's environment.
        "keeper": ServerConfig(
            name="keeper",
            transport="stdio",
            command=sys.executable,
            args=(str(printer),),
            env={"SECRET": LITERAL_SECRET, "TOKEN": "${TRIMCP_TEST_TOKEN}"},
        ),
        "printer": ServerConfig(
            name="printer", transport="stdio", command=sys.executable, args=(str(printer),)
        ),
    }
    async with open_host(servers) as manager:
        with trio.fail_after(30):
            statuses = await manager.connect_all()
        assert [s.state for s in statuses] == ["connected", "connected"]
        # The keeper has its own (the check that the test can see a leak at all)...
        keeper = await manager.call_tool("mcp__keeper__environment", {})
        own = json.loads(keeper["content"][0]["text"])
        assert (own["SECRET"], own["TOKEN"]) == (LITERAL_SECRET, EXPANDED_SECRET)
        # ...the other upstream has neither the values nor the names.
        result = await manager.call_tool("mcp__printer__environment", {})
        environment = json.loads(result["content"][0]["text"])
        assert "SECRET" not in environment
        assert "TOKEN" not in environment
        assert "TRIMCP_TEST_TOKEN" not in environment
        shown = json.dumps(environment)
        assert LITERAL_SECRET not in shown
        assert EXPANDED_SECRET not in shown
        # Neither is in what the host reports about its servers.
        for status in await manager.status():
            assert LITERAL_SECRET not in repr(status)
        assert LITERAL_SECRET not in repr(await manager.servers())
    # Only the keeper's own tool result above carried them; the logs never did.
    text = logged(caplog)
    assert "server keeper started" in text
    # The keeper's answer is logged at debug level as protocol traffic; nothing else may be.
    lines = [line for line in text.splitlines() if "received" not in line]
    assert not [line for line in lines if LITERAL_SECRET in line or EXPANDED_SECRET in line]


async def test_a_server_that_cannot_start_does_not_quote_its_env(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("TRIMCP_TEST_TOKEN", EXPANDED_SECRET)
    servers = {
        "ghost": ServerConfig(
            name="ghost",
            transport="stdio",
            command="no-such-mcp-server-here",
            args=("--api-key", "${TRIMCP_TEST_TOKEN}"),
            env={"API_KEY": LITERAL_SECRET, "TOKEN": "${TRIMCP_TEST_TOKEN}"},
        ),
        "dial": ServerConfig(
            name="dial",
            transport="http",
            url=f"http://127.0.0.1:{closed_port()}/mcp",
            headers={"Authorization": HEADER_SECRET},
            startup_timeout=5,
        ),
    }
    async with open_host(servers, BackoffPolicy(initial=0.05, intensity=1)) as manager:
        with trio.fail_after(30):
            await manager.connect_all()
            ghost = await manager.wait_connected("ghost")
            dial = await manager.wait_connected("dial")
        assert ghost.state == "failed"
        assert 'command "no-such-mcp-server-here" was not found' in (ghost.last_error or "")
        assert dial.state == "failed"
        texts = [repr(ghost), repr(dial), ghost.summary(), dial.summary()]
        for server in ("ghost", "dial"):
            # What a downstream client would get for a call.
            with pytest.raises(NotConnected) as refused:
                await manager.call_tool(f"mcp__{server}__anything", {})
            texts.append(str(refused.value))
    texts.append(logged(caplog))
    everything = "\n".join(texts)
    assert "REDACTED" in everything  # the --api-key argument, hidden in the command line
    for secret in (LITERAL_SECRET, EXPANDED_SECRET, HEADER_SECRET, "sk-header"):
        assert secret not in everything


async def test_a_server_that_exits_at_every_start_is_failed_with_its_exit_and_stderr(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    dies = ServerConfig(
        name="dies", transport="stdio", command=sys.executable, args=("-c", EXITS_3)
    )
    policy = BackoffPolicy(initial=0.05, maximum=0.1, jitter=0.0, intensity=2, period=60)
    async with open_host({"dies": dies}, policy) as manager:
        with trio.fail_after(30):
            await manager.connect("dies")
            status = await manager.wait_connected("dies")
        assert (status.state, status.attempt, status.restarts) == ("failed", 3, 2)
        assert status.failure == (
            "restart intensity exceeded (2 restarts within 60 s; 3 attempts in a row)"
        )
        assert (status.exit_code, status.exit_signal) == (3, None)
        assert status.stderr_tail == ("boom: cannot reach the database",)
        assert "exit code 3, stderr: boom: cannot reach the database" in status.summary()
        assert status.next_attempt_in is None
        # The daemon's log says the same, once, at error level.
        failures = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(failures) == 1
        assert "restart intensity exceeded" in failures[0].getMessage()
        assert "exit code 3" in failures[0].getMessage()
        retries = [r.getMessage() for r in caplog.records if "attempt 2 in" in r.getMessage()]
        assert retries
        assert "exit code 3" in retries[0]
        # Retried on demand: it fails the same way, and says so again.
        with trio.fail_after(30):
            await manager.reconnect("dies")
            again = await manager.wait_connected("dies")
        assert (again.state, again.exit_code) == ("failed", 3)
