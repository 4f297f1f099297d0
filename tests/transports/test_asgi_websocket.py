"""MCP over WebSocket inside an ASGI app: hypercorn on 127.0.0.1:0, and scripted ASGI calls.

The shared conformance suite runs between a trio-websocket client and ``AsgiWebSocketStream``
in a minimal ASGI app served by hypercorn, in both directions. Where hypercorn cannot tell
the app what happened (it reports 1006 for a client's clean close and drops messages sent
after the client left), the tests below say what the stream does instead.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import pytest
import trio
import trio.testing
import trio_websocket

from trimcp.actors import spawn
from trimcp.errors import (
    HandshakeRejected,
    LocalProtocolError,
    MessageTooLarge,
    TransportBroken,
    TransportClosed,
)
from trimcp.sessions import Session
from trimcp.transports._asgi_websocket import AsgiWebSocketStream, accept_asgi_websocket
from trimcp.transports._origin import OriginPolicy
from trimcp.transports._websocket_client import open_websocket_stream

from . import test_conformance as conformance
from ._support import receive_all
from ._websocket_support import ASGI_ENGINE, asgi_pair, mcp_asgi_app, raw_client, serve_asgi
from .test_websocket import UTF8_MESSAGES, send_then_close, tiny_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Mapping, MutableMapping

    from trimcp.transports import MessageStream

    from .conftest import PairFactory

# The conformance promises that hold over ASGI, run here with this module's pairs.
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
test_sending_and_receiving_run_concurrently = (
    conformance.test_sending_and_receiving_run_concurrently
)
LIMIT = conformance.LIMIT

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True, params=["hypercorn", "trimcp"])
def asgi_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run each test under hypercorn and under trimcp's own HTTP/1.1 server."""
    ASGI_ENGINE[0] = request.param
    yield request.param
    ASGI_ENGINE[0] = "hypercorn"


@pytest.fixture(params=["client-to-asgi", "asgi-to-client"])
async def stream_pair(request: pytest.FixtureRequest) -> AsyncIterator[PairFactory]:
    """Connected (sender, receiver) ends: a client and the ASGI app's stream (``LIMIT``)."""
    async with asgi_pair(LIMIT) as (client, server):

        def build(max_message_size: int) -> tuple[MessageStream, MessageStream]:
            assert max_message_size == LIMIT, "the connection was opened with LIMIT"
            if request.param == "client-to-asgi":
                return client, server
            return server, client

        yield build


async def test_utf8_batch_arrives_in_order_then_close(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, UTF8_MESSAGES)
        assert await receive_all(right) == UTF8_MESSAGES
    await right.aclose()


