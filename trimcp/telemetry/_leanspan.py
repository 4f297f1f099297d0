"""``LeanSpan``: one span of the lean path while it runs, needing only the OpenTelemetry API.

It is the handler's current span and the record of what the finished span will say: name,
kind, parent, attributes, start time, and what the handler added. ``_lean.LeanTracer.start``
fills in the context and the start; ``_lean.LeanTracer.end`` builds the SDK's finished span
from it. Kept apart from ``_lean`` (which imports the SDK) so that ``_otel`` can build its
probes on it with the API alone installed.

While the span records (it was sampled and has not ended), what a handler does to the
current span is kept as the SDK's ``Span`` keeps it (the API's semantics,
https://opentelemetry.io/docs/specs/otel/trace/api/#span-operations): ``set_attribute`` and
``set_attributes``, ``add_event`` and ``record_exception``, ``set_status`` (``OK`` is final,
``UNSET`` is ignored), ``update_name`` and ``add_link``; attribute values are checked and
the provider's span limits kept as they are set, events' and links' when the span ends.
Unlike the SDK's, these calls take no lock: a handler runs in the server's one thread.
"""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, ClassVar

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.trace import INVALID_SPAN_CONTEXT, Span, SpanContext
from opentelemetry.trace.status import Status, StatusCode

if TYPE_CHECKING:
    from collections.abc import Mapping

    from opentelemetry.trace import SpanKind
    from opentelemetry.util.types import Attributes, AttributeValue

__all__ = ["LeanEvent", "LeanSpan"]

#: An event a handler added: its name, attributes (unchecked) and time in ns.
LeanEvent = tuple[str, "Attributes", int]


class LeanSpan(Span):
    """A span started by ``LeanTracer.start`` (see the module docstring).

    ``attributes`` is None once the sampler said not to record it, and once it ended.

    What only a handler sets (``events``, ``links``, ``status``, ``owned``) starts as a class
    default and is stored on the instance when it is first set: a request whose handler
    leaves the span alone pays nothing for them. (The API's ``Span`` declares no
    ``__slots__``, so every instance has a ``__dict__`` for them.)

    ``end`` does nothing: trimcp ends the span when the request ends.
    """

    __slots__ = ("attributes", "context", "kind", "name", "parent", "start_ns")

    #: Events added by the handler, in order; None: none.
    events: ClassVar[list[LeanEvent] | None] = None
    #: Links added by the handler (valid ones only), in order; None: none.
    links: ClassVar[list[tuple[SpanContext, Attributes]] | None] = None
    #: The status the handler set; None: it set none.
    status: ClassVar[Status | None] = None
    #: Whether ``attributes`` is this span's own ``BoundedAttributes`` (a handler wrote to
    #: it; before that it may be a dict shared with other spans).
    owned: ClassVar[bool] = False

    def __init__(self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue]) -> None:
        # The context comes with ``LeanTracer.start``.
        self.name = name
        self.kind = kind
        self.attributes: Mapping[str, AttributeValue] | None = attributes
        self.context: SpanContext = INVALID_SPAN_CONTEXT
        self.parent: SpanContext | None = None
        self.start_ns = 0

    def get_span_context(self) -> SpanContext:
        return self.context

    def end(self, end_time: int | None = None) -> None:
        pass  # trimcp's: the span ends with its request (``LeanTracer.end``)

    def is_recording(self) -> bool:
        return self.attributes is not None

    def attribute_limits(self) -> tuple[int | None, int | None]:
        """The provider's limits on a span's attributes: how many, how long a value (None:
        no limit). ``LeanTracer`` spans know them; a bare ``LeanSpan`` has none."""
        return None, None

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        current = self.attributes
        if current is None:
            return
        if not self.owned:
            # From now on, a container of the span's own that checks each value and keeps
            # the limits as they are set, as the SDK's span does.
            most, longest = self.attribute_limits()
            current = BoundedAttributes(most, current, immutable=False, max_value_len=longest)
            self.attributes = current
            self.owned = True  # type: ignore[misc]  # the instance's own, from now on
        for key, value in attributes.items():
            current[key] = value  # type: ignore[index]  # a BoundedAttributes now

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self.set_attributes({key: value})

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        if self.attributes is None:
            return
        event = (name, attributes, time.time_ns() if timestamp is None else timestamp)
        if self.events is None:
            self.events = [event]  # type: ignore[misc]  # the instance's own
        else:
            self.events.append(event)

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        if self.attributes is None:
            return
        # A link to an invalid context is kept only for what it carries (the SDK's rule).
        if not (context.is_valid or attributes or context.trace_state):
            return
        if self.links is None:
            self.links = [(context, attributes)]  # type: ignore[misc]  # the instance's own
        else:
            self.links.append((context, attributes))

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,  # the API's signature
    ) -> None:
        # The exception semantic conventions:
        # https://opentelemetry.io/docs/specs/semconv/exceptions/exceptions-spans/
        kind = type(exception)
        module = kind.__module__
        named = kind.__qualname__ if module in ("builtins", "") else f"{module}.{kind.__qualname__}"
        recorded: dict[str, AttributeValue] = {
            "exception.type": named,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        recorded.update(attributes or {})
        self.add_event("exception", recorded, timestamp)

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self.attributes is None:
            return
        code = status.status_code if isinstance(status, Status) else status
        # OK is final; UNSET is no status to set.
        if (self.status is not None and self.status.status_code is StatusCode.OK) or (
            code is StatusCode.UNSET
        ):
            return
        given = status if isinstance(status, Status) else Status(status, description)
        self.status = given  # type: ignore[misc]  # the instance's own

    def update_name(self, name: str) -> None:
        if self.attributes is not None:
            self.name = name

    def __repr__(self) -> str:
        return f"LeanSpan({self.name!r}, {self.context!r})"
