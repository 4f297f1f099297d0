"""MCP over WebSocket with trio-websocket: real connections on 127.0.0.1, port 0.

The shared conformance suite runs over a real connection, each end as sender and as
receiver. Three of its promises do not hold over WebSocket by design (``_ws_protocol.py``):
a message must be UTF-8 text, an oversized message ends the connection with 1009, and
``receive_ready`` has nothing to hand over. Their WebSocket versions are below, with the
handshake checks, the close codes and a real MCP session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import orjson
import pytest
import trio
import trio_websocket
import wsproto
import wsproto.events

from trimcp.actors import spawn
from trimcp.errors import (
    ConnectFailed,
    HandshakeRejected,
    LocalProtocolError,
    MessageTooLarge,
    SubprotocolRefused,
    TransportBroken,
    TransportClosed,
)
from trimcp.protocol import (
    ClientConnection,
    Implementation,
    InitializeCompleted,
    ResponseReceived,
    Result,
)
from trimcp.server import MCPServer
from trimcp.sessions import Session
from trimcp.transports._websocket_client import open_websocket_stream
from trimcp.transports._websocket_server import WebSocketServerInfo, serve_websocket

from . import test_conformance as conformance
from ._support import receive_all
from ._websocket_support import raw_client, serving, websocket_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.transports import MessageStream
    from trimcp.transports._websocket import WebSocketStream

    from .conftest import PairFactory

# The conformance promises that hold over WebSocket, run here with this module's pairs.
test_after_own_close_everything_raises_closed = (
    conformance.test_after_own_close_everything_raises_closed
)
test_async_with_closes = conformance.test_async_with_closes
test_cancelled_receive_loses_nothing = conformance.test_cancelled_receive_loses_nothing
test_close_wakes_a_blocked_receiver = conformance.test_close_wakes_a_blocked_receiver
test_message_at_the_limit_passes = conformance.test_message_at_the_limit_passes
test_peer_close_drains_then_transport_closed_for_good = (
    conformance.test_peer_close_drains_then_transport_closed_for_good
)
test_round_trip_both_directions = conformance.test_round_trip_both_directions
test_send_to_closed_peer_is_broken = conformance.test_send_to_closed_peer_is_broken
test_sending_and_receiving_run_concurrently = (
    conformance.test_sending_and_receiving_run_concurrently
)
LIMIT = conformance.LIMIT

pytestmark = pytest.mark.slow

UTF8_MESSAGES = [b'{"jsonrpc":"2.0","id":1,"method":"ping"}', "ünïcödé ✓".encode(), b"x\ry"]


@pytest.fixture(params=["client-to-server", "server-to-client"])
async def stream_pair(request: pytest.FixtureRequest) -> AsyncIterator[PairFactory]:
    """Connected (sender, receiver) ends of one real connection, limited to ``LIMIT`` bytes."""
    async with websocket_pair(LIMIT) as (client, server):

        def build(max_message_size: int) -> tuple[MessageStream, MessageStream]:
            assert max_message_size == LIMIT, "the connection was opened with LIMIT"
            if request.param == "client-to-server":
                return client, server
            return server, client

        yield build


def websocket_ends(stream_pair: PairFactory) -> tuple[WebSocketStream, WebSocketStream]:
    """Return this module's pair as what it is: two ``WebSocketStream`` ends."""
    return cast("tuple[WebSocketStream, WebSocketStream]", stream_pair(LIMIT))


async def send_then_close(stream: MessageStream, messages: list[bytes]) -> None:
    await stream.send_messages(messages)
    await stream.aclose()


# --- the conformance promises WebSocket keeps differently ----------------------------------


async def test_utf8_batch_arrives_in_order_then_close(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, UTF8_MESSAGES)
        assert await receive_all(right) == UTF8_MESSAGES
    await right.aclose()


async def test_non_utf8_messages_are_refused_before_sending(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    with pytest.raises(LocalProtocolError, match="UTF-8"):
        await left.send_messages([b"fine", b"\xff\xfe not utf-8"])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, [b"after"])
        assert await receive_all(right) == [b"after"]  # "fine" was not sent either
    await right.aclose()


