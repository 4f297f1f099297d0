"""One trace across the gateway: client -> gateway over HTTP -> upstream over HTTP.

Everything runs in this process on 127.0.0.1, recording into one in-memory exporter, but
nothing carries the trace from one hop to the next except ``params._meta``: each server
span's parent must be the client span of the hop before it, and the upstream's handler
must have seen the ``traceparent`` the gateway's client span injected.
"""

from __future__ import annotations

import functools
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio
from opentelemetry.trace import SpanKind

from trimcp.client import ClientSessionOptions, ServerConfig, open_client_session
from trimcp.gateway import Gateway
from trimcp.http import serve_http
from trimcp.server import Context, MCPServer
from trimcp.transports.http_client import open_http_client_stream

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

    from tests.telemetry.conftest import Otel

pytestmark = pytest.mark.slow


def upstream() -> MCPServer:
    server = MCPServer("up")

    @server.tool()
    def traceparent(ctx: Context) -> str:
        """The traceparent this request's _meta carried."""
        return ctx.trace_context.get("traceparent", "")

    return server


def one(spans: list[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    [found] = [s for s in spans if s.name == name and s.kind is kind]
    return found


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_one_trace_crosses_the_gateway_into_its_upstream(otel: Otel, era: str) -> None:
    async with trio.open_nursery() as nursery:
        up = await nursery.start(functools.partial(serve_http, upstream()))
        gateway = Gateway({"up": ServerConfig(name="up", transport="http", url=up.url)})
        async with gateway.open():
            await gateway.wait_settled()
            front = await nursery.start(functools.partial(serve_http, gateway))
            async with (
                open_http_client_stream(front.url) as stream,
                open_client_session(
                    stream, options=ClientSessionOptions(protocol_version=era)
                ) as client,
            ):
                result = await client.call_tool("up__traceparent", {})
        nursery.cancel_scope.cancel()
    spans = otel.spans()
    client_span = one(spans, "tools/call up__traceparent", SpanKind.CLIENT)
    gateway_server = one(spans, "tools/call up__traceparent", SpanKind.SERVER)
    gateway_client = one(spans, "tools/call traceparent", SpanKind.CLIENT)
    upstream_server = one(spans, "tools/call traceparent", SpanKind.SERVER)
    chain = [client_span, gateway_server, gateway_client, upstream_server]
    assert {span.context.trace_id for span in chain} == {client_span.context.trace_id}
    assert client_span.parent is None
    for parent, child in itertools.pairwise(chain):
        assert child.parent is not None
        assert child.parent.span_id == parent.context.span_id, (parent.name, child.name)
    # The upstream saw the gateway's client span as traceparent in params._meta.
    trace_id = format(client_span.context.trace_id, "032x")
    span_id = format(gateway_client.context.span_id, "016x")
    version, traced, parent_id, flags = result.text.split("-")
    assert (version, traced, parent_id) == ("00", trace_id, span_id)
    assert int(flags, 16) & 1  # sampled
    for span in (gateway_server, gateway_client, upstream_server):
        attributes = dict(span.attributes or {})
        assert attributes["network.transport"] == "tcp"
        assert attributes["network.protocol.name"] == "http"
    assert dict(gateway_server.attributes or {})["mcp.protocol.version"] == era
    # A 2025-11-25 session over Streamable HTTP has an id, and both sides report the same one.
    client_session = dict(client_span.attributes or {}).get("mcp.session.id")
    server_session = dict(gateway_server.attributes or {}).get("mcp.session.id")
    if era == "2025-11-25":
        assert isinstance(client_session, str)
        assert len(client_session) > 16
        assert client_session == server_session
    else:
        assert client_session is None
        assert server_session is None


SCRIPT = Path(__file__).with_name("traced_upstream.py")
REPO = Path(__file__).resolve().parents[2]


async def test_a_stdio_upstream_process_gets_the_gateways_client_span_as_parent(
    otel: Otel,
) -> None:
    config = ServerConfig(
        name="up",
        transport="stdio",
        command=sys.executable,
        args=(str(SCRIPT),),
        env={"PYTHONPATH": str(REPO)},
    )
    async with trio.open_nursery() as nursery:
        gateway = Gateway({"up": config})
        async with gateway.open():
            await gateway.wait_settled()
            front = await nursery.start(functools.partial(serve_http, gateway))
            async with (
                open_http_client_stream(front.url) as stream,
                open_client_session(stream) as client,
            ):
                result = await client.call_tool("up__traceparent", {})
        nursery.cancel_scope.cancel()
    spans = otel.spans()
    gateway_server = one(spans, "tools/call up__traceparent", SpanKind.SERVER)
    gateway_client = one(spans, "tools/call traceparent", SpanKind.CLIENT)
    assert gateway_client.parent is not None
    assert gateway_client.parent.span_id == gateway_server.context.span_id
    assert dict(gateway_client.attributes or {})["network.transport"] == "pipe"
    trace_id = format(gateway_server.context.trace_id, "032x")
    span_id = format(gateway_client.context.span_id, "016x")
    assert result.text.split("-")[1:3] == [trace_id, span_id]
