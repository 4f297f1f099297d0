"""``TokenVerifier``: the seam between the HTTP endpoint and whatever checks tokens.

trimcp ships two: ``JwtVerifier`` (a signed JWT, its key from a JWKS URL or configured) and
``IntrospectionVerifier`` (RFC 7662, asking the authorization server). A deployment with
other needs (opaque tokens in a database, mTLS-bound tokens) writes its own class with one
``verify`` method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ._identity import Identity

__all__ = ["TokenVerifier"]


class TokenVerifier(Protocol):
    """Checks one bearer token and says whom it speaks for.

    Implementers guarantee that ``verify``:

    * returns an ``Identity`` only for a token that is genuine (signature, or the issuer's
      word), unexpired, from an accepted issuer, and issued for this server (its audience:
      MCP 2025-11-25 requires it, RFC 8707 section 2); ``ClaimsPolicy.identity`` does the
      claim checks;
    * raises ``trimcp.errors.InvalidToken`` for any token it does not accept, with a message
      that says why without quoting the token, and ``VerifierUnavailable`` when it cannot
      decide now (an endpoint it needs is down);
    * never logs the token, and keeps it (or anything derived from it that could be replayed)
      only as long as it needs to.

    ``verify`` is called in the request's task and may wait (a fetch); the endpoint bounds
    nothing, so a verifier that fetches sets its own deadline. A verifier holding resources
    (an HTTP client) is also a ``trio.abc.AsyncResource``: the listener closes it when it
    stops.
    """

    async def verify(self, token: str) -> Identity:
        """Return the identity ``token`` proves, or raise (see the class docstring)."""
        ...