@pytest.mark.parametrize(
    "oversized",
    [b"b" * (LIMIT + 1), "é".encode() * (LIMIT // 2 + 1)],
    ids=["too-many-characters", "too-many-utf8-bytes"],
)
async def test_oversized_message_is_refused_with_1009(
    stream_pair: PairFactory, oversized: bytes
) -> None:
    left, right = websocket_ends(stream_pair)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.send_messages, [b"a", oversized])
        assert await right.receive_message() == b"a"
        with pytest.raises(MessageTooLarge) as info:
            await right.receive_message()
    assert info.value.limit == LIMIT
    assert info.value.size > LIMIT
    for _ in range(2):
        with pytest.raises(TransportBroken, match="1009"):
            await right.receive_message()
    # The sender learns why: the receiver's close frame says 1009.
    with pytest.raises(TransportBroken, match="1009 MESSAGE_TOO_BIG"):
        await left.receive_message()
    with pytest.raises(TransportBroken):
        await left.send_message(b"more")
    assert left.close_code == right.close_code == 1009
    await left.aclose()
    await right.aclose()


async def test_receive_ready_is_empty_and_receiving_still_works(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    assert right.receive_ready() == []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.send_messages, [b"one", b"two", b"three"])
        first = await right.receive_message()
        await trio.testing.wait_all_tasks_blocked()
        assert right.receive_ready() == []
        rest = [await right.receive_message() for _ in range(2)]
    assert [first, *rest] == [b"one", b"two", b"three"]
    await left.aclose()
    await right.aclose()


async def test_close_code_records_who_closed_how(stream_pair: PairFactory) -> None:
    left, right = websocket_ends(stream_pair)
    assert (left.close_code, right.close_code) == (None, None)
    await left.aclose(code=4000, reason="done here")
    with pytest.raises(TransportBroken, match="4000"):
        await right.receive_message()
    assert (left.close_code, right.close_code) == (4000, 4000)
    await right.aclose()


# --- the server's handshake checks ---------------------------------------------------------


async def _echo(stream: WebSocketStream) -> None:
    while True:
        try:
            message = await stream.receive_message()
        except (TransportClosed, TransportBroken, MessageTooLarge):
            return
        await stream.send_message(message)


async def test_round_trip_through_serve_and_open() -> None:
    async with serving(_echo) as info, open_websocket_stream(info.url) as stream:
        assert stream.subprotocol == "mcp"
        await stream.send_message(b'{"echo":true}')
        assert await stream.receive_message() == b'{"echo":true}'
    assert info.url.startswith("ws://127.0.0.1:")
    assert info.url.endswith("/mcp/ws")


async def test_disallowed_origin_is_refused_with_403_and_says_why() -> None:
    async with serving(_echo) as info:
        with pytest.raises(HandshakeRejected) as refused:
            async with open_websocket_stream(info.url, headers={"Origin": "https://evil.example"}):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status == 403
    assert "'https://evil.example'" in refused.value.body
    assert "allowed_origins" in refused.value.body


async def test_allowed_origin_is_accepted() -> None:
    async with (
        serving(_echo, allowed_origins=["https://app.example"]) as info,
        open_websocket_stream(info.url, headers={"Origin": "https://app.example"}) as stream,
    ):
        await stream.send_message(b"{}")
        assert await stream.receive_message() == b"{}"


async def test_disallowed_host_is_refused_with_421() -> None:
    async with serving(_echo, allowed_hosts=["mcp.example:*"]) as info:
        with pytest.raises(HandshakeRejected) as refused:
            async with open_websocket_stream(info.url):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status == 421
    assert "allowed_hosts" in refused.value.body


async def test_wrong_path_is_refused_with_404() -> None:
    async with serving(_echo) as info:
        with pytest.raises(HandshakeRejected) as refused:
            async with open_websocket_stream(info.url.replace("/mcp/ws", "/other?x=1")):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status == 404
    assert "/mcp/ws" in refused.value.body


@pytest.mark.parametrize("subprotocols", [[], ["graphql-ws"]])
async def test_client_without_mcp_subprotocol_is_refused_with_400(subprotocols: list[str]) -> None:
    async with serving(_echo) as info:
        with pytest.raises(trio_websocket.ConnectionRejected) as refused:
            async with raw_client(info.port, subprotocols=subprotocols):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status_code == 400
    assert b"Sec-WebSocket-Protocol: mcp" in (refused.value.body or b"")


async def test_server_that_does_not_select_mcp_is_refused_by_the_client() -> None:
    closes: list[int | None] = []

    async def accept_without_subprotocol(request: trio_websocket.WebSocketRequest) -> None:
        connection = await request.accept()
        with pytest.raises(trio_websocket.ConnectionClosed) as closed:
            await connection.get_message()
        closes.append(closed.value.reason.code if closed.value.reason else None)

    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            trio_websocket.serve_websocket, accept_without_subprotocol, "127.0.0.1", 0, None
        )
        with pytest.raises(SubprotocolRefused) as refused:
            async with open_websocket_stream(f"ws://127.0.0.1:{server.port}/mcp/ws"):
                pytest.fail("the client must not accept")
        nursery.cancel_scope.cancel()
    assert (refused.value.required, refused.value.selected) == ("mcp", None)
    assert closes == [1002]


