"""The spans ``LeanTracer`` builds are the spans the SDK's ``start_span`` and ``end`` made.

Each test drives an ``OtelObserver`` as a server session does (``server_request`` with the
handler's own context, ``client_request`` from inside it, ``finish``), on SDK providers
that differ only in what decides the path: a ``SimpleSpanProcessor`` (the lean path) or a
processor that watches spans start (the SDK's path). A fixed id generator makes the ids
of both paths the same, so every field of the exported spans can be compared.
"""

from __future__ import annotations

import contextvars
import time
from typing import TYPE_CHECKING

import pytest
from opentelemetry import trace
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.trace import (
    INVALID_SPAN_CONTEXT,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
)

from trimcp.telemetry import OtelObserver, Peer
from trimcp.telemetry._leanspan import LeanSpan

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import Attributes

    from trimcp.protocol import JsonObject
    from trimcp.telemetry import Outcome

PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"
PEER = Peer("stdio", "s-1")
VERSION = "2025-11-25"


class Counting(IdGenerator):
    """Ids 1, 2, 3...: two providers given one each draw the same ids in the same order."""

    def __init__(self) -> None:
        self.next = 0

    def generate_span_id(self) -> int:
        self.next += 1
        return self.next

    def generate_trace_id(self) -> int:
        self.next += 1
        return self.next << 64


