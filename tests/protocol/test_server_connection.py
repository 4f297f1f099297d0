"""ServerConnection: handshake, phases, gating, in-flight ids, cancellation, progress."""

from __future__ import annotations

import pytest

from trimcp.errors import LocalProtocolError
from trimcp.protocol import (
    CancelReceived,
    ErrorObject,
    Implementation,
    Initialized,
    InitializeReceived,
    NotificationReceived,
    Phase,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    ServerCapabilities,
    ServerConnection,
    ServerConnectionOptions,
    UnexpectedResponse,
)

from ._support import (
    ALL_SERVER,
    SERVER_INFO,
    assert_valid,
    decoded,
    initialize_request,
    msg,
    operating_server,
    reply_of,
)

FULL_CLIENT_WIRE = {
    "roots": {"listChanged": True},
    "sampling": {"tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}},
}


# --- handshake ------------------------------------------------------------------------------


def test_handshake() -> None:
    options = ServerConnectionOptions(instructions="be nice")
    conn = ServerConnection(SERVER_INFO, ALL_SERVER, options)
    [event] = conn.receive(initialize_request(1))
    assert isinstance(event, InitializeReceived)
    assert event.params.client_info.name == "test-client"
    assert conn.phase is Phase.NEGOTIATING
    reply = decoded(conn.respond_to_initialize())
    assert_valid(reply, "JSONRPCResultResponse")
    assert_valid(reply["result"], "InitializeResult")
    assert reply["result"]["instructions"] == "be nice"
    assert conn.phase is Phase.INITIALIZING
    assert conn.receive(msg(method="notifications/initialized")) == [Initialized()]
    assert conn.phase is Phase.OPERATING


def test_respond_to_initialize_needs_a_pending_initialize() -> None:
    with pytest.raises(LocalProtocolError):
        ServerConnection(SERVER_INFO).respond_to_initialize()
    with pytest.raises(LocalProtocolError):
        operating_server().respond_to_initialize()


def test_initialize_answered_through_send_result_is_refused() -> None:
    conn = ServerConnection(SERVER_INFO)
    conn.receive(initialize_request(1))
    with pytest.raises(LocalProtocolError, match="respond_to_initialize"):
        conn.send_result(1, {})


def test_rejecting_initialize_waits_for_another() -> None:
    conn = ServerConnection(SERVER_INFO)
    conn.receive(initialize_request(1, "2023-01-01"))
    error = ErrorObject(code=-32602, message="Unsupported protocol version")
    assert decoded(conn.send_error(1, error))["error"]["code"] == -32602
    assert conn.phase is Phase.AWAITING_INITIALIZE
    [event] = conn.receive(initialize_request(2))
    assert isinstance(event, InitializeReceived)


def test_bad_initialize_params_are_invalid_params() -> None:
    conn = ServerConnection(SERVER_INFO)
    reply = reply_of(conn.receive(msg(id=1, method="initialize", params={"protocolVersion": 5})))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32602, "message": '"protocolVersion" must be a string'},
    }
    reply = reply_of(
        conn.receive(msg(id=2, method="initialize", params={"protocolVersion": "2025-11-25"}))
    )
    assert reply["error"]["code"] == -32602
    assert conn.phase is Phase.AWAITING_INITIALIZE


# --- before and during initialization -----------------------------------------------------


def test_requests_before_initialize_get_an_error_not_silence() -> None:
    conn = ServerConnection(SERVER_INFO, ALL_SERVER)
    reply = reply_of(conn.receive(msg(id=7, method="tools/list")))
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32600
    assert "initialize first" in reply["error"]["message"]


def test_ping_is_answered_in_every_open_phase() -> None:
    conn = ServerConnection(SERVER_INFO)
    assert reply_of(conn.receive(msg(id="p", method="ping"))) == {
        "jsonrpc": "2.0",
        "id": "p",
        "result": {},
    }
    conn.receive(initialize_request(1))
    assert reply_of(conn.receive(msg(id=2, method="ping")))["result"] == {}
    conn.respond_to_initialize()
    assert reply_of(conn.receive(msg(id=3, method="ping")))["result"] == {}


