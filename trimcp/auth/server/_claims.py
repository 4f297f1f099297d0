"""The checks every accepted token passes, whatever verified it (pure: ``now`` is given).

OAuth 2.1 (draft 13) section 5.2 leaves validation to the resource server; MCP 2025-11-25
(Basic > Authorization > Token Handling) asks for the audience in particular: a token must
have been issued for this server (RFC 8707 section 2: its canonical URI), and a token minted
for another service is refused even if it is genuine. So after a JWT's signature verified, or
an introspection endpoint said ``active``, ``ClaimsPolicy.identity`` checks:

* ``exp`` (required for a JWT: RFC 9068 section 2.2), ``nbf`` and ``iat``, each with
  ``leeway`` seconds for clocks that disagree a little;
* ``iss``: one of ``issuers`` (required for a JWT; checked if present when introspected);
* ``aud``: one of ``audiences``, compared as canonical URIs where they are URLs (lowercase
  scheme and host, no trailing ``/``), as the spec asks servers to accept either case.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#token-handling
"""

from __future__ import annotations

import math
import types
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.errors import InvalidToken

from ._identity import Identity
from ._scopes import granted_scopes

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ClaimsPolicy", "canonical_uri"]

_HOW = "get a new access token for this server from its authorization server"


def canonical_uri(value: str) -> str:
    """Return ``value`` in RFC 8707 canonical form if it is an http(s) URL, else as it is.

    Lowercase scheme and host, no fragment, no trailing ``/`` (``https://A.example/mcp/``
    and ``https://a.example/mcp`` are the same resource).
    """
    parts = urllib.parse.urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return value
    path = parts.path.rstrip("/")
    return urllib.parse.urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), path, parts.query, "")
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimsPolicy:
    """What a token's claims must say for this server to accept it.

    Attributes:
        issuers: accepted ``iss`` values (at least one).
        audiences: accepted ``aud`` values: this server's canonical URL first, then any
            other audience its authorization server uses for it.
        leeway: seconds of clock difference forgiven on ``exp``, ``nbf`` and ``iat``.
    """

    issuers: tuple[str, ...]
    audiences: tuple[str, ...]
    leeway: float = 30.0

    def __post_init__(self) -> None:
        if not self.issuers:
            raise ValueError("ClaimsPolicy needs at least one accepted issuer")
        if not self.audiences:
            raise ValueError(
                "ClaimsPolicy needs at least one audience: this server's canonical URL"
            )
        if not (0 <= self.leeway <= 300):
            raise ValueError("ClaimsPolicy.leeway is seconds, from 0 to 300")

    def identity(
        self, claims: Mapping[str, object], now: float, *, introspected: bool = False
    ) -> Identity:
        """Check ``claims`` at time ``now`` (seconds since the epoch); return the Identity.

        ``introspected``: the claims are an RFC 7662 answer, which may leave out ``exp``
        and ``iss`` (the endpoint already judged the token active); they are checked when
        present. A JWT must carry both.

        Raises:
            InvalidToken: expired, not yet valid, issued in the future, from another
                issuer, for another audience, or a claim of the wrong type.
        """
        expires_at = self._check_times(claims, now, require_exp=not introspected)
        issuer = self._check_issuer(claims, required=not introspected)
        audiences = self._check_audience(claims)
        subject = _string_claim(claims, "sub")
        client_id = _string_claim(claims, "client_id") or _string_claim(claims, "azp")
        return Identity(
            subject=subject,
            client_id=client_id,
            scopes=granted_scopes(dict(claims)),
            expires_at=expires_at,
            issuer=issuer,
            audiences=audiences,
            claims=types.MappingProxyType(dict(claims)),
        )

    def _check_times(
        self, claims: Mapping[str, object], now: float, *, require_exp: bool
    ) -> float | None:
        expires_at = _time_claim(claims, "exp")
        if expires_at is None:
            if require_exp:
                raise InvalidToken(f"the token has no expiry (exp claim); {_HOW}")
        elif now - self.leeway >= expires_at:
            raise InvalidToken(f"the token expired {_duration(now - expires_at)} ago; {_HOW}")
        not_before = _time_claim(claims, "nbf")
        if not_before is not None and now + self.leeway < not_before:
            raise InvalidToken(
                f"the token is not valid yet (nbf is {_duration(not_before - now)} from now); "
                "check the clocks of this server and the authorization server"
            )
        issued_at = _time_claim(claims, "iat")
        if issued_at is not None and now + self.leeway < issued_at:
            raise InvalidToken(
                f"the token was issued in the future (iat is {_duration(issued_at - now)} from "
                "now); check the clocks of this server and the authorization server"
            )
        return expires_at

    def _check_issuer(self, claims: Mapping[str, object], *, required: bool) -> str | None:
        issuer = claims.get("iss")
        if issuer is None and not required:
            return None
        if not isinstance(issuer, str) or issuer not in self.issuers:
            shown = repr(issuer)[:120] if isinstance(issuer, str) else "missing"
            raise InvalidToken(
                f"the token's issuer (iss) is {shown}; this server accepts tokens from "
                f"{', '.join(self.issuers)} only; {_HOW}"
            )
        return issuer

    def _check_audience(self, claims: Mapping[str, object]) -> tuple[str, ...]:
        raw = claims.get("aud")
        audiences: tuple[str, ...]
        if isinstance(raw, str):
            audiences = (raw,)
        elif isinstance(raw, list) and all(isinstance(item, str) for item in raw):
            audiences = tuple(raw)
        else:
            audiences = ()
        accepted = {canonical_uri(audience) for audience in self.audiences}
        if not any(canonical_uri(audience) in accepted for audience in audiences):
            given = ", ".join(repr(a)[:120] for a in audiences[:3]) or "missing"
            raise InvalidToken(
                f"the token is not for this server: its audience (aud) is {given}, and this "
                f"server is {self.audiences[0]}; request the token with resource="
                f"{self.audiences[0]} (RFC 8707)"
            )
        return audiences


def _string_claim(claims: Mapping[str, object], name: str) -> str | None:
    value = claims.get(name)
    return value if isinstance(value, str) and value else None


def _time_claim(claims: Mapping[str, object], name: str) -> float | None:
    """Return a NumericDate claim (RFC 7519 section 2) as a float, None if absent.

    Raises:
        InvalidToken: present but not a finite number.
    """
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidToken(f"the token's {name} claim is not a number of seconds; {_HOW}")
    return float(value)


def _duration(seconds: float) -> str:
    """Say a duration for people: "42 s", "5 min", "3 h", "2 days"."""
    seconds = abs(seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"
