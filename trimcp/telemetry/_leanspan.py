"""``LeanSpan``: one span of the lean path while it runs, needing only the OpenTelemetry API.

It is the handler's current span (a ``NonRecordingSpan``: it propagates its context and
records nothing itself) and the record of what the finished span will say: name, kind,
parent, attributes, start time. ``_lean.LeanTracer.start`` fills in the context and the
start; ``_lean.LeanTracer.end`` builds the SDK's finished span from it. Kept apart from
``_lean`` (which imports the SDK) so that ``_otel`` can build its probes on it with the API
alone installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opentelemetry.trace import INVALID_SPAN_CONTEXT, NonRecordingSpan, SpanContext

if TYPE_CHECKING:
    from collections.abc import Mapping

    from opentelemetry.trace import SpanKind
    from opentelemetry.util.types import AttributeValue

__all__ = ["LeanSpan"]


class LeanSpan(NonRecordingSpan):
    """A span started by ``LeanTracer.start`` (see the module docstring).

    ``attributes`` is None once the sampler said not to record it.
    """

    __slots__ = ("attributes", "context", "kind", "name", "parent", "start_ns")

    def __init__(self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue]) -> None:
        # NonRecordingSpan's own __init__ is not called: the context comes with ``start``.
        self.name = name
        self.kind = kind
        self.attributes: Mapping[str, AttributeValue] | None = attributes
        self.context: SpanContext = INVALID_SPAN_CONTEXT
        self.parent: SpanContext | None = None
        self.start_ns = 0

    def get_span_context(self) -> SpanContext:
        return self.context

    def __repr__(self) -> str:
        return f"LeanSpan({self.name!r}, {self.context!r})"
