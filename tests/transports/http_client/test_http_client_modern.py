"""The Streamable HTTP client's per-request era (MCP 2026-07-28): the pure parts.

What the transport reads from an outgoing message (``outline``: the version in ``_meta``,
the method, the params), the headers a modern POST carries (``HttpLink.modern_headers``),
the server's JSON-RPC error taken from an error status's body (``server_error``), the error
made up here with its status, and which server a URL names (``server_key``). The exchanges
themselves run against real servers in ``tests/client/test_modern_http.py``.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports.http_client._client import http_client, server_key
from trimcp.transports.http_client._inbox import Inbox
from trimcp.transports.http_client._json import (
    error_response,
    outline,
    server_error,
)
from trimcp.transports.http_client._link import HttpLink
from trimcp.transports.http_client._resume import ReconnectPolicy

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def message(method: str, params: dict[str, Any], request_id: int = 7) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def test_a_modern_request_is_outlined_with_its_version_and_params() -> None:
    shape = outline(message("tools/call", {"name": "t", "_meta": META}))
    assert shape.modern_version == "2026-07-28"
    assert (shape.method, shape.request_ids, shape.initialize) == ("tools/call", (7,), False)
    assert shape.params is not None
    assert shape.params["name"] == "t"


def test_a_session_request_is_not_modern() -> None:
    assert outline(message("tools/list", {})).modern_version is None
    assert outline(message("initialize", {"protocolVersion": "2025-11-25"})).initialize
    meta_without_version = {"_meta": {"progressToken": 1}}
    assert outline(message("tools/list", meta_without_version)).modern_version is None


def link(headers: dict[str, str] | None = None) -> HttpLink:
    return HttpLink(
        http_client(1.0, None),
        "http://example.test/mcp",
        Inbox(),
        headers=headers or {},
        max_message_size=1 << 20,
        policy=ReconnectPolicy(),
        max_requests=4,
    )


def test_modern_headers_mirror_the_body() -> None:
    sent = link({"X-Custom": "kept", "Mcp-Method": "overridden"})
    sent.session_id = "legacy-session"  # never sent with a modern request
    sent.tool_headers["lookup"] = {("region",): "Region", ("where", "zone"): "Zone"}
    params = {
        "name": "lookup",
        "arguments": {"region": "Hello, 世界", "where": {"zone": 3}},
        "_meta": META,
    }
    headers = sent.modern_headers(outline(message("tools/call", params)))
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert headers["Mcp-Method"] == "tools/call"
    assert headers["Mcp-Name"] == "lookup"
    assert headers["Mcp-Param-Region"].startswith("=?base64?")
    assert headers["Mcp-Param-Zone"] == "3"
    assert headers["x-custom"] == "kept"
    assert "mcp-session-id" not in headers
    assert "mcp-method" not in headers  # the configured one is replaced
    assert headers["accept"] == "application/json, text/event-stream"


def test_names_are_mirrored_for_reads_and_prompts() -> None:
    sent = link()
    read = sent.modern_headers(outline(message("resources/read", {"uri": "a b", "_meta": META})))
    assert (read["Mcp-Method"], read["Mcp-Name"]) == ("resources/read", "a b")
    listed = sent.modern_headers(outline(message("tools/list", {"_meta": META})))
    assert "Mcp-Name" not in listed


def test_a_servers_error_body_is_the_answer() -> None:
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32022, "message": "no", "data": {}}}
    )
    answer = orjson.loads(server_error(body, 5) or b"")
    assert answer["id"] == 5
    assert answer["error"]["code"] == -32022
    for junk in (b"", b"<html>", b"[]", b'{"error": 1}', b'{"id": 9, "error": {"code": 1}}'):
        assert server_error(junk, 5) is None
    wrong_id = orjson.dumps({"id": 6, "error": {"code": -32601, "message": "m"}})
    assert server_error(wrong_id, 5) is None


def test_an_error_made_up_here_carries_the_status() -> None:
    made = orjson.loads(error_response(3, "refused", status=405))
    assert made["error"]["data"] == {"httpStatus": 405}
    assert "data" not in orjson.loads(error_response(3, "broke"))["error"]


@given(body=st.binary(max_size=64) | st.builds(orjson.dumps, st.dictionaries(st.text(), st.none())))
def test_server_error_takes_any_bytes(body: bytes) -> None:
    answer = server_error(body, 1)
    assert answer is None or orjson.loads(answer)["id"] == 1


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://Example.test/mcp", "http://example.test:80/mcp"),
        ("http://example.test:80/mcp?x=1", "http://example.test:80/mcp"),
        ("https://example.test/mcp", "https://example.test:443/mcp"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/"),
    ],
)
def test_a_server_is_its_origin_and_path(url: str, key: str) -> None:
    assert server_key(url) == key
