"""``plan_otel``: what the ``[otel]`` table and the ``OTEL_*`` variables ask for, reconciled.

A pure decision (no SDK import), which ``_setup.configure_otel`` carries out and
``_sdk.build_providers`` builds. A variable that is set wins over the table's key it stands
for (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.config import OtelExporter, OtelSettings

__all__ = ["OtelPlan", "plan_otel"]

_DEFAULT_ENDPOINT: Final = "http://localhost:4318"
_TRUE: Final = ("true", "1", "yes", "on")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OtelPlan:
    """What ``configure_otel`` builds, once the table and the variables are reconciled.

    Attributes:
        service_name: the ``service.name`` resource attribute.
        traces_exporter: where spans go; None: no spans at all (``[otel] traces = false``).
        metrics_exporter: where the histograms go; None: no histograms.
        endpoint: the OTLP collector's base URL (``/v1/traces`` and ``/v1/metrics`` are
            appended).
        sample_ratio: the share of new traces recorded (ParentBased(TraceIdRatioBased)).
        metric_export_interval: seconds between two metric exports.
        resource_uri_in_span_name: name ``resources/*`` spans after the URI too.
    """

    service_name: str
    traces_exporter: OtelExporter | None
    metrics_exporter: OtelExporter | None
    endpoint: str
    sample_ratio: float
    metric_export_interval: float
    resource_uri_in_span_name: bool


def plan_otel(
    settings: OtelSettings,
    default_service_name: str,
    environ: Mapping[str, str] | None = None,
) -> OtelPlan | None:
    """Return what to build from ``settings`` and ``environ`` (default ``os.environ``).

    None when nothing is to be exported: ``[otel] enabled = false`` or
    ``OTEL_SDK_DISABLED=true``.

    Raises:
        ConfigError: a variable holds a value trimcp cannot use (named, with what it takes).
    """
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE or not settings.enabled:
        return None
    exporter = settings.exporter
    return OtelPlan(
        service_name=env.get("OTEL_SERVICE_NAME") or settings.service_name or default_service_name,
        traces_exporter=_exporter(env, "OTEL_TRACES_EXPORTER", exporter)
        if settings.traces
        else None,
        metrics_exporter=_exporter(env, "OTEL_METRICS_EXPORTER", exporter)
        if settings.metrics
        else None,
        endpoint=(
            env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or settings.endpoint or _DEFAULT_ENDPOINT
        ).rstrip("/"),
        sample_ratio=_ratio(env, settings.sample_ratio),
        metric_export_interval=_interval(env, settings.metric_export_interval),
        resource_uri_in_span_name=settings.resource_uri_in_span_name,
    )


def _exporter(env: Mapping[str, str], variable: str, default: OtelExporter) -> OtelExporter:
    given = env.get(variable)
    if not given:
        return default
    chosen = _EXPORTERS.get(given.strip().lower())
    if chosen is None:
        raise _bad(variable, given, 'one of "otlp", "console" or "none"')
    return chosen


_EXPORTERS: Final[dict[str, OtelExporter]] = {"otlp": "otlp", "console": "console", "none": "none"}


def _ratio(env: Mapping[str, str], default: float) -> float:
    given = env.get("OTEL_TRACES_SAMPLER_ARG")
    if not given:
        return default
    try:
        value = float(given)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise _bad("OTEL_TRACES_SAMPLER_ARG", given, "a number from 0 to 1")
    return value


def _interval(env: Mapping[str, str], default: float) -> float:
    given = env.get("OTEL_METRIC_EXPORT_INTERVAL")
    if not given:
        return default
    try:
        milliseconds = float(given)
    except ValueError:
        milliseconds = 0.0
    if not milliseconds > 0:
        raise _bad("OTEL_METRIC_EXPORT_INTERVAL", given, "milliseconds, a number > 0")
    return milliseconds / 1000.0


def _bad(variable: str, given: str, expected: str) -> ConfigError:
    return ConfigError(
        f"the environment variable {variable} is {given!r}; it must be {expected} "
        f"(it overrides the [otel] table; unset it to use the table's value)",
        key=variable,
        given=given,
        expected=expected,
    )
