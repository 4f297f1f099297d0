"""The HTTP client's pure parts: reconnect delays, replay dedupe, SSE decoding, JSON, slots."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import EndpointNotFound, SessionExpired, SSEEventTooLarge
from trimcp.transports import SSEDecoder, SSEEvent
from trimcp.transports.http_client._errors import body_excerpt, server_message, status_error
from trimcp.transports.http_client._json import (
    error_response,
    initialize_version,
    outline,
    response_ids,
    split_body,
)
from trimcp.transports.http_client._resume import ReconnectPolicy, SeenIds, decode
from trimcp.transports.http_client._slots import Slots, SlotStatistics


def test_the_servers_retry_is_the_first_wait_then_it_backs_off() -> None:
    policy = ReconnectPolicy(default_delay=1.0, max_delay=4.0, max_attempts=4)
    assert [policy.delay(500, n) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, None]
    assert [policy.delay(None, n) for n in range(4)] == [1.0, 2.0, 4.0, 4.0]
    assert policy.delay(10_000, 0) == 10.0  # a longer retry: at least that long (MUST)


def test_bad_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        ReconnectPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="negative"):
        ReconnectPolicy(default_delay=-1)


def test_seen_ids_forget_the_oldest() -> None:
    seen = SeenIds(limit=2)
    assert seen.add("a")
    assert seen.add("b")
    assert not seen.add("a")
    assert seen.add("c")  # "a" falls out
    assert seen.add("a")


def test_decode_keeps_stream_order_around_an_oversized_event() -> None:
    decoder = SSEDecoder(max_event_size=4)
    items = decode(decoder, b"data: ok\n\ndata: too long\n\ndata: yes\n\n")
    assert isinstance(items[1], SSEEventTooLarge)
    assert [item.data for item in items if isinstance(item, SSEEvent)] == ["ok", "yes"]
    assert decode(decoder, b"data: cut", eof=True) == []


def test_outline_finds_requests_and_the_handshake() -> None:
    assert outline(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}').initialize
    assert outline(b'{"jsonrpc":"2.0","method":"notifications/initialized"}').initialized
    batch = (
        b'[{"id":"a","method":"x"},{"id":true,"method":"y"},{"method":"z"},{"id":2,"result":{}}]'
    )
    assert outline(batch).request_ids == ("a",)
    assert outline(b"not json").request_ids == ()


def test_outline_finds_what_a_cancel_cancels() -> None:
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}'
    assert outline(cancel).cancelled == "r"
    assert outline(cancel.replace(b'"r"', b"7")).cancelled == 7
    assert outline(cancel.replace(b'"r"', b"true")).cancelled is None
    assert outline(b'{"jsonrpc":"2.0","method":"notifications/cancelled"}').cancelled is None
    assert outline(b'{"jsonrpc":"2.0","id":1,"method":"ping"}').cancelled is None


def test_slots_serve_waiters_in_arrival_order() -> None:
    slots: Slots[str] = Slots(2)
    assert slots.take("a")
    assert slots.take("b")
    assert not slots.take("c")
    assert not slots.take("d")
    assert not slots.take("e")
    assert slots.statistics() == SlotStatistics(in_flight=2, waiting=3, limit=2)
    assert slots.leave("d")  # withdrawn
    assert not slots.leave("d")
    assert not slots.leave("a")  # holds a slot: not in line
    assert slots.release() == "c"
    assert slots.release() == "e"
    assert slots.release() is None
    assert slots.statistics() == SlotStatistics(in_flight=1, waiting=0, limit=2)
    with pytest.raises(ValueError, match="at least 1"):
        Slots(0)


@given(st.lists(st.sampled_from(["take", "release", "leave"]), max_size=60))
def test_slots_never_exceed_the_limit_nor_leave_a_free_slot_unused(ops: list[str]) -> None:
    limit = 3
    slots: Slots[int] = Slots(limit)
    holding: set[int] = set()
    line: list[int] = []  # the model: who waits, in order
    for number, op in enumerate(ops):
        if op == "take":
            if slots.take(number):
                holding.add(number)
            else:
                line.append(number)
        elif op == "release" and holding:
            holding.pop()
            waiter = slots.release()
            assert waiter == (line.pop(0) if line else None)
            if waiter is not None:
                holding.add(waiter)
        elif op == "leave" and line:
            assert slots.leave(line.pop())
        stats = slots.statistics()
        assert stats == SlotStatistics(in_flight=len(holding), waiting=len(line), limit=limit)
        assert stats.in_flight <= limit
        assert not line or stats.in_flight == limit  # nobody waits while a slot is free


def test_response_ids_and_the_negotiated_version() -> None:
    assert response_ids(b'{"jsonrpc":"2.0","method":"notifications/progress"}') == []
    assert response_ids(b'{"jsonrpc":"2.0","id":3,"result":{"method":"x"}}') == [3]
    assert response_ids(b'[{"id":1,"error":{}},{"id":2,"method":"ping"}]') == [1]
    answer = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}'
    assert initialize_version(answer, 0) == "2025-06-18"
    assert initialize_version(answer, 1) is None


def test_split_body() -> None:
    assert split_body(b'{"id":1}') == [b'{"id":1}']
    assert split_body(b'[{"id":1},{"id":2}]') == [b'{"id":1}', b'{"id":2}']
    for bad in (b"<html>", b"[1]", b"3"):
        with pytest.raises(ValueError, match="JSON"):
            split_body(bad)
    assert b'"code":-32603' in error_response(7, "gone")


def test_status_words() -> None:
    assert isinstance(status_error("u", 404, "", session=True), SessionExpired)
    missing = status_error("http://h:1/x/y", 404, "", session=False)
    assert isinstance(missing, EndpointNotFound)
    assert "http://h:1/mcp" in str(missing)
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad"}}'
    assert server_message(body) == "Bad"
    assert body_excerpt(b"<html>\n<b>Hello</b>   world</html>") == "Hello world"


@given(st.binary(max_size=200))
def test_pure_parts_take_any_bytes(data: bytes) -> None:
    outline(data)
    response_ids(data)
    initialize_version(data, 1)
    server_message(data)
    decode(SSEDecoder(max_event_size=16), data, eof=True)
