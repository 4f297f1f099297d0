"""Spans and histograms of a server and its client in one process, in both eras."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from trimcp.client import ClientHandlers, ClientSessionOptions, ElicitRequest, ElicitResult
from trimcp.errors import JsonRpcError
from trimcp.server import Context, MCPServer
from trimcp.telemetry import Peer
from trimcp.telemetry._otel import MAX_SHAPES
from trimcp.testing import open_client_pair

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import HistogramDataPoint
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext

    from tests.telemetry.conftest import Otel
    from trimcp.protocol import JsonObject

ERAS = ["2025-11-25", "2026-07-28"]


def make_server() -> MCPServer:
    server = MCPServer("observed")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def fail() -> str:
        """Fail as a tool does."""
        raise ValueError("it went wrong")

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}"

    return server


def by_name(otel: Otel, name: str, kind: SpanKind) -> list[ReadableSpan]:
    return [s for s in otel.spans() if s.name == name and s.kind is kind]


def attrs(item: ReadableSpan | HistogramDataPoint) -> dict[str, object]:
    return dict(item.attributes or {})


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_call_is_a_client_span_and_its_server_child(otel: Otel, era: str) -> None:
    async with open_client_pair(
        make_server(), options=ClientSessionOptions(protocol_version=era)
    ) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert not result.is_error
    [server_span] = by_name(otel, "tools/call add", SpanKind.SERVER)
    [client_span] = by_name(otel, "tools/call add", SpanKind.CLIENT)
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.context.trace_id == client_span.context.trace_id
    attributes = dict(server_span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "add"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["mcp.protocol.version"] == era
    assert "jsonrpc.request.id" in attributes
    assert "error.type" not in attributes
    assert (era == "2025-11-25") == ("mcp.session.id" in attributes)
    assert server_span.status.status_code is StatusCode.UNSET
    [point] = [
        p
        for p in otel.points("mcp.server.operation.duration")
        if attrs(p).get("mcp.method.name") == "tools/call"
    ]
    assert point.count == 1
    assert point.explicit_bounds[:3] == (0.01, 0.02, 0.05)
    assert otel.points("mcp.client.operation.duration")


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_error_and_a_json_rpc_error(otel: Otel, era: str) -> None:
    async with open_client_pair(
        make_server(), options=ClientSessionOptions(protocol_version=era)
    ) as client:
        result = await client.call_tool("fail", {})
        assert result.is_error
        with pytest.raises(JsonRpcError):
            await client.request("prompts/get", {"name": "nobody"})
    [tool_span] = by_name(otel, "tools/call fail", SpanKind.SERVER)
    assert attrs(tool_span)["error.type"] == "tool_error"
    assert tool_span.status.status_code is StatusCode.ERROR
    [prompt_span] = by_name(otel, "prompts/get nobody", SpanKind.SERVER)
    assert attrs(prompt_span)["error.type"] == "-32602"
    assert attrs(prompt_span)["rpc.response.status_code"] == "-32602"
    assert prompt_span.status.status_code is StatusCode.ERROR
    [client_prompt] = by_name(otel, "prompts/get nobody", SpanKind.CLIENT)
    assert attrs(client_prompt)["error.type"] == "-32602"
    failed = [
        p
        for p in otel.points("mcp.server.operation.duration")
        if attrs(p).get("error.type") == "-32602"
    ]
    # The name a client sent for a prompt that does not exist stays out of the histogram.
    assert [attrs(p).get("gen_ai.prompt.name") for p in failed] == [None]


CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


@pytest.mark.parametrize("answer", ["decline", "refused", "never"])
async def test_a_request_the_server_sends_is_a_client_span_of_its_handler(
    otel: Otel, answer: str
) -> None:
    # Sampling, elicitation and roots requests a handler sends (2025-11-25): CLIENT spans,
    # children of the request being handled, their trace context in their ``_meta``; the
    # client answering one continues the trace with a SERVER span.
    server = MCPServer("asking")

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Ask before acting."""
        # Never answered: the server gives up (it cancels the request) at once.
        timeout = 0.001 if answer == "never" else None
        return (await ctx.elicit("Sure?", CONFIRM, timeout=timeout)).action

    seen: list[JsonObject] = []
    current: list[SpanContext] = []

    async def elicit(request: ElicitRequest) -> ElicitResult:
        seen.append(request.params)
        current.append(trace.get_current_span().get_span_context())
        if answer == "refused":
            raise JsonRpcError(-32600, "not now")
        if answer == "never":
            await trio.sleep_forever()
        return ElicitResult(action="decline")

    handlers = ClientHandlers(elicitation=elicit)
    options = ClientSessionOptions(protocol_version="2025-11-25")
    async with open_client_pair(server, handlers=handlers, options=options) as client:
        result = await client.call_tool("confirm", {})
    # The tool's own request failed: so did the tool. (A handler never answering has ended,
    # cancelled, by the time the pair is closed.)
    assert result.is_error == (answer != "decline")
    [served] = by_name(otel, "tools/call confirm", SpanKind.SERVER)
    [asked] = by_name(otel, "elicitation/create", SpanKind.CLIENT)
    assert asked.parent is not None
    assert asked.parent.span_id == served.context.span_id
    assert asked.context.trace_id == served.context.trace_id
    assert attrs(asked)["mcp.method.name"] == "elicitation/create"
    assert attrs(asked)["mcp.protocol.version"] == "2025-11-25"
    assert "mcp.session.id" in attrs(asked)
    meta = seen[0]["_meta"]
    assert isinstance(meta, dict)
    context = asked.context
    assert meta["traceparent"] == (
        f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    )
    # The client's handling of it is a SERVER span of the same trace: its child.
    [answered] = by_name(otel, "elicitation/create", SpanKind.SERVER)
    assert answered.parent is not None
    assert answered.parent.span_id == asked.context.span_id
    assert answered.context.trace_id == served.context.trace_id
    assert "jsonrpc.request.id" in attrs(answered)
    assert current == [answered.context]  # the client's handler runs inside it
    if answer == "refused":
        assert attrs(asked)["error.type"] == "-32600"
        assert asked.status.status_code is StatusCode.ERROR
        assert attrs(answered)["error.type"] == "-32600"
    elif answer == "never":
        assert attrs(asked)["error.type"] == "_OTHER"  # no answer: no code
        assert attrs(answered)["error.type"] == "cancelled"
    else:
        assert "error.type" not in attrs(asked)
        assert "error.type" not in attrs(answered)
    [point] = [
        p
        for p in otel.points("mcp.client.operation.duration")
        if attrs(p).get("mcp.method.name") == "elicitation/create"
    ]
    assert point.count == 1


def test_attribute_shapes_stay_bounded_under_ever_new_tool_names(otel: Otel) -> None:
    observer = otel.observer
    for number in range(MAX_SHAPES + 100):
        params: JsonObject = {"name": f"tool-{number}", "arguments": {}}
        probe = observer.server_request("tools/call", number, params, Peer("stdio"), None, None)
        probe.finish("ok")
        assert observer.statistics().shapes <= MAX_SHAPES
    assert observer.statistics().shapes == 100  # started over once, at the bound
    last = otel.spans()[-1]
    assert last.name == f"tools/call tool-{MAX_SHAPES + 99}"
    assert attrs(last)["gen_ai.tool.name"] == f"tool-{MAX_SHAPES + 99}"
    # A repeated call reuses its shape.
    again = observer.server_request("tools/call", 1, {"name": "tool-1"}, Peer("stdio"), None, None)
    again.finish("ok")
    again = observer.server_request("tools/call", 2, {"name": "tool-1"}, Peer("stdio"), None, None)
    again.finish("ok")
    assert observer.statistics().shapes == 101
