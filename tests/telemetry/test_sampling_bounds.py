"""``sampling_bounds`` decides exactly as the SDK's own samplers decide.

The lean span path replaces ``should_sample`` of the SDK's ``ParentBased``,
``TraceIdRatioBased`` and static samplers by a comparison of the trace id's low 64 bits with
a bound per parent case. Hypothesis draws samplers, trace ids and parents (none, invalid,
remote or local, sampled or not, with a trace state) and asks ``LeanTracer.start`` and the
sampler itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider, sampling
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    DEFAULT_OFF,
    DEFAULT_ON,
    AlwaysRecordSampler,
    Decision,
    ParentBased,
    ParentBasedTraceIdRatio,
    Sampler,
    SamplingResult,
    StaticSampler,
    TraceIdRatioBased,
)
from opentelemetry.trace import (
    DEFAULT_TRACE_STATE,
    INVALID_SPAN_CONTEXT,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
)
from opentelemetry.trace.span import TraceState

from trimcp.telemetry._lean import lean_tracer, sampling_bounds
from trimcp.telemetry._leanspan import LeanSpan

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.util.types import AttributeValue

ratios = st.one_of(st.sampled_from([0.0, 1e-9, 0.1, 0.5, 0.999999, 1.0]), st.floats(0.0, 1.0))
leaves = st.one_of(
    st.sampled_from([ALWAYS_ON, ALWAYS_OFF]),
    ratios.map(TraceIdRatioBased),
)
samplers = st.one_of(
    leaves,
    st.sampled_from([DEFAULT_ON, DEFAULT_OFF]),
    ratios.map(ParentBasedTraceIdRatio),
    st.builds(ParentBased, leaves, leaves, leaves, leaves, leaves),
)
# Trace ids near the bounds matter most: the low 64 bits decide.
trace_ids = st.one_of(
    st.integers(1, (1 << 128) - 1),
    st.integers(0, (1 << 64) - 1).map(lambda low: (1 << 64) | low),
)
states = st.sampled_from([None, TraceState([("vendor", "value")])])


@st.composite
def parents(draw: st.DrawFn) -> tuple[Context | None, SpanContext | None]:
    """A parent context as ``start_span`` gets one, and its span context (None: no parent)."""
    kind = draw(st.sampled_from(["none", "invalid", "span"]))
    if kind == "none":
        return None, None
    if kind == "invalid":
        return trace.set_span_in_context(NonRecordingSpan(INVALID_SPAN_CONTEXT)), None
    context = SpanContext(
        draw(trace_ids),
        draw(st.integers(1, (1 << 64) - 1)),
        is_remote=draw(st.booleans()),
        trace_flags=TraceFlags(draw(st.sampled_from([0, 1]))),
        trace_state=draw(states),
    )
    return trace.set_span_in_context(NonRecordingSpan(context)), context


@given(samplers, trace_ids, parents())
def test_the_lean_path_decides_as_the_sdks_samplers(
    sampler: Sampler, trace_id: int, parent: tuple[Context | None, SpanContext | None]
) -> None:
    context, span_context = parent
    assert sampling_bounds(sampler) is not None
    lean = lean_tracer(
        TracerProvider(sampler=sampler, id_generator=Fixed(trace_id)).get_tracer("t")
    )
    assert lean is not None
    attributes: dict[str, AttributeValue] = {"mcp.method.name": "tools/call"}
    started = LeanSpan("tools/call echo", SpanKind.SERVER, attributes)
    lean.start(started, context)
    if span_context is not None:
        trace_id = span_context.trace_id  # a child is on its parent's trace
    result = sampler.should_sample(
        context, trace_id, "tools/call echo", SpanKind.SERVER, attributes
    )
    assert started.context.trace_id == trace_id
    assert started.context.trace_flags.sampled == result.decision.is_sampled()  # type: ignore[no-untyped-call]
    # The SDK's samplers record exactly what they sample, and add no attributes.
    assert started.attributes == (
        dict(result.attributes) if result.decision.is_recording() else None  # type: ignore[no-untyped-call]
    )
    assert started.context.trace_state == (result.trace_state or DEFAULT_TRACE_STATE)


class Fixed(IdGenerator):
    """Draws the trace id it is given (and span id 1)."""

    def __init__(self, trace_id: int) -> None:
        self.trace_id = trace_id

    def generate_span_id(self) -> int:
        return 1

    def generate_trace_id(self) -> int:
        return self.trace_id


class Custom(Sampler):
    def should_sample(self, *args: object, **kwargs: object) -> SamplingResult:
        return SamplingResult(Decision.RECORD_ONLY)

    def get_description(self) -> str:
        return "Custom"


class Overriding(TraceIdRatioBased):
    """A ratio sampler whose decision is its own: asked per span, never compiled."""

    def should_sample(self, *args: object, **kwargs: object) -> SamplingResult:
        return SamplingResult(Decision.DROP)


def test_any_other_sampler_is_asked_per_span() -> None:
    for sampler in (
        Custom(),
        Overriding(0.5),
        AlwaysRecordSampler(ALWAYS_OFF),
        ParentBased(Custom()),
        ParentBased(ALWAYS_ON, remote_parent_sampled=Overriding(1.0)),
        ParentBased(ParentBased(ALWAYS_ON)),  # nested: not one of the shapes compiled
        StaticSampler(Decision.RECORD_ONLY),
    ):
        assert sampling_bounds(sampler) is None, sampler.get_description()


def test_the_samplers_the_environment_names_are_compiled() -> None:
    # What OTEL_TRACES_SAMPLER builds for each of its values but a custom one.
    for name, factory in sampling._KNOWN_SAMPLERS.items():
        sampler = cast("Sampler", factory(0.25) if isinstance(factory, type) else factory)
        assert sampling_bounds(sampler) is not None, name
