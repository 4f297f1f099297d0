"""``[otel]`` and the ``OTEL_*`` variables: what is built, which wins, and the missing extra."""

from __future__ import annotations

import sys

import pytest
from opentelemetry.sdk.trace.sampling import ParentBased

from trimcp import telemetry
from trimcp.config import OtelSettings, SysConfig
from trimcp.errors import ConfigError
from trimcp.telemetry import OtelObserver, configure_otel, plan_otel, start_telemetry

ON = OtelSettings(enabled=True)


def test_nothing_is_planned_unless_enabled() -> None:
    assert plan_otel(OtelSettings(), "trimcp", {}) is None
    assert plan_otel(ON, "trimcp", {"OTEL_SDK_DISABLED": "true"}) is None
    assert plan_otel(ON, "trimcp", {"OTEL_SDK_DISABLED": "false"}) is not None


def test_the_table_decides_when_no_variable_is_set() -> None:
    settings = OtelSettings(
        enabled=True,
        service_name="gateway-a",
        exporter="console",
        endpoint="http://collector:4318/",
        sample_ratio=0.25,
        metric_export_interval=5.0,
        metrics=False,
        resource_uri_in_span_name=True,
    )
    plan = plan_otel(settings, "trimcp", {})
    assert plan is not None
    assert plan.service_name == "gateway-a"
    assert (plan.traces_exporter, plan.metrics_exporter) == ("console", None)
    assert plan.endpoint == "http://collector:4318"
    assert (plan.sample_ratio, plan.metric_export_interval) == (0.25, 5.0)
    assert plan.resource_uri_in_span_name


def test_defaults_name_the_service_after_the_application() -> None:
    plan = plan_otel(ON, "my-daemon", {})
    assert plan is not None
    assert plan.service_name == "my-daemon"
    assert plan.endpoint == "http://localhost:4318"
    assert (plan.traces_exporter, plan.metrics_exporter) == ("otlp", "otlp")


def test_variables_win_over_the_table() -> None:
    settings = OtelSettings(enabled=True, service_name="table", exporter="otlp", sample_ratio=1.0)
    env = {
        "OTEL_SERVICE_NAME": "from-env",
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318",
        "OTEL_TRACES_SAMPLER_ARG": "0.5",
        "OTEL_METRIC_EXPORT_INTERVAL": "1500",
    }
    plan = plan_otel(settings, "trimcp", env)
    assert plan is not None
    assert plan.service_name == "from-env"
    assert (plan.traces_exporter, plan.metrics_exporter) == ("console", "none")
    assert plan.endpoint == "http://env:4318"
    assert (plan.sample_ratio, plan.metric_export_interval) == (0.5, 1.5)


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("OTEL_TRACES_EXPORTER", "jaeger", '"otlp", "console" or "none"'),
        ("OTEL_METRICS_EXPORTER", "prometheus", '"otlp", "console" or "none"'),
        ("OTEL_TRACES_SAMPLER_ARG", "2", "from 0 to 1"),
        ("OTEL_TRACES_SAMPLER_ARG", "half", "from 0 to 1"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "-5", "milliseconds"),
    ],
)
def test_a_bad_variable_is_named(variable: str, value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        plan_otel(ON, "trimcp", {variable: value})
    assert variable in str(caught.value)
    assert expected in str(caught.value)
    assert repr(value) in str(caught.value)


def test_configure_builds_sdk_providers_and_installs_the_observer() -> None:
    settings = OtelSettings(enabled=True, exporter="console", sample_ratio=0.5)
    handle = configure_otel(settings, "trimcp", {"OTEL_METRICS_EXPORTER": "none"})
    assert handle is not None
    try:
        assert isinstance(handle.observer, OtelObserver)
        assert telemetry.installed() == (handle.observer,)
        assert handle.tracer_provider is not None
        assert handle.meter_provider is not None
        sampler = handle.tracer_provider.sampler
        assert isinstance(sampler, ParentBased)
        assert "0.5" in sampler.get_description()  # type: ignore[no-untyped-call]  # the SDK
        resource = handle.tracer_provider.resource.attributes
        assert resource["service.name"] == "trimcp"
    finally:
        handle.shutdown()
    assert telemetry.installed() == ()


def test_configure_does_nothing_when_disabled() -> None:
    assert configure_otel(OtelSettings(), "trimcp", {}) is None
    assert start_telemetry(SysConfig()) is None
    assert telemetry.installed() == ()


@pytest.fixture
def without_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every opentelemetry import fail, as in an install without trimcp[otel]."""
    for name in list(sys.modules):
        if name == "opentelemetry" or name.startswith(("opentelemetry.", "trimcp.telemetry._sdk")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)


@pytest.mark.usefixtures("without_opentelemetry")
def test_enabled_without_the_extra_says_what_to_install() -> None:
    with pytest.raises(ConfigError) as caught:
        configure_otel(ON, "trimcp", {})
    message = str(caught.value)
    assert "otel.enabled" in message
    assert "pip install 'trimcp[otel]'" in message
    assert telemetry.installed() == ()
    # Disabled, nothing is imported and nothing fails.
    assert configure_otel(OtelSettings(), "trimcp", {}) is None
