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
``plan_otel`` (``_plan.py``) makes that decision without importing the SDK, so it is
tested on its own.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import ConfigError

from ._plan import plan_otel

if TYPE_CHECKING:
    from collections.abc import Mapping

    from opentelemetry.metrics import MeterProvider
    from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import TracerProvider

    from trimcp.config import OtelSettings, SysConfig

    from ._otel import OtelObserver
    from ._plan import OtelPlan

__all__ = ["OtelHandle", "configure_otel", "instrument", "start_telemetry"]

_INSTALL_HINT: Final = "pip install 'trimcp[otel]'"


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