class Watching(SimpleSpanProcessor):
    """A processor that watches spans start: the observer must keep to the SDK's path."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        super().__init__(exporter)
        self.started = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.started += 1


class Setup:
    """An observer on its own SDK tracer provider, exporting into memory."""

    def __init__(
        self,
        *,
        watching: bool,
        sampler: Sampler | None = None,
        limits: SpanLimits | None = None,
    ) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(
            sampler=sampler or ParentBased(ALWAYS_ON), id_generator=Counting(), span_limits=limits
        )
        self.watcher = Watching(self.exporter) if watching else None
        self.provider.add_span_processor(self.watcher or SimpleSpanProcessor(self.exporter))
        self.observer = OtelObserver(self.provider, NoOpMeterProvider())

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def serve(
        self,
        method: str,
        params: JsonObject | None,
        outcome: Outcome = "ok",
        error_code: int | None = None,
        *,
        send: str | None = None,
        handle: Callable[[Span], object] | None = None,
    ) -> tuple[contextvars.Context, JsonObject | None]:
        """One request received, the handler (given its current span to ``handle``,
        optionally sending ``send``) and its end; return the handler's context and what its
        request would have sent."""
        handler = contextvars.copy_context()
        probe = self.observer.server_request(method, 7, params, PEER, VERSION, handler)
        if handle is not None:
            handler.run(lambda: handle(trace.get_current_span()))
        sent = None
        if send is not None:
            client = handler.run(self.observer.client_request, send, {"name": "up"}, PEER, VERSION)
            sent = client.inject({"name": "up"})
            client.finish(outcome, error_code)
        probe.finish(outcome, error_code)
        return handler, sent


def traced(flags: str = "01") -> JsonObject:
    return {"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-{flags}", "tracestate": "k=v"}


def traceparent(sent: JsonObject | None) -> str:
    """The traceparent a request sent in its ``_meta``."""
    assert sent is not None
    meta = sent["_meta"]
    assert isinstance(meta, dict)
    value = meta["traceparent"]
    assert isinstance(value, str)
    return value


def facts(span: ReadableSpan) -> dict[str, object]:
    """Every field of a finished span the two paths must agree on."""
    return {
        "name": span.name,
        "kind": span.kind,
        "attributes": dict(span.attributes or {}),
        "dropped_attributes": span.dropped_attributes,
        "context": span.context,
        "parent": span.parent,
        "status": (span.status.status_code, span.status.description),
        "resource": span.resource,
        "scope": span.instrumentation_scope,
        "events": [(e.name, dict(e.attributes or {}), e.timestamp) for e in span.events],
        "dropped_events": span.dropped_events,
        "links": [(link.context, dict(link.attributes or {})) for link in span.links],
        "dropped_links": span.dropped_links,
    }


def current(handler: contextvars.Context) -> Span:
    return handler.run(trace.get_current_span)


def assert_same(lean: Sequence[ReadableSpan], sdk: Sequence[ReadableSpan], began: int) -> None:
    assert len(lean) == len(sdk) > 0
    now = time.time_ns()
    for ours, theirs in zip(lean, sdk, strict=True):
        assert facts(ours) == facts(theirs)
        assert ours.start_time is not None
        assert ours.end_time is not None
        assert began <= ours.start_time <= ours.end_time <= now


REQUESTS: list[tuple[str, JsonObject | None, Outcome, int | None]] = [
    ("tools/call", {"name": "echo", "_meta": traced()}, "ok", None),
    ("tools/call", {"name": "echo"}, "tool_error", None),
    ("tools/call", {"name": "nope"}, "error", -32602),
    ("prompts/get", {"name": "greet", "_meta": traced()}, "cancelled", None),
    ("resources/read", {"uri": "file:///a.txt"}, "ok", None),
    ("ping", None, "error", None),
]


@pytest.mark.parametrize(("method", "params", "outcome", "code"), REQUESTS)
def test_a_lean_span_is_the_span_the_sdk_made(
    method: str, params: JsonObject | None, outcome: Outcome, code: int | None
) -> None:
    lean, sdk = Setup(watching=False), Setup(watching=True)
    began = time.time_ns()
    lean_handler, lean_sent = lean.serve(method, params, outcome, code, send="tools/call")
    sdk_handler, sdk_sent = sdk.serve(method, params, outcome, code, send="tools/call")
    assert sdk.watcher is not None
    assert sdk.watcher.started == 2  # the SDK's path, for the SERVER and the CLIENT span
    assert_same(lean.spans(), sdk.spans(), began)
    # The CLIENT span is the SERVER span's child, and what it sends names it as the parent.
    client, server = lean.spans()
    assert (client.kind, server.kind) == (SpanKind.CLIENT, SpanKind.SERVER)
    assert client.parent == server.context
    assert lean_sent == sdk_sent
    assert traceparent(lean_sent) == (
        f"00-{client.context.trace_id:032x}-{client.context.span_id:016x}-01"
    )
    if params is not None and "_meta" in params:
        assert f"{server.context.trace_id:032x}" == PARENT_TRACE
        assert server.parent is not None
        assert f"{server.parent.span_id:016x}" == PARENT_SPAN
        assert server.context.trace_state.get("k") == "v"
    else:
        assert server.parent is None
    if outcome != "ok":
        assert server.status.status_code is StatusCode.ERROR
        assert server.attributes is not None
        assert "error.type" in server.attributes
    # The handler's current span has the SERVER span's context, recording or not, and
    # records nothing once the request ended.
    assert not current(lean_handler).is_recording()
    assert current(lean_handler).get_span_context() == server.context
    assert current(sdk_handler).get_span_context() == server.context


def test_span_limits_are_kept_as_the_sdk_keeps_them() -> None:
    limits = SpanLimits(max_span_attributes=3, max_span_attribute_length=4)
    lean, sdk = Setup(watching=False, limits=limits), Setup(watching=True, limits=limits)
    began = time.time_ns()
    for setup in (lean, sdk):
        setup.serve("tools/call", {"name": "echo-long-name", "_meta": traced()}, "error", -32602)
    assert_same(lean.spans(), sdk.spans(), began)
    (span,) = lean.spans()
    assert span.attributes is not None
    assert len(span.attributes) == 3
    assert span.dropped_attributes > 0
    assert all(len(str(value)) <= 4 for value in span.attributes.values())


def test_an_unsampled_parent_records_nothing_but_its_context_still_propagates() -> None:
    setup = Setup(watching=False)  # ParentBased(ALWAYS_ON): the parent's flag decides
    handler, sent = setup.serve("tools/call", {"name": "echo", "_meta": traced("00")}, send="x/y")
    assert setup.spans() == []
    context = current(handler).get_span_context()
    assert f"{context.trace_id:032x}" == PARENT_TRACE
    assert not context.trace_flags.sampled
    assert context.span_id not in (0, int(PARENT_SPAN, 16))
    version, trace_id, span_id, flags = traceparent(sent).split("-")
    assert (version, trace_id, flags) == ("00", PARENT_TRACE, "00")
    assert int(span_id, 16) not in (0, context.span_id, int(PARENT_SPAN, 16))


@pytest.mark.parametrize(("ratio", "recorded"), [(0.0, 0), (1.0, 40)])
def test_a_ratio_sampler_decides_for_the_lean_path(ratio: float, recorded: int) -> None:
    setup = Setup(watching=False, sampler=TraceIdRatioBased(ratio))
    for _ in range(20):
        handler, sent = setup.serve("tools/call", {"name": "echo"}, send="tools/call")
        assert current(handler).get_span_context().is_valid
        assert traceparent(sent).endswith("-01" if ratio else "-00")
    assert len(setup.spans()) == recorded


def test_a_processor_added_later_that_watches_starts_brings_back_the_sdk_path() -> None:
    setup = Setup(watching=False)
    setup.serve("tools/call", {"name": "echo"})
    watcher = Watching(InMemorySpanExporter())
    setup.provider.add_span_processor(watcher)
    handler, _ = setup.serve("tools/call", {"name": "echo"})
    assert watcher.started == 1
    assert not isinstance(current(handler), LeanSpan)  # the SDK's own span
    assert len(setup.spans()) == 2


class Delegating(trace.TracerProvider):
    """A provider that is not the SDK's (as another SDK's would be), making SDK spans."""

    def __init__(self, inner: TracerProvider) -> None:
        self.inner = inner
        self.asked = 0

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes | None = None,
    ) -> Tracer:
        return _DelegatingTracer(self, self.inner.get_tracer(instrumenting_module_name))


class _DelegatingTracer(trace.Tracer):
    def __init__(self, provider: Delegating, inner: Tracer) -> None:
        self.provider = provider
        self.inner = inner

    def start_span(self, *args: object, **kwargs: object) -> Span:
        self.provider.asked += 1
        return self.inner.start_span(*args, **kwargs)  # type: ignore[arg-type]

    def start_as_current_span(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        raise AssertionError("not used by the observer")


def test_a_provider_that_is_not_the_sdks_gets_start_span() -> None:
    exporter = InMemorySpanExporter()
    inner = TracerProvider()
    inner.add_span_processor(SimpleSpanProcessor(exporter))
    provider = Delegating(inner)
    observer = OtelObserver(provider, NoOpMeterProvider())
    handler = contextvars.copy_context()
    probe = observer.server_request("tools/call", 1, {"name": "echo"}, PEER, VERSION, handler)
    assert current(handler).is_recording()  # the SDK's own span, made by start_span
    probe.finish("tool_error")
    assert provider.asked == 1
    (span,) = exporter.get_finished_spans()
    assert span.name == "tools/call echo"
    assert span.status.status_code is StatusCode.ERROR


def test_a_no_op_provider_records_nothing_and_passes_the_parent_on() -> None:
    observer = OtelObserver(trace.NoOpTracerProvider(), NoOpMeterProvider())
    handler = contextvars.copy_context()
    params: JsonObject = {"name": "echo", "_meta": traced()}
    probe = observer.server_request("tools/call", 1, params, PEER, VERSION, handler)
    assert f"{current(handler).get_span_context().trace_id:032x}" == PARENT_TRACE
    probe.finish("ok")


def enrich(span: Span) -> None:
    """What a handler may do to its current span: every recording call of the API."""
    span.set_attribute("app.user", "ada")
    span.set_attributes({"app.rows": 3, "app.user": "grace", "app.flags": [True, False]})
    span.set_attribute("app.odd", {"a": (1, 2)})  # checked as the SDK checks it
    span.add_event("looked up", {"rows": 3, "bad": object()}, timestamp=1_000)  # type: ignore[dict-item]
    span.add_event("no attributes", timestamp=2_000)
    try:
        raise ValueError("no such row")
    except ValueError as error:
        span.record_exception(error, {"app.retry": False}, timestamp=3_000)
    span.set_status(Status(StatusCode.ERROR, "looked in the wrong table"))
    span.update_name("tools/call lookup")
    linked = SpanContext(int(PARENT_TRACE, 16), int(PARENT_SPAN, 16), is_remote=True)
    span.add_link(linked, {"app.why": "same order"})
    span.add_link(INVALID_SPAN_CONTEXT)  # a link to nothing, carrying nothing: not kept


@pytest.mark.parametrize(("outcome", "code"), [("ok", None), ("error", -32602)])
def test_what_a_handler_does_to_its_span_is_kept_as_the_sdk_keeps_it(
    outcome: Outcome, code: int | None
) -> None:
    lean, sdk = Setup(watching=False), Setup(watching=True)
    began = time.time_ns()
    for setup in (lean, sdk):
        setup.serve("tools/call", {"name": "echo"}, outcome, code, handle=enrich)
    assert_same(lean.spans(), sdk.spans(), began)
    (span,) = lean.spans()
    assert span.name == "tools/call lookup"
    assert span.attributes is not None
    assert span.attributes["app.user"] == "grace"
    assert [event.name for event in span.events] == ["looked up", "no attributes", "exception"]
    assert [dict(link.attributes or {}) for link in span.links] == [{"app.why": "same order"}]
    assert span.events[2].attributes is not None
    assert span.events[2].attributes["exception.type"] == "ValueError"
    # The request's own error replaces the handler's ERROR status (as the SDK's path does).
    description = "looked in the wrong table" if outcome == "ok" else None
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, description)


def test_ok_set_by_the_handler_is_final_and_limits_are_kept_as_it_writes() -> None:
    limits = SpanLimits(
        max_span_attributes=8,
        max_attribute_length=5,
        max_events=2,
        max_event_attributes=1,
        max_links=2,
        max_link_attributes=1,
    )
    lean, sdk = Setup(watching=False, limits=limits), Setup(watching=True, limits=limits)
    spans: list[Span] = []

    def handle(span: Span) -> None:
        assert span.is_recording()
        span.set_status(Status(StatusCode.OK))
        span.set_status(StatusCode.ERROR, "too late: OK is final")
        for number in range(12):
            span.set_attribute(f"app.n{number}", "a long value")
        span.set_attribute("app.n11", "again")  # an update: moved to the end of the order
        for number in range(3):
            span.add_event(f"e{number}", {"first": 1, "second": 2}, timestamp=number)
            span.add_link(
                SpanContext(number + 1, number + 1, is_remote=False), {"first": 1, "second": 2}
            )
        spans.append(span)

    began = time.time_ns()
    for setup in (lean, sdk):
        setup.serve("tools/call", {"name": "echo"}, "error", -32602, handle=handle)
    assert_same(lean.spans(), sdk.spans(), began)
    (span,) = lean.spans()
    assert span.status.status_code is StatusCode.OK
    assert span.dropped_attributes > 0
    assert span.dropped_events == 1
    assert span.dropped_links == 1
    # After the end, the span records nothing more, on either path.
    for ended in spans:
        assert not ended.is_recording()
        ended.set_attribute("app.late", "x")
    assert span.attributes is not None
    assert "app.late" not in span.attributes
    assert "app.late" not in (sdk.spans()[0].attributes or {})


def test_an_unsampled_span_ignores_the_handler() -> None:
    setup = Setup(watching=False, sampler=TraceIdRatioBased(0.0))
    setup.serve("tools/call", {"name": "echo"}, handle=enrich)
    assert setup.spans() == []
