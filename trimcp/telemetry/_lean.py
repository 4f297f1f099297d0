"""Finished spans built directly for the SDK's span processors: tracing at a fraction of the cost.

The SDK's ``Tracer.start_span`` and ``Span.end`` cost about 50 µs a request on the machine
``bench/telemetry.py`` ran on, most of it in making and locking a mutable ``Span`` (and the
garbage it leaves), where a whole MCP ``tools/call`` costs 60. trimcp's spans need none of
that mutability: their attributes are known when the request starts, their status when it
ends. So when the observer's tracer is the SDK's own, ``LeanTracer`` does what
``start_span`` does (the parent from the context, the provider's sampler, its id generator,
the start time) and, at the end, hands one immutable ``ReadableSpan`` (what ``Span.end``
would have handed) to the provider's span processors.

What it keeps of the SDK's behaviour: names, kinds, attributes (within the provider's
``SpanLimits``), parent, trace and span ids, trace flags and trace state, status, resource,
instrumentation scope, and the sampler's decision (``ParentBased``, ratio and custom
samplers all decide as they would; the SDK's own samplers, which decide from the parent's
flags and the trace id alone, are turned into one comparison per span by
``sampling_bounds``, where asking them costs more than the rest of the start). An unsampled
span records nothing but its context still propagates, flag 0. The handler's current span is
the ``LeanSpan`` (``_leanspan``): its child spans and requests are parented on it, and what
it sets on it (attributes, events, exceptions, links, status, name) is kept as the SDK's
span keeps it. What differs: the SDK's own self-metrics
(``OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED``) do not count these spans, and the handler
cannot end the span (trimcp ends it).

It is used only while every span processor of the provider does nothing when a span starts
or is ending (the SDK's ``SimpleSpanProcessor`` and ``BatchSpanProcessor``, or subclasses
that leave ``on_start`` alone): a processor that reads or changes a span as it starts gets
the SDK's path, as does a tracer disabled by a configurator. The SDK offers no public way
to reach a provider's processors, span limits or scope; the ``Tracer`` it hands out holds
them (``span_processor`` is public, ``_span_limits``, ``_instrumentation_scope`` and
``_is_enabled`` are not), and they are read from it. ``lean_tracer`` returns None for any
tracer that is not the SDK's, or an SDK that lacks one of these, and the caller keeps to
``start_span``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final, TypeAlias, cast, final

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, SpanProcessor
from opentelemetry.sdk.trace import Tracer as SdkTracer
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import (
    Decision,
    ParentBased,
    StaticSampler,
    TraceIdRatioBased,
)
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import (
    DEFAULT_TRACE_STATE,
    Link,
    SpanContext,
    Status,
    StatusCode,
    TraceFlags,
    get_current_span,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from opentelemetry.context import Context
    from opentelemetry.sdk.trace.sampling import Sampler
    from opentelemetry.trace import Tracer
    from opentelemetry.trace.span import TraceState
    from opentelemetry.util.types import Attributes, AttributeValue

    from ._leanspan import LeanEvent, LeanSpan

__all__ = ["LeanTracer", "SamplingBounds", "lean_tracer", "sampling_bounds"]

_ERROR: Final = Status(StatusCode.ERROR)
_UNSET: Final = Status(StatusCode.UNSET)
_SAMPLED: Final = int(TraceFlags.SAMPLED)
# Newer SDKs mark a trace id they drew at random (W3C Trace Context level 2); older have no
# such flag, and 0 leaves the flags as they were.
_RANDOM: Final = int(getattr(TraceFlags, "RANDOM_TRACE_ID", 0))
# (sampled, random trace id) -> the span's flags, made once.
_FLAGS: Final = {
    (sampled, random): TraceFlags((_SAMPLED if sampled else 0) | (_RANDOM if random else 0))
    for sampled in (False, True)
    for random in (False, True)
}

# The processors that do nothing as a span starts or is ending: ``on_start`` and
# ``_on_ending`` as the SDK's base, simple and batch processors define them (all empty).
_QUIET_STARTS: Final = frozenset(
    getattr(cls, hook, None)
    for cls in (SpanProcessor, SimpleSpanProcessor, BatchSpanProcessor)
    for hook in ("on_start", "_on_ending")
)


# The low 64 bits of a trace id, which the SDK's ratio sampler compares with its bound.
_LOW_BITS: Final = TraceIdRatioBased.TRACE_ID_LIMIT
# A sampler's rule as a bound on those bits: sampled when ``trace_id & _LOW_BITS < bound``.
# Always on is a bound no id reaches, always off is 0, a ratio sampler is its own ``bound``.
_ALWAYS: Final = _LOW_BITS + 1
_NEVER: Final = 0

#: A sampler's decisions as bounds, in the order ``SamplingBounds`` documents.
SamplingBounds: TypeAlias = tuple[int, int, int, int, int]


def sampling_bounds(sampler: Sampler) -> SamplingBounds | None:
    """Return the decisions of one of the SDK's own samplers as bounds on the trace id's low
    64 bits: for a root span, a remote parent that is (not) sampled, a local parent that is
    (not) sampled, in that order; None for any other sampler (it is asked per span).

    The SDK's ``ParentBased`` over its ``StaticSampler`` (always on or off) and
    ``TraceIdRatioBased``, and those two alone, are what every ``OTEL_TRACES_SAMPLER`` value
    but a custom one builds. They decide from the parent's flags and the trace id only, add
    no attributes and keep the parent's trace state, so their decision is a comparison; a
    subclass that overrides ``should_sample`` is asked, as is any other sampler. The SDK has
    no public way to read a ``ParentBased``'s delegates or a static sampler's decision
    (``_root`` and the four parent cases, ``_decision``); they are read with ``getattr``, and
    a sampler without them is asked per span too.
    """
    rule = _bound(sampler)
    if rule is not None:
        return (rule, rule, rule, rule, rule)
    if type(sampler).should_sample is not ParentBased.should_sample:
        return None
    delegates = (
        getattr(sampler, name, None)
        for name in (
            "_root",
            "_remote_parent_sampled",
            "_remote_parent_not_sampled",
            "_local_parent_sampled",
            "_local_parent_not_sampled",
        )
    )
    bounds = tuple(_bound(delegate) for delegate in delegates)
    if any(bound is None for bound in bounds):
        return None
    return cast("SamplingBounds", bounds)


def _bound(sampler: object) -> int | None:
    """A ratio or static sampler's rule as a bound; None for any other sampler."""
    method = getattr(type(sampler), "should_sample", None)
    if method is TraceIdRatioBased.should_sample:
        bound = getattr(sampler, "bound", None)
        return bound if isinstance(bound, int) else None
    if method is StaticSampler.should_sample:
        decision = getattr(sampler, "_decision", None)
        if decision is Decision.RECORD_AND_SAMPLE:
            return _ALWAYS
        if decision is Decision.DROP:
            return _NEVER
    return None


