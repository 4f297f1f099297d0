"""A small OAuth authorization server for the auth tests, as an ASGI app on hypercorn.

It serves what trimcp's resource server and an MCP client need of one:

* ``GET /jwks``: the issuer's public keys (``Issuer.keys``; tests rotate them);
* ``POST /introspect``: RFC 7662 for the tokens in ``active`` (client credentials
  required, Basic or in the form);
* ``GET /.well-known/oauth-authorization-server``: RFC 8414 metadata;
* ``POST /register``: RFC 7591 dynamic registration (any client is accepted);
* ``GET /authorize``: authorization code + PKCE, approved at once (no user, no browser):
  a 302 to the redirect URI with the code;
* ``POST /token``: the code (or a refresh token) for a JWT access token for the
  ``resource`` requested, with PKCE S256 checked.

Every request is counted by path in ``hits``; ``requests`` keeps the form bodies.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import secrets
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from tests.auth._issuer import Issuer, b64

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    Scope = dict[str, Any]
    Receive = Callable[[], Awaitable[dict[str, Any]]]
    Send = Callable[[dict[str, Any]], Awaitable[None]]

CLIENT_ID = "resource-server"
CLIENT_SECRET = "s3cret with spaces & symbols"


@dataclass
class AuthServer:
    """The app's state: its issuer (keys and tokens), counts, and what it was told."""

    issuer: Issuer
    active: dict[str, dict[str, object]] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    forms: list[dict[str, str]] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: What /introspect answers instead, when set (an HTTP status).
    introspect_status: int | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        path = scope["path"]
        self.hits[path] += 1
        body = await _body(receive)
        form = dict(urllib.parse.parse_qsl(body.decode()))
        if path == "/jwks":
            await _json(send, 200, self.issuer.jwks())
        elif path == "/introspect":
            self.forms.append(form)
            await self._introspect(scope, form, send)
        elif path == "/.well-known/oauth-authorization-server":
            await _json(send, 200, self.metadata())
        elif path == "/register":
            await _json(
                send, 201, {**orjson.loads(body), "client_id": f"dyn-{secrets.token_hex(4)}"}
            )
        elif path == "/authorize":
            query = dict(urllib.parse.parse_qsl(scope["query_string"].decode()))
            await self._authorize(query, send)
        elif path == "/token":
            self.forms.append(form)
            await self._token(form, send)
        else:
            await _json(send, 404, {"error": "not_found"})

    def metadata(self) -> dict[str, object]:
        base = self.issuer.url
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks",
            "introspection_endpoint": f"{base}/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        }

    async def _introspect(self, scope: Scope, form: dict[str, str], send: Send) -> None:
        if self.introspect_status is not None:
            await _json(send, self.introspect_status, {"error": "server_error"})
            return
        if not _client_ok(scope, form):
            await _json(send, 401, {"error": "invalid_client"})
            return
        claims = self.active.get(form.get("token", ""))
        await _json(send, 200, {"active": True, **claims} if claims else {"active": False})

    async def _authorize(self, query: dict[str, str], send: Send) -> None:
        if query.get("code_challenge_method") != "S256" or "code_challenge" not in query:
            await _json(send, 400, {"error": "invalid_request", "error_description": "PKCE"})
            return
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        target = (
            query["redirect_uri"]
            + "?"
            + urllib.parse.urlencode({"code": code, "state": query.get("state", "")})
        )
        await send(
            {
                "type": "http.response.start",
                "status": 302,
                "headers": [(b"location", target.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _token(self, form: dict[str, str], send: Send) -> None:
        if form.get("grant_type") == "refresh_token":
            request = self.codes.get("refresh:" + form.get("refresh_token", ""))
        else:
            request = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            if request is not None:
                challenge = b64(hashlib.sha256(verifier.encode()).digest())
                if challenge != request["code_challenge"]:
                    request = None
        if request is None:
            await _json(send, 400, {"error": "invalid_grant"})
            return
        resource = form.get("resource") or request.get("resource") or ""
        scope = request.get("scope") or "mcp"
        token = self.issuer.token(aud=resource, scope=scope, client_id=request.get("client_id"))
        refresh = secrets.token_urlsafe(16)
        self.codes["refresh:" + refresh] = request
        await _json(
            send,
            200,
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": 300,
                "scope": scope,
                "refresh_token": refresh,
            },
        )


def _client_ok(scope: Scope, form: dict[str, str]) -> bool:
    for name, value in scope["headers"]:
        if name == b"authorization" and value.startswith(b"Basic "):
            user, _, password = base64.b64decode(value[6:]).decode().partition(":")
            # RFC 6749 section 2.3.1: each part is form-encoded before Basic.
            return (urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(password)) == (
                CLIENT_ID,
                CLIENT_SECRET,
            )
    return form.get("client_id") == CLIENT_ID and form.get("client_secret") == CLIENT_SECRET


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _json(send: Send, status: int, document: object) -> None:
    body = orjson.dumps(document)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


@contextlib.asynccontextmanager
async def running_auth_server(resource: str) -> AsyncIterator[AuthServer]:
    """Serve an ``AuthServer`` on 127.0.0.1 and a free port for the block.

    Its issuer URL is its base URL (``http://127.0.0.1:PORT``); tokens are for ``resource``.
    """
    app = AuthServer(Issuer(url="", resource=resource))
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.graceful_timeout = 0.1
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(functools.partial(serve, app, config))
        app.issuer.url = binds[0].rstrip("/")
        try:
            yield app
        finally:
            nursery.cancel_scope.cancel()


def free_port() -> int:
    """A port free on 127.0.0.1 right now (for a server whose URL must be known first)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
