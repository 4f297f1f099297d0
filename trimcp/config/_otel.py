"""The ``[otel]`` table: OpenTelemetry traces and metrics (``trimcp.telemetry``, ``trimcp[otel]``).

Off as shipped. Each key has the standard ``OTEL_*`` environment variable it stands for;
a variable that is set wins over the table (the OpenTelemetry SDK's own rule), so that a
deployment can redirect the export without editing the file. ``OTEL_SDK_DISABLED=true``
turns everything off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ._schema import Check, above, spec

OtelExporter = Literal["otlp", "console", "none"]


def _ratio_ok(value: float) -> bool:
    return 0.0 <= value <= 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class OtelSettings:
    """The ``[otel]`` table.

    Attributes:
        enabled: export spans and metrics (needs ``pip install 'trimcp[otel]'``).
        service_name: the ``service.name`` resource attribute; "" uses
            ``[application] name`` (``OTEL_SERVICE_NAME``).
        traces: export spans, SERVER for requests received and CLIENT for requests sent.
        metrics: export the MCP duration histograms.
        exporter: ``"otlp"`` (OTLP over HTTP/protobuf), ``"console"`` (stderr, for trying it
            out) or ``"none"`` (``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER``).
        endpoint: the OTLP collector's base URL; "" means ``http://localhost:4318``
            (``OTEL_EXPORTER_OTLP_ENDPOINT``).
        sample_ratio: the share of new traces recorded; a request inside a caller's trace
            follows the caller's choice (``OTEL_TRACES_SAMPLER_ARG``).
        metric_export_interval: seconds between two exports of the metrics
            (``OTEL_METRIC_EXPORT_INTERVAL``, in milliseconds there).
        resource_uri_in_span_name: name ``resources/read`` spans after the URI too; off by
            default, as URIs make span names of unbounded variety.
    """

    enabled: bool = field(default=False, metadata=spec(meaning="export OpenTelemetry data"))
    service_name: str = field(default="", metadata=spec(meaning="the service.name to report"))
    traces: bool = field(default=True, metadata=spec(meaning="export spans"))
    metrics: bool = field(default=True, metadata=spec(meaning="export the duration histograms"))
    exporter: OtelExporter = field(
        default="otlp", metadata=spec(meaning='where to export: "otlp", "console" or "none"')
    )
    endpoint: str = field(default="", metadata=spec(meaning="the OTLP collector's base URL"))
    sample_ratio: float = field(
        default=1.0,
        metadata=spec(
            meaning="the share of new traces recorded",
            check=Check(test=_ratio_ok, rule="from 0 to 1"),
        ),
    )
    metric_export_interval: float = field(
        default=60.0,
        metadata=spec(meaning="seconds between two metric exports", check=above(0)),
    )
    resource_uri_in_span_name: bool = field(
        default=False, metadata=spec(meaning="name resources/read spans after the URI too")
    )
