"""Signing keys and tokens for the auth tests: what an authorization server would mint.

Keys are made once per test run (RSA generation costs ~100 ms). ``forge`` builds the tokens
no honest server mints (unsigned, or HMAC-signed with the public key) by hand, with the
standard library: joserfc itself refuses to make them.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from joserfc import jwt
from joserfc.jwk import ECKey, Key, RSAKey

RESOURCE_PATH = "/mcp"


@functools.cache
def rsa_key(kid: str = "rsa-1") -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid})


@functools.cache
def ec_key(kid: str = "ec-1") -> ECKey:
    return ECKey.generate_key("P-256", parameters={"kid": kid})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass
class Issuer:
    """Mints tokens as the authorization server ``url`` for the resource ``resource``."""

    url: str
    resource: str
    keys: list[Key] = field(default_factory=lambda: [rsa_key()])
    now: Any = time.time

    def claims(self, **changes: object) -> dict[str, object]:
        """Valid claims for alice through client app-1, with ``changes`` (None removes)."""
        now = int(self.now())
        claims: dict[str, object] = {
            "iss": self.url,
            "sub": "alice",
            "aud": self.resource,
            "client_id": "app-1",
            "scope": "mcp",
            "iat": now,
            "exp": now + 300,
        }
        for name, value in changes.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        return claims

    def token(self, key: Key | None = None, alg: str = "RS256", **changes: object) -> str:
        """A JWT signed with ``key`` (default: the first key) carrying ``claims(**changes)``."""
        key = key or self.keys[0]
        header = {"alg": alg, "kid": key.kid, "typ": "at+jwt"}
        return jwt.encode(header, self.claims(**changes), key, algorithms=[alg])

    def jwks(self) -> dict[str, object]:
        return {"keys": [key.as_dict(private=False) for key in self.keys]}


def forge(header: dict[str, object], claims: dict[str, object], secret: bytes | None) -> str:
    """A compact JWS built by hand: unsigned (``secret`` None) or HMAC-SHA256 with ``secret``."""
    signing_input = f"{b64(orjson.dumps(header))}.{b64(orjson.dumps(claims))}"
    if secret is None:
        return signing_input + "."
    mac = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"
