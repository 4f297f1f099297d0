"""``OtelObserver``: OpenTelemetry spans and histograms after the semantic conventions for MCP.

What it records (https://github.com/open-telemetry/semantic-conventions-genai/blob/main/docs/gen-ai/mcp.md):

* a SERVER span per request received, named ``{mcp.method.name} {target}`` (the tool's or
  the prompt's name; the resource URI only when ``resource_uri_in_span_name``), whose parent
  is the trace context the client put in ``params._meta`` (``traceparent``, ``tracestate``,
  ``baggage``, unprefixed as SEP-414 says), else the ambient context. The span is the
  current one while the handler runs, so what the handler sends (a gateway forwarding the
  call to its upstream) is its child;
* a CLIENT span per request sent, whose context is injected into the request's
  ``params._meta`` (a copy: the caller's dict is never changed), so the server it goes to
  continues the trace;
* ``mcp.server.operation.duration`` and ``mcp.client.operation.duration`` per request, and
  ``mcp.server.session.duration`` and ``mcp.client.session.duration`` per session, in
  seconds with the conventions' bucket advice.

Attributes: ``mcp.method.name``, ``jsonrpc.request.id``, ``mcp.protocol.version``,
``mcp.session.id`` (a request in a session), ``gen_ai.tool.name`` with
``gen_ai.operation.name = execute_tool`` for ``tools/call``, ``gen_ai.prompt.name``,
``mcp.resource.uri``, ``network.transport`` (``pipe`` for stdio, ``tcp`` for HTTP and
WebSocket) and ``network.protocol.name`` (``http``, ``websocket``). A failed request gets
``error.type``: the JSON-RPC code as a string (and ``rpc.response.status_code``), or
``tool_error`` for a ``tools/call`` result with ``isError`` true, and the span status ERROR.

The histograms carry the bounded attributes only: a method MCP does not define is
``other``, and a tool or prompt name is left out of a request that failed with a JSON-RPC
error (a client may send any name; the span keeps it).

Spans are made by the SDK's ``start_span`` and ``end`` only when the tracer provider is not
the SDK's own (a no-op or proxy provider, another SDK) or has a span processor that watches
spans start: with the SDK's provider, ``_lean.LeanTracer`` builds each finished span directly
and hands it to the provider's processors, for less than half the cost (its docstring says what
differs).

Imports ``opentelemetry`` (``pip install 'trimcp[otel]'``): ``trimcp.telemetry`` loads this
module only when it is asked for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from trimcp.protocol import TRACE_KEYS

from ._leanspan import LeanSpan
from ._methods import method_label
from ._prometheus import DURATION_BUCKETS
from ._seam import Installable

if TYPE_CHECKING:
    from contextvars import Context

    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.propagators.textmap import TextMapPropagator
    from opentelemetry.trace import Span, Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

    from trimcp.protocol import JsonObject, RequestId

    from ._lean import LeanTracer
    from ._seam import ClientProbe, Outcome, Peer, RequestProbe, SessionProbe, Transport

__all__ = ["MAX_SHAPES", "OtelObserver", "OtelStatistics"]

_SCOPE: Final = "trimcp"

#: Attribute shapes kept per observer: a few per tool, prompt and method in practice; a
#: client that sends ever new tool names fills it, and it starts over (no growth).
MAX_SHAPES: Final = 1024

# The methods whose params name their target (the span name's second word).
_NAMED: Final = frozenset(("tools/call", "prompts/get"))


@final
@dataclass(frozen=True, slots=True)
class OtelStatistics:
    """What an ``OtelObserver`` keeps: ``shapes``, attribute sets reused across requests."""

    shapes: int


Attributes = dict[str, "AttributeValue"]

# What each transport is in the conventions' terms (Recording MCP transport).
_TRANSPORT_ATTRIBUTES: Final[dict[Transport | None, Attributes]] = {
    "stdio": {"network.transport": "pipe"},
    "http": {"network.transport": "tcp", "network.protocol.name": "http"},
    "websocket": {"network.transport": "tcp", "network.protocol.name": "websocket"},
    None: {},
}


@final
class OtelObserver(Installable):
    """Spans and duration histograms after the MCP conventions (see the module docstring).

    ``tracer_provider`` and ``meter_provider`` default to the global ones (whatever
    ``opentelemetry.trace.set_tracer_provider`` installed, else no-ops); pass SDK providers
    explicitly to keep tests and embedded servers apart. Nothing is recorded until
    ``install`` (or ``with observer:``).
    """

    __slots__ = (
        "_client_duration",
        "_client_session",
        "_lean",
        "_propagator",
        "_resource_uri_in_span_name",
        "_server_duration",
        "_server_session",
        "_shapes",
        "_tracer",
    )

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        *,
        resource_uri_in_span_name: bool = False,
    ) -> None:
        """Get a tracer and the four histograms from the providers."""
        self._tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)
        # Finished spans built directly when the tracer is the SDK's (module docstring).
        self._lean = _lean_of(self._tracer)
        meter = metrics.get_meter(_SCOPE, meter_provider=meter_provider)
        self._server_duration = _histogram(
            meter,
            "mcp.server.operation.duration",
            "MCP request duration as observed on the receiver, from reading it to answering",
        )
        self._client_duration = _histogram(
            meter,
            "mcp.client.operation.duration",
            "MCP request duration as observed on the sender, from sending it to its answer",
        )
        self._server_session = _histogram(
            meter,
            "mcp.server.session.duration",
            "The duration of the MCP session as observed on the MCP server",
        )
        self._client_session = _histogram(
            meter,
            "mcp.client.session.duration",
            "The duration of the MCP session as observed on the MCP client",
        )
        # The configured propagators (W3C trace context and baggage unless OTEL_PROPAGATORS
        # says otherwise), as the conventions ask.
        self._propagator = propagate.get_global_textmap()
        self._resource_uri_in_span_name = resource_uri_in_span_name
        # (method, tool or prompt name, transport, version) -> (shared attributes, span name),
        # at most MAX_SHAPES of them (``_shape``).
        self._shapes: dict[tuple[str, object, str | None, str | None], tuple[Attributes, str]] = {}

    def statistics(self) -> OtelStatistics:
        """How many attribute shapes are kept (bounded by ``MAX_SHAPES``)."""
        return OtelStatistics(shapes=len(self._shapes))

    # --- Observer -------------------------------------------------------------------------

    def server_request(  # noqa: PLR0913, PLR0917  # one request's facts, positional: hot path
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
        context: Context | None,
    ) -> RequestProbe:
        """Start the SERVER span, its parent taken from ``params._meta``; make it the
        current span in ``context``, the handler's."""
        shared, name, uri = self._shape(method, params, peer, protocol_version)
        parent = None
        meta = None if params is None else params.get("_meta")
        if isinstance(meta, dict) and any(key in meta for key in TRACE_KEYS):
            parent = self._propagator.extract(meta)
        # All attributes at the start: setting them later takes the span's lock once more.
        span_attributes = _own({**shared, "jsonrpc.request.id": str(request_id)}, uri, peer)
        lean = self._lean
        if lean is not None and lean.usable():
            probe = _LeanSpan(
                name, SpanKind.SERVER, span_attributes, lean, self._server_duration, shared, None
            )
            lean.start(probe, parent)
            if context is not None:
                # The probe is the handler's current span: what the handler sends is its
                # child, and what the handler sets on it is kept (``LeanSpan``).
                context.run(otel_context.attach, trace.set_span_in_context(probe))
            return probe
        span = self._tracer.start_span(
            name, context=parent, kind=SpanKind.SERVER, attributes=span_attributes
        )
        if context is not None:
            # In the handler's own (copied) context: never detached, the copy ends with it.
            context.run(otel_context.attach, trace.set_span_in_context(span))
        return _SdkSpan(span, self._server_duration, shared, time.perf_counter())

    def client_request(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> ClientProbe:
        """Start the CLIENT span, a child of the current one (a handler's SERVER span)."""
        shared, name, uri = self._shape(method, params, peer, protocol_version)
        span_attributes = shared
        if uri is not None or peer.session_id is not None:
            span_attributes = _own({**shared}, uri, peer)
        lean = self._lean
        if lean is not None and lean.usable():
            probe = _LeanSpan(
                name,
                SpanKind.CLIENT,
                span_attributes,
                lean,
                self._client_duration,
                shared,
                self._propagator,
            )
            lean.start(probe, None)
            return probe
        span = self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=span_attributes)
        return _ClientSpan(
            span, self._client_duration, shared, self._propagator, time.perf_counter()
        )

    def server_session(self, peer: Peer) -> SessionProbe:
        """Time a server session."""
        return _SessionTiming(self._server_session, peer, time.perf_counter())

    def client_session(self, peer: Peer) -> SessionProbe:
        """Time a client session."""
        return _SessionTiming(self._client_session, peer, time.perf_counter())

    def _shape(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> tuple[Attributes, str, str | None]:
        """Return the attributes spans and histograms share, the span name, and the resource
        URI (spans only: the histograms' ``mcp.resource.uri`` is opt-in).

        The first two are the same for every call of one tool (or prompt, or method) over
        one transport and version: they are kept (``_shapes``) and shared, never changed.
        """
        name = None
        if params is not None and method in _NAMED:
            name = params.get("name")
        key = (method, name, peer.transport, protocol_version)
        shape = self._shapes.get(key)
        if shape is not None:
            return shape[0], shape[1], None
        shared, target, uri = self._attributes(method, params, peer, protocol_version)
        span_name = _span_name(method, target)
        if uri is None:
            if len(self._shapes) >= MAX_SHAPES:
                self._shapes.clear()  # a client sending ever new names: start over
            self._shapes[key] = (shared, span_name)
        return shared, span_name, uri

    def _attributes(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> tuple[Attributes, str | None, str | None]:
        attributes: Attributes = {"mcp.method.name": method_label(method)}
        attributes.update(_TRANSPORT_ATTRIBUTES[peer.transport])
        if protocol_version is not None:
            attributes["mcp.protocol.version"] = protocol_version
        target = uri = None
        if params is not None:
            if method == "tools/call":
                target = _string(params.get("name"))
                attributes["gen_ai.operation.name"] = "execute_tool"
                if target is not None:
                    attributes["gen_ai.tool.name"] = target
            elif method == "prompts/get":
                target = _string(params.get("name"))
                if target is not None:
                    attributes["gen_ai.prompt.name"] = target
            elif method.startswith("resources/"):
                uri = _string(params.get("uri"))
                if self._resource_uri_in_span_name:
                    target = uri
        return attributes, target, uri


def _lean_of(tracer: Tracer) -> LeanTracer | None:
    """A ``LeanTracer`` over ``tracer`` if it is the SDK's; None without the SDK (the API's
    tracer is then used for every span)."""
    try:
        from ._lean import lean_tracer
    except ImportError:  # pragma: no cover - trimcp[otel] installs the SDK
        return None
    return lean_tracer(tracer)


def _histogram(meter: Meter, name: str, description: str) -> Histogram:
    return meter.create_histogram(
        name,
        unit="s",
        description=description,
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
    )


def _own(attributes: Attributes, uri: str | None, peer: Peer) -> Attributes:
    """``attributes`` (a span's own copy) with what is this request's or session's alone."""
    if uri is not None:
        attributes["mcp.resource.uri"] = uri
    if peer.session_id is not None:
        attributes["mcp.session.id"] = peer.session_id
    return attributes


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _span_name(method: str, target: str | None) -> str:
    label = method_label(method)
    return label if target is None else f"{label} {target}"


def _failure(outcome: Outcome, error_code: int | None) -> Attributes | None:
    """Return the error attributes of an outcome; None for ``ok``."""
    if outcome == "ok":
        return None
    if outcome == "error":
        if error_code is None:
            return {"error.type": "_OTHER"}
        code = str(error_code)
        return {"error.type": code, "rpc.response.status_code": code}
    return {"error.type": outcome}  # tool_error, cancelled


def _metric_attributes(shared: Attributes, failure: Attributes | None) -> Attributes:
    if failure is None:
        return shared
    merged = {**shared, **failure}
    if "rpc.response.status_code" in failure:
        # A refused request may name any tool or prompt: keep the histograms bounded.
        merged.pop("gen_ai.tool.name", None)
        merged.pop("gen_ai.prompt.name", None)
    return merged


def _end(span: Span, failure: Attributes | None) -> None:
    if failure is not None and span.is_recording():
        span.set_attributes(failure)
        span.set_status(Status(StatusCode.ERROR))
    span.end()


class _SdkSpan:
    """One request received, on the SDK's own span: the span, and its duration for the histogram."""

    __slots__ = ("_histogram", "_shared", "_span", "_start")

    def __init__(self, span: Span, histogram: Histogram, shared: Attributes, start: float) -> None:
        self._span = span
        self._histogram = histogram
        self._shared = shared
        self._start = start

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        failure = _failure(outcome, error_code)
        _end(self._span, failure)
        self._histogram.record(
            time.perf_counter() - self._start, _metric_attributes(self._shared, failure)
        )


@final
class _ClientSpan(_SdkSpan):
    """One request sent, on the SDK's own span: as one received, and the context it injects."""

    __slots__ = ("_propagator",)

    def __init__(
        self,
        span: Span,
        histogram: Histogram,
        shared: Attributes,
        propagator: TextMapPropagator,
        start: float,
    ) -> None:
        super().__init__(span, histogram, shared, start)
        self._propagator = propagator

    def inject(self, params: JsonObject | None) -> JsonObject | None:
        return _injected(self._propagator, self._span, params)


@final
class _LeanSpan(LeanSpan):
    """One request received or sent on the lean path: the probe, the handler's current span
    (a received one's), and what the span built at its end by a ``LeanTracer`` will say."""

    __slots__ = ("_histogram", "_lean", "_propagator", "_shared", "_start")

    def __init__(  # noqa: PLR0913, PLR0917  # one request's facts, positional: hot path
        self,
        name: str,
        kind: SpanKind,
        attributes: Attributes,
        lean: LeanTracer,
        histogram: Histogram,
        shared: Attributes,
        propagator: TextMapPropagator | None,
    ) -> None:
        super().__init__(name, kind, attributes)
        self._lean = lean
        self._histogram = histogram
        self._shared = shared
        self._propagator = propagator
        self._start = time.perf_counter()

    def attribute_limits(self) -> tuple[int | None, int | None]:
        return self._lean.attribute_limits

    def inject(self, params: JsonObject | None) -> JsonObject | None:
        propagator = self._propagator
        if propagator is None:  # a SERVER span: nothing is sent
            return params
        return _injected(propagator, self, params)

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        failure = _failure(outcome, error_code)
        self._lean.end(self, failure)
        self._histogram.record(
            time.perf_counter() - self._start, _metric_attributes(self._shared, failure)
        )


def _injected(
    propagator: TextMapPropagator, span: Span, params: JsonObject | None
) -> JsonObject | None:
    """``params`` with ``span``'s trace context in a copy of its ``_meta`` (W3C fields)."""
    carrier: dict[str, str] = {}
    propagator.inject(carrier, context=trace.set_span_in_context(span))
    if not carrier:
        return params
    given = None if params is None else params.get("_meta")
    meta: JsonObject = {**given} if isinstance(given, dict) else {}
    meta.update(carrier)  # ours win over a caller's stale ones: this span is the parent
    return {**(params or {}), "_meta": meta}


@final
class _SessionTiming:
    """One session, timed from start to end."""

    __slots__ = ("_histogram", "_peer", "_start")

    def __init__(self, histogram: Histogram, peer: Peer, start: float) -> None:
        self._histogram = histogram
        self._peer = peer
        self._start = start

    def end(self, protocol_version: str | None, error: str | None = None) -> None:
        attributes: Attributes = dict(_TRANSPORT_ATTRIBUTES[self._peer.transport])
        if protocol_version is not None:
            attributes["mcp.protocol.version"] = protocol_version
        if error is not None:
            attributes["error.type"] = error
        self._histogram.record(time.perf_counter() - self._start, attributes)
