"""``Identity``: who a verified access token speaks for, as tool code sees it.

A verifier (``_verify.py``) turns a token it accepted into an ``Identity``; the HTTP endpoint
binds it to the session the token opened, and a tool reads it as ``ctx.identity``. It holds
what the token says (its claims, or the introspection answer), never the token itself, so
an identity can be logged or kept without leaking a credential.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["Identity", "Principal"]

#: Who holds a session: (issuer, subject, client id), "" where the token said nothing.
Principal = tuple[str, str, str]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Identity:
    """The verified facts of one access token.

    Attributes:
        subject: ``sub``, the user (or, for a client-credentials token, often the client);
            None if the token names none.
        client_id: the OAuth client the token was issued to (``client_id``, else ``azp``).
        scopes: the granted scopes (``scope``, a space-separated string, or ``scp``).
        expires_at: ``exp`` in seconds since the epoch; None if the token has none (an
            introspected token may leave it out).
        issuer: ``iss``, the authorization server that issued the token.
        audiences: ``aud`` as a tuple (one string in the token becomes one entry).
        claims: every claim as received, read-only: the place for what a deployment adds
            (``email``, ``groups``, tenant ids).
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    expires_at: float | None
    issuer: str | None
    audiences: tuple[str, ...] = ()
    # Claims may hold personal data: left out of repr, which logs may show.
    claims: Mapping[str, object] = field(
        default_factory=lambda: types.MappingProxyType({}), repr=False
    )

    @property
    def principal(self) -> Principal:
        """Who this is for session binding: issuer, subject and client together.

        A session opened with one principal's token serves no other principal's requests
        (MCP 2025-11-25, Security Best Practices > Session Hijacking: bind the session to
        the user).
        """
        return (self.issuer or "", self.subject or "", self.client_id or "")

    def has_scopes(self, required: Iterable[str]) -> bool:
        """Tell whether every scope in ``required`` was granted."""
        return self.scopes.issuperset(required)
