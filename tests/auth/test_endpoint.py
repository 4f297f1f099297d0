"""A protected MCP endpoint over real sockets, against an authorization server run by the test.

Each refusal is checked for its status and its ``WWW-Authenticate`` challenge, as MCP
2025-11-25 (Basic > Authorization > Error Handling) and RFC 6750 section 3 give them.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets

import httpx
import orjson
import pytest
import trio
from joserfc.jwk import RSAKey

from tests.auth._issuer import forge
from tests.auth._protected import Protected, protected, text_of
from tests.http._client import INITIALIZE
from trimcp.errors import HandshakeRejected, TransportBroken, TransportClosed
from trimcp.http import HttpOptions
from trimcp.transports import open_websocket_stream

pytestmark = pytest.mark.slow

_PARAM = re.compile(r'([a-z_]+)="([^"]*)"')


def challenge(answer_headers: httpx.Headers) -> dict[str, str]:
    value = answer_headers["www-authenticate"]
    assert value.startswith("Bearer ")
    return dict(_PARAM.findall(value))


def metadata_url(p: Protected) -> str:
    return p.resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


async def test_a_request_without_a_token_gets_401_and_where_to_get_one() -> None:
    async with protected() as p:
        answer = await p.post(INITIALIZE, None)
        assert answer.status == 401
        assert challenge(answer.headers) == {
            "scope": "mcp",
            "resource_metadata": metadata_url(p),
            "error_description": "this MCP server requires authorization: send the access "
            "token as  Authorization: Bearer <token>",
        }
        assert "error" not in challenge(answer.headers)  # RFC 6750 section 3.1: no code
        assert answer.messages[0]["error"]["message"].startswith("Unauthorized: ")
        assert answer.messages[0]["id"] is None


def _bad_tokens(p: Protected) -> dict[str, tuple[str, str]]:
    now = int(p.issuer.now())
    stranger = RSAKey.generate_key(2048, parameters={"kid": "stranger"})
    public_pem = p.issuer.keys[0].as_pem(private=False)  # type: ignore[attr-defined]
    return {
        "expired": (p.token(exp=now - 5), "expired"),
        "not yet valid": (p.token(nbf=now + 120), "not valid yet"),
        "wrong issuer": (p.token(iss="https://evil.example.com"), "accepts tokens from"),
        "wrong audience": (p.token(aud="https://other.example.com/mcp"), "not for this server"),
        "unsigned": (forge({"alg": "none", "typ": "JWT"}, p.issuer.claims(), None), "'none'"),
        "hs256 with the public key": (
            forge({"alg": "HS256", "kid": "rsa-1"}, p.issuer.claims(), public_pem),
            "'HS256'",
        ),
        "unknown kid": (p.issuer.token(key=stranger), "kid 'stranger' is not in"),
        "garbage": ("garbage.garbage.garbage", "not a signed JWT"),
    }


async def test_every_kind_of_bad_token_is_refused_with_401_invalid_token() -> None:
    async with protected() as p:
        for name, (token, words) in _bad_tokens(p).items():
            answer = await p.post(INITIALIZE, token)
            assert answer.status == 401, name
            params = challenge(answer.headers)
            assert params["error"] == "invalid_token", name
            assert words in params["error_description"], (name, params)
            assert params["resource_metadata"] == metadata_url(p)
            assert token not in answer.headers["www-authenticate"]
            assert token not in orjson.dumps(answer.messages).decode()


async def test_an_unknown_kid_fetches_the_keys_again_once() -> None:
    async with protected(refresh_interval=0.2) as p:
        session = await p.initialize(p.token())
        assert p.auth_server.hits["/jwks"] == 1
        await trio.sleep(0.25)
        stranger = RSAKey.generate_key(2048, parameters={"kid": "stranger"})
        for _ in range(3):
            answer = await p.post(INITIALIZE, p.issuer.token(key=stranger))
            assert answer.status == 401
        assert p.auth_server.hits["/jwks"] == 2  # once, not once per token
        # The authorization server rotates to the new key: accepted after the interval.
        p.issuer.keys.append(stranger)
        await trio.sleep(0.25)
        answer = await p.call(p.issuer.token(key=stranger), session, "whoami")
        assert text_of(answer).startswith("alice via app-1")
        assert p.auth_server.hits["/jwks"] == 3


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"authorization": "Bearer a b"}, "characters a token cannot have"),
        ({"authorization": "Bearer"}, "no token after Bearer"),
    ],
)
async def test_a_malformed_authorization_header_is_400_invalid_request(
    headers: dict[str, str], words: str
) -> None:
    async with protected() as p:
        answer = await p.post(INITIALIZE, None, **headers)
        assert answer.status == 400
        params = challenge(answer.headers)
        assert params["error"] == "invalid_request"
        assert words in params["error_description"]


async def test_a_token_in_the_query_is_refused() -> None:
    async with protected() as p:
        token = p.token()
        response = await p.client.post(
            f"{p.url}?access_token={token}",
            content=orjson.dumps(INITIALIZE),
            headers={
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
            },
        )
        assert response.status_code == 400
        assert "in the URL query" in response.headers["www-authenticate"]


async def test_two_authorization_headers_are_400() -> None:
    async with protected() as p:
        token = p.token()
        request = p.client.build_request("POST", p.url, content=orjson.dumps(INITIALIZE))
        request.headers["accept"] = "application/json, text/event-stream"
        request.headers["content-type"] = "application/json"
        raw = [(k, v) for k, v in request.headers.raw]
        raw += [(b"authorization", f"Bearer {token}".encode())] * 2
        request.headers = httpx.Headers(raw)
        response = await p.client.send(request)
        assert response.status_code == 400
        assert "2 Authorization headers" in response.headers["www-authenticate"]


async def test_a_token_without_the_server_scope_is_403() -> None:
    async with protected() as p:
        answer = await p.post(INITIALIZE, p.token(scope="files:write"))
        assert answer.status == 403
        params = challenge(answer.headers)
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "mcp"
        assert params["resource_metadata"] == metadata_url(p)
        assert "re-authorize" in params["error_description"]


async def test_a_tool_with_scopes_of_its_own_needs_them_403_otherwise() -> None:
    async with protected() as p:
        token = p.token(scope="mcp")
        session = await p.initialize(token)
        answer = await p.call(token, session, "delete_file", path="/tmp/x")
        assert answer.status == 403
        params = challenge(answer.headers)
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "mcp files:write"  # everything the call needs, at once
        assert "tool 'delete_file' needs the scopes mcp files:write" in params["error_description"]
        assert answer.messages[0]["id"] == 7  # the JSON-RPC error answers the request
        # Step up: a token with the scope, same user and client, same session.
        stepped = p.token(scope="mcp files:write")
        assert text_of(await p.call(stepped, session, "delete_file", path="/tmp/x")) == (
            "deleted /tmp/x"
        )
        assert text_of(await p.call(token, session, "echo", text="hi")) == "hi"


async def test_a_tool_reads_the_identity_from_its_context() -> None:
    async with protected() as p:
        token = p.token(scope="mcp files:write", sub="bob", client_id="cli")
        session = await p.initialize(token)
        answer = await p.call(token, session, "whoami")
        assert text_of(answer) == f"bob via cli [files:write mcp] from {p.issuer.url}"


async def test_a_session_serves_only_the_principal_that_started_it() -> None:
    async with protected() as p:
        alice = p.token()
        session = await p.initialize(alice)
        for other in (
            p.token(sub="mallory"),  # another user, valid token
            p.token(client_id="other-app"),  # the same user through another client
        ):
            answer = await p.call(other, session, "whoami")
            assert answer.status == 404
            assert "unknown or expired session" in answer.messages[0]["error"]["message"]
            get = await p.client.get(
                p.url,
                headers={
                    "accept": "text/event-stream",
                    "mcp-session-id": session,
                    "authorization": f"Bearer {other}",
                },
            )
            assert get.status_code == 404
            delete = await p.client.delete(
                p.url, headers={"mcp-session-id": session, "authorization": f"Bearer {other}"}
            )
            assert delete.status_code == 404
            again = await p.post(INITIALIZE, other, session=session)
            assert again.status == 404
        # Untouched: its own principal, with a fresh token, still uses it.
        assert text_of(await p.call(p.token(), session, "whoami")).startswith("alice via app-1")
        delete = await p.client.delete(
            p.url, headers={"mcp-session-id": session, "authorization": f"Bearer {alice}"}
        )
        assert delete.status_code == 200


async def test_the_metadata_is_served_at_both_urls_without_a_token() -> None:
    async with protected() as p:
        base = p.resource.removesuffix("/mcp")
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            response = await p.client.get(base + path)
            assert response.status_code == 200, path
            assert response.headers["content-type"] == "application/json"
            assert response.json() == {
                "resource": p.resource,
                "authorization_servers": [p.issuer.url],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp", "files:write"],
                "resource_name": "Protected test server",
            }
        refused = await p.client.post(base + "/.well-known/oauth-protected-resource/mcp")
        assert refused.status_code == 405
        hostile = await p.client.get(
            base + "/.well-known/oauth-protected-resource", headers={"host": "evil.example.com"}
        )
        assert hostile.status_code == 421  # Host/Origin still come first


async def test_without_auth_there_is_no_metadata_and_no_identity() -> None:
    from tests.auth._protected import build_server
    from tests.http._client import handshake, post, running

    async with running(build_server()) as listener, httpx.AsyncClient() as client:
        base = listener.url.removesuffix("/mcp")
        assert (await client.get(base + "/.well-known/oauth-protected-resource")).status_code == 404
        session = await handshake(client, listener.url)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami"}}
        answer = await post(client, listener.url, body, session=session)
        assert answer.message["result"]["content"][0]["text"] == "nobody"


# --- WebSocket ----------------------------------------------------------------------------------


async def test_the_websocket_upgrade_needs_a_token() -> None:
    async with protected() as p:
        ws_url = p.url.replace("http://", "ws://") + "/ws"
        with pytest.raises(HandshakeRejected) as caught:
            async with open_websocket_stream(ws_url):
                pass
        assert caught.value.status == 401
        # The same challenge as an HTTP request gets, on the upgrade's answer.
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        response = await p.client.get(
            p.url + "/ws",
            headers={
                "connection": "Upgrade",
                "upgrade": "websocket",
                "sec-websocket-version": "13",
                "sec-websocket-key": key,
                "sec-websocket-protocol": "mcp",
                "authorization": f"Bearer {p.token(aud='https://other.example.com')}",
            },
        )
        assert response.status_code == 401
        assert challenge(response.headers)["error"] == "invalid_token"


async def _ws_request(stream: object, body: dict[str, object]) -> dict[str, object]:
    await stream.send_message(orjson.dumps(body))  # type: ignore[attr-defined]
    while True:
        message = orjson.loads(await stream.receive_message())  # type: ignore[attr-defined]
        if message.get("id") == body.get("id"):
            return message  # type: ignore[no-any-return]


async def test_a_websocket_session_runs_as_its_token_and_keeps_tool_scopes() -> None:
    async with protected() as p:
        ws_url = p.url.replace("http://", "ws://") + "/ws"
        headers = {"authorization": f"Bearer {p.token(sub='carol')}"}
        async with open_websocket_stream(ws_url, headers=headers) as stream:
            assert "result" in await _ws_request(stream, INITIALIZE)
            await stream.send_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
            who = await _ws_request(stream, {**call, "params": {"name": "whoami", "arguments": {}}})
            assert who["result"]["content"][0]["text"].startswith("carol via app-1")  # type: ignore[index]
            refused = await _ws_request(
                stream,
                {**call, "id": 3, "params": {"name": "delete_file", "arguments": {"path": "x"}}},
            )
            error = refused["error"]
            assert "needs the scopes mcp files:write" in error["message"]  # type: ignore[index]
            assert error["data"]["status"] == 403  # type: ignore[index]
            assert 'error="insufficient_scope"' in error["data"]["www_authenticate"]  # type: ignore[index]
            # The connection goes on.
            echo = await _ws_request(
                stream, {**call, "id": 4, "params": {"name": "echo", "arguments": {"text": "ok"}}}
            )
            assert echo["result"]["content"][0]["text"] == "ok"  # type: ignore[index]


async def test_a_websocket_closes_when_its_token_expires() -> None:
    async with protected() as p:
        ws_url = p.url.replace("http://", "ws://") + "/ws"
        token = p.token(exp=int(p.issuer.now()) + 2)
        async with open_websocket_stream(
            ws_url, headers={"authorization": f"Bearer {token}"}
        ) as stream:
            assert "result" in await _ws_request(stream, INITIALIZE)
            await trio.sleep(2.1)
            await stream.send_message(orjson.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
            with pytest.raises((TransportBroken, TransportClosed), match=r"1008|expired"):
                await stream.receive_message()


# --- the legacy HTTP+SSE transport -------------------------------------------------------------


async def test_the_legacy_sse_routes_are_guarded_too() -> None:
    async with protected() as p:
        base = p.resource.removesuffix("/mcp")
        refused = await p.client.get(base + "/sse", headers={"accept": "text/event-stream"})
        assert refused.status_code == 401
        assert "resource_metadata" in refused.headers["www-authenticate"]
        # By hand: httpx warns when an SSE stream is left before its end.
        port = int(base.rsplit(":", 1)[1])
        async with await trio.open_tcp_stream("127.0.0.1", port) as sse:
            head = (
                f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                f"Authorization: Bearer {p.token()}\r\n\r\n"
            )
            await sse.send_all(head.encode())
            received = b""
            while not (found := re.search(rb"\ndata: (\S+)\r?\n", received)):
                received += await sse.receive_some()
            assert received.startswith(b"HTTP/1.1 200 ")
            endpoint = found.group(1).decode()
            url = base + endpoint
            json_headers = {"content-type": "application/json"}
            for other, status in ((p.token(sub="mallory"), 404), (None, 401)):
                sent = dict(json_headers)
                if other is not None:
                    sent["authorization"] = f"Bearer {other}"
                response = await p.client.post(url, content=orjson.dumps(INITIALIZE), headers=sent)
                assert response.status_code == status
            sent = {**json_headers, "authorization": f"Bearer {p.token()}"}
            call = {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "delete_file", "arguments": {"path": "x"}},
            }
            response = await p.client.post(url, content=orjson.dumps(call), headers=sent)
            assert response.status_code == 403, response.text
            assert 'scope="mcp files:write"' in response.headers["www-authenticate"]
            response = await p.client.post(url, content=orjson.dumps(INITIALIZE), headers=sent)
            assert response.status_code == 202


async def test_stateless_mode_checks_and_binds_every_post() -> None:
    async with protected(options=HttpOptions(stateless=True, json_response=True)) as p:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}},
        }
        assert (await p.post(body, None)).status == 401
        answer = await p.post(body, p.token(sub="dave"))
        assert text_of(answer).startswith("dave via app-1")


# --- tokens never reach the logs ----------------------------------------------------------------


async def test_no_token_ever_appears_in_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with protected() as p:
        tokens = [
            p.token(),
            p.token(sub="mallory"),
            p.token(scope="mcp"),
            *(t for t, _ in _bad_tokens(p).values()),
        ]
        session = await p.initialize(tokens[0])
        await p.call(tokens[0], session, "whoami")
        await p.call(tokens[1], session, "whoami")  # another principal: 404
        await p.call(tokens[2], session, "delete_file", path="x")  # 403
        for token in tokens[3:]:
            await p.post(INITIALIZE, token)  # 401s
        await p.post(INITIALIZE, None, authorization=f"Bearer {tokens[0]} extra")  # 400
        # By hand, not with httpx: its own log line would show the URL, token and all.
        port = int(p.url.split(":")[2].split("/")[0])
        raw = trio.socket.socket()
        await raw.connect(("127.0.0.1", port))
        head = f"POST /mcp?access_token={tokens[0]} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        await raw.send((head + "Content-Length: 2\r\nConnection: close\r\n\r\n{}").encode())
        assert b" 400 " in await raw.recv(4096)
        raw.close()
    logged = "\n".join(record.getMessage() + (record.exc_text or "") for record in caplog.records)
    assert "refused a request" in logged  # the refusals were logged, at least
    for token in tokens:
        for part in token.split("."):
            if len(part) > 8:
                assert part not in logged


# --- introspection (RFC 7662) over the wire -----------------------------------------------------


async def test_opaque_tokens_are_checked_at_the_introspection_endpoint() -> None:
    async with protected(introspection=True) as p:
        p.auth_server.active["opaque-alice"] = p.issuer.claims(scope="mcp files:write")
        session = await p.initialize("opaque-alice")
        assert text_of(await p.call("opaque-alice", session, "whoami")).startswith("alice via")
        assert p.auth_server.hits["/introspect"] == 1  # cached: one call for three requests
        assert p.auth_server.forms[0] == {
            "token": "opaque-alice",
            "token_type_hint": "access_token",
        }
        refused = await p.post(INITIALIZE, "opaque-unknown")
        assert refused.status == 401
        assert "not active" in challenge(refused.headers)["error_description"]
        p.auth_server.active["opaque-other"] = p.issuer.claims(aud="https://other.example.com")
        assert (await p.post(INITIALIZE, "opaque-other")).status == 401
        p.auth_server.introspect_status = 500
        down = await p.post(INITIALIZE, "opaque-new")
        assert down.status == 503
        assert "error" not in challenge(down.headers)  # not the token's fault


# --- the same endpoint on hypercorn ---------------------------------------------------------------


async def test_auth_works_the_same_on_hypercorn() -> None:
    async with protected(engine="hypercorn") as p:
        assert (await p.post(INITIALIZE, None)).status == 401
        token = p.token(sub="erin")
        session = await p.initialize(token)
        assert text_of(await p.call(token, session, "whoami")).startswith("erin via")
        assert (await p.call(p.token(sub="mallory"), session, "whoami")).status == 404
        ws_url = p.url.replace("http://", "ws://") + "/ws"
        with pytest.raises(HandshakeRejected) as caught:
            async with open_websocket_stream(ws_url):
                pass
        assert caught.value.status == 401
