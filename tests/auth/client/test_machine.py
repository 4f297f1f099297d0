"""The client credentials grant: a machine client with a secret or a signed assertion."""

from __future__ import annotations

import pytest
import trio
from joserfc.jwk import ECKey

from trimcp.auth.client import ClientCredentials, PrivateKeyJwt
from trimcp.client import open_client_session, open_http_client_stream
from trimcp.errors import HttpAuthRequired

from ._authority import Client, Settings
from ._protected import Protected, running

pytestmark = pytest.mark.slow


async def call(gate: Protected, auth: ClientCredentials, text: str = "hi") -> str:
    with trio.fail_after(20):
        async with (
            open_http_client_stream(gate.url, auth=auth) as stream,
            open_client_session(stream) as session,
        ):
            return (await session.call_tool("echo", {"text": text})).text


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_a_secret_gets_a_token_without_any_user(method: str) -> None:
    async with running(Settings(auth_methods=[method]), challenge_scope=("mcp",)) as gate:
        gate.authority.clients["robot"] = Client("robot", secret="s3cret/+")
        auth = ClientCredentials(gate.url, client_id="robot", client_secret="s3cret/+")
        assert await call(gate, auth) == "hi"
        (form,) = gate.authority.token_forms
        assert form["grant_type"] == "client_credentials"
        assert form["resource"] == gate.url
        assert form["scope"] == "mcp"
        assert gate.authority.token_auth == [method]
        assert gate.authority.count("GET /authorize") == 0


async def test_a_signed_assertion_authenticates_the_client() -> None:
    key = ECKey.generate_key("P-256")
    private = key.as_pem(private=True).decode()
    public = key.as_pem(private=False).decode()
    async with running(Settings(auth_methods=["private_key_jwt"])) as gate:
        gate.authority.clients["robot"] = Client("robot", public_key_pem=public)
        signer = PrivateKeyJwt(private, "ES256")
        auth = ClientCredentials(gate.url, client_id="robot", private_key=signer)
        assert await call(gate, auth) == "hi"
        assert gate.authority.token_auth == ["private_key_jwt"]
        assert "client_secret" not in gate.authority.token_forms[0]


async def test_an_assertion_signed_with_another_key_is_refused() -> None:
    other = ECKey.generate_key("P-256").as_pem(private=True).decode()
    public = ECKey.generate_key("P-256").as_pem(private=False).decode()
    async with running(Settings(auth_methods=["private_key_jwt"])) as gate:
        gate.authority.clients["robot"] = Client("robot", public_key_pem=public)
        auth = ClientCredentials(gate.url, client_id="robot", private_key=PrivateKeyJwt(other))
        with pytest.raises(HttpAuthRequired, match="invalid_client"):
            await call(gate, auth)


async def test_a_401_gets_a_new_token() -> None:
    async with running() as gate:
        gate.authority.clients["robot"] = Client("robot", secret="x")
        auth = ClientCredentials(gate.url, client_id="robot", client_secret="x")
        await call(gate, auth)
        gate.authority.revoke_access_tokens()
        assert await call(gate, auth, "again") == "again"
        assert len(gate.authority.token_forms) == 2


async def test_a_server_without_the_grant_is_explained() -> None:
    async with running(Settings(grant_types=["authorization_code"])) as gate:
        auth = ClientCredentials(gate.url, client_id="robot", client_secret="x")
        with pytest.raises(HttpAuthRequired, match="does not offer the client credentials"):
            await call(gate, auth)
        assert gate.authority.token_forms == []


def test_credentials_need_a_secret_or_a_key() -> None:
    with pytest.raises(ValueError, match="client_secret or a private_key"):
        ClientCredentials("https://mcp.example/mcp", client_id="robot")
