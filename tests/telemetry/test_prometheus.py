"""``RequestMetrics``: the counter and the histogram, read back from the exposition text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from trimcp.telemetry import DURATION_BUCKETS, MCP_METHODS, Peer, RequestMetrics, _prometheus


def samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the registry, by name and sorted labels."""
    text = generate_latest(registry).decode()
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return found


def serve(metrics: RequestMetrics, method: str, outcome: str = "ok") -> None:
    probe = metrics.server_request(method, 1, None, Peer(), None, None)
    probe.finish(outcome)  # type: ignore[arg-type]


def test_requests_are_counted_by_method_and_outcome() -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    serve(metrics, "tools/call")
    serve(metrics, "tools/call")
    serve(metrics, "tools/call", "tool_error")
    serve(metrics, "resources/read", "error")
    serve(metrics, "prompts/get", "cancelled")
    found = samples(registry)
    count = "trimcp_requests_total"
    assert found[count, (("method", "tools/call"), ("outcome", "ok"))] == 2
    assert found[count, (("method", "tools/call"), ("outcome", "tool_error"))] == 1
    assert found[count, (("method", "resources/read"), ("outcome", "error"))] == 1
    assert found[count, (("method", "prompts/get"), ("outcome", "cancelled"))] == 1
    hist = "trimcp_request_duration_seconds"
    assert found[hist + "_count", (("method", "tools/call"),)] == 3
    # The semantic conventions' advice, then +Inf.
    buckets = [
        float(dict(labels)["le"])
        for (name, labels) in found
        if name == hist + "_bucket" and dict(labels)["method"] == "tools/call"
    ]
    assert sorted(buckets) == [*DURATION_BUCKETS, float("inf")]


def test_a_second_set_in_one_registry_is_refused() -> None:
    registry = CollectorRegistry()
    RequestMetrics(registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        RequestMetrics(registry)


def test_sessions_and_requests_sent_are_not_counted() -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    metrics.client_request("tools/call", None, Peer(), None).finish("ok")
    metrics.server_session(Peer()).end(None)
    metrics.client_session(Peer()).end(None)
    assert not any(name == "trimcp_requests_total" for name, _ in samples(registry))


@given(st.lists(st.text(max_size=30), max_size=20))
def test_the_method_label_stays_bounded(methods: list[str]) -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    for method in methods:
        serve(metrics, method)
    labels = {
        dict(labels)["method"] for name, labels in samples(registry) if "method" in dict(labels)
    }
    assert labels <= MCP_METHODS | {"other"}
    unknown = [m for m in methods if m not in MCP_METHODS]
    assert ("other" in labels) == bool(unknown)


def test_durations_fall_in_le_buckets_and_add_up(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    clock = iter([])
    # The metrics' clock, told each request's start (0) and end (its duration).
    monkeypatch.setattr(_prometheus, "perf_counter", lambda: next(clock))
    for seconds in (0.002, 0.01, 0.0100001, 0.015, 0.5, 400.0):
        clock = iter([0.0, seconds])
        metrics.server_request("ping", 1, None, Peer(), None, None).finish("ok")
    found = samples(registry)
    hist = "trimcp_request_duration_seconds"

    def bucket(le: str) -> float:
        return found[hist + "_bucket", (("le", le), ("method", "ping"))]

    assert bucket("0.01") == 2  # on the bound: "le" includes it
    assert bucket("0.02") == 4
    assert bucket("0.2") == 4
    assert bucket("0.5") == 5
    assert bucket("300.0") == 5
    assert bucket("+Inf") == 6
    assert found[hist + "_count", (("method", "ping"),)] == 6
    assert found[hist + "_sum", (("method", "ping"),)] == pytest.approx(400.5371001)
    assert found["trimcp_requests_total", (("method", "ping"), ("outcome", "ok"))] == 6
