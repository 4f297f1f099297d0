"""ClientConnection, mostly against a ServerConnection (the two cores talk to each other)."""

from __future__ import annotations

import pytest

from trimcp.errors import LocalProtocolError
from trimcp.protocol import (
    ClientCapabilities,
    ClientConnection,
    ClientOptions,
    InitializeCompleted,
    InitializeReceived,
    Phase,
    ProtocolViolation,
    RequestReceived,
    ResponseReceived,
    ServerConnection,
    ServerConnectionOptions,
)

from ._support import (
    ALL_SERVER,
    CLIENT_INFO,
    FULL_CLIENT,
    SERVER_INFO,
    assert_valid,
    decoded,
    msg,
    reply_of,
)


def _pair(
    client_caps: ClientCapabilities = FULL_CLIENT,
    server_options: ServerConnectionOptions | None = None,
) -> tuple[ClientConnection, ServerConnection]:
    client = ClientConnection(CLIENT_INFO, client_caps)
    server = ServerConnection(SERVER_INFO, ALL_SERVER, server_options)
    _, data = client.send_initialize()
    assert_valid(decoded(data), "InitializeRequest")
    [event] = server.receive(data)
    assert isinstance(event, InitializeReceived)
    assert event.params.capabilities == client_caps
    [done] = client.receive(server.respond_to_initialize())
    assert isinstance(done, InitializeCompleted)
    assert done.result.capabilities == ALL_SERVER
    server.receive(client.send_initialized())
    return client, server


def test_handshake_between_the_two_cores() -> None:
    client, server = _pair()
    assert client.phase is server.phase is Phase.OPERATING
    request_id, data = client.send_request("tools/list")
    [event] = server.receive(data)
    assert isinstance(event, RequestReceived)
    [answer] = client.receive(server.send_result(event.request.id, {"tools": []}))
    assert isinstance(answer, ResponseReceived)
    assert answer.method == "tools/list"
    assert answer.response.id == request_id


def test_server_requests_reach_the_client() -> None:
    client, server = _pair()
    request_id, data = server.send_request("roots/list")
    [event] = client.receive(data)
    assert isinstance(event, RequestReceived)
    [answer] = server.receive(client.send_result(request_id, {"roots": []}))
    assert isinstance(answer, ResponseReceived)


def test_client_refuses_undeclared_modes() -> None:
    client = ClientConnection(CLIENT_INFO, ClientCapabilities(elicitation_form=True))
    server = ServerConnection(SERVER_INFO, ALL_SERVER)
    server.receive(client.send_initialize()[1])
    client.receive(server.respond_to_initialize())
    client.send_initialized()
    url = msg(id=1, method="elicitation/create", params={"mode": "url", "message": "m"})
    assert reply_of(client.receive(url))["error"]["code"] == -32602
    assert reply_of(client.receive(msg(id=2, method="roots/list")))["error"]["code"] == -32601


def test_client_gates_on_server_capabilities() -> None:
    client = ClientConnection(CLIENT_INFO)
    server = ServerConnection(SERVER_INFO)
    with pytest.raises(LocalProtocolError):
        client.send_request("tools/list")  # before the handshake
    server.receive(client.send_initialize()[1])
    client.receive(server.respond_to_initialize())
    with pytest.raises(LocalProtocolError, match="tools"):
        client.send_request("tools/list")
    with pytest.raises(LocalProtocolError, match="roots"):
        client.send_notification("notifications/roots/list_changed")


def test_unsupported_version_closes_the_client() -> None:
    client = ClientConnection(
        CLIENT_INFO, options=ClientOptions(supported_versions=("2025-11-25",))
    )
    request_id, _ = client.send_initialize()
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    [event] = client.receive(msg(id=request_id, result=result))
    assert isinstance(event, ProtocolViolation)
    assert client.phase is Phase.CLOSED


def test_initialize_error_lets_the_client_retry() -> None:
    client = ClientConnection(CLIENT_INFO)
    request_id, _ = client.send_initialize()
    with pytest.raises(LocalProtocolError):
        client.send_cancel(request_id)  # initialize MUST NOT be cancelled
    [event] = client.receive(msg(id=request_id, error={"code": -32602, "message": "no"}))
    assert isinstance(event, ResponseReceived)
    assert client.phase is Phase.AWAITING_INITIALIZE
    client.send_initialize()


def test_client_answers_ping_and_ignores_early_notifications() -> None:
    client = ClientConnection(CLIENT_INFO)
    assert reply_of(client.receive(msg(id=1, method="ping")))["result"] == {}
    assert (
        client.receive(msg(method="notifications/message", params={"level": "info", "data": 1}))
        == []
    )
