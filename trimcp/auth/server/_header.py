"""Reading the bearer token of a request: RFC 6750 section 2.1, header only (pure).

MCP 2025-11-25, Basic > Authorization > Token Requirements: the token travels in
``Authorization: Bearer <token>`` on every request and never in the query string. So a
request whose only token is an ``access_token`` query parameter is refused with 400 rather
than served, and a token in both places is "more than one method" (RFC 6750 section 3.1,
``invalid_request``).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#token-requirements
"""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, Final

from trimcp.errors import MalformedAuthorization, TokenRequired

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MAX_TOKEN_LENGTH", "bearer_token"]

#: The longest token read. Access tokens are a few hundred bytes to a few KiB (a JWT with
#: many claims); 16 KiB leaves room for the largest and bounds what reaches a verifier.
MAX_TOKEN_LENGTH: Final = 16 * 1024

# RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_HOW = "send the access token as  Authorization: Bearer <token>"


def bearer_token(values: Sequence[bytes], query: bytes = b"") -> str:
    """Return the bearer token of a request, from its ``Authorization`` header values.

    ``values`` are the raw values of every ``Authorization`` header (usually one);
    ``query`` is the raw query string, checked for an ``access_token`` parameter.

    Raises:
        TokenRequired: no ``Authorization`` header, or one of another scheme (``Basic``).
        MalformedAuthorization: the header is repeated, empty after ``Bearer``, holds
            characters a token cannot have, or is too long; or the token is in the query.
    """
    if b"access_token" in query and "access_token" in urllib.parse.parse_qs(
        query.decode("latin-1"), keep_blank_values=True
    ):
        raise MalformedAuthorization(
            "the access token is in the URL query (access_token=...), where proxies and logs "
            f"keep it; this server reads it only from the header: {_HOW}"
        )
    if not values:
        raise TokenRequired(f"this MCP server requires authorization: {_HOW}")
    if len(values) > 1:
        raise MalformedAuthorization(
            f"the request has {len(values)} Authorization headers; send exactly one: {_HOW}"
        )
    text = values[0].decode("latin-1").strip()
    scheme, _, rest = text.partition(" ")
    if scheme.lower() != "bearer":
        shown = scheme[:20] if scheme.isascii() and scheme.isprintable() else "?"
        raise TokenRequired(
            f"the Authorization header uses the {shown!r} scheme; this server takes only "
            f"bearer tokens: {_HOW}"
        )
    token = rest.strip(" ")
    if not token:
        raise MalformedAuthorization(f"the Authorization header has no token after Bearer: {_HOW}")
    if len(token) > MAX_TOKEN_LENGTH:
        raise MalformedAuthorization(
            f"the bearer token is {len(token)} characters long, over the {MAX_TOKEN_LENGTH} "
            "this server reads; send the access token itself, not another credential"
        )
    if not _B64TOKEN.fullmatch(token):
        raise MalformedAuthorization(
            "the bearer token holds characters a token cannot have (RFC 6750 section 2.1 "
            f"allows letters, digits and -._~+/ then = padding): {_HOW}"
        )
    return token
