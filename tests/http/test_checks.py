"""Header, session-id and body checks of the HTTP endpoint, thrown random input (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.http import HttpRefusal
from trimcp.http._body import read_post_body
from trimcp.http._checks import (
    Headers,
    check_accept_for_get,
    check_accept_for_post,
    check_content_type,
    check_protocol_version,
    check_session_id,
    new_session_id,
)
from trimcp.protocol import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from collections.abc import Callable


def refusal_of(check: Callable[..., object], *args: object) -> HttpRefusal | None:
    """Run a check; return its refusal, or None if it passed."""
    try:
        check(*args)
    except HttpRefusal as refusal:
        return refusal
    return None


header_text = st.text(st.characters(min_codepoint=0, max_codepoint=255), max_size=200)


@given(header_text)
def test_accept_checks_answer_or_refuse_with_406(value: str) -> None:
    for check in (check_accept_for_post, check_accept_for_get):
        refusal = refusal_of(check, value)
        if refusal is not None:
            assert refusal.status == 406
            assert orjson.loads(refusal.body())["error"]["message"].startswith("Not Acceptable")


@given(header_text)
def test_content_type_check_refuses_with_415(value: str) -> None:
    refusal = refusal_of(check_content_type, value)
    if refusal is not None:
        assert refusal.status == 415
    else:
        assert "application/json" in value.lower()


@given(st.one_of(st.none(), header_text))
def test_protocol_version_is_a_supported_one_or_400(value: str | None) -> None:
    refusal = refusal_of(check_protocol_version, value, None)
    if refusal is not None:
        assert refusal.status == 400
        assert "MCP-Protocol-Version" in refusal.message
    else:
        assert check_protocol_version(value, None) in SUPPORTED_VERSIONS


@given(st.one_of(st.none(), header_text))
def test_session_id_is_visible_ascii_or_400(value: str | None) -> None:
    refusal = refusal_of(check_session_id, value)
    if refusal is not None:
        assert refusal.status == 400
    else:
        assert value is not None
        assert all("!" <= c <= "~" for c in value)


def test_new_session_ids_are_unique_visible_ascii() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(check_session_id(i) == i for i in ids)
    assert all(len(i) >= 40 for i in ids)


@given(st.binary(max_size=300))
def test_random_bodies_are_outlined_or_refused_with_400(body: bytes) -> None:
    refusal = refusal_of(read_post_body, body)
    if refusal is not None:
        assert refusal.status == 400
        assert orjson.loads(refusal.body())["error"]["code"] in (-32700, -32600)
    else:
        assert read_post_body(body).raw == body


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_random_json_bodies_never_raise_anything_else(value: object) -> None:
    refusal = refusal_of(read_post_body, orjson.dumps(value))
    if refusal is not None:
        assert refusal.status == 400
    else:
        assert isinstance(value, dict | list)


def test_body_outline() -> None:
    body = orjson.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "method": "notifications/x"},
            {
                "jsonrpc": "2.0",
                "id": "a",
                "method": "tools/call",
                "params": {"_meta": {"progressToken": 5}},
            },
        ]
    )
    outline = read_post_body(body)
    assert outline.batch
    assert outline.request_ids == (1, "a")
    with pytest.raises(HttpRefusal, match="batch"):
        read_post_body(b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]')


def test_headers_are_case_insensitive_and_joined() -> None:
    headers = Headers([(b"Accept", b"text/event-stream"), (b"accept", b"application/json")])
    assert headers.get("accept") == "text/event-stream,application/json"
    assert headers.get("missing") is None
