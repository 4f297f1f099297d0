"""The observer slot: empty unless something is installed; several observers composed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry

from trimcp import telemetry
from trimcp.client import ClientSessionOptions
from trimcp.server import MCPServer
from trimcp.telemetry import IGNORED, SLOT, Peer, RequestMetrics, result_outcome
from trimcp.testing import open_client_pair

if TYPE_CHECKING:
    from contextvars import Context

    from trimcp.protocol import JsonObject, RequestId
    from trimcp.telemetry import ClientProbe, Outcome, RequestProbe, SessionProbe


class Recorder:
    """An observer that writes down what it was told."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def server_request(  # noqa: PLR0917  # one request's facts, positional: hot path
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
        context: Context | None,
    ) -> RequestProbe:
        self.log.append(f"{self.name} start {method} {request_id} {context is not None}")
        return _Probe(self.name, self.log)

    def client_request(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> ClientProbe:
        return _Probe(self.name, self.log)

    def server_session(self, peer: Peer) -> SessionProbe:
        return _Probe(self.name, self.log)

    def client_session(self, peer: Peer) -> SessionProbe:
        return IGNORED


class _Probe:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def inject(self, params: JsonObject | None) -> JsonObject | None:
        return {**(params or {}), self.name: True}

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        self.log.append(f"{self.name} {outcome} {error_code}")

    def end(self, protocol_version: str | None, error: str | None = None) -> None:
        self.log.append(f"{self.name} end {protocol_version} {error}")


def slot() -> object:
    """What the hot paths see (read afresh each time: mypy would narrow the attribute)."""
    return SLOT.observer


def test_the_slot_is_empty_unless_something_is_installed() -> None:
    assert slot() is None
    metrics = RequestMetrics(CollectorRegistry())
    with metrics:
        assert slot() is metrics
        assert telemetry.installed() == (metrics,)
    assert slot() is None
    assert telemetry.installed() == ()


def test_installing_twice_installs_once() -> None:
    log: list[str] = []
    one = Recorder("one", log)
    telemetry.install(one)
    telemetry.install(one)
    try:
        assert telemetry.installed() == (one,)
        assert slot() is one
    finally:
        telemetry.uninstall(one)
    assert slot() is None


def test_two_observers_are_told_in_the_order_installed() -> None:
    log: list[str] = []
    one, two = Recorder("one", log), Recorder("two", log)
    telemetry.install(one)
    telemetry.install(two)
    try:
        observer = SLOT.observer
        assert observer is not None
        probe = observer.server_request("tools/call", 7, None, Peer(), None, None)
        probe.finish("error", -32602)
        client = observer.client_request("ping", None, Peer(), None)
        assert client.inject({"a": 1}) == {"a": 1, "one": True, "two": True}
        observer.server_session(Peer("stdio")).end("2025-11-25")
        observer.client_session(Peer()).end(None)
        telemetry.uninstall(one)
        assert slot() is two
    finally:
        telemetry.uninstall(one)
        telemetry.uninstall(two)
    assert log == [
        "one start tools/call 7 False",
        "two start tools/call 7 False",
        "one error -32602",
        "two error -32602",
        "one end 2025-11-25 None",
        "two end 2025-11-25 None",
    ]
    assert slot() is None


def test_a_tool_error_is_a_tools_call_result_with_is_error_true() -> None:
    assert result_outcome("tools/call", {"content": [], "isError": True}) == "tool_error"
    assert result_outcome("tools/call", {"content": [], "isError": False}) == "ok"
    assert result_outcome("prompts/get", {"isError": True}) == "ok"


def test_the_ignored_probe_passes_params_through_untouched() -> None:
    params: JsonObject = {"name": "x"}
    assert IGNORED.inject(params) is params
    IGNORED.finish("ok")
    IGNORED.end(None)


async def test_an_uninstalled_observer_is_told_nothing() -> None:
    log: list[str] = []
    observer = Recorder("gone", log)
    telemetry.install(observer)
    telemetry.uninstall(observer)
    server = MCPServer("quiet")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    for era in ("2025-11-25", "2026-07-28"):
        async with open_client_pair(
            server, options=ClientSessionOptions(protocol_version=era)
        ) as client:
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
    assert slot() is None
    assert log == []
