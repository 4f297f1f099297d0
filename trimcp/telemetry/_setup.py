"""OpenTelemetry set up for a process: from the ``[otel]`` table, the ``OTEL_*`` variables winning.

Two ways in:

* ``instrument(tracer_provider=..., meter_provider=...)`` for an application that embeds
  trimcp and has its own providers (or a test with the SDK's in-memory exporters): builds an
  ``OtelObserver`` on them and installs it. Nothing global is touched.
* ``start_telemetry(config)`` for ``trimcp serve``: ``configure_otel(config.otel, name)``
  builds SDK providers from the table and installs the observer; ``shutdown`` on the handle
  it returns flushes and stops them. The providers stay the observer's own (the global ones
  are not set), so a library in the same process that exports on its own is not redirected.

Each key of the table has the standard variable it stands for, and a variable that is set
wins (the SDK's own rule): ``OTEL_SDK_DISABLED``, ``OTEL_SERVICE_NAME``,
``OTEL_TRACES_EXPORTER``, ``OTEL_METRICS_EXPORTER``, ``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_TRACES_SAMPLER_ARG`` and ``OTEL_METRIC_EXPORT_INTERVAL``
(https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
``plan_otel`` makes that decision without importing the SDK, so it is tested on its own.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from opentelemetry.metrics import MeterProvider
    from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import TracerProvider

    from trimcp.config import OtelExporter, OtelSettings, SysConfig

    from ._otel import OtelObserver

__all__ = ["OtelHandle", "OtelPlan", "configure_otel", "instrument", "plan_otel", "start_telemetry"]

_DEFAULT_ENDPOINT: Final = "http://localhost:4318"
_INSTALL_HINT: Final = "pip install 'trimcp[otel]'"
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


@final
class OtelHandle:
    """The OpenTelemetry set up by ``configure_otel``: its observer and its providers."""

    __slots__ = ("meter_provider", "observer", "plan", "tracer_provider")

    def __init__(
        self,
        plan: OtelPlan,
        observer: OtelObserver,
        tracer_provider: SdkTracerProvider | None,
        meter_provider: SdkMeterProvider | None,
    ) -> None:
        self.plan = plan
        self.observer = observer
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider

    def shutdown(self) -> None:
        """Stop recording, export what is pending and stop the providers. Blocks while the
        exporters flush (bounded by the SDK's own export timeouts)."""
        self.observer.uninstall()
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def instrument(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    resource_uri_in_span_name: bool = False,
) -> OtelObserver:
    """Record spans and histograms with these providers from now on; return the observer.

    The providers default to the global ones. ``observer.uninstall()`` stops recording.

    Raises:
        ModuleNotFoundError: opentelemetry is not installed (``pip install 'trimcp[otel]'``).
    """
    from ._otel import OtelObserver

    observer = OtelObserver(
        tracer_provider, meter_provider, resource_uri_in_span_name=resource_uri_in_span_name
    )
    observer.install()
    return observer


def configure_otel(
    settings: OtelSettings,
    default_service_name: str,
    environ: Mapping[str, str] | None = None,
) -> OtelHandle | None:
    """Build SDK providers from ``[otel]`` (the variables winning) and install the observer.

    Returns None when nothing is exported (``plan_otel``); else a handle whose ``shutdown``
    the caller must call at exit, or spans still buffered are lost.

    Raises:
        ConfigError: ``otel.enabled`` is true but opentelemetry is not installed, or a
            variable holds a value trimcp cannot use.
    """
    plan = plan_otel(settings, default_service_name, environ)
    if plan is None:
        return None
    try:
        from ._sdk import build_providers
    except ImportError as exc:
        raise ConfigError(
            f"otel.enabled is true but OpenTelemetry is not installed ({exc}); "
            f"install it with: {_INSTALL_HINT}, or set otel.enabled = false",
            key="otel.enabled",
            given="true",
            expected=f"the opentelemetry packages ({_INSTALL_HINT})",
        ) from exc
    tracer_provider, meter_provider = build_providers(plan, sys.stderr)
    observer = instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        resource_uri_in_span_name=plan.resource_uri_in_span_name,
    )
    return OtelHandle(plan, observer, tracer_provider, meter_provider)


def start_telemetry(config: SysConfig) -> OtelHandle | None:
    """Start what ``config`` asks of OpenTelemetry for ``trimcp serve``; None if nothing.

    ``service.name`` defaults to ``[application] name``. Call ``shutdown`` on the handle
    when the daemon stops.

    Raises:
        ConfigError: see ``configure_otel``.
    """
    return configure_otel(config.otel, config.application.name)
