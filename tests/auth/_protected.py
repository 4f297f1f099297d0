"""An MCP server protected by trimcp's resource server, beside the test authorization server.

``protected()`` starts both on 127.0.0.1: the authorization server (``_authserver.py``,
issuing JWTs and serving its JWKS) and an ``MCPServer`` over Streamable HTTP whose
``HttpOptions.auth`` trusts it, with the legacy SSE routes and the WebSocket route on.
Every request needs scope ``mcp``; ``delete_*`` tools need ``files:write`` too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import httpx
import trio

from tests.auth._authserver import (
    CLIENT_ID,
    CLIENT_SECRET,
    AuthServer,
    free_port,
    running_auth_server,
)
from tests.http._client import INITIALIZE, Answer, post
from trimcp.auth import (
    ClaimsPolicy,
    IntrospectionVerifier,
    JwksKeys,
    JwtVerifier,
    ResourceMetadata,
    ResourceServer,
    ScopeRules,
    parse_scope_rule,
)
from trimcp.http import HttpOptions, serve_http
from trimcp.server import Context, MCPServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tests.auth._issuer import Issuer
    from trimcp.auth import TokenVerifier
    from trimcp.sessions import RequestHandler


def build_server() -> MCPServer:
    server = MCPServer("protected")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Say whom the request's token speaks for."""
        identity = ctx.identity
        if identity is None:
            return "nobody"
        scopes = " ".join(sorted(identity.scopes))
        return f"{identity.subject} via {identity.client_id} [{scopes}] from {identity.issuer}"

    @server.tool()
    def delete_file(path: str) -> str:
        """Pretend to delete a file."""
        return f"deleted {path}"

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    return server


@dataclass
class Protected:
    """The running pair and an HTTP client for the test."""

    url: str
    resource: str
    auth_server: AuthServer
    client: httpx.AsyncClient
    resource_server: ResourceServer

    @property
    def issuer(self) -> Issuer:
        return self.auth_server.issuer

    def token(self, **changes: object) -> str:
        return self.issuer.token(**changes)

    async def post(
        self, body: object, token: str | None, *, session: str | None = None, **headers: str
    ) -> Answer:
        sent = dict(headers)
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        return await post(self.client, self.url, body, session=session, headers=sent)

    async def initialize(self, token: str) -> str:
        """Start a session with ``token``; return its id."""
        answer = await self.post(INITIALIZE, token)
        assert answer.status == 200, answer.messages
        session = answer.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(note, token, session=session)).status == 202
        return session

    async def call(self, token: str, session: str, name: str, **arguments: Any) -> Answer:
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        return await self.post(body, token, session=session)


def text_of(answer: Answer) -> str:
    assert answer.status == 200, (answer.status, answer.messages)
    result = answer.message["result"]
    return str(result["content"][0]["text"])


@contextlib.asynccontextmanager
async def protected(
    *,
    options: HttpOptions | None = None,
    refresh_interval: float = 30.0,
    handler: RequestHandler | None = None,
    introspection: bool = False,
    engine: Literal["trimcp", "hypercorn"] = "trimcp",
) -> AsyncIterator[Protected]:
    """Serve ``handler`` (default: ``build_server()``) behind a resource server (module doc).

    ``introspection``: check tokens at the authorization server's RFC 7662 endpoint instead
    of as JWTs (the tokens it knows are in ``auth_server.active``).
    """
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    async with running_auth_server(resource) as auth_server, trio.open_nursery() as nursery:
        issuer_url = auth_server.issuer.url
        policy = ClaimsPolicy(issuers=(issuer_url,), audiences=(resource,), leeway=0)
        verifier: TokenVerifier
        if introspection:
            verifier = IntrospectionVerifier(
                f"{issuer_url}/introspect",
                policy,
                client_id=CLIENT_ID,
                client_secret=CLIENT_SECRET,
                cache_ttl=30.0,
            )
        else:
            keys = JwksKeys(f"{issuer_url}/jwks", refresh_interval=refresh_interval, timeout=5.0)
            verifier = JwtVerifier(keys, policy)
        resource_server = ResourceServer(
            verifier,
            ResourceMetadata(
                resource=resource,
                authorization_servers=(issuer_url,),
                scopes_supported=("mcp", "files:write"),
                resource_name="Protected test server",
            ),
            scopes=ScopeRules(
                required=("mcp",), rules=(parse_scope_rule("tool", "delete_*=files:write"),)
            ),
            leeway=0,
        )
        base = options or HttpOptions(legacy_sse=True)
        chosen = dataclasses.replace(base, auth=resource_server)
        if handler is None:
            serve = functools.partial(
                build_server().serve_http, port=port, options=chosen, engine=engine
            )
        else:
            serve = functools.partial(serve_http, handler, port=port, options=chosen, engine=engine)
        listener = await nursery.start(serve)
        assert listener.url == resource
        async with httpx.AsyncClient(timeout=10) as client:
            try:
                yield Protected(resource, resource, auth_server, client, resource_server)
            finally:
                nursery.cancel_scope.cancel()
