"""Authorization at the endpoint: every request's bearer token, and sessions bound to it.

``HttpOptions.auth`` (a ``trimcp.auth.ResourceServer``) turns it on. ``EndpointAuth`` is
what the routes (``_app.py``, ``_legacy.py``) call:

* ``authenticate`` on every request once Host and Origin passed and before anything touches
  a session: POST, GET, DELETE, the legacy SSE routes, the WebSocket upgrade. A refusal is
  an ``HttpRefusal`` with the status and ``WWW-Authenticate`` challenge of RFC 6750 section
  3 (400 malformed, 401 missing or invalid, 403 insufficient scope, 503 verifier down).
* ``authorize`` once a POST body is read: a ``tools/call``, ``resources/read`` or
  ``prompts/get`` whose name has scopes of its own (``ScopeRules``) needs them: 403.
* ``bind`` when a session starts, ``holds`` on every later request: a session serves only
  the principal (issuer, subject, client) whose token started it. Another principal's valid
  token gets the same 404 as an unknown session id. MCP 2025-11-25, Security Best Practices
  > Session Hijacking, asks servers to key session state by user and session id together
  (``<user_id>:<session_id>``): under that key another user's lookup finds nothing, which is
  a 404, and it tells a prober nothing about which session ids exist.
* ``metadata`` answers GET on the RFC 9728 paths.

Tokens are never logged: refusals are logged with their message, which says what was wrong
and never quotes the token.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING

from trimcp.auth import WELL_KNOWN, AuthError
from trimcp.http._asgi import send_fixed
from trimcp.http._checks import HttpRefusal
from trimcp.sessions import SessionIdentity, bind_identity

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.actors import ActorRef
    from trimcp.auth import Identity, Operation, Principal, ResourceServer
    from trimcp.http._asgi import Scope, Send

__all__ = ["EndpointAuth", "SessionOwner", "unknown_session"]

logger = logging.getLogger(__name__)

_METADATA_HEADERS = [
    (b"content-type", b"application/json"),
    # Clients fetch it once per connection attempt; an hour spares the listener.
    (b"cache-control", b"public, max-age=3600"),
]


def unknown_session() -> HttpRefusal:
    """The 404 of an unknown, expired, or another principal's session (one wording)."""
    return HttpRefusal(
        404,
        "Not Found: unknown or expired session; initialize a new session "
        "(without an MCP-Session-Id header)",
    )


@typing.final
class SessionOwner:
    """Who holds a session, and the identity its requests run as (kept by its stream).

    ``principal`` never changes; ``holder.identity`` follows the latest request (a refreshed
    token of the same principal). The stream keeps this object alive, and with it the
    binding ``bind_identity`` made for the session.
    """

    __slots__ = ("holder", "principal")

    def __init__(self, identity: Identity) -> None:
        self.principal: Principal = identity.principal
        self.holder = SessionIdentity(identity)


@typing.final
class EndpointAuth:
    """The endpoint's use of a ``ResourceServer`` (see the module docstring)."""

    __slots__ = ("metadata_paths", "server")

    def __init__(self, server: ResourceServer, endpoint_path: str) -> None:
        self.server = server
        # Where the resource URL says, and under the endpoint's own path too (a proxy may
        # serve the endpoint at another path than the public URL's).
        self.metadata_paths = frozenset((*server.metadata.paths, WELL_KNOWN + endpoint_path))

    async def authenticate(self, scope: Scope) -> Identity:
        """Return the identity of the request ``scope`` (HTTP or WebSocket).

        Raises:
            HttpRefusal: 400, 401, 403 or 503 with its ``WWW-Authenticate`` challenge.
        """
        values = [value for name, value in scope["headers"] if name.lower() == b"authorization"]
        try:
            return await self.server.authenticate(values, scope.get("query_string", b""))
        except AuthError as error:
            raise self.refusal(error, scope) from None

    def authorize(self, identity: Identity, operations: Iterable[Operation]) -> None:
        """Check the per-name scopes of what a body asks for.

        Raises:
            HttpRefusal: 403 ``insufficient_scope`` naming every scope needed.
        """
        try:
            self.server.authorize(identity, operations)
        except AuthError as error:
            raise self.refusal(error) from None

    def refusal(self, error: AuthError, scope: Scope | None = None) -> HttpRefusal:
        """Return the HTTP answer to ``error``, and log it (without the token)."""
        client = scope.get("client") if scope is not None else None
        level = logging.WARNING if error.status == 503 else logging.INFO
        logger.log(level, "refused a request from %s: %d %s", client, error.status, error.message)
        reason = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}.get(
            error.status, "Service Unavailable"
        )
        challenge = self.server.challenge(error).encode("latin-1")
        return HttpRefusal(
            error.status,
            f"{reason}: {error.message}",
            headers=((b"www-authenticate", challenge),),
        )

    def bind(self, session: ActorRef, identity: Identity) -> SessionOwner:
        """Bind ``identity`` to a session just started; the caller's stream keeps the result."""
        owner = SessionOwner(identity)
        bind_identity(session, owner.holder)
        return owner

    @staticmethod
    def holds(owner: SessionOwner | None, identity: Identity | None) -> bool:
        """Tell whether ``identity`` is the principal holding a session; if so, refresh it.

        False for a session started by another principal (or without authorization): the
        caller answers 404, worded as for an unknown session (module docstring).
        """
        if owner is None or identity is None or owner.principal != identity.principal:
            logger.info("refused a request for a session another principal holds")
            return False
        owner.holder.identity = identity
        return True

    async def metadata(self, scope: Scope, send: Send) -> None:
        """Answer a request on a metadata path: GET (and HEAD) get the document, else 405."""
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            raise HttpRefusal(
                405,
                f"Method Not Allowed: GET the protected resource metadata, not {method}",
                headers=((b"allow", b"GET, HEAD"),),
            )
        body = self.server.metadata.to_json()
        await send_fixed(send, 200, b"" if method == "HEAD" else body, _METADATA_HEADERS)
