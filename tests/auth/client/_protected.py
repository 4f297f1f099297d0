"""A protected MCP endpoint for the client tests: trimcp's MCP server behind a bearer check.

``Protected`` is an ASGI app in front of ``McpHttpApp`` (a real ``MCPServer``, its sessions
and tools). It serves the Protected Resource Metadata where a test puts it (path-suffixed,
root, a custom URL named only in the challenge, or nowhere) and answers ``/mcp`` only with a
live token from the ``Authority`` issued for its resource: else 401 with a ``Bearer``
challenge (``resource_metadata`` and ``scope`` as configured). A ``tools/call`` of a tool in
``tool_scopes`` without all its scopes gets 403 ``insufficient_scope``. It records the
``Authorization`` header of every MCP request (``authorizations``) and every path asked.

``running`` starts the authorization server, the MCP server and the gate, on two ports (two
origins, as in a real deployment).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from trimcp.http import HttpOptions
from trimcp.http._app import McpHttpApp
from trimcp.server import MCPServer
from trimcp.sessions import SessionManager, SessionOptions
from trimcp.supervision import ChildSpec, open_supervisor
from trimcp.transports import MemoryEventStore

from ._authority import Authority, Settings, lifespan, read_body, send_json, serving

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from ._authority import Receive, Scope, Send

PrmPlace = Literal["path", "root", "custom", "none"]

_PRM_PATHS: dict[PrmPlace, str] = {
    "path": "/.well-known/oauth-protected-resource/mcp",
    "root": "/.well-known/oauth-protected-resource",
    "custom": "/custom/metadata.json",
}


def build_server() -> MCPServer:
    server = MCPServer("protected")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    def write_note(text: str) -> str:
        """Needs the notes:write scope (the gate's tool_scopes)."""
        return f"noted: {text}"

    return server


@dataclass
class Protected:
    """The gate (module docstring)."""

    authority: Authority
    inner: Any = None
    prm_at: PrmPlace = "path"
    challenge_metadata: bool = True
    challenge_scope: tuple[str, ...] = ()
    scopes_supported: tuple[str, ...] | None = None
    tool_scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    base: str = ""
    seen: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    @property
    def resource(self) -> str:
        return self.base if self.prm_at == "root" else self.url

    @property
    def metadata_url(self) -> str:
        return self.base + _PRM_PATHS[self.prm_at]

    def challenge(self, error: str, scopes: tuple[str, ...]) -> bytes:
        params = [f'error="{error}"']
        if scopes:
            params.append(f'scope="{" ".join(scopes)}"')
        if self.challenge_metadata and self.prm_at != "none":
            params.append(f'resource_metadata="{self.metadata_url}"')
        return ("Bearer " + ", ".join(params)).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        path = scope["path"]
        self.seen.append(f"{scope['method']} {path}")
        if self.prm_at != "none" and path == _PRM_PATHS[self.prm_at]:
            document: dict[str, object] = {
                "resource": self.resource,
                "authorization_servers": [self.authority.issuer],
            }
            if self.scopes_supported is not None:
                document["scopes_supported"] = list(self.scopes_supported)
            await send_json(send, 200, document)
            return
        if path != "/mcp":
            await send_json(send, 404, {"error": "not_found"})
            return
        await self._mcp(scope, receive, send)

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = dict(scope["headers"]).get(b"authorization")
        self.authorizations.append(header.decode() if header is not None else None)
        grant = None
        if header is not None and header.startswith(b"Bearer "):
            grant = self.authority.grants.get(header[7:].decode())
        if (
            grant is None
            or grant.expires_at <= self.authority.clock()
            or grant.resource != self.resource
        ):
            challenge = self.challenge("invalid_token", self.challenge_scope)
            await send_json(
                send, 401, {"error": "invalid_token"}, [(b"www-authenticate", challenge)]
            )
            return
        body = await read_body(receive)
        needed = self._needed(body)
        if any(name not in grant.scopes for name in needed):
            challenge = self.challenge("insufficient_scope", needed)
            await send_json(
                send, 403, {"error": "insufficient_scope"}, [(b"www-authenticate", challenge)]
            )
            return
        await self.inner(scope, _replay(body, receive), send)

    def _needed(self, body: bytes) -> tuple[str, ...]:
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            return ()
        if isinstance(message, dict) and message.get("method") == "tools/call":
            return self.tool_scopes.get(str(message.get("params", {}).get("name")), ())
        return ()


def _replay(body: bytes, receive: Receive) -> Receive:
    delivered = False

    async def again() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


@contextlib.asynccontextmanager
async def running(
    settings: Settings | None = None,
    *,
    clock: Callable[[], float] | None = None,
    **gate: Any,
) -> AsyncIterator[Protected]:
    """Run the authorization server, the MCP server and the gate; yield the gate."""
    authority = Authority(settings or Settings())
    if clock is not None:
        authority.clock = clock
    managers: list[SessionManager] = []

    def build() -> SessionManager:
        manager = SessionManager(build_server(), SessionOptions())
        managers.append(manager)
        return manager

    async with (
        open_supervisor([ChildSpec.for_actor("manager", build)]) as supervisor,
        serving(authority) as authority_base,
    ):
        authority.base = authority_base
        protected = Protected(authority, **gate)
        protected.inner = McpHttpApp(managers[0], HttpOptions(), MemoryEventStore())
        async with serving(protected) as base:
            protected.base = base
            try:
                yield protected
            finally:
                supervisor.request_stop()
