"""The authorization code flow end to end: trimcp's client, an in-test authorization server,
and trimcp's MCP server behind a bearer check, all on 127.0.0.1.

The browser step follows the authorization server's redirect with httpx
(``follow_redirects``) to the client's own loopback listener, so every hop a browser makes
is made, without a browser.
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING, Any

import pytest
import trio

from trimcp.auth.client import (
    FileTokenStore,
    LoopbackBrowser,
    MemoryTokenStore,
    OAuth,
    follow_redirects,
)
from trimcp.client import open_client_session, open_http_client_stream
from trimcp.errors import HttpAuthRequired

from ._authority import Settings
from ._protected import Protected, running

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

#: Seconds any one test may take: the flow is a dozen local requests.
LIMIT = 20


def headless() -> LoopbackBrowser:
    return LoopbackBrowser(opener=follow_redirects, timeout=10)


def oauth(gate: Protected, **settings: Any) -> OAuth:
    settings.setdefault("browser", headless())
    return OAuth(gate.url, **settings)


async def call_echo(gate: Protected, auth: OAuth, text: str = "hi") -> str:
    with trio.fail_after(LIMIT):
        async with (
            open_http_client_stream(gate.url, auth=auth) as stream,
            open_client_session(stream) as session,
        ):
            result = await session.call_tool("echo", {"text": text})
            return result.text


async def test_a_first_request_signs_in_and_every_request_carries_the_token() -> None:
    async with running() as gate:
        auth = oauth(gate)
        assert await call_echo(gate, auth) == "hi"
        authority = gate.authority
        # One dynamic registration, one authorization, one code exchange.
        assert len(authority.registrations) == 1
        registered = authority.registrations[0]
        assert registered["application_type"] == "native"
        assert registered["token_endpoint_auth_method"] == "none"
        (query,) = authority.authorize_queries
        assert query["code_challenge_method"] == "S256"
        assert query["resource"] == gate.url
        assert query["redirect_uri"].startswith("http://127.0.0.1:")
        assert "scope" not in query  # no challenge scope, no scopes_supported
        (form,) = authority.token_forms
        assert form["grant_type"] == "authorization_code"
        assert form["resource"] == gate.url
        assert form["redirect_uri"] == query["redirect_uri"]
        # The first initialize went without a token; everything after carried it.
        first, *rest = gate.authorizations
        assert first is None
        assert rest
        assert all(value == f"Bearer {auth.tokens.access_token}" for value in rest)  # type: ignore[union-attr]
        assert all("access_token" not in line for line in gate.seen)


@pytest.mark.parametrize(
    ("prm_at", "in_challenge", "expected"),
    [
        ("path", True, ["GET /.well-known/oauth-protected-resource/mcp"]),
        ("path", False, ["GET /.well-known/oauth-protected-resource/mcp"]),
        (
            "root",
            False,
            [
                "GET /.well-known/oauth-protected-resource/mcp",
                "GET /.well-known/oauth-protected-resource",
            ],
        ),
        ("custom", True, ["GET /custom/metadata.json"]),
    ],
)
async def test_protected_resource_metadata_is_looked_up_in_order(
    prm_at: str, in_challenge: bool, expected: list[str]
) -> None:
    async with running(prm_at=prm_at, challenge_metadata=in_challenge) as gate:
        assert await call_echo(gate, oauth(gate)) == "hi"
        lookups = [line for line in gate.seen if not line.endswith("/mcp") or "known" in line]
        assert lookups == expected
        # The resource parameter is the metadata's own resource, exactly.
        assert gate.authority.authorize_queries[0]["resource"] == gate.resource


@pytest.mark.parametrize(
    ("issuer_path", "place", "expected"),
    [
        ("", "oauth", ["/.well-known/oauth-authorization-server"]),
        (
            "",
            "oidc",
            ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"],
        ),
        ("/tenant1", "oauth", ["/.well-known/oauth-authorization-server/tenant1"]),
        (
            "/tenant1",
            "oidc",
            [
                "/.well-known/oauth-authorization-server/tenant1",
                "/.well-known/openid-configuration/tenant1",
            ],
        ),
        (
            "/tenant1",
            "oidc-appended",
            [
                "/.well-known/oauth-authorization-server/tenant1",
                "/.well-known/openid-configuration/tenant1",
                "/tenant1/.well-known/openid-configuration",
            ],
        ),
    ],
)
async def test_authorization_server_metadata_is_looked_up_in_the_order_mcp_lists(
    issuer_path: str, place: Any, expected: list[str]
) -> None:
    settings = Settings(issuer_path=issuer_path, metadata_at=(place,))
    async with running(settings) as gate:
        assert await call_echo(gate, oauth(gate)) == "hi"
        asked = [line.split()[1] for line in gate.authority.seen if "well-known" in line]
        assert asked == expected


async def test_an_authorization_server_without_s256_is_refused_before_any_sign_in() -> None:
    async with running(Settings(pkce_methods=["plain"])) as gate:
        with pytest.raises(HttpAuthRequired, match="S256") as caught:
            await call_echo(gate, oauth(gate))
        assert "PKCE" in str(caught.value)
        assert gate.authority.count("GET /authorize") == 0
        assert gate.authority.registrations == []


async def test_metadata_without_pkce_methods_is_refused() -> None:
    async with running(Settings(pkce_methods=None)) as gate:
        with pytest.raises(HttpAuthRequired, match="code_challenge_methods_supported: none"):
            await call_echo(gate, oauth(gate))
        assert gate.authority.count("GET /authorize") == 0


async def test_a_redirect_with_another_state_is_refused() -> None:
    async with running(Settings(state_in_redirect="wrong")) as gate:
        with pytest.raises(HttpAuthRequired, match="another `state`"):
            await call_echo(gate, oauth(gate))
        assert gate.authority.count("GET /authorize") == 1
        assert gate.authority.token_forms == []


@pytest.mark.parametrize(
    ("iss", "supported", "words"),
    [("wrong", True, "names the issuer"), ("omit", True, "no `iss`"), ("wrong", False, "names")],
)
async def test_a_redirect_from_another_issuer_is_refused(
    iss: Any, supported: bool, words: str
) -> None:
    settings = Settings(iss_in_redirect=iss, iss_supported=supported)
    async with running(settings) as gate:
        with pytest.raises(HttpAuthRequired, match=words):
            await call_echo(gate, oauth(gate))
        assert gate.authority.token_forms == []


async def test_no_iss_is_fine_when_the_server_does_not_promise_one() -> None:
    settings = Settings(iss_in_redirect="omit", iss_supported=False)
    async with running(settings) as gate:
        assert await call_echo(gate, oauth(gate)) == "hi"


async def test_metadata_naming_another_issuer_is_refused() -> None:
    settings = Settings(metadata_issuer="https://attacker.example")
    async with running(settings) as gate:
        with pytest.raises(HttpAuthRequired, match="attacker"):
            await call_echo(gate, oauth(gate))
        assert gate.authority.registrations == []
        assert gate.authority.count("GET /authorize") == 0


async def test_scopes_come_from_the_challenge_then_the_metadata() -> None:
    async with running(challenge_scope=("mcp:read",), scopes_supported=("a", "b")) as gate:
        await call_echo(gate, oauth(gate))
        assert gate.authority.authorize_queries[0]["scope"] == "mcp:read"
    async with running(scopes_supported=("a", "b")) as gate:
        await call_echo(gate, oauth(gate))
        assert gate.authority.authorize_queries[0]["scope"] == "a b"


async def test_a_pre_registered_client_is_used_with_its_secret() -> None:
    settings = Settings(registration=False, auth_methods=["client_secret_basic"])
    async with running(settings) as gate:
        from ._authority import Client

        gate.authority.clients["pre"] = Client("pre", secret="pass word:%")
        auth = oauth(gate, client_id="pre", client_secret="pass word:%")
        assert await call_echo(gate, auth) == "hi"
        assert gate.authority.token_auth == ["client_secret_basic"]
        assert gate.authority.registrations == []


async def test_a_client_id_metadata_document_is_preferred_to_registration() -> None:
    async with running(Settings(cimd=True)) as gate:
        url = "https://client.example/trimcp.json"
        assert await call_echo(gate, oauth(gate, client_metadata_url=url)) == "hi"
        assert gate.authority.authorize_queries[0]["client_id"] == url
        assert gate.authority.registrations == []
        assert gate.authority.token_auth == ["none"]


async def test_no_way_to_register_is_explained() -> None:
    async with running(Settings(registration=False)) as gate:
        with pytest.raises(HttpAuthRequired, match="configure the client_id"):
            await call_echo(gate, oauth(gate))


async def test_without_a_browser_step_the_error_says_how_to_sign_in() -> None:
    async with running() as gate:
        auth = OAuth(gate.url, browser=None, sign_in_hint="run `trimcp login notes`")
        with pytest.raises(HttpAuthRequired, match="trimcp login notes"):
            await call_echo(gate, auth)
        assert gate.authority.seen == []


async def test_a_registration_secret_is_sent_the_way_the_server_registered_it() -> None:
    settings = Settings(auth_methods=["client_secret_post"], register_method="client_secret_post")
    async with running(settings) as gate:
        assert await call_echo(gate, oauth(gate)) == "hi"
        assert gate.authority.registrations[0]["token_endpoint_auth_method"] == "client_secret_post"
        assert gate.authority.token_auth == ["client_secret_post"]


async def test_tokens_in_a_file_store_serve_the_next_run(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens")
    async with running() as gate:
        assert await call_echo(gate, oauth(gate, store=store, store_key="notes")) == "hi"
        path = tmp_path / "tokens" / "notes.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "tokens").stat().st_mode) == 0o700
        # A new client object (a new run): the stored token, no new sign-in.
        again = oauth(gate, store=FileTokenStore(tmp_path / "tokens"), store_key="notes")
        assert await call_echo(gate, again, "two") == "two"
        assert gate.authority.count("GET /authorize") == 1
        assert gate.authorizations[-1] == f"Bearer {again.tokens.access_token}"  # type: ignore[union-attr]


async def test_stored_tokens_for_another_resource_are_not_sent() -> None:
    store = MemoryTokenStore()
    async with running() as first:
        await call_echo(first, oauth(first, store=store, store_key="shared"))
    async with running() as second:
        assert await call_echo(second, oauth(second, store=store, store_key="shared")) == "hi"
        # The first server's token never reached the second one.
        assert second.authorizations[0] is None
        assert second.authority.count("GET /authorize") == 1