def lean_tracer(tracer: Tracer) -> LeanTracer | None:
    """Return a ``LeanTracer`` over the SDK ``tracer``; None when it is not the SDK's own (a
    no-op or proxy tracer, another SDK) or lacks what one needs."""
    if type(tracer) is not SdkTracer:
        return None
    processor = getattr(tracer, "span_processor", None)
    limits = getattr(tracer, "_span_limits", None)
    scope = getattr(tracer, "_instrumentation_scope", None)
    enabled = getattr(tracer, "_is_enabled", None)
    if (
        processor is None
        or not hasattr(processor, "_span_processors")
        or not isinstance(limits, SpanLimits)
        or scope is None
    ):
        return None
    return LeanTracer(tracer, processor, limits, scope, enabled)


@final
class LeanTracer:
    """``start_span`` and ``end`` without a ``Span``: see the module docstring."""

    __slots__ = (
        "_bounds",
        "_enabled",
        "_id_generator",
        "_info",
        "_limits",
        "_max_attributes",
        "_max_length",
        "_processor",
        "_quiet",
        "_random_ids",
        "_resource",
        "_sampler",
        "_scope",
    )

    def __init__(  # read once from the SDK tracer
        self,
        tracer: SdkTracer,
        processor: object,
        limits: SpanLimits,
        scope: object,
        enabled: object,
    ) -> None:
        self._sampler = tracer.sampler
        self._bounds = sampling_bounds(tracer.sampler)
        self._id_generator = tracer.id_generator
        # Whether the generator draws trace ids at random (newer SDKs ask it per span; it is
        # a property of the generator, asked once here).
        random_ids = getattr(tracer.id_generator, "is_trace_id_random", None)
        self._random_ids = bool(random_ids()) if callable(random_ids) else False
        self._resource = tracer.resource
        self._info = tracer.instrumentation_info
        self._processor = processor
        self._scope = scope
        self._enabled = enabled
        self._limits = limits
        self._max_attributes: int | None = limits.max_span_attributes
        self._max_length: int | None = limits.max_span_attribute_length
        # The processor tuple last found quiet (processors may be added at any time).
        self._quiet: object = None

    def usable(self) -> bool:
        """Whether a span may be built here now: the tracer is enabled and every span
        processor ignores a span's start (checked again when the processors change)."""
        if callable(self._enabled) and not self._enabled():
            return False
        processors = getattr(self._processor, "_span_processors", None)
        if processors is self._quiet:
            return True
        if not isinstance(processors, tuple) or not all(
            getattr(type(p), "on_start", None) in _QUIET_STARTS
            and getattr(type(p), "_on_ending", None) in _QUIET_STARTS
            for p in processors
        ):
            return False
        self._quiet = processors
        return True

    def start(self, span: LeanSpan, parent_context: Context | None) -> None:
        """Start ``span`` as ``Tracer.start_span`` would, parented on ``parent_context``
        (None: the current context): its context, parent, start time, and its attributes
        dropped (None) if it is not to be recorded."""
        parent: SpanContext | None = get_current_span(parent_context).get_span_context()
        ids = self._id_generator
        bounds = self._bounds
        if parent is None or not parent.is_valid:
            parent = None
            trace_id = ids.generate_trace_id()
            random_id = self._random_ids
            rule = 0
        else:
            trace_id = parent.trace_id
            random_id = bool(int(parent.trace_flags) & _RANDOM)
            # 1 to 4: remote sampled, remote not sampled, local sampled, local not sampled.
            rule = 1 + 2 * (not parent.is_remote) + (not int(parent.trace_flags) & _SAMPLED)
        if bounds is not None:
            # The SDK's own samplers, decided as they decide (``sampling_bounds``).
            sampled = trace_id & _LOW_BITS < bounds[rule]
            if not sampled:
                span.attributes = None
            trace_state: TraceState | None = (
                DEFAULT_TRACE_STATE if parent is None else parent.trace_state
            )
        else:
            sampling = self._sampler.should_sample(
                parent_context, trace_id, span.name, span.kind, span.attributes, ()
            )
            decision = sampling.decision
            sampled = decision.is_sampled()  # type: ignore[no-untyped-call]
            recording = decision.is_recording()  # type: ignore[no-untyped-call]
            span.attributes = sampling.attributes if recording else None
            trace_state = sampling.trace_state
        span.context = SpanContext(
            trace_id, ids.generate_span_id(), False, _FLAGS[sampled, random_id], trace_state
        )
        span.parent = parent
        span.start_ns = time.time_ns()

    @property
    def attribute_limits(self) -> tuple[int | None, int | None]:
        """The provider's limits on a span's attributes: how many, how long a value."""
        return self._max_attributes, self._max_length

    def end(self, started: LeanSpan, failure: Mapping[str, AttributeValue] | None) -> None:
        """Hand the finished span to the processors (nothing if it is not recorded)."""
        attributes = started.attributes
        if attributes is None:
            return
        started.attributes = None  # ended: what the handler does to it now is ignored
        status = started.status
        if failure is not None:
            # As the SDK's path sets them: the error's attributes, then ERROR (unless the
            # handler set OK, which is final).
            if started.owned:
                for key, value in failure.items():
                    attributes[key] = value  # type: ignore[index]  # its BoundedAttributes
            else:
                attributes = {**attributes, **failure}
            if status is None or status.status_code is not StatusCode.OK:
                status = _ERROR
        if not started.owned and (
            self._max_length is not None
            or (self._max_attributes is not None and len(attributes) > self._max_attributes)
        ):
            attributes = BoundedAttributes(
                self._max_attributes, attributes, immutable=True, max_value_len=self._max_length
            )
        events: Sequence[Event] = () if started.events is None else self._events(started.events)
        links: Sequence[Link] = () if started.links is None else self._links(started.links)
        # Positional (name, context, parent, resource, attributes, events, links, kind,
        # instrumentation info, status, start, end, scope): keywords cost a third more.
        span = ReadableSpan(
            started.name,
            started.context,
            started.parent,
            self._resource,
            attributes,
            events,
            links,
            started.kind,
            self._info,
            status or _UNSET,
            started.start_ns,
            time.time_ns(),
            self._scope,  # type: ignore[arg-type]
        )
        self._processor.on_end(span)  # type: ignore[attr-defined]

    def _links(self, added: list[tuple[SpanContext, Attributes]]) -> BoundedList[Link]:
        """The handler's links as the SDK's span keeps them, within the provider's limits."""
        limits = self._limits
        return BoundedList.from_seq(
            limits.max_links,
            [
                Link(
                    context,
                    BoundedAttributes(
                        limits.max_link_attributes,
                        attributes,
                        immutable=True,
                        max_value_len=limits.max_attribute_length,
                    ),
                )
                for context, attributes in added
            ],
        )

    def _events(self, added: list[LeanEvent]) -> BoundedList[Event]:
        """The handler's events as the SDK's span keeps them, within the provider's limits."""
        limits = self._limits
        return BoundedList.from_seq(
            limits.max_events,
            [
                Event(
                    name,
                    BoundedAttributes(
                        limits.max_event_attributes,
                        attributes,
                        immutable=True,
                        max_value_len=limits.max_attribute_length,
                    ),
                    timestamp,
                )
                for name, attributes, timestamp in added
            ],
        )
