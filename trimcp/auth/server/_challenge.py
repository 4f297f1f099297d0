"""The ``WWW-Authenticate: Bearer`` challenge of a refused request (pure).

RFC 6750 section 3 defines the parameters (``error``, ``error_description``, ``scope``) and
what their values may hold: printable ASCII without ``"`` and ``\\``, so that a quoted
string needs no escapes. RFC 9728 section 5.1 adds ``resource_metadata``, the URL of the
Protected Resource Metadata document, which MCP 2025-11-25 (Basic > Authorization >
Protected Resource Metadata Discovery Requirements) has servers put in every challenge.

``render_challenge`` cleans what it is given instead of refusing it: a challenge goes out
on a refusal already decided, and a description quoting something odd must not turn into a
header the client cannot parse.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#error-handling
"""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MAX_DESCRIPTION_LENGTH", "render_challenge", "scope_token_ok"]

#: An ``error_description`` is cut to this many characters: it is a hint for a developer,
#: and a header line of a few hundred bytes passes every proxy.
MAX_DESCRIPTION_LENGTH: Final = 400

# RFC 6750 section 3: error_description = *( %x20-21 / %x23-5B / %x5D-7E )
_NOT_DESCRIPTION = re.compile(r"[^\x20-\x21\x23-\x5b\x5d-\x7e]")
# RFC 6749 section 3.3 / RFC 6750 section 3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
# What a URL keeps unencoded inside the quoted string: visible ASCII but ``"`` and ``\``.
_URL_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"\\')


def scope_token_ok(scope: str) -> bool:
    """Tell whether ``scope`` is one RFC 6749 scope token (no spaces, quotes or backslashes)."""
    return _SCOPE_TOKEN.fullmatch(scope) is not None


def render_challenge(
    *,
    error: str | None = None,
    description: str | None = None,
    scopes: Sequence[str] = (),
    resource_metadata: str | None = None,
) -> str:
    """Return the value of a ``WWW-Authenticate`` header: ``Bearer`` and its parameters.

    Parameters are written in a fixed order (``error``, ``scope``, ``resource_metadata``,
    ``error_description``), each as ``name="value"``, and left out when empty. A scope that
    is not a valid scope token is dropped; a description loses the characters RFC 6750
    forbids (they become spaces) and is cut to ``MAX_DESCRIPTION_LENGTH``; ``"`` and ``\\``
    in the metadata URL are percent-encoded.
    """
    params: list[tuple[str, str]] = []
    if error:
        params.append(("error", _NOT_DESCRIPTION.sub(" ", error)))
    valid = [scope for scope in scopes if scope_token_ok(scope)]
    if valid:
        params.append(("scope", " ".join(dict.fromkeys(valid))))
    if resource_metadata:
        params.append(("resource_metadata", _quote_url(resource_metadata)))
    if description:
        cleaned = _NOT_DESCRIPTION.sub(" ", description)[:MAX_DESCRIPTION_LENGTH]
        params.append(("error_description", cleaned))
    if not params:
        return "Bearer"
    return "Bearer " + ", ".join(f'{name}="{value}"' for name, value in params)


def _quote_url(url: str) -> str:
    """Percent-encode what a quoted string cannot hold unescaped, keeping the URL's meaning."""
    return urllib.parse.quote(url, safe=_URL_SAFE)
