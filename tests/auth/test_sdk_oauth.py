"""The official MCP Python SDK's OAuth client completes the flow against trimcp's protected server.

The SDK (``mcp``) gets a 401 from trimcp, reads ``resource_metadata`` from the challenge,
fetches the Protected Resource Metadata, discovers the test authorization server (RFC 8414),
registers (RFC 7591), runs authorization code + PKCE (the authorize endpoint approves at
once; the redirect handler fetches it and hands the code to the callback handler, no
browser), gets a JWT for trimcp's resource (RFC 8707) and retries. A tool needing
``files:write`` then gets 403 ``insufficient_scope``, and the SDK steps up.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING

import httpx2
import mcp_types as types
import pytest
import trio
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.auth._protected import protected

if TYPE_CHECKING:
    from tests.auth._protected import Protected

pytestmark = [
    pytest.mark.slow,
    # The SDK's HTTP client leaves its own httpx2 response generators to the garbage
    # collector when it closes; trio reports them as unraisable ResourceWarnings (as in
    # tests/interop/test_official_sdk.py).
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

REDIRECT_URI = "http://127.0.0.1:1/callback"  # never contacted: the code is read off the 302


class MemoryStorage:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class AutoApprove:
    """Redirect and callback handlers: fetch the authorize URL, keep the code of its 302."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None
        self.authorized: list[dict[str, str]] = []

    async def redirect(self, authorization_url: str) -> None:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(authorization_url).query))
        self.authorized.append(query)
        async with httpx2.AsyncClient() as client:
            response = await client.get(authorization_url)
        assert response.status_code == 302, response.text
        location = urllib.parse.urlsplit(response.headers["location"])
        params = dict(urllib.parse.parse_qsl(location.query))
        self.result = AuthorizationCodeResult(code=params["code"], state=params.get("state"))

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def _run(p: Protected, approve: AutoApprove, storage: MemoryStorage) -> list[str]:
    provider = OAuthClientProvider(
        server_url=p.url,
        client_metadata=OAuthClientMetadata(
            client_name="sdk-e2e",
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=approve.redirect,
        callback_handler=approve.callback,
    )
    answers: list[str] = []
    async with httpx2.AsyncClient(auth=provider, timeout=20) as http:
        transport = streamable_http_client(p.url, http_client=http)
        async with Client(transport, read_timeout_seconds=20, mode="legacy") as client:
            answers.append(text_of(await client.call_tool("whoami", {})))
            answers.append(text_of(await client.call_tool("delete_file", {"path": "/tmp/x"})))
    return answers


async def test_the_sdk_client_completes_the_oauth_flow_and_steps_up() -> None:
    async with protected() as p:
        approve, storage = AutoApprove(), MemoryStorage()
        with trio.fail_after(60):
            answers = await _run(p, approve, storage)
        whoami, deleted = answers
        assert whoami.startswith(f"alice via {storage.client.client_id} [mcp]")  # type: ignore[union-attr]
        assert deleted == "deleted /tmp/x"
        # The first authorization asked for what the 401 challenge named, for this resource;
        # the step-up for everything the 403 challenge named.
        first, second = approve.authorized
        assert first["resource"] == p.resource
        assert first["scope"] == "mcp"
        assert first["code_challenge_method"] == "S256"
        assert set(second["scope"].split()) == {"mcp", "files:write"}
        assert p.auth_server.hits["/.well-known/oauth-authorization-server"] >= 1
        assert p.auth_server.hits["/register"] == 1
        token_forms = [form for form in p.auth_server.forms if form.get("grant_type")]
        assert {form["resource"] for form in token_forms} == {p.resource}
