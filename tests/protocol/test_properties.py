"""Hypothesis: random input never raises, and a model-based state machine (STYLE §9)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trimcp.errors import LocalProtocolError
from trimcp.protocol import (
    CancelReceived,
    JsonValue,
    Phase,
    ReplyToSend,
    RequestReceived,
    ServerConnection,
    ServerConnectionOptions,
)

from ._support import ALL_SERVER, SERVER_INFO, decoded, initialize_request, msg, operating_server

json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.integers(-5, 5) | st.sampled_from(["a", "b", ""])
methods = st.sampled_from(
    [
        "ping",
        "initialize",
        "tools/list",
        "tools/call",
        "prompts/get",
        "vendor/x",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "list_tools",
    ]
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"])},
    optional={
        "id": ids | st.none() | st.booleans(),
        "method": methods,
        "params": st.dictionaries(
            st.sampled_from(["requestId", "progressToken", "progress", "_meta", "x"]),
            json_values | ids,
            max_size=3,
        )
        | json_values,
        "result": json_values,
        "error": json_values,
    },
)


def _fresh() -> list[ServerConnection]:
    return [
        ServerConnection(SERVER_INFO, ALL_SERVER),
        operating_server(),
        operating_server(version="2025-03-26"),
    ]


@settings(max_examples=150)
@given(data=st.binary(max_size=64))
def test_random_bytes_never_raise(data: bytes) -> None:
    for conn in _fresh():
        for event in conn.receive(data):
            if isinstance(event, ReplyToSend):
                decoded(event.data)


@settings(max_examples=300)
@given(value=json_values | messages | st.lists(messages, max_size=3))
def test_random_json_never_raises(value: JsonValue) -> None:
    data = json.dumps(value).encode()
    for conn in _fresh():
        conn.receive(data)


@settings(max_examples=200)
@given(
    request_id=ids,
    method=methods.filter(lambda m: not m.startswith("notifications/")),
    params=st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)
def test_every_well_formed_request_gets_exactly_one_response(
    request_id: int | str, method: str, params: dict[str, JsonValue] | None
) -> None:
    for conn in _fresh():
        members: dict[str, JsonValue] = {"id": request_id, "method": method}
        if params is not None:
            members["params"] = params
        events = conn.receive(msg(**members))
        assert len(events) == 1
        [event] = events
        if isinstance(event, ReplyToSend):
            assert decoded(event.data)["id"] == request_id
        elif isinstance(event, RequestReceived):
            assert decoded(conn.send_result(request_id, {}))["id"] == request_id
            try:
                conn.send_result(request_id, {})
            except LocalProtocolError:
                pass
            else:
                raise AssertionError("a second response was allowed")
        else:
            assert method == "initialize"
            assert decoded(conn.respond_to_initialize())["id"] == request_id


class ServerModel(RuleBasedStateMachine):
    """Drive a ServerConnection against a model: phase and the ids in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.conn = ServerConnection(SERVER_INFO, ALL_SERVER, ServerConnectionOptions())
        self.phase = Phase.AWAITING_INITIALIZE
        self.in_flight: set[int | str] = set()
        self.cancelled: set[int | str] = set()
        self.outbound: set[int | str] = set()

    @rule(request_id=ids)
    def initialize(self, request_id: int | str) -> None:
        events = self.conn.receive(initialize_request(request_id))
        if self.phase is Phase.AWAITING_INITIALIZE:
            self.phase = Phase.NEGOTIATING
        else:
            [event] = events
            assert isinstance(event, ReplyToSend)
            assert event.error is not None

    @precondition(lambda self: self.phase is Phase.NEGOTIATING)
    @rule()
    def answer_initialize(self) -> None:
        self.conn.respond_to_initialize()
        self.phase = Phase.INITIALIZING

    @rule()
    def initialized(self) -> None:
        self.conn.receive(msg(method="notifications/initialized"))
        if self.phase is Phase.INITIALIZING:
            self.phase = Phase.OPERATING

    @rule(request_id=ids, method=st.sampled_from(["tools/list", "tools/call", "ping"]))
    def request(self, request_id: int | str, method: str) -> None:
        [event] = self.conn.receive(msg(id=request_id, method=method))
        accepted = self.phase in (Phase.INITIALIZING, Phase.OPERATING) and method != "ping"
        if accepted and request_id not in self.in_flight:
            assert isinstance(event, RequestReceived)
            self.in_flight.add(request_id)
        else:
            assert isinstance(event, ReplyToSend)
            assert event.request_id == request_id

    @rule(request_id=ids)
    def cancel(self, request_id: int | str) -> None:
        events = self.conn.receive(
            msg(method="notifications/cancelled", params={"requestId": request_id})
        )
        if (
            request_id in self.in_flight - self.cancelled
            and self.phase is not Phase.AWAITING_INITIALIZE
        ):
            assert events == [CancelReceived(request_id=request_id)]
            self.cancelled.add(request_id)
        else:
            assert events == []

    @rule(request_id=ids)
    def respond(self, request_id: int | str) -> None:
        if request_id not in self.in_flight:
            try:
                self.conn.send_result(request_id, {})
            except LocalProtocolError:
                return
            raise AssertionError("answered a request that was not in flight")
        data = self.conn.send_result(request_id, {})
        assert (data == b"") == (request_id in self.cancelled)
        self.in_flight.discard(request_id)
        self.cancelled.discard(request_id)

    @precondition(lambda self: self.phase is Phase.OPERATING)
    @rule()
    def ping_client(self) -> None:
        request_id, _ = self.conn.send_request("ping")
        assert request_id not in self.outbound
        self.outbound.add(request_id)

    @precondition(lambda self: bool(self.outbound))
    @rule(data=st.data())
    def client_answers(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.outbound, key=str)))
        [event] = self.conn.receive(msg(id=request_id, result={}))
        assert type(event).__name__ == "ResponseReceived"
        self.outbound.discard(request_id)

    @invariant()
    def model_matches(self) -> None:
        stats = self.conn.statistics()
        assert stats.phase is self.phase
        assert stats.inbound_in_flight == self.in_flight
        assert stats.outbound_pending == self.outbound
        for request_id in self.in_flight:
            assert self.conn.is_cancelled(request_id) == (request_id in self.cancelled)


TestServerModel = ServerModel.TestCase
TestServerModel.settings = settings(max_examples=60, stateful_step_count=30)