async def test_unreachable_server_is_a_connect_failure() -> None:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    await listener.aclose()  # nothing listens there any more
    with pytest.raises(ConnectFailed, match="unreachable"):
        async with open_websocket_stream(f"ws://127.0.0.1:{port}/mcp/ws"):
            pytest.fail("nothing to connect to")


async def test_silent_server_times_out_in_trio_time(autojump_clock: trio.testing.MockClock) -> None:
    async def never_answer(stream: trio.SocketStream) -> None:
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(trio.serve_tcp, never_answer, 0)
        port = listeners[0].socket.getsockname()[1]
        start = trio.current_time()
        with pytest.raises(ConnectFailed, match="no WebSocket handshake within 3 s"):
            async with open_websocket_stream(f"ws://127.0.0.1:{port}/", connect_timeout=3):
                pytest.fail("the server never answers")
        assert trio.current_time() - start == pytest.approx(3)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("url", ["http://localhost/mcp", "ws:///no-host"])
async def test_urls_must_be_websocket_urls(url: str) -> None:
    with pytest.raises(ValueError, match="WebSocket URL"):
        async with open_websocket_stream(url):
            pytest.fail("not a WebSocket URL")


async def test_a_handshake_that_breaks_the_library_costs_only_its_connection() -> None:
    # wsproto decodes Host as IDNA: these bytes make it raise UnicodeError in the reader task.
    request = (
        b"GET /mcp/ws HTTP/1.1\r\nHost: \xff\xfe\r\nConnection: Upgrade\r\n"
        b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
    )
    async with serving(_echo) as info:
        tcp = await trio.open_tcp_stream("127.0.0.1", info.port)
        async with tcp:
            await tcp.send_all(request)
            assert await tcp.receive_some() == b""  # dropped without an answer
        async with open_websocket_stream(info.url) as stream:
            await stream.send_message(b"[3]")
            assert await stream.receive_message() == b"[3]"


async def test_a_client_that_never_handshakes_is_dropped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with serving(_echo, handshake_timeout=2.0) as info:
        tcp = await trio.open_tcp_stream("127.0.0.1", info.port)
        async with tcp:
            start = trio.current_time()
            assert await tcp.receive_some() == b""
            assert trio.current_time() - start == pytest.approx(2.0)


async def test_an_exception_from_on_stream_stops_the_server() -> None:
    async def crash(stream: WebSocketStream) -> None:
        await stream.receive_message()
        raise RuntimeError("handler bug")

    async def connect_and_wait() -> None:
        async with serving(crash) as info, open_websocket_stream(info.url) as stream:
            await stream.send_message(b"{}")
            await trio.sleep_forever()

    with pytest.raises(BaseExceptionGroup) as stopped:
        await connect_and_wait()
    assert stopped.group_contains(RuntimeError, match="handler bug", depth=None)


# --- frames and close codes over a live server ---------------------------------------------


async def test_oversized_message_closes_only_its_connection() -> None:
    refused: list[MessageTooLarge] = []

    async def echo_recording(stream: WebSocketStream) -> None:
        try:
            await _echo_strict(stream)
        except MessageTooLarge as exc:
            refused.append(exc)

    async with serving(echo_recording, max_message_size=100) as info:
        async with (
            open_websocket_stream(info.url) as good,
            open_websocket_stream(info.url) as bad,
        ):
            await bad.send_message(b'"' + b"x" * 200 + b'"')
            with pytest.raises(TransportBroken, match="1009"):
                await bad.receive_message()
            assert bad.close_code == 1009
            await good.send_message(b"[1]")
            assert await good.receive_message() == b"[1]"
        async with open_websocket_stream(info.url) as later:
            await later.send_message(b"[2]")
            assert await later.receive_message() == b"[2]"
    assert [(error.size, error.limit) for error in refused] == [(101, 100)]


