"""``TokenSet``: what a token endpoint granted, read from its answer (pure).

RFC 6749 section 5.1 (OAuth 2.1 section 3.2.3): ``access_token`` and ``token_type`` are
required, ``expires_in``, ``refresh_token`` and ``scope`` optional; a response without
``scope`` granted exactly what was asked. Only ``Bearer`` tokens are used here (MCP
2025-11-25, Basic > Authorization > Access Token Usage); a DPoP-bound token would be
refused by the server without its proofs, so it is refused here with words saying so.

Expiry is a wall-clock time (seconds since the epoch), so that a token saved by one process
is judged correctly by the next one. The clock is the caller's: tests pass a virtual one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, final

from ._errors import FlowError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["TokenResponseRejected", "TokenSet", "token_set_from_response"]


class TokenResponseRejected(FlowError):
    """A token endpoint answer that cannot be used; the message says what is wrong."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenSet:
    """Tokens for one MCP server, from one authorization server.

    ``repr`` shows neither token.

    Attributes:
        access_token: sent as ``Authorization: Bearer ...`` to the MCP server only.
        token_type: "Bearer".
        expires_at: when the access token expires, in seconds since the epoch (None: the
            server did not say).
        refresh_token: to get the next access token without the user (None: none given).
        scopes: the scopes granted.
        issuer: the authorization server that issued them.
        resource: the resource (RFC 8707) they were issued for.
    """

    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scopes: tuple[str, ...] = ()
    issuer: str | None = None
    resource: str | None = None

    def __repr__(self) -> str:
        refresh = "***" if self.refresh_token else None
        return (
            f"TokenSet(access_token='***', token_type={self.token_type!r}, "
            f"expires_at={self.expires_at!r}, refresh_token={refresh!r}, "
            f"scopes={self.scopes!r}, issuer={self.issuer!r}, resource={self.resource!r})"
        )

    def expires_within(self, seconds: float, *, now: float) -> bool:
        """Tell whether the access token expires in less than ``seconds`` from ``now``."""
        return self.expires_at is not None and self.expires_at - now < seconds

    def to_json(self) -> dict[str, object]:
        """Return the fields as JSON-ready values (for a token store)."""
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "expires_at": self.expires_at,
            "refresh_token": self.refresh_token,
            "scopes": list(self.scopes),
            "issuer": self.issuer,
            "resource": self.resource,
        }

    @classmethod
    def from_json(cls, data: object) -> TokenSet | None:
        """Read ``to_json``'s output back; None when it is not such a record."""
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            return None
        expires = data.get("expires_at")
        scopes = data.get("scopes")
        return cls(
            access_token=data["access_token"],
            token_type=str(data.get("token_type") or "Bearer"),
            expires_at=float(expires) if isinstance(expires, int | float) else None,
            refresh_token=_text(data.get("refresh_token")),
            scopes=tuple(s for s in scopes if isinstance(s, str))
            if isinstance(scopes, list)
            else (),
            issuer=_text(data.get("issuer")),
            resource=_text(data.get("resource")),
        )

    def with_refresh_token(self, refresh_token: str | None) -> TokenSet:
        """Return a copy keeping ``refresh_token`` when this one came without its own.

        RFC 6749 section 6: a refresh answer may leave the refresh token out, and the
        client then keeps using the one it had.
        """
        if self.refresh_token or not refresh_token:
            return self
        return replace(self, refresh_token=refresh_token)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def token_set_from_response(
    document: object,
    *,
    now: float,
    requested: Sequence[str],
    issuer: str | None,
    resource: str | None,
) -> TokenSet:
    """Read a successful token endpoint answer (module docstring).

    Raises:
        TokenResponseRejected: not a JSON object, no access token, or not a bearer token.
    """
    if not isinstance(document, dict):
        raise TokenResponseRejected("the token endpoint's answer is not a JSON object")
    token = document.get("access_token")
    if not isinstance(token, str) or not token:
        raise TokenResponseRejected("the token endpoint's answer holds no access_token")
    token_type = document.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise TokenResponseRejected(
            f"the token endpoint issued a {token_type!r} token; this client uses only Bearer tokens"
        )
    expires_in = document.get("expires_in")
    expires_at = None
    if (
        isinstance(expires_in, int | float)
        and not isinstance(expires_in, bool)
        and math.isfinite(expires_in)
        and expires_in >= 0
    ):
        expires_at = now + float(expires_in)
    scope = document.get("scope")
    scopes = tuple(scope.split()) if isinstance(scope, str) else tuple(requested)
    return TokenSet(
        access_token=token,
        token_type="Bearer",
        expires_at=expires_at,
        refresh_token=_text(document.get("refresh_token")),
        scopes=scopes,
        issuer=issuer,
        resource=resource,
    )
