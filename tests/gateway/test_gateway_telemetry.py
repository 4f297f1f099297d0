"""The gateway's in-process backends are part of it: telemetry sees each call once.

A call through the gateway to a backend served in the same process (the built-in tools, the
``[server] object``) is reported where the gateway serves it (its request counters and its
SERVER span) and where it forwards it (its CLIENT span), never a second time by the backend's
own in-memory session, or the request rates of ``/metrics`` would double.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.gateway.conftest import Era, backend_options
from trimcp.gateway import Gateway
from trimcp.server import MCPServer
from trimcp.telemetry import RequestMetrics
from trimcp.testing import open_client_pair


def _counted(registry: CollectorRegistry) -> dict[tuple[str, str], float]:
    text = generate_latest(registry).decode()
    return {
        (sample.labels["method"], sample.labels["outcome"]): sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "trimcp_requests"
        for sample in family.samples
        if sample.name == "trimcp_requests_total"
    }


async def test_a_call_to_an_in_process_backend_is_counted_once(backend_era: Era) -> None:
    backend = MCPServer("alpha")

    @backend.tool()
    async def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    registry = CollectorRegistry()
    gateway = Gateway(
        local=[("alpha", backend)], local_options=backend_options(backend_era, "alpha")
    )
    with RequestMetrics(registry):
        async with gateway.open():
            await gateway.wait_settled()
            before = _counted(registry)
            # The gateway's own catalog reads of its backend are not counted either.
            assert not any(method == "tools/list" for method, _ in before)
            async with open_client_pair(gateway) as client:
                result = await client.call_tool("alpha__search", {"query": "q"})
                assert result.text == "found q"
    after = _counted(registry)
    assert after[("tools/call", "ok")] == 1