async def _echo_strict(stream: WebSocketStream) -> None:
    while True:
        try:
            message = await stream.receive_message()
        except (TransportClosed, TransportBroken):
            return
        await stream.send_message(message)


async def test_binary_frame_is_refused_with_1003() -> None:
    outcomes: list[str] = []

    async def record(stream: WebSocketStream) -> None:
        with pytest.raises(TransportBroken, match="1003") as broken:
            await stream.receive_message()
        outcomes.append(str(broken.value))

    async with serving(record) as info, raw_client(info.port, subprotocols=["mcp"]) as raw:
        await raw.send_message(b'{"jsonrpc":"2.0","method":"ping","id":1}')
        with pytest.raises(trio_websocket.ConnectionClosed) as closed:
            await raw.get_message()
    assert closed.value.reason is not None
    assert closed.value.reason.code == 1003
    assert "text frames" in (closed.value.reason.reason or "")
    assert len(outcomes) == 1


async def test_peer_vanishing_mid_message_breaks_the_stream() -> None:
    outcomes: list[BaseException] = []
    done = trio.Event()

    async def record(stream: WebSocketStream) -> None:
        try:
            await stream.receive_message()
        except TransportBroken as exc:
            outcomes.append(exc)
        done.set()

    async with serving(record) as info:
        client = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
        tcp = await trio.open_tcp_stream("127.0.0.1", info.port)
        handshake = wsproto.events.Request(
            host=f"127.0.0.1:{info.port}", target="/mcp/ws", subprotocols=["mcp"]
        )
        await tcp.send_all(client.send(handshake))
        accepted = False
        while not accepted:
            client.receive_data(await tcp.receive_some())
            accepted = any(isinstance(e, wsproto.events.AcceptConnection) for e in client.events())
        frame = client.send(wsproto.events.TextMessage(data='{"jsonrpc":"2.0","id":1}'))
        await tcp.send_all(frame[: len(frame) // 2])
        await tcp.aclose()
        await done.wait()
    assert len(outcomes) == 1
    assert "1006" in str(outcomes[0])


async def test_stopping_the_server_closes_connections_with_1001() -> None:
    server_scope = trio.CancelScope()

    async def run_server(task_status: trio.TaskStatus[WebSocketServerInfo]) -> None:
        with server_scope:
            await serve_websocket(_echo_strict, task_status=task_status)

    async with trio.open_nursery() as nursery:
        info: WebSocketServerInfo = await nursery.start(run_server)
        async with open_websocket_stream(info.url) as stream:
            await stream.send_message(b"[]")
            assert await stream.receive_message() == b"[]"
            server_scope.cancel()
            with pytest.raises(TransportClosed, match="1001 GOING_AWAY"):
                await stream.receive_message()
            assert stream.close_code == 1001


# --- a real MCP session -------------------------------------------------------------------


def tiny_server() -> MCPServer:
    server = MCPServer("ws-test")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


async def test_a_session_answers_over_websocket() -> None:
    server = tiny_server()

    async def run_session(stream: WebSocketStream) -> None:
        async with trio.open_nursery() as nursery:
            ref = await spawn(nursery, Session(stream, server))
            await ref.wait_exited()

    async with serving(run_session) as info, open_websocket_stream(info.url) as stream:
        client = ClientConnection(Implementation(name="ws-client", version="0.1"))
        _, data = client.send_initialize()
        await stream.send_message(data)
        events = client.receive(await stream.receive_message())
        assert any(isinstance(event, InitializeCompleted) for event in events)
        await stream.send_message(client.send_initialized())
        for method in ("ping", "tools/list"):
            request_id, data = client.send_request(method)
            await stream.send_message(data)
            (event,) = client.receive(await stream.receive_message())
            assert isinstance(event, ResponseReceived)
            assert isinstance(event.response, Result)
            assert event.response.id == request_id
            if method == "tools/list":
                tools: Any = event.response.result["tools"]
                assert [tool["name"] for tool in tools] == ["add"]
        raw = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
            }
        )
        await stream.send_message(raw)
        reply: Any = orjson.loads(await stream.receive_message())
        assert reply["id"] == 99
        assert reply["result"]["isError"] is False
        assert reply["result"]["content"][0]["text"] == "5"
