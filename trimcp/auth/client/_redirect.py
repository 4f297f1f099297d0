"""The authorization request's URL and the checks on the redirect that answers it (pure).

``authorization_url`` adds the request's parameters to the authorization endpoint (keeping
any query it already has): ``response_type=code``, ``client_id``, ``redirect_uri``, the
PKCE challenge with ``S256``, ``state``, ``scope`` when there is one, and RFC 8707
``resource``.

``code_from_redirect`` accepts the redirect only if it answers this very request:

* an ``error`` is reported as the server's refusal, in its words;
* ``state`` must equal the one sent (RFC 6749 section 10.12);
* ``iss`` (RFC 9207 section 2.4), when present, must equal the issuer the metadata was
  looked up for, compared as plain strings (no URL normalisation), and must be present when
  the server advertises ``authorization_response_iss_parameter_supported``: this defeats
  mix-up attacks, where one server's code is sent to another's token endpoint.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-code-protection
"""

from __future__ import annotations

import hmac
import urllib.parse
from typing import TYPE_CHECKING

from ._errors import FlowError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ._metadata import ServerMetadata
    from ._pkce import Pkce

__all__ = ["authorization_url", "code_from_redirect"]


def authorization_url(  # noqa: PLR0913  # the request's parameters, each named
    endpoint: str,
    *,
    client_id: str,
    redirect_uri: str,
    pkce: Pkce,
    state: str,
    scopes: Sequence[str],
    resource: str,
) -> str:
    """Return the URL the user is sent to (module docstring)."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "state": state,
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    params["resource"] = resource
    parts = urllib.parse.urlsplit(endpoint)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    query = [(name, value) for name, value in query if name not in params]
    encoded = urllib.parse.urlencode([*query, *params.items()], quote_via=urllib.parse.quote)
    return urllib.parse.urlunsplit(parts._replace(query=encoded, fragment=""))


def code_from_redirect(params: Mapping[str, str], *, state: str, metadata: ServerMetadata) -> str:
    """Return the authorization code of a redirect that answers this request.

    Raises:
        FlowError: the server refused, or the redirect fails a check (module docstring).
    """
    error = params.get("error")
    if error:
        description = params.get("error_description", "")
        said = f" ({description[:300]})" if description else ""
        raise FlowError(f"the authorization server refused the sign-in: {error}{said}")
    if not hmac.compare_digest(params.get("state", "").encode(), state.encode()):
        raise FlowError(
            "the redirect came back with another `state` than the one sent; it was refused, "
            "since it may not answer this sign-in (start it again)"
        )
    issuer = params.get("iss")
    if issuer is not None and issuer != metadata.issuer:
        raise FlowError(
            f"the redirect names the issuer {issuer!r}, not {metadata.issuer!r}; refused, "
            "since the code may come from another authorization server"
        )
    if issuer is None and metadata.authorization_response_iss_parameter_supported:
        raise FlowError(
            f"the redirect has no `iss` although {metadata.issuer} promises one; refused, "
            "since the code may come from another authorization server"
        )
    code = params.get("code")
    if not code:
        raise FlowError("the redirect back from the authorization server holds no code")
    return code
