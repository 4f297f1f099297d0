"""The gateway over a real stdio upstream: a SIGKILL mid-call, and the restart."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
import trio

from trimcp.client import BackoffPolicy, ClientHandlers, ServerConfig
from trimcp.gateway import Gateway
from trimcp.testing import open_client_pair

SCRIPT = Path(__file__).with_name("upstream_server.py")
REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _tiny() -> ServerConfig:
    return ServerConfig(
        name="tiny",
        transport="stdio",
        command=sys.executable,
        args=(str(SCRIPT),),
        env={"PYTHONPATH": str(REPO)},
    )


async def test_upstream_killed_mid_call_fails_the_call_and_comes_back() -> None:
    changes = trio.Semaphore(0, max_value=1000)

    def on_change() -> None:
        changes.release()

    gateway = Gateway({"tiny": _tiny()}, backoff=BackoffPolicy(initial=0.1))
    async with gateway.open():
        view = await gateway.wait_settled()
        assert set(view.tools) == {"tiny__pid", "tiny__hang"}
        handlers = ClientHandlers(on_tools_changed=on_change)
        async with open_client_pair(gateway, handlers=handlers) as client:
            first = int((await client.call_tool("tiny__pid", {})).text)
            async with trio.open_nursery() as nursery:
                results = []
                answered = trio.Event()

                async def call() -> None:
                    results.append(await client.call_tool("tiny__hang", {}))
                    answered.set()

                nursery.start_soon(call)
                await trio.sleep(0.3)  # the call is in flight upstream
                os.kill(first, signal.SIGKILL)
                with trio.fail_after(1):
                    await answered.wait()
            result = results[0]
            assert result.is_error
            assert "'tiny'" in result.text
            with trio.fail_after(10):
                await changes.acquire()  # its tools disappear (list_changed)...
                names = {tool.name for tool in await client.list_tools()}
                while "tiny__pid" not in names:
                    await changes.acquire()  # ...and come back (list_changed)
                    names = {tool.name for tool in await client.list_tools()}
            second = int((await client.call_tool("tiny__pid", {})).text)
            assert second != first
