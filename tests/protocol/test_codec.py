"""The codec: EXAMPLES.md round trips, schema validity of what we emit, decode errors."""

from __future__ import annotations

import json

import pytest

from trimcp.errors import InvalidRequest, LocalProtocolError, ParseError
from trimcp.protocol import (
    ABSENT,
    ErrorCode,
    ErrorObject,
    ErrorResponse,
    Notification,
    Request,
    Result,
    decode_json,
    encode_message,
    parse_message,
)

from ._support import Example, assert_valid, examples

EXAMPLES = examples()


def test_examples_were_found() -> None:
    assert len(EXAMPLES) >= 25


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: " ".join(e.defs))
def test_example_round_trips_and_stays_schema_valid(example: Example) -> None:
    message = parse_message(decode_json(example.text, max_size=1 << 20))
    wire = encode_message(message)
    assert json.loads(wire) == example.value
    emitted = json.loads(wire)
    assert_valid(emitted, "JSONRPCMessage")
    assert_valid(emitted, example.defs[0])
    if len(example.defs) > 1:
        assert_valid(emitted["result"], example.defs[1])


@pytest.mark.parametrize(
    "message",
    [
        Request(id=1, method="ping"),
        Request(id="a", method="tools/list", params={"cursor": "x"}),
        Notification(method="notifications/initialized"),
        Result(id=7, result={}),
        ErrorResponse(id=3, error=ErrorObject(code=-32601, message="Method not found")),
        ErrorResponse(id=None, error=ErrorObject(code=-32700, message="Parse error")),
        ErrorResponse(id=4, error=ErrorObject(code=-32602, message="x", data=None)),
    ],
)
def test_emitted_shapes_validate_against_the_schema(message: object) -> None:
    assert isinstance(message, Request | Notification | Result | ErrorResponse)
    assert_valid(json.loads(encode_message(message)), "JSONRPCMessage")


def test_absent_member_differs_from_null() -> None:
    without = ErrorObject(code=1, message="m")
    with_null = ErrorObject(code=1, message="m", data=None)
    assert without.data is ABSENT
    assert "data" not in without.to_wire()
    assert with_null.to_wire()["data"] is None
    assert "params" not in Request(id=1, method="ping").to_wire()
    assert "id" not in ErrorResponse(id=None, error=without).to_wire()


def test_error_response_with_null_id_decodes_as_unreadable() -> None:
    value = decode_json(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', max_size=100
    )
    message = parse_message(value)
    assert isinstance(message, ErrorResponse)
    assert message.id is None


@pytest.mark.parametrize(
    "text",
    [b"{", b"\xff", b"NaN", b"[Infinity]", b"1e400", b"\xef\xbb\xbf{}", b"[" * 2000, b""],
)
def test_bad_json_is_a_parse_error(text: bytes) -> None:
    with pytest.raises(ParseError) as info:
        decode_json(text, max_size=10_000)
    assert info.value.code == ErrorCode.PARSE_ERROR
    assert isinstance(info.value.data, dict)
    assert "offset" in info.value.data


def test_lone_surrogate_in_str_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        decode_json('"\ud800"', max_size=100)


def test_size_limit_is_checked_before_parsing() -> None:
    with pytest.raises(InvalidRequest) as info:
        decode_json(b"{" * 101, max_size=100)  # not even JSON: the size wins
    assert info.value.data == {"size": 101, "limit": 100}
    assert "exceeds the limit of 100 bytes" in info.value.message
    assert decode_json(b" {} ", max_size=4) == {}


def test_duplicate_keys_keep_the_last() -> None:
    message = parse_message(
        decode_json(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}', max_size=99)
    )
    assert isinstance(message, Request)
    assert message.id == 2


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([], "must be a JSON object"),
        ("x", "must be a JSON object"),
        ({"id": 1, "method": "m"}, '"jsonrpc" member must be "2.0"'),
        ({"jsonrpc": "1.0", "id": 1, "method": "m"}, '"jsonrpc" member must be "2.0"'),
        ({"jsonrpc": "2.0", "id": None, "method": "m"}, "string or an integer"),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, "string or an integer"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, "string or an integer"),
        ({"jsonrpc": "2.0", "id": [1], "method": "m"}, "string or an integer"),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, '"method" member must be a string'),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]}, '"params"'),
        ({"jsonrpc": "2.0", "method": "m", "params": None}, '"params"'),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "result": {}}, "result or an error"),
        ({"jsonrpc": "2.0", "id": 1, "result": 5}, '"result" member must be an object'),
        ({"jsonrpc": "2.0", "result": {}}, "string or integer id"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, "both"),
        ({"jsonrpc": "2.0", "id": 1, "error": "x"}, '"error" member must be an object'),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}}, "code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, "code"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "message must be a string"),
        ({"jsonrpc": "2.0", "id": False, "error": {"code": 1, "message": "m"}}, "id"),
        ({"jsonrpc": "2.0", "id": 1}, "neither"),
    ],
)
def test_invalid_messages_say_why(value: object, reason: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_message(value)  # type: ignore[arg-type]  # deliberately not JSON-typed
    assert reason in info.value.message
    assert info.value.code == ErrorCode.INVALID_REQUEST


def test_unknown_members_are_ignored() -> None:
    message = parse_message({"jsonrpc": "2.0", "method": "m", "extra": 1})
    assert message == Notification(method="m")


def test_encoding_something_that_is_not_json_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError):
        encode_message(Result(id=1, result={"big": 2**70}))
    with pytest.raises(LocalProtocolError):
        encode_message(Result(id=1, result={"s": {1, 2}}))  # type: ignore[dict-item]


def test_encoding_is_compact_and_single_line() -> None:
    wire = encode_message(Result(id=1, result={"text": "a\nb"}))
    assert b"\n" not in wire
    assert wire == b'{"jsonrpc":"2.0","id":1,"result":{"text":"a\\nb"}}'
