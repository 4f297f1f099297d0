"""The pure rules both WebSocket adapters share: framing, sizes, close codes, the handshake."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import LocalProtocolError, MessageTooLarge, TransportBroken, TransportClosed
from trimcp.transports._origin import OriginPolicy
from trimcp.transports._ws_protocol import (
    SUBPROTOCOL,
    CloseCode,
    check_handshake,
    close_reason,
    describe_close,
    end_of_stream,
    message_from_text,
    texts_from_messages,
)

LOCAL = [(b"host", b"127.0.0.1:8000")]


@given(text=st.text(max_size=40), limit=st.integers(1, 60))
def test_a_text_frame_is_its_utf8_bytes_or_too_large(text: str, limit: int) -> None:
    data = text.encode(errors="surrogatepass")
    result = message_from_text(text, limit)
    if len(data) <= limit:
        assert result == data
    else:
        assert isinstance(result, MessageTooLarge)
        assert result.limit == limit
        assert limit < result.size <= len(data)


def test_size_counts_bytes_not_characters() -> None:
    assert message_from_text("é" * 5, 10) == "é".encode() * 5
    too_large = message_from_text("é" * 6, 10)
    assert isinstance(too_large, MessageTooLarge)
    assert too_large.size == 12


def test_messages_must_be_utf8_to_be_sent() -> None:
    assert texts_from_messages([b'{"a":1}', "é".encode()]) == ['{"a":1}', "é"]
    with pytest.raises(LocalProtocolError, match="UTF-8 text"):
        texts_from_messages([b"fine", b"\xff"])


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (1000, TransportClosed),
        (1001, TransportClosed),
        (1006, TransportBroken),
        (4000, TransportBroken),
        (None, TransportBroken),
    ],
)
def test_how_a_peer_close_ends_the_stream(code: int | None, expected: type[Exception]) -> None:
    error = end_of_stream(code, "bye", closed_here=False)
    assert type(error) is expected


def test_own_close_always_ends_with_transport_closed() -> None:
    assert type(end_of_stream(1011, None, closed_here=True)) is TransportClosed


def test_close_descriptions_and_reasons() -> None:
    assert describe_close(1009, "too big") == "1009 MESSAGE_TOO_BIG (too big)"
    assert describe_close(4321, None) == "4321"
    assert describe_close(None, None) == "no close frame"
    long = "é" * 100
    assert len(close_reason(long).encode()) <= 123
    assert long.startswith(close_reason(long))
    assert close_reason("short") == "short"


def test_handshake_requires_the_mcp_subprotocol() -> None:
    policy = OriginPolicy()
    assert check_handshake(policy, LOCAL, [SUBPROTOCOL]) is None
    assert check_handshake(policy, LOCAL, ["graphql-ws", "mcp"]) is None
    for offered in ([], ["graphql-ws"]):
        problem = check_handshake(policy, LOCAL, offered)
        assert problem is not None
        assert problem.status == 400
        assert "Sec-WebSocket-Protocol: mcp" in problem.message


def test_handshake_checks_host_and_origin_before_the_subprotocol() -> None:
    policy = OriginPolicy()
    problem = check_handshake(policy, [*LOCAL, (b"origin", b"https://evil.example")], [])
    assert problem is not None
    assert problem.status == 403
    problem = check_handshake(policy, [(b"host", b"evil.example")], [SUBPROTOCOL])
    assert problem is not None
    assert problem.status == 421


def test_close_codes_are_rfc_6455_values() -> None:
    codes = [CloseCode.GOING_AWAY, CloseCode.UNSUPPORTED_DATA, CloseCode.MESSAGE_TOO_BIG]
    assert [int(code) for code in codes] == [1001, 1003, 1009]
