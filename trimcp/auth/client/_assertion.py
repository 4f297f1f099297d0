"""``PrivateKeyJwt``: RFC 7523 client assertions, signed with joserfc.

The ``private_key_jwt`` method (OpenID Connect Core section 9, RFC 7523 sections 2.2 and
3): the client authenticates at the token endpoint with a short-lived JWT it signs with its
own private key. The claims: ``iss`` and ``sub`` are the client id, ``aud`` the
authorization server's issuer identifier (RFC 7523 section 3 allows it; the token endpoint
URL is the older alternative), ``exp`` a few minutes ahead, ``iat``, and a random ``jti``
so that the server can refuse a replay.

Spec: https://datatracker.ietf.org/doc/html/rfc7523#section-3
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Final, final

from joserfc import jwk, jwt
from joserfc.errors import JoseError

from ._errors import FlowError

__all__ = ["PrivateKeyJwt"]

#: Seconds an assertion is valid: long enough for one request, short enough to be useless
#: to anyone who copies it.
ASSERTION_LIFETIME: Final = 300

# The key type each JWS algorithm family signs with (RFC 7518 section 3.1, RFC 8037).
_KEY_TYPES: Final = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}


@final
@dataclass(frozen=True, slots=True)
class PrivateKeyJwt:
    """Signs client assertions with one private key.

    Attributes:
        private_key_pem: the PEM text of the private key (PKCS#8 or the type's own form).
        algorithm: the JWS algorithm, e.g. "ES256", "RS256", "EdDSA".
        key_id: the ``kid`` header, if the server needs it to pick the key.
    """

    private_key_pem: str = field(repr=False)
    algorithm: str = "ES256"
    key_id: str | None = None

    def assertion(self, *, client_id: str, audience: str, now: float) -> str:
        """Return a signed assertion (module docstring).

        Raises:
            FlowError: the key cannot be read, or does not fit the algorithm.
        """
        key_type = _KEY_TYPES.get(self.algorithm[:2])
        if key_type is None:
            raise FlowError(f"the signing algorithm {self.algorithm!r} is not supported")
        issued = int(now)
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": issued,
            "exp": issued + ASSERTION_LIFETIME,
            "jti": secrets.token_urlsafe(24),
        }
        header: dict[str, object] = {"alg": self.algorithm, "typ": "JWT"}
        if self.key_id is not None:
            header["kid"] = self.key_id
        try:
            key = jwk.import_key(self.private_key_pem, key_type)  # type: ignore[call-overload]  # key_type is one of the literals
            return jwt.encode(header, claims, key, algorithms=[self.algorithm])
        except (JoseError, ValueError, TypeError) as exc:
            raise FlowError(
                f"cannot sign the client assertion with the configured {self.algorithm} key: {exc}"
            ) from exc
