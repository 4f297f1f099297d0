"""The transports' authorization hook (``HttpAuth``), against a scripted raw server.

A scripted ``HttpAuth`` hands out numbered tokens; the server accepts only the tokens a test
says, and answers the others 401 or 403. What is checked: every request carries the header
(POST, the GET stream, DELETE; the legacy transport's GET and POST), a refusal the auth
fixes is sent again with the new header, retries are bounded, and what is not fixed is
reported as before (401: the stream ends; 403 to a request: that request only fails).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
import pytest
import trio

from trimcp.errors import HttpAuthRequired
from trimcp.transports.http_client import HttpAuth
from trimcp.transports.http_client._auth import AUTH_RETRIES
from trimcp.transports.http_client._client import open_http_client_stream
from trimcp.transports.http_client._legacy import open_legacy_sse_client_stream

from .test_helpers import (
    answer_to,
    init_result,
    initialize,
    initialize_request,
    raw_answer,
    raw_server,
    request,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

pytestmark = pytest.mark.slow


class Tokens:
    """An ``HttpAuth`` whose n-th renewal gives ``Bearer t<n>``; it records each refusal."""

    def __init__(self, *, renew: bool = True, fail: HttpAuthRequired | None = None) -> None:
        self.number = 0
        self.renew = renew
        self.fail = fail
        self.refusals: list[tuple[int, tuple[str, ...], str | None]] = []

    async def authorization(self) -> str | None:
        return f"Bearer t{self.number}" if self.number else None

    async def refused(self, *, status: int, challenges: Sequence[str], sent: str | None) -> bool:
        self.refusals.append((status, tuple(challenges), sent))
        if self.fail is not None:
            raise self.fail
        if self.renew:
            self.number += 1
        return self.renew


CHALLENGE = 'Bearer error="invalid_token", resource_metadata="https://x/prm"'


class Gate:
    """A raw MCP server that wants one of ``accepted`` tokens (and refuses with ``status``)."""

    def __init__(self, accepted: set[str], *, status: str = "401 Unauthorized") -> None:
        self.accepted = accepted
        self.status = status
        self.seen: list[tuple[str, str | None]] = []
        self.forbidden_tools: set[str] = set()

    async def __call__(self, method: str, headers: dict[str, str], body: bytes) -> bytes:
        self.seen.append((method, headers.get("authorization")))
        if headers.get("authorization") not in self.accepted:
            return _with(raw_answer(self.status, "application/json", b"{}"), CHALLENGE)
        if method != "POST":
            status = "405 Method Not Allowed" if method == "GET" else "200 OK"
            return raw_answer(status, None, b"")
        return self._post(orjson.loads(body))

    def _post(self, message: dict[str, Any]) -> bytes:
        if message.get("method") == "initialize":
            answer = raw_answer("200 OK", "application/json", init_result(message["id"]))
            head, _, rest = answer.partition(b"\r\n")
            return head + b"\r\nmcp-session-id: s1\r\n" + rest
        if "id" not in message:
            return raw_answer("202 Accepted", None, b"")
        if message["params"]["name"] in self.forbidden_tools:
            scope = 'Bearer error="insufficient_scope", scope="admin"'
            return _with(raw_answer("403 Forbidden", "application/json", b"{}"), scope)
        result = {"content": [{"type": "text", "text": "ok"}]}
        return raw_answer(
            "200 OK",
            "application/json",
            orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}),
        )


def _with(answer: bytes, challenge: str) -> bytes:
    head, _, rest = answer.partition(b"\r\n")
    return head + f"\r\nwww-authenticate: {challenge}".encode() + b"\r\n" + rest


async def test_a_401_is_renewed_and_every_request_carries_the_header() -> None:
    gate = Gate({"Bearer t1"})
    auth = Tokens()
    assert isinstance(auth, HttpAuth)
    with trio.fail_after(10):
        async with raw_server(gate) as url, open_http_client_stream(url, auth=auth) as stream:
            await initialize(stream)
            request_id, data = request("tools/call", {"name": "a", "arguments": {}})
            await stream.send_message(data)
            assert (await answer_to(stream, request_id))["result"]
    assert auth.refusals == [(401, (CHALLENGE,), None)]
    first, *rest = gate.seen
    assert first == ("POST", None)
    assert {method for method, _ in rest} == {"POST", "GET", "DELETE"}
    assert all(value == "Bearer t1" for _, value in rest)


async def test_retries_are_bounded() -> None:
    gate = Gate(set())
    auth = Tokens()
    with trio.fail_after(10):
        async with raw_server(gate) as url, open_http_client_stream(url, auth=auth) as stream:
            _, data = initialize_request()
            with pytest.raises(HttpAuthRequired, match="HTTP 401"):
                await stream.send_message(data)
    assert len(auth.refusals) == AUTH_RETRIES
    assert len(gate.seen) == AUTH_RETRIES + 1


async def test_an_auth_that_cannot_help_leaves_the_401_as_it_was() -> None:
    gate = Gate(set())
    auth = Tokens(renew=False)
    async with raw_server(gate) as url, open_http_client_stream(url, auth=auth) as stream:
        _, data = initialize_request()
        with pytest.raises(HttpAuthRequired, match='"auth": "oauth"'):
            await stream.send_message(data)
    assert len(gate.seen) == 1


async def test_the_auths_own_failure_reaches_the_sender() -> None:
    failure = HttpAuthRequired("http://x/mcp", 401, "signing in failed: no browser")
    auth = Tokens(fail=failure)
    async with raw_server(Gate(set())) as url, open_http_client_stream(url, auth=auth) as stream:
        _, data = initialize_request()
        with pytest.raises(HttpAuthRequired, match="no browser"):
            await stream.send_message(data)


async def test_a_403_the_auth_cannot_fix_fails_that_request_only() -> None:
    gate = Gate({"Bearer t1"})
    gate.forbidden_tools = {"admin_tool"}
    auth = Tokens()
    auth.number = 1
    auth.renew = False
    with trio.fail_after(10):
        async with raw_server(gate) as url, open_http_client_stream(url, auth=auth) as stream:
            await initialize(stream)
            request_id, data = request("tools/call", {"name": "admin_tool", "arguments": {}})
            await stream.send_message(data)
            answer = await answer_to(stream, request_id)
            assert "HTTP 403" in answer["error"]["message"]
            request_id, data = request("tools/call", {"name": "fine", "arguments": {}})
            await stream.send_message(data)
            assert (await answer_to(stream, request_id))["result"]
    assert [status for status, _, _ in auth.refusals] == [403]


async def test_without_auth_a_403_still_ends_the_stream() -> None:
    gate = Gate({"Bearer static"})
    gate.forbidden_tools = {"admin_tool"}
    headers = {"Authorization": "Bearer static"}
    async with raw_server(gate) as url, open_http_client_stream(url, headers=headers) as stream:
        await initialize(stream)
        _, data = request("tools/call", {"name": "admin_tool", "arguments": {}})
        with pytest.raises(HttpAuthRequired, match="HTTP 403"):
            await stream.send_message(data)


async def test_the_legacy_transport_authorizes_its_stream_and_posts() -> None:
    seen: list[tuple[str, str | None]] = []

    async def legacy(method: str, headers: dict[str, str], body: bytes) -> bytes:
        seen.append((method, headers.get("authorization")))
        if headers.get("authorization") != "Bearer t1":
            return _with(raw_answer("401 Unauthorized", None, b""), "Bearer")
        if method == "GET":
            return raw_answer(
                "200 OK", "text/event-stream", b"event: endpoint\ndata: /messages\n\n"
            )
        return raw_answer("202 Accepted", None, b"")

    auth = Tokens()
    with trio.fail_after(10):
        async with raw_server(legacy) as url, open_legacy_sse_client_stream(url, auth=auth) as s:
            await s.send_message(initialize_request()[1])
    assert seen == [("GET", None), ("GET", "Bearer t1"), ("POST", "Bearer t1")]