async def test_non_utf8_messages_are_refused_before_sending(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    with pytest.raises(LocalProtocolError, match="UTF-8"):
        await left.send_messages([b"fine", b"\xff"])
    async with trio.open_nursery() as nursery:
        nursery.start_soon(send_then_close, left, [b"after"])
        assert await receive_all(right) == [b"after"]
    await right.aclose()


async def test_receive_ready_is_empty(stream_pair: PairFactory) -> None:
    left, right = stream_pair(LIMIT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(left.send_messages, [b"one", b"two"])
        assert await right.receive_message() == b"one"
        await trio.testing.wait_all_tasks_blocked()
        assert right.receive_ready() == []
        assert await right.receive_message() == b"two"
    await left.aclose()
    await right.aclose()


@pytest.mark.parametrize(
    "oversized",
    [b"b" * (LIMIT + 1), "é".encode() * (LIMIT // 2 + 1)],
    ids=["too-many-characters", "too-many-utf8-bytes"],
)
async def test_oversized_message_from_the_client_is_refused_with_1009(oversized: bytes) -> None:
    async with asgi_pair(LIMIT) as (client, server):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.send_messages, [b"a", oversized])
            assert await server.receive_message() == b"a"
            with pytest.raises(MessageTooLarge) as info:
                await server.receive_message()
        assert (info.value.size, info.value.limit) == (len(oversized), LIMIT)
        with pytest.raises(TransportBroken, match="1009"):
            await server.receive_message()
        with pytest.raises(TransportBroken, match="1009 MESSAGE_TOO_BIG"):
            await client.receive_message()
        assert client.close_code == 1009


async def test_sending_to_a_client_that_left_fails_once_the_disconnect_is_seen(
    asgi_engine: str,
) -> None:
    async with asgi_pair(LIMIT) as (client, server):
        await client.aclose()
        if asgi_engine == "trimcp":
            # trimcp's server raises OSError for a send to a closed connection (ASGI 2.4) ...
            with pytest.raises(TransportBroken, match="client is gone"):
                await server.send_message(b"into the void")
            # ... and a receive reports the client's own close code.
            with pytest.raises(TransportClosed, match="1000"):
                await server.receive_message()
            return
        # hypercorn drops what the app sends after the client left, silently ...
        await server.send_message(b"into the void")
        # ... until a receive has seen the disconnect (reported as 1006: a clean end here).
        with pytest.raises(TransportClosed, match="1006"):
            await server.receive_message()
        with pytest.raises(TransportBroken, match="client is gone"):
            await server.send_message(b"again")


async def test_closing_the_asgi_side_wakes_its_receiver_and_the_client_sees_1000() -> None:
    async with asgi_pair(LIMIT) as (client, server):

        async def receive_expecting_closed() -> None:
            with pytest.raises(TransportClosed, match="is closed"):
                await server.receive_message()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(receive_expecting_closed)
            await trio.testing.wait_all_tasks_blocked()
            await server.aclose(code=1001, reason="going")
        with pytest.raises(TransportClosed, match="1001 GOING_AWAY"):
            await client.receive_message()
        with pytest.raises(TransportBroken):
            await client.send_message(b"late")


# --- handshakes through hypercorn ----------------------------------------------------------


async def _hold(stream: AsgiWebSocketStream) -> None:
    while True:
        try:
            message = await stream.receive_message()
        except (TransportClosed, TransportBroken, MessageTooLarge):
            return
        await stream.send_message(message)


async def test_disallowed_origin_gets_403_with_a_body() -> None:
    async with serve_asgi(mcp_asgi_app(_hold)) as url:
        with pytest.raises(HandshakeRejected) as refused:
            async with open_websocket_stream(url, headers={"Origin": "http://evil.example"}):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status == 403
    assert "'http://evil.example'" in refused.value.body
    assert "allowed_origins" in refused.value.body


async def test_disallowed_host_gets_421() -> None:
    policy = OriginPolicy(allowed_hosts=("mcp.example",), hosts_setting="http.allowed_hosts")
    async with serve_asgi(mcp_asgi_app(_hold, policy=policy)) as url:
        with pytest.raises(HandshakeRejected) as refused:
            async with open_websocket_stream(url):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status == 421
    assert "http.allowed_hosts" in refused.value.body


async def test_client_without_mcp_subprotocol_gets_400() -> None:
    async with serve_asgi(mcp_asgi_app(_hold)) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(trio_websocket.ConnectionRejected) as refused:
            async with raw_client(port, subprotocols=[]):
                pytest.fail("the handshake must not succeed")
    assert refused.value.status_code == 400
    assert b"Sec-WebSocket-Protocol: mcp" in (refused.value.body or b"")


async def test_binary_frame_is_refused_with_1003() -> None:
    seen: list[str] = []

    async def record(stream: AsgiWebSocketStream) -> None:
        with pytest.raises(TransportBroken, match="1003") as broken:
            await stream.receive_message()
        seen.append(str(broken.value))

    async with serve_asgi(mcp_asgi_app(record)) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        async with raw_client(port, subprotocols=["mcp"]) as raw:
            await raw.send_message(b"{}")
            with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                await raw.get_message()
    assert closed.value.reason is not None
    assert closed.value.reason.code == 1003
    assert len(seen) == 1


async def test_a_session_answers_through_the_asgi_adapter() -> None:
    server = tiny_server()

    async def run_session(stream: AsgiWebSocketStream) -> None:
        async with trio.open_nursery() as nursery:
            ref = await spawn(nursery, Session(stream, server))
            await ref.wait_exited()

    async with (
        serve_asgi(mcp_asgi_app(run_session, max_message_size=1 << 20)) as url,
        open_websocket_stream(url) as stream,
    ):
        await stream.send_message(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
        assert await stream.receive_message() == b'{"jsonrpc":"2.0","id":"p","result":{}}'


# --- accept_asgi_websocket with a scripted ASGI server ----------------------------------


class ScriptedAsgi:
    """An ASGI server's ``receive``/``send`` for one websocket: queued events, recorded sends."""

    def __init__(self, *events: Mapping[str, Any]) -> None:
        self.events: deque[Mapping[str, Any]] = deque(events)
        self.sent: list[MutableMapping[str, Any]] = []

    async def receive(self) -> Mapping[str, Any]:
        await trio.lowlevel.checkpoint()
        if not self.events:
            await trio.sleep_forever()
        return self.events.popleft()

    async def send(self, message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        self.sent.append(message)


def scope(
    *, origin: bytes | None = None, subprotocols: tuple[str, ...] = ("mcp",), extension: bool = True
) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8000")]
    if origin is not None:
        headers.append((b"origin", origin))
    return {
        "type": "websocket",
        "path": "/mcp/ws",
        "headers": headers,
        "subprotocols": list(subprotocols),
        "extensions": {"websocket.http.response": {}} if extension else {},
    }


async def test_accept_answers_with_the_mcp_subprotocol() -> None:
    asgi = ScriptedAsgi({"type": "websocket.connect"})
    stream = await accept_asgi_websocket(scope(), asgi.receive, asgi.send)
    assert isinstance(stream, AsgiWebSocketStream)
    assert asgi.sent == [{"type": "websocket.accept", "subprotocol": "mcp"}]


async def test_refusal_without_the_response_extension_is_a_1008_close() -> None:
    asgi = ScriptedAsgi({"type": "websocket.connect"})
    stream = await accept_asgi_websocket(
        scope(origin=b"https://evil.example", extension=False), asgi.receive, asgi.send
    )
    assert stream is None
    [close] = asgi.sent
    assert (close["type"], close["code"]) == ("websocket.close", 1008)
    assert "https://evil.example" in close["reason"]


async def test_refusal_with_the_response_extension_is_an_http_response() -> None:
    asgi = ScriptedAsgi({"type": "websocket.connect"})
    assert await accept_asgi_websocket(scope(subprotocols=()), asgi.receive, asgi.send) is None
    start, body = asgi.sent
    assert (start["type"], start["status"]) == ("websocket.http.response.start", 400)
    assert body["type"] == "websocket.http.response.body"
    assert b"Sec-WebSocket-Protocol: mcp" in body["body"]


async def test_a_client_that_left_before_the_handshake_gets_nothing() -> None:
    asgi = ScriptedAsgi({"type": "websocket.disconnect", "code": 1001})
    assert await accept_asgi_websocket(scope(), asgi.receive, asgi.send) is None
    assert asgi.sent == []


async def test_only_websocket_scopes_are_accepted() -> None:
    asgi = ScriptedAsgi()
    with pytest.raises(ValueError, match="not a websocket scope"):
        await accept_asgi_websocket({"type": "http"}, asgi.receive, asgi.send)


async def test_disconnect_codes_and_unexpected_events() -> None:
    asgi = ScriptedAsgi({"type": "websocket.disconnect", "code": 1011, "reason": "oops"})
    stream = AsgiWebSocketStream(asgi.receive, asgi.send)
    with pytest.raises(TransportBroken, match="1011 INTERNAL_ERROR"):
        await stream.receive_message()
    with pytest.raises(TransportBroken):
        await stream.send_message(b"{}")
    await stream.aclose()
    assert asgi.sent == []  # nothing to close: the client is gone

    asgi = ScriptedAsgi({"type": "websocket.connect"})
    stream = AsgiWebSocketStream(asgi.receive, asgi.send)
    with pytest.raises(TransportBroken, match=r"unexpected 'websocket\.connect'"):
        await stream.receive_message()
    with pytest.raises(TransportBroken, match="unexpected"):
        await stream.receive_message()


async def test_a_send_that_raises_oserror_is_a_broken_transport() -> None:
    async def gone(message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        raise OSError("client disconnected")

    stream = AsgiWebSocketStream(ScriptedAsgi().receive, gone)
    with pytest.raises(TransportBroken, match="client is gone"):
        await stream.send_messages([b"{}"])
    await stream.aclose()  # the close cannot be sent either; closing still succeeds


async def test_close_waits_for_the_disconnect_at_most_close_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    asgi = ScriptedAsgi()  # the client never answers
    stream = AsgiWebSocketStream(asgi.receive, asgi.send, close_timeout=3.0)
    start = trio.current_time()
    await stream.aclose()
    assert trio.current_time() - start == 3.0
    assert asgi.sent == [{"type": "websocket.close", "code": 1000, "reason": ""}]
    await stream.aclose()
    assert len(asgi.sent) == 1
