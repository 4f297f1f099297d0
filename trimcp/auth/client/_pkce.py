"""PKCE and ``state``: the one-time secrets of one authorization request (RFC 7636).

The code verifier is 64 characters from ``secrets`` (RFC 7636 section 4.1 allows 43 to
128 of ``[A-Za-z0-9-._~]``; ``token_urlsafe`` draws from that alphabet's URL-safe base64
part), and the challenge its SHA-256, base64url without padding (section 4.2, ``S256``).
``state`` is 256 random bits: the redirect is accepted only when it brings the same value
back, which ties it to this request (RFC 6749 section 10.12, CSRF).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-code-protection
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import final

__all__ = ["Pkce", "new_state"]


def _challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@final
@dataclass(frozen=True, slots=True)
class Pkce:
    """A fresh code verifier and its S256 challenge."""

    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48), repr=False)

    @property
    def challenge(self) -> str:
        """``BASE64URL(SHA256(verifier))`` without padding."""
        return _challenge_of(self.verifier)


def new_state() -> str:
    """Return a fresh ``state`` value (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)