def test_notifications_before_initialize_are_ignored() -> None:
    conn = ServerConnection(SERVER_INFO)
    assert conn.receive(msg(method="notifications/initialized")) == []
    assert conn.receive(msg(method="notifications/roots/list_changed")) == []
    assert conn.phase is Phase.AWAITING_INITIALIZE


def test_requests_while_negotiating_are_refused() -> None:
    conn = ServerConnection(SERVER_INFO, ALL_SERVER)
    conn.receive(initialize_request(1))
    reply = reply_of(conn.receive(msg(id=2, method="tools/list")))
    assert "before initialize was answered" in reply["error"]["message"]


def test_second_initialize_is_an_error() -> None:
    conn = operating_server()
    reply = reply_of(conn.receive(initialize_request(9)))
    assert reply["id"] == 9
    assert reply["error"]["code"] == -32600
    assert "only once" in reply["error"]["message"]


def test_requests_after_the_result_but_before_initialized_are_served() -> None:
    conn = ServerConnection(SERVER_INFO, ALL_SERVER)
    conn.receive(initialize_request(1))
    conn.respond_to_initialize()
    [event] = conn.receive(msg(id=2, method="tools/list"))
    assert isinstance(event, RequestReceived)


def test_what_the_server_may_send_while_initializing() -> None:
    conn = ServerConnection(SERVER_INFO, ALL_SERVER)
    conn.receive(initialize_request(1, capabilities=FULL_CLIENT_WIRE))
    conn.respond_to_initialize()
    conn.send_notification("notifications/message", {"level": "info", "data": "hi"})
    conn.send_request("ping")
    with pytest.raises(LocalProtocolError, match="phase initializing"):
        conn.send_request("roots/list")
    with pytest.raises(LocalProtocolError, match="phase initializing"):
        conn.send_notification("notifications/tools/list_changed")


def test_nothing_but_ping_may_be_sent_before_initialize() -> None:
    conn = ServerConnection(SERVER_INFO, ALL_SERVER)
    conn.send_request("ping")
    with pytest.raises(LocalProtocolError):
        conn.send_notification("notifications/message", {"level": "info", "data": 1})


def test_initialization_timeout_closes() -> None:
    conn = ServerConnection(SERVER_INFO)
    conn.initialization_timed_out()
    assert conn.phase is Phase.CLOSED
    with pytest.raises(LocalProtocolError, match="closed"):
        conn.receive(msg(id=1, method="ping"))
    with pytest.raises(LocalProtocolError):
        conn.send_request("ping")
    conn.close()  # idempotent
    late = operating_server()
    late.initialization_timed_out()
    assert late.phase is Phase.OPERATING


# --- capability gating ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capabilities", "method", "missing"),
    [
        (ServerCapabilities(), "tools/list", "tools"),
        (ServerCapabilities(), "tools/call", "tools"),
        (ServerCapabilities(resources=True), "resources/subscribe", "resources.subscribe"),
        (ServerCapabilities(tools=True), "prompts/get", "prompts"),
        (ServerCapabilities(), "completion/complete", "completions"),
        (ServerCapabilities(), "logging/setLevel", "logging"),
        (ServerCapabilities(tasks=True), "tasks/list", "tasks.list"),
    ],
)
def test_requests_for_undeclared_capabilities_are_method_not_found(
    capabilities: ServerCapabilities, method: str, missing: str
) -> None:
    conn = operating_server(capabilities)
    reply = reply_of(conn.receive(msg(id=4, method=method, params={})))
    assert reply["error"]["code"] == -32601
    assert reply["error"]["data"] == {"method": method}
    assert missing in reply["error"]["message"]
    assert_valid(reply, "JSONRPCErrorResponse")


def test_unknown_methods_are_left_to_the_server_api() -> None:
    [event] = operating_server().receive(msg(id=4, method="vendor/thing"))
    assert isinstance(event, RequestReceived)


def test_completion_needs_no_capability_in_2024_11_05() -> None:
    conn = operating_server(ServerCapabilities(), version="2024-11-05")
    [event] = conn.receive(msg(id=4, method="completion/complete", params={}))
    assert isinstance(event, RequestReceived)


