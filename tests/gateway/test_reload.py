"""Hot reload of a running gateway (``trimcp.gateway._reload``): a downstream session stays open.

In memory: ``[gateway]`` settings applied to local backends, an upstream that cannot start
added and removed, the report and its log line. With real stdio upstreams
(``upstream_server.py``, marked slow): one added, one removed, one changed, one unchanged,
with the unchanged one's process (its PID, answered by its ``pid`` tool) kept, and
``list_changed`` received by the session that stayed open.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from trimcp.client import BackoffPolicy, ClientHandlers, ServerConfig
from trimcp.config import GatewaySettings
from trimcp.errors import JsonRpcError
from trimcp.gateway import Gateway, ReloadReport, local_config
from trimcp.gateway._reload import merged_servers
from trimcp.server import MCPServer
from trimcp.testing import open_client_pair

SCRIPT = Path(__file__).with_name("upstream_server.py")
REPO = Path(__file__).resolve().parents[2]


def _local(name: str) -> MCPServer:
    server = MCPServer(name)

    @server.tool()
    async def search(query: str) -> str:
        """Search."""
        return f"{name}:{query}"

    @server.tool()
    async def delete_all() -> str:
        """Dangerous."""
        return "gone"

    return server


def _tiny(name: str, *extra: str) -> ServerConfig:
    return ServerConfig(
        name=name,
        transport="stdio",
        command=sys.executable,
        args=(str(SCRIPT), *extra),
        env={"PYTHONPATH": str(REPO)},
    )


def _missing(name: str) -> ServerConfig:
    """An upstream whose command does not exist: it never starts, no process is left."""
    return ServerConfig(name=name, transport="stdio", command="/nonexistent/trimcp-test-upstream")


class Changes:
    """Counts ``notifications/tools/list_changed`` received by a client."""

    def __init__(self) -> None:
        self.seen = 0
        self._event = trio.Event()

    def __call__(self) -> None:
        self.seen += 1
        self._event.set()
        self._event = trio.Event()

    async def wait(self) -> None:
        await self._event.wait()


def test_merged_servers_keeps_local_backends_first_and_leaves_out_their_names() -> None:
    local = {"skills": local_config("skills")}
    upstreams = {"a": _missing("a"), "skills": _missing("skills"), "b": _missing("b")}
    merged, left_out = merged_servers(local, upstreams)
    assert list(merged) == ["skills", "a", "b"]
    assert merged["skills"] == local_config("skills")
    assert left_out == ("skills",)


def test_the_report_says_what_changed_in_one_line() -> None:
    report = ReloadReport(
        added=("c",), removed=("a",), restarted=("b",), unchanged=("skills",), retried=()
    )
    assert report.changed
    assert report.describe() == "added c; removed a; restarted b; unchanged skills"
    quiet = ReloadReport(unchanged=("skills",))
    assert not quiet.changed
    assert ReloadReport(settings_changed=True).describe() == "[gateway] naming/allow/deny applied"
    assert ReloadReport().describe() == "no backends"


async def test_new_gateway_settings_rename_and_filter_with_the_session_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    changes = Changes()
    gateway = Gateway(local=[("alpha", _local("alpha")), ("beta", _local("beta"))])
    async with gateway.open():
        await gateway.wait_settled()
        handlers = ClientHandlers(on_tools_changed=changes)
        async with open_client_pair(gateway, handlers=handlers) as client:
            names = {tool.name for tool in await client.list_tools()}
            assert names == {
                "alpha__search",
                "alpha__delete_all",
                "beta__search",
                "beta__delete_all",
            }
            settings = GatewaySettings(
                namespace="mcp__{server}__{name}", prefixes=("beta=b",), deny=("*__delete_all",)
            )
            caplog.set_level("INFO", logger="trimcp.gateway")
            report = await gateway.reload({}, settings)
            assert report == ReloadReport(unchanged=("alpha", "beta"), settings_changed=True)
            with trio.fail_after(5):
                while not changes.seen:
                    await changes.wait()
            names = {tool.name for tool in await client.list_tools()}
            assert names == {"mcp__alpha__search", "mcp__b__search"}
            result = await client.call_tool("mcp__b__search", {"query": "q"})
            assert result.text == "beta:q"
            # The same settings again: nothing to do, nothing sent.
            seen = changes.seen
            again = await gateway.reload({}, settings)
            assert not again.changed
            await trio.testing.wait_all_tasks_blocked()
            assert changes.seen == seen
    assert "gateway reloaded: unchanged alpha, beta; [gateway] naming/allow/deny applied" in (
        caplog.text
    )


async def test_an_upstream_named_like_a_local_backend_stays_left_out() -> None:
    gateway = Gateway(local=[("alpha", _local("alpha"))])
    async with gateway.open():
        await gateway.wait_settled()
        report = await gateway.reload({"alpha": _missing("alpha")}, GatewaySettings())
        assert report.left_out == ("alpha",)
        assert report.unchanged == ("alpha",)
        assert gateway.backends == ("alpha",)
        assert "alpha__search" in gateway.view.tools


async def test_added_and_removed_upstreams_that_cannot_start() -> None:
    backoff = BackoffPolicy(initial=0.01, maximum=0.01, jitter=0, intensity=1, period=60)
    gateway = Gateway(local=[("alpha", _local("alpha"))], backoff=backoff)
    async with gateway.open():
        await gateway.wait_settled()
        added = await gateway.reload({"broken": _missing("broken")}, GatewaySettings())
        assert (added.added, added.unchanged) == (("broken",), ("alpha",))
        assert gateway.backends == ("alpha", "broken")
        assert gateway.manager.is_connected("broken")
        status = await gateway.manager.wait_connected("broken", timeout=5)
        assert status.state == "failed"
        # A failed upstream whose definition did not change is retried on reload.
        retried = await gateway.reload({"broken": _missing("broken")}, GatewaySettings())
        assert retried.retried == ("broken",)
        removed = await gateway.reload({}, GatewaySettings())
        assert removed.removed == ("broken",)
        assert gateway.backends == ("alpha",)
        assert not gateway.manager.is_connected("broken")
        assert set(gateway.view.tools) == {"alpha__search", "alpha__delete_all"}


@pytest.mark.slow
async def test_real_upstreams_added_removed_changed_and_one_kept_with_its_process() -> None:
    changes = Changes()
    gateway = Gateway(
        {"keep": _tiny("keep"), "drop": _tiny("drop"), "edit": _tiny("edit")},
        backoff=BackoffPolicy(initial=0.1),
    )
    async with gateway.open():
        view = await gateway.wait_settled()
        assert {name.partition("__")[0] for name in view.tools} == {"keep", "drop", "edit"}
        handlers = ClientHandlers(on_tools_changed=changes)
        async with open_client_pair(gateway, handlers=handlers) as client:
            changes.seen = 0
            keep = int((await client.call_tool("keep__pid", {})).text)
            edit = int((await client.call_tool("edit__pid", {})).text)
            with trio.fail_after(30):
                report = await gateway.reload(
                    {
                        "keep": _tiny("keep"),
                        "edit": _tiny("edit", "--changed"),
                        "new": _tiny("new"),
                    },
                    GatewaySettings(),
                )
            assert report == ReloadReport(
                added=("new",), removed=("drop",), restarted=("edit",), unchanged=("keep",)
            )
            # The reload returns with the view rebuilt: the list is the new one at once.
            names = {tool.name for tool in await client.list_tools()}
            assert {name.partition("__")[0] for name in names} == {"keep", "edit", "new"}
            with trio.fail_after(5):
                while not changes.seen:
                    await changes.wait()
            assert int((await client.call_tool("keep__pid", {})).text) == keep
            assert int((await client.call_tool("edit__pid", {})).text) != edit
            assert int((await client.call_tool("new__pid", {})).text) not in (keep, edit)
            with pytest.raises(JsonRpcError, match="unknown tool"):
                await client.call_tool("drop__pid", {})
