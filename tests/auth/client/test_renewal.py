"""Keeping a session authorized: refresh before expiry and after a 401, a new sign-in when
refreshing fails, and step-up on 403 ``insufficient_scope`` with its limits.

Time is trio's ``MockClock`` running at real speed (the sockets are real), jumped ahead to
make tokens expire; the client and the authorization server read the same wall clock built
on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.auth.client import LoopbackBrowser, OAuth, follow_redirects
from trimcp.client import open_client_session, open_http_client_stream
from trimcp.errors import JsonRpcError

from ._authority import Settings
from ._protected import Protected, running

if TYPE_CHECKING:
    from trio.testing import MockClock

pytestmark = pytest.mark.slow

EPOCH = 1_800_000_000.0
LIMIT = 20


def wall_clock() -> float:
    return EPOCH + trio.current_time()


def oauth(gate: Protected) -> OAuth:
    browser = LoopbackBrowser(opener=follow_redirects, timeout=10)
    return OAuth(gate.url, browser=browser, clock=wall_clock)


async def call(gate: Protected, auth: OAuth, tool: str = "echo", text: str = "hi") -> str:
    with trio.fail_after(LIMIT):
        async with (
            open_http_client_stream(gate.url, auth=auth) as stream,
            open_client_session(stream) as session,
        ):
            return (await session.call_tool(tool, {"text": text})).text


def grants(gate: Protected) -> list[str]:
    return [form["grant_type"] for form in gate.authority.token_forms]


async def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(
    mock_clock: MockClock,
) -> None:
    mock_clock.rate = 1.0
    async with running(Settings(expires_in=3600), clock=wall_clock) as gate:
        auth = oauth(gate)
        await call(gate, auth)
        first = auth.tokens
        assert first is not None
        mock_clock.jump(3600 - 30)  # inside the 60 s margin, not yet expired
        assert await call(gate, auth, text="later") == "later"
        assert grants(gate) == ["authorization_code", "refresh_token"]
        assert gate.authority.count("GET /authorize") == 1
        second = auth.tokens
        assert second is not None
        assert second.access_token != first.access_token
        assert second.refresh_token is not None
        # The first request after the jump already carried the new token: no 401 on the way.
        after = gate.authorizations[-3:]
        assert all(value == f"Bearer {second.access_token}" for value in after)


async def test_a_token_far_from_expiry_is_sent_as_is(mock_clock: MockClock) -> None:
    mock_clock.rate = 1.0
    async with running(Settings(expires_in=3600), clock=wall_clock) as gate:
        auth = oauth(gate)
        await call(gate, auth)
        mock_clock.jump(3600 - 61)
        await call(gate, auth)
        assert grants(gate) == ["authorization_code"]


async def test_a_401_to_a_live_token_is_answered_by_a_refresh() -> None:
    async with running() as gate:
        auth = oauth(gate)
        await call(gate, auth)
        gate.authority.revoke_access_tokens()
        assert await call(gate, auth, text="again") == "again"
        assert grants(gate) == ["authorization_code", "refresh_token"]
        assert gate.authority.count("GET /authorize") == 1


async def test_when_refreshing_fails_the_user_signs_in_again() -> None:
    async with running() as gate:
        auth = oauth(gate)
        await call(gate, auth)
        gate.authority.revoke_access_tokens()
        gate.authority.revoke_refresh_tokens()
        assert await call(gate, auth, text="again") == "again"
        assert grants(gate) == ["authorization_code", "refresh_token", "authorization_code"]
        assert gate.authority.count("GET /authorize") == 2


async def test_an_expired_token_that_cannot_be_refreshed_is_not_sent(
    mock_clock: MockClock,
) -> None:
    mock_clock.rate = 1.0
    async with running(Settings(expires_in=600), clock=wall_clock) as gate:
        auth = oauth(gate)
        await call(gate, auth)
        gate.authority.revoke_refresh_tokens()
        mock_clock.jump(601)
        assert await call(gate, auth, text="again") == "again"
        assert gate.authority.count("GET /authorize") == 2
        assert gate.authorizations.count(None) == 2  # the first initialize of each run


async def test_insufficient_scope_steps_up_with_the_union_of_scopes() -> None:
    gate_settings = {
        "challenge_scope": ("notes:read",),
        "tool_scopes": {"write_note": ("notes:write",)},
    }
    async with running(**gate_settings) as gate:
        auth = oauth(gate)
        with trio.fail_after(LIMIT):
            async with (
                open_http_client_stream(gate.url, auth=auth) as stream,
                open_client_session(stream) as session,
            ):
                assert (await session.call_tool("echo", {"text": "a"})).text == "a"
                result = await session.call_tool("write_note", {"text": "b"})
                assert result.text == "noted: b"
        scopes = [query.get("scope") for query in gate.authority.authorize_queries]
        assert scopes == ["notes:read", "notes:read notes:write"]
        assert auth.tokens is not None
        assert auth.tokens.scopes == ("notes:read", "notes:write")


async def test_a_scope_the_server_withholds_fails_that_call_only() -> None:
    settings = Settings(withheld=frozenset({"notes:write"}))
    gate_settings = {"tool_scopes": {"write_note": ("notes:write",)}}
    async with running(settings, **gate_settings) as gate:
        auth = oauth(gate)
        with trio.fail_after(LIMIT):
            async with (
                open_http_client_stream(gate.url, auth=auth) as stream,
                open_client_session(stream) as session,
            ):
                with pytest.raises(JsonRpcError, match="notes:write"):
                    await session.call_tool("write_note", {"text": "b"})
                # No third sign-in for the same scope, and the session goes on.
                with pytest.raises(JsonRpcError, match="not granted"):
                    await session.call_tool("write_note", {"text": "c"})
                assert (await session.call_tool("echo", {"text": "d"})).text == "d"
        assert gate.authority.count("GET /authorize") == 2


async def test_a_scope_the_token_already_has_is_not_asked_for_again() -> None:
    gate_settings = {
        "challenge_scope": ("notes:write",),
        "tool_scopes": {"write_note": ("notes:write",)},
    }
    async with running(**gate_settings) as gate:
        auth = oauth(gate)
        await call(gate, auth)
        # The server now wants notes:write for echo too, and no longer counts the token's.
        gate.tool_scopes = {"echo": ("notes:write",)}
        for grant in gate.authority.grants.values():
            grant.scopes = ()
        with pytest.raises(JsonRpcError, match="already carries"):
            await call(gate, auth)
        assert gate.authority.count("GET /authorize") == 1