@pytest.mark.parametrize(
    ("client", "method", "params"),
    [
        ({}, "roots/list", None),
        ({}, "sampling/createMessage", {"messages": [], "maxTokens": 5}),
        ({"sampling": {}}, "sampling/createMessage", {"messages": [], "maxTokens": 5, "tools": []}),
        (
            {"sampling": {}},
            "sampling/createMessage",
            {"messages": [], "maxTokens": 5, "includeContext": "allServers"},
        ),
        ({"sampling": {}}, "sampling/createMessage", {"messages": [], "maxTokens": 5, "task": {}}),
        ({}, "elicitation/create", {"message": "m", "requestedSchema": {}}),
        ({"elicitation": {}}, "elicitation/create", {"mode": "url", "message": "m"}),
        ({"elicitation": {"url": {}}}, "elicitation/create", {"message": "m"}),
    ],
)
def test_server_requests_need_client_capabilities(
    client: dict[str, object], method: str, params: dict[str, object] | None
) -> None:
    conn = operating_server(client=client)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="client"):
        conn.send_request(method, params)  # type: ignore[arg-type]
    assert conn.statistics().outbound_pending == frozenset()


def test_declared_client_capabilities_allow_server_requests() -> None:
    conn = operating_server(client=FULL_CLIENT_WIRE)
    for method, params in [
        ("roots/list", None),
        ("sampling/createMessage", {"messages": [], "maxTokens": 5, "tools": [], "task": {}}),
        (
            "elicitation/create",
            {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
        ),
        (
            "elicitation/create",
            {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
        ),
    ]:
        request_id, data = conn.send_request(method, params)  # type: ignore[arg-type]
        assert decoded(data)["id"] == request_id
        assert_valid(decoded(data), "JSONRPCRequest")


def test_url_elicitation_is_refused_in_older_versions() -> None:
    conn = operating_server(client={"elicitation": {"url": {}}}, version="2025-06-18")
    with pytest.raises(LocalProtocolError, match="2025-06-18"):
        conn.send_request("elicitation/create", {"mode": "url", "message": "m"})


def test_notifications_need_capabilities() -> None:
    conn = operating_server(ServerCapabilities(tools=True))
    with pytest.raises(LocalProtocolError, match="logging"):
        conn.send_notification("notifications/message", {"level": "info", "data": 1})
    with pytest.raises(LocalProtocolError, match=r"tools\.listChanged"):
        conn.send_notification("notifications/tools/list_changed")
    with pytest.raises(LocalProtocolError, match=r"elicitation\.url"):
        conn.send_notification("notifications/elicitation/complete", {"elicitationId": "e"})
    with pytest.raises(LocalProtocolError, match="send_progress"):
        conn.send_notification("notifications/progress", {})
    ok = operating_server(ALL_SERVER, client=FULL_CLIENT_WIRE)
    assert decoded(ok.send_notification("notifications/tools/list_changed"))["method"] == (
        "notifications/tools/list_changed"
    )


# --- in-flight ids, responses ---------------------------------------------------------------


def test_each_request_gets_exactly_one_response() -> None:
    conn = operating_server()
    [event] = conn.receive(msg(id=5, method="tools/list"))
    assert isinstance(event, RequestReceived)
    assert conn.statistics().inbound_in_flight == {5}
    assert decoded(conn.send_result(5, {"tools": []})) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"tools": []},
    }
    with pytest.raises(LocalProtocolError, match="already answered"):
        conn.send_result(5, {})
    with pytest.raises(LocalProtocolError):
        conn.send_error(5, ErrorObject(code=-32603, message="x"))
    with pytest.raises(LocalProtocolError):
        conn.send_result(99, {})


def test_duplicate_in_flight_id_is_invalid_request() -> None:
    conn = operating_server()
    conn.receive(msg(id=5, method="tools/list"))
    reply = reply_of(conn.receive(msg(id=5, method="tools/call", params={"name": "x"})))
    assert reply["error"]["code"] == -32600
    conn.send_result(5, {"tools": []})
    [event] = conn.receive(msg(id=5, method="tools/list"))  # reuse after completion: tolerated
    assert isinstance(event, RequestReceived)


def test_ids_are_per_direction() -> None:
    conn = operating_server(client=FULL_CLIENT_WIRE)
    request_id, _ = conn.send_request("roots/list")
    [event] = conn.receive(msg(id=request_id, method="tools/list"))
    assert isinstance(event, RequestReceived)
    [response] = conn.receive(msg(id=request_id, result={"roots": []}))
    assert response == ResponseReceived(response=response.response, method="roots/list")  # type: ignore[union-attr]
    assert conn.statistics().inbound_in_flight == {request_id}


