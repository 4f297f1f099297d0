"""An OAuth authorization server for the client tests: an ASGI app on hypercorn, in-process.

Configurable (``Settings``) in the ways MCP clients must cope with: where its metadata is
(RFC 8414 or OpenID Connect, path inserted or appended, for an issuer with or without a
path), whether it lists S256, whether redirects carry ``iss`` (and a right one), whether it
registers clients (RFC 7591) or accepts URL client ids, which token endpoint authentication
methods it takes. It checks what a real server checks: PKCE S256 (the verifier against the
stored challenge), the redirect URI, the client's authentication (Basic, form,
``private_key_jwt`` verified with joserfc), and ``resource`` (RFC 8707) the same in the
authorization and token requests.

``/authorize`` approves at once with a 302 back to the redirect URI (no user). Every request
is recorded in ``seen`` ("GET /path"), so tests can assert the order of discovery. Tokens
are opaque; ``grants`` maps each live access token to what it allows, and the protected
resource (``_protected``) looks them up there, as an introspecting resource server would.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import secrets
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from joserfc import jwk, jwt
from joserfc.errors import JoseError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    Scope = dict[str, Any]
    Receive = Callable[[], Awaitable[dict[str, Any]]]
    Send = Callable[[dict[str, Any]], Awaitable[None]]

MetadataPlace = Literal["oauth", "oidc", "oidc-appended"]


@dataclass
class Client:
    """A client the server knows: a secret, or a public key for private_key_jwt, or neither."""

    client_id: str
    secret: str | None = None
    public_key_pem: str | None = None
    method: str = "none"
    redirect_uris: tuple[str, ...] = ()


@dataclass
class Settings:
    """How the server behaves (module docstring)."""

    issuer_path: str = ""
    metadata_at: tuple[MetadataPlace, ...] = ("oauth",)
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    iss_supported: bool = True
    iss_in_redirect: Literal["correct", "wrong", "omit"] = "correct"
    state_in_redirect: Literal["echo", "wrong"] = "echo"
    registration: bool = True
    cimd: bool = False
    auth_methods: list[str] = field(
        default_factory=lambda: ["none", "client_secret_basic", "client_secret_post"]
    )
    grant_types: list[str] = field(
        default_factory=lambda: ["authorization_code", "refresh_token", "client_credentials"]
    )
    #: What a dynamic registration gets: "none" (public) or a secret and this method.
    register_method: str = "none"
    expires_in: int = 3600
    #: Scopes never granted, whatever is asked.
    withheld: frozenset[str] = frozenset()
    #: The issuer the metadata claims (None: its own).
    metadata_issuer: str | None = None


@dataclass
class Grant:
    """What one access or refresh token allows."""

    client_id: str
    scopes: tuple[str, ...]
    resource: str
    expires_at: float


@dataclass
class Authority:
    """The app and its state (module docstring)."""

    settings: Settings = field(default_factory=Settings)
    clock: Callable[[], float] = time.time
    base: str = ""
    clients: dict[str, Client] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)
    authorize_queries: list[dict[str, str]] = field(default_factory=list)
    token_forms: list[dict[str, str]] = field(default_factory=list)
    token_auth: list[str] = field(default_factory=list)
    registrations: list[dict[str, object]] = field(default_factory=list)
    grants: dict[str, Grant] = field(default_factory=dict)
    refresh_grants: dict[str, Grant] = field(default_factory=dict)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def issuer(self) -> str:
        return self.base + self.settings.issuer_path

    def metadata_paths(self) -> dict[str, MetadataPlace]:
        path = self.settings.issuer_path
        places: dict[MetadataPlace, str] = {
            "oauth": f"/.well-known/oauth-authorization-server{path}",
            "oidc": f"/.well-known/openid-configuration{path}",
            "oidc-appended": f"{path}/.well-known/openid-configuration",
        }
        return {places[place]: place for place in self.settings.metadata_at}

    def metadata(self, place: MetadataPlace) -> dict[str, object]:
        settings = self.settings
        document: dict[str, object] = {
            "issuer": settings.metadata_issuer or self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": settings.grant_types,
            "token_endpoint_auth_methods_supported": settings.auth_methods,
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
        }
        if settings.registration:
            document["registration_endpoint"] = f"{self.issuer}/register"
        if settings.pkce_methods is not None:
            document["code_challenge_methods_supported"] = settings.pkce_methods
        if settings.iss_supported:
            document["authorization_response_iss_parameter_supported"] = True
        if settings.cimd:
            document["client_id_metadata_document_supported"] = True
        if place != "oauth":
            document["jwks_uri"] = f"{self.issuer}/jwks"
            document["subject_types_supported"] = ["public"]
            document["id_token_signing_alg_values_supported"] = ["RS256"]
        return document

    def revoke_access_tokens(self) -> None:
        self.grants.clear()

    def revoke_refresh_tokens(self) -> None:
        self.refresh_grants.clear()

    def count(self, what: str) -> int:
        return sum(1 for line in self.seen if line.startswith(what))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        path = scope["path"]
        self.seen.append(f"{scope['method']} {path}")
        body = await read_body(receive)
        places = self.metadata_paths()
        issuer_path = self.settings.issuer_path
        if scope["method"] == "GET" and path in places:
            await send_json(send, 200, self.metadata(places[path]))
        elif path == f"{issuer_path}/authorize":
            query = dict(urllib.parse.parse_qsl(scope["query_string"].decode()))
            await self._authorize(query, send)
        elif path == f"{issuer_path}/token":
            form = dict(urllib.parse.parse_qsl(body.decode()))
            await self._token(scope, form, send)
        elif path == f"{issuer_path}/register" and self.settings.registration:
            await self._register(orjson.loads(body), send)
        else:
            await send_json(send, 404, {"error": "not_found"})

    async def _register(self, document: dict[str, object], send: Send) -> None:
        self.registrations.append(document)
        method = self.settings.register_method
        client = Client(
            client_id=f"dyn-{secrets.token_hex(4)}",
            secret=None if method == "none" else secrets.token_urlsafe(12),
            method=method,
            redirect_uris=tuple(document.get("redirect_uris", ())),  # type: ignore[arg-type]
        )
        self.clients[client.client_id] = client
        answer = {**document, "client_id": client.client_id, "token_endpoint_auth_method": method}
        if client.secret is not None:
            answer["client_secret"] = client.secret
        await send_json(send, 201, answer)

    def _known(self, client_id: str) -> bool:
        return client_id in self.clients or (
            self.settings.cimd and client_id.startswith("https://")
        )

    async def _authorize(self, query: dict[str, str], send: Send) -> None:
        self.authorize_queries.append(query)
        if not self._known(query.get("client_id", "")):
            await send_json(send, 400, {"error": "invalid_client"})
            return
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            await send_json(send, 400, {"error": "invalid_request", "error_description": "PKCE"})
            return
        code = secrets.token_urlsafe(16)
        self.codes[code] = query
        settings = self.settings
        back: dict[str, str] = {"code": code}
        back["state"] = query.get("state", "") if settings.state_in_redirect == "echo" else "x"
        if settings.iss_in_redirect == "correct":
            back["iss"] = self.issuer
        elif settings.iss_in_redirect == "wrong":
            back["iss"] = "https://elsewhere.example"
        target = query["redirect_uri"] + "?" + urllib.parse.urlencode(back)
        await send({
            "type": "http.response.start",
            "status": 302,
            "headers": [(b"location", target.encode()), (b"content-length", b"0")],
        })  # fmt: skip
        await send({"type": "http.response.body", "body": b""})

    def _authenticate(self, scope: Scope, form: dict[str, str]) -> Client | None:
        """The client the request authenticates as, recording the method; None if it fails."""
        headers = dict(scope["headers"])
        basic = headers.get(b"authorization", b"")
        if basic.startswith(b"Basic "):
            user, _, password = base64.b64decode(basic[6:]).decode().partition(":")
            client = self.clients.get(urllib.parse.unquote(user))
            self.token_auth.append("client_secret_basic")
            ok = client is not None and client.secret == urllib.parse.unquote(password)
            return client if ok else None
        if "client_assertion" in form:
            self.token_auth.append("private_key_jwt")
            return self._assertion(form)
        client_id = form.get("client_id", "")
        if "client_secret" in form:
            self.token_auth.append("client_secret_post")
            client = self.clients.get(client_id)
            return client if client is not None and client.secret == form["client_secret"] else None
        self.token_auth.append("none")
        if client_id.startswith("https://") and self.settings.cimd:
            return Client(client_id)
        client = self.clients.get(client_id)
        return client if client is not None and client.secret is None else None

    def _assertion(self, form: dict[str, str]) -> Client | None:
        if (
            form.get("client_assertion_type")
            != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        ):
            return None
        assertion = form["client_assertion"]
        for client in self.clients.values():
            if client.public_key_pem is None:
                continue
            key = jwk.import_key(client.public_key_pem, "EC")
            try:
                token = jwt.decode(assertion, key, algorithms=["ES256"])
                registry = jwt.JWTClaimsRegistry(
                    now=int(self.clock()),
                    iss={"essential": True, "value": client.client_id},
                    sub={"essential": True, "value": client.client_id},
                    aud={"essential": True, "value": self.issuer},
                    exp={"essential": True},
                    jti={"essential": True},
                )
                registry.validate(token.claims)
            except JoseError:
                continue
            return client
        return None

    async def _token(self, scope: Scope, form: dict[str, str], send: Send) -> None:
        self.token_forms.append(form)
        client = self._authenticate(scope, form)
        if client is None:
            await send_json(send, 401, {"error": "invalid_client"})
            return
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = self._code_grant(client, form)
        elif grant_type == "refresh_token":
            grant = self.refresh_grants.pop(form.get("refresh_token", ""), None)
            if grant is not None and form.get("resource") != grant.resource:
                grant = None
        elif grant_type == "client_credentials":
            grant = Grant(client.client_id, self._granted(form.get("scope")), form["resource"], 0)
        else:
            grant = None
        if grant is None:
            await send_json(send, 400, {"error": "invalid_grant"})
            return
        await send_json(send, 200, self._issue(grant, refresh=grant_type != "client_credentials"))

    def _granted(self, scope: str | None) -> tuple[str, ...]:
        return tuple(s for s in (scope or "").split() if s not in self.settings.withheld)

    def _code_grant(self, client: Client, form: dict[str, str]) -> Grant | None:
        query = self.codes.pop(form.get("code", ""), None)
        if query is None or query["client_id"] != client.client_id:
            return None
        verifier = form.get("code_verifier", "").encode()
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        if challenge.decode() != query["code_challenge"]:
            return None
        if form.get("redirect_uri") != query["redirect_uri"]:
            return None
        if form.get("resource") != query.get("resource"):
            return None
        return Grant(client.client_id, self._granted(query.get("scope")), form["resource"], 0)

    def _issue(self, grant: Grant, *, refresh: bool) -> dict[str, object]:
        access = secrets.token_urlsafe(16)
        expires_at = self.clock() + self.settings.expires_in
        self.grants[access] = Grant(grant.client_id, grant.scopes, grant.resource, expires_at)
        answer: dict[str, object] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.settings.expires_in,
            "scope": " ".join(grant.scopes),
        }
        if refresh:
            token = secrets.token_urlsafe(16)
            self.refresh_grants[token] = grant
            answer["refresh_token"] = token
        return answer


async def read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def send_json(
    send: Send,
    status: int,
    document: object,
    headers: list[tuple[bytes, bytes]] = (),  # type: ignore[assignment]
) -> None:
    body = orjson.dumps(document)
    sent = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*sent, *headers]})
    await send({"type": "http.response.body", "body": body})


async def lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


@contextlib.asynccontextmanager
async def serving(app: Callable[..., Awaitable[None]]) -> AsyncIterator[str]:
    """Serve the ASGI ``app`` on 127.0.0.1 and a free port; yield its base URL."""
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.graceful_timeout = 0.1
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(functools.partial(serve, app, config))
        try:
            yield binds[0].rstrip("/")
        finally:
            nursery.cancel_scope.cancel()
