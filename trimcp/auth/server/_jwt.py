"""``JwtVerifier``: a JWT access token (RFC 9068) checked with joserfc, then its claims.

The signature is joserfc's to check; what this module adds is the choice of what may be
checked at all:

* ``algorithms`` is an allowlist, checked against the token's header before any key is
  touched. ``none`` is never allowed, whatever the list says (RFC 8725 section 3.1).
* Asymmetric keys and HMAC never mix. With a JWKS or a PEM key, HS* algorithms are refused
  when the verifier is built; otherwise a token "signed" with HS256 using the public key as
  the secret would pass (the algorithm-confusion attack, RFC 8725 section 2.1). With a
  shared secret, only HS* is allowed.
* Only JWS compact tokens are read; encrypted (JWE) access tokens are refused.

Then ``ClaimsPolicy.identity`` checks expiry, issuer and audience (``_claims.py``).
"""

from __future__ import annotations

import time
import typing
from typing import TYPE_CHECKING, Final

import trio
from joserfc import jwt
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jws import JWSRegistry, extract_compact

from trimcp.errors import InvalidToken

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ._claims import ClaimsPolicy
    from ._identity import Identity
    from ._keys import KeySource

__all__ = ["ASYMMETRIC_ALGORITHMS", "DEFAULT_ALGORITHMS", "HMAC_ALGORITHMS", "JwtVerifier"]

#: The signature algorithms a JWKS or PEM key may be used with (RFC 7518 section 3.1, and
#: EdDSA from RFC 8037).
ASYMMETRIC_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
#: The algorithms a shared secret may be used with.
HMAC_ALGORITHMS: Final = ("HS256", "HS384", "HS512")
#: Accepted unless configured: RS256 (what OAuth servers default to) and ES256.
DEFAULT_ALGORITHMS: Final = ("RS256", "ES256")

_HOW = "get a new access token for this server from its authorization server"


@typing.final
class JwtVerifier(trio.abc.AsyncResource):
    """Verify JWT access tokens (see the module docstring).

    ``clock`` returns seconds since the epoch, for ``exp``/``nbf``/``iat`` (tests pass one
    built on trio's clock).
    """

    def __init__(
        self,
        keys: KeySource,
        policy: ClaimsPolicy,
        *,
        algorithms: Sequence[str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if algorithms is None:
            algorithms = HMAC_ALGORITHMS[:1] if keys.symmetric else DEFAULT_ALGORITHMS
        check_algorithms(algorithms, symmetric=keys.symmetric)
        self._keys = keys
        self.policy = policy
        self.algorithms = tuple(algorithms)
        self._clock = clock

    async def verify(self, token: str) -> Identity:
        """Return the identity of a valid token.

        Raises:
            InvalidToken: not a JWS, an algorithm not allowed, an unknown key, a bad
                signature, or a claim check failed.
            VerifierUnavailable: the signing keys cannot be fetched.
        """
        try:
            header = extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, TypeError, UnicodeError):
            raise InvalidToken(
                f"the bearer token is not a signed JWT this server can read; {_HOW}"
            ) from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            shown = repr(alg)[:40]
            raise InvalidToken(
                f"the token is signed with algorithm {shown}; this server accepts "
                f"{', '.join(self.algorithms)} only; {_HOW}"
            )
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken(f"the token's kid header is not a string; {_HOW}")
        key = await self._keys.key_for(kid)
        # Not strict about header names: some servers add their own (RFC 7515 allows it).
        registry = JWSRegistry(algorithms=[alg], strict_check_header=False)
        try:
            claims = jwt.decode(token, key, registry=registry).claims
        except BadSignatureError:
            raise InvalidToken(f"the token's signature does not verify; {_HOW}") from None
        except (JoseError, ValueError, TypeError) as exc:
            raise InvalidToken(
                f"the token cannot be verified ({type(exc).__name__}); {_HOW}"
            ) from None
        return self.policy.identity(claims, self._clock())

    async def aclose(self) -> None:
        """Close the key source's HTTP client, if it has one."""
        if isinstance(self._keys, trio.abc.AsyncResource):
            await self._keys.aclose()


def check_algorithms(algorithms: Sequence[str], *, symmetric: bool) -> None:
    """Check an allowlist against the key kind (see the module docstring).

    Raises:
        ValueError: empty, ``none``, an unknown name, or HMAC mixed with asymmetric keys.
    """
    if not algorithms:
        raise ValueError("the JWT algorithm allowlist is empty; e.g. RS256")
    for alg in algorithms:
        if alg.lower() == "none":
            raise ValueError('"none" is never accepted: an unsigned token proves nothing')
        allowed = HMAC_ALGORITHMS if symmetric else ASYMMETRIC_ALGORITHMS
        if alg not in allowed:
            kind = "a shared secret" if symmetric else "a JWKS or PEM public key"
            raise ValueError(
                f"algorithm {alg!r} cannot be used with {kind}; choose from {', '.join(allowed)}"
            )