def test_outgoing_ids_are_never_reused() -> None:
    conn = operating_server()
    ids = [conn.send_request("ping")[0] for _ in range(5)]
    for request_id in ids:
        conn.receive(msg(id=request_id, result={}))
    assert len({*ids, conn.send_request("ping")[0]}) == 6


def test_unknown_responses_are_reported_not_raised() -> None:
    conn = operating_server()
    [event] = conn.receive(msg(id=77, result={}))
    assert isinstance(event, UnexpectedResponse)
    [event] = conn.receive(msg(error={"code": -32700, "message": "Parse error"}))
    assert isinstance(event, UnexpectedResponse)


def test_error_response_without_id_is_allowed() -> None:
    conn = operating_server()
    data = conn.send_error(None, ErrorObject(code=-32600, message="Origin not allowed"))
    assert decoded(data) == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Origin not allowed"},
    }


# --- cancellation ---------------------------------------------------------------------------


def test_cancelled_request_sends_nothing() -> None:
    conn = operating_server()
    conn.receive(
        msg(id=42, method="tools/call", params={"name": "x", "_meta": {"progressToken": "t"}})
    )
    events = conn.receive(
        msg(method="notifications/cancelled", params={"requestId": 42, "reason": "stop"})
    )
    assert events == [CancelReceived(request_id=42, reason="stop")]
    assert conn.is_cancelled(42)
    assert not conn.wants_progress(42)
    assert conn.send_progress(42, 1) == b""
    assert conn.send_result(42, {"content": []}) == b""
    assert conn.statistics().inbound_in_flight == frozenset()


@pytest.mark.parametrize(
    "params",
    [{"requestId": 999}, {"requestId": [1]}, {}, {"reason": "x"}, None, {"requestId": 0}],
)
def test_unknown_or_malformed_cancellations_are_ignored(params: dict[str, object] | None) -> None:
    conn = operating_server()
    members = {} if params is None else {"params": params}
    assert conn.receive(msg(method="notifications/cancelled", **members)) == []  # type: ignore[arg-type]


def test_cancel_of_our_own_request() -> None:
    conn = operating_server(client=FULL_CLIENT_WIRE)
    request_id, _ = conn.send_request("roots/list")
    wire = decoded(conn.send_cancel(request_id, "timeout"))
    assert wire["params"] == {"requestId": request_id, "reason": "timeout"}
    assert_valid(wire, "CancelledNotification")
    [late] = conn.receive(msg(id=request_id, result={"roots": []}))
    assert isinstance(late, UnexpectedResponse)
    with pytest.raises(LocalProtocolError):
        conn.send_cancel(request_id)


# --- progress -------------------------------------------------------------------------------


def test_progress_strictly_increases_and_stops_after_completion() -> None:
    conn = operating_server()
    [event] = conn.receive(
        msg(id=1, method="tools/call", params={"name": "x", "_meta": {"progressToken": "tok"}})
    )
    assert isinstance(event, RequestReceived)
    assert event.progress_token == "tok"
    wire = decoded(conn.send_progress(1, 0.5, total=2, message="half"))
    assert wire["params"] == {
        "progressToken": "tok",
        "progress": 0.5,
        "total": 2,
        "message": "half",
    }
    assert_valid(wire, "ProgressNotification")
    for bad in (0.5, 0.1, float("nan"), float("inf")):
        with pytest.raises(LocalProtocolError):
            conn.send_progress(1, bad)
    conn.send_progress(1, 1)
    conn.send_result(1, {"content": []})
    with pytest.raises(LocalProtocolError):
        conn.send_progress(1, 2)


def test_progress_needs_a_token() -> None:
    conn = operating_server()
    conn.receive(msg(id=1, method="tools/list"))
    assert not conn.wants_progress(1)
    with pytest.raises(LocalProtocolError, match="did not ask for progress"):
        conn.send_progress(1, 1)


def test_progress_message_is_dropped_for_2024_11_05() -> None:
    conn = operating_server(version="2024-11-05")
    conn.receive(
        msg(id=1, method="tools/call", params={"name": "x", "_meta": {"progressToken": 3}})
    )
    assert "message" not in decoded(conn.send_progress(1, 1, message="m"))["params"]


