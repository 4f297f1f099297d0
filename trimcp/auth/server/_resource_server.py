"""``ResourceServer``: everything the HTTP endpoint needs to protect an MCP server.

It ties the parts together: the bearer token read from the header (``_header.py``), its
verification (a ``TokenVerifier``), the scopes a request needs (``ScopeRules``), the
metadata document (``ResourceMetadata``) and the challenge of a refusal (``_challenge.py``).
The endpoint (``trimcp.http``) calls ``authenticate`` on every request and ``authorize``
once it knows what a POST body asks for; each raises an ``AuthError`` that ``challenge``
turns into the ``WWW-Authenticate`` header. Nothing here does HTTP itself.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from __future__ import annotations

import time
import typing
from typing import TYPE_CHECKING

import trio

from trimcp.errors import InsufficientScope

from ._challenge import render_challenge
from ._header import bearer_token
from ._scopes import ScopeRules

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from trimcp.errors import AuthError

    from ._identity import Identity
    from ._metadata import ResourceMetadata
    from ._scopes import Operation
    from ._verify import TokenVerifier

__all__ = ["ResourceServer"]


@typing.final
class ResourceServer:
    """An MCP server's OAuth 2.1 resource-server side (``HttpOptions.auth``).

    Attributes:
        verifier: checks tokens.
        metadata: the RFC 9728 document, and the ``resource_metadata`` URL of challenges.
        scopes: the scopes every request needs, and per tool, resource and prompt.
        leeway / clock: for ``expired``: seconds of clock difference forgiven (as the
            verifier's ``ClaimsPolicy``), and seconds since the epoch.
    """

    __slots__ = ("clock", "leeway", "metadata", "scopes", "verifier")

    def __init__(
        self,
        verifier: TokenVerifier,
        metadata: ResourceMetadata,
        *,
        scopes: ScopeRules | None = None,
        leeway: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.verifier = verifier
        self.metadata = metadata
        self.scopes = scopes or ScopeRules()
        self.leeway = leeway
        self.clock = clock

    async def authenticate(self, authorization: Sequence[bytes], query: bytes = b"") -> Identity:
        """Return the identity of a request from its ``Authorization`` header values.

        Checks the token and the scopes every request needs (``ScopeRules.required``).

        Raises:
            TokenRequired, MalformedAuthorization: see ``bearer_token``.
            InvalidToken, VerifierUnavailable: from the verifier.
            InsufficientScope: the token lacks a scope every request needs.
        """
        token = bearer_token(authorization, query)
        identity = await self.verifier.verify(token)
        self.authorize(identity, ())
        return identity

    def authorize(self, identity: Identity, operations: Iterable[Operation]) -> None:
        """Check that ``identity`` holds every scope ``operations`` need (and the server's).

        Raises:
            InsufficientScope: naming every scope the request needs, those missing first.
        """
        needed = self.scopes.for_operations(operations)
        missing = [scope for scope in needed if scope not in identity.scopes]
        if not missing:
            return
        what = ", ".join(f"{kind} {name!r}" for kind, name in operations) or "this server"
        raise InsufficientScope(
            f"{what} needs the scope{'s' if len(needed) > 1 else ''} {' '.join(needed)}; the "
            f'token lacks {" ".join(missing)}; re-authorize with scope="{" ".join(needed)}"',
            needed,
        )

    def expired(self, identity: Identity) -> bool:
        """Tell whether ``identity``'s token has expired since it was checked.

        For connections that outlive the request that authorized them (a WebSocket).
        """
        expires_at = identity.expires_at
        return expires_at is not None and self.clock() - self.leeway >= expires_at

    def challenge(self, error: AuthError) -> str:
        """Return the ``WWW-Authenticate`` value that answers ``error`` (RFC 6750 section 3).

        A request without a token gets no ``error`` code (section 3.1: the client did not
        know it needed one); every challenge names the metadata URL and the scopes needed.
        """
        scopes = error.scopes if isinstance(error, InsufficientScope) else self.scopes.required
        return render_challenge(
            error=error.error_code,
            description=error.message,
            scopes=scopes,
            resource_metadata=self.metadata.url,
        )

    async def aclose(self) -> None:
        """Release the verifier's resources (its HTTP client), if it holds any."""
        if isinstance(self.verifier, trio.abc.AsyncResource):
            await self.verifier.aclose()