def test_inbound_progress_for_our_requests() -> None:
    conn = operating_server(client=FULL_CLIENT_WIRE)
    request_id, _ = conn.send_request("roots/list", {"_meta": {"progressToken": "rt"}})
    with pytest.raises(LocalProtocolError, match="progress token"):
        conn.send_request("roots/list", {"_meta": {"progressToken": "rt"}})
    [event] = conn.receive(
        msg(method="notifications/progress", params={"progressToken": "rt", "progress": 1})
    )
    assert isinstance(event, ProgressReceived)
    assert event.request_id == request_id
    assert (
        conn.receive(
            msg(method="notifications/progress", params={"progressToken": "zz", "progress": 1})
        )
        == []
    )
    assert conn.receive(msg(method="notifications/progress", params={"progressToken": "rt"})) == []


# --- batches, aliases, other notifications ---------------------------------------------------


def test_batches_only_in_2025_03_26() -> None:
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"n"},5]'
    conn = operating_server(version="2025-03-26")
    events = conn.receive(batch)
    assert isinstance(events[0], RequestReceived)
    assert isinstance(events[1], NotificationReceived)
    assert reply_of(events[2:])["error"]["code"] == -32600
    for version in ("2025-11-25", "2025-06-18", "2024-11-05"):
        reply = reply_of(operating_server(version=version).receive(batch))
        assert reply == {
            "jsonrpc": "2.0",
            "error": {
                "code": -32600,
                "message": "Batches are only allowed in protocol version 2025-03-26",
            },
        }
    assert "empty" in reply_of(conn.receive(b"[]"))["error"]["message"]
    fresh = ServerConnection(SERVER_INFO)
    assert reply_of(fresh.receive(b"[" + initialize_request(1) + b"]"))["error"]["code"] == -32600
    inside = reply_of(conn.receive(b"[" + initialize_request(1) + b"]"))
    assert "initialize must not be part of a batch" in inside["error"]["message"]


def test_legacy_aliases_only_when_enabled() -> None:
    plain = operating_server()
    [event] = plain.receive(msg(id=1, method="list_tools"))
    assert isinstance(event, RequestReceived)
    assert event.request.method == "list_tools"
    legacy = operating_server(options=ServerConnectionOptions(legacy_aliases=True))
    [event] = legacy.receive(msg(id=1, method="call_tool", params={"name": "x"}))
    assert isinstance(event, RequestReceived)
    assert event.request.method == "tools/call"
    aliases = ServerConnectionOptions(legacy_aliases=True)
    gated = operating_server(ServerCapabilities(), options=aliases)
    assert reply_of(gated.receive(msg(id=1, method="list_tools")))["error"]["code"] == -32601


def test_other_notifications_pass_through_and_initialized_twice_is_ignored() -> None:
    conn = operating_server()
    assert conn.receive(msg(method="notifications/initialized")) == []
    [event] = conn.receive(msg(method="notifications/roots/list_changed"))
    assert isinstance(event, NotificationReceived)


def test_parse_errors_and_size_limit() -> None:
    conn = ServerConnection(SERVER_INFO, options=ServerConnectionOptions(max_message_size=64))
    reply = reply_of(conn.receive(b'{"jsonrpc":'))
    assert reply["error"]["code"] == -32700
    assert "id" not in reply
    assert_valid(reply, "JSONRPCErrorResponse")
    big = reply_of(conn.receive(msg(id=1, method="ping", params={"x": "y" * 100})))
    assert big["error"]["code"] == -32600
    assert "exceeds the limit of 64 bytes" in big["error"]["message"]
    invalid = reply_of(conn.receive(msg(id=3, method="ping", params=[1])))
    assert invalid["id"] == 3


def test_server_info_members_are_sent() -> None:
    info = Implementation(name="s", version="1", title="S", icons=({"src": "https://x/i.png"},))
    conn = ServerConnection(info)
    conn.receive(initialize_request(1))
    result = decoded(conn.respond_to_initialize())["result"]
    assert result["serverInfo"] == {
        "name": "s",
        "version": "1",
        "title": "S",
        "icons": [{"src": "https://x/i.png"}],
    }
