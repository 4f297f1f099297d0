"""Requests to the authorization server's endpoints: token, and dynamic registration.

* ``client_auth``: how the client proves who it is at the token endpoint (OAuth 2.1
  section 2.4; RFC 7591 ``token_endpoint_auth_method``): ``client_secret_basic`` (the id and
  secret, each form-urlencoded, in HTTP Basic), ``client_secret_post`` (both in the form),
  ``none`` (a public client: only its id, PKCE protects the code) or ``private_key_jwt``
  (a signed assertion, RFC 7523 section 2.2). The method is the registration's own when it
  has one, else chosen from what the server publishes.
* ``request_token``: one token request (authorization code, refresh token, or client
  credentials), always with RFC 8707 ``resource``; an error answer becomes a
  ``TokenEndpointError`` carrying the OAuth error code.
* ``register``: RFC 7591 dynamic client registration.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#resource-parameter-implementation
"""

from __future__ import annotations

import base64
import urllib.parse
from typing import TYPE_CHECKING, Final, Protocol

from ._errors import FlowError, TokenEndpointError
from ._fetch import post
from ._registration import (
    ClientRegistration,
    registration_from_response,
    registration_request,
    requested_auth_method,
)
from ._tokens import TokenSet, token_set_from_response

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx

    from ._metadata import ServerMetadata

__all__ = ["AssertionSigner", "client_auth", "register", "request_token"]

_ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class AssertionSigner(Protocol):
    """Signs RFC 7523 client assertions (``private_key_jwt``)."""

    def assertion(self, *, client_id: str, audience: str, now: float) -> str:
        """Return a signed JWT naming ``client_id`` as issuer and subject, for ``audience``."""
        ...


def _auth_method(
    registration: ClientRegistration, metadata: ServerMetadata, signer: AssertionSigner | None
) -> str:
    if registration.auth_method is not None:
        return registration.auth_method
    if signer is not None:
        return "private_key_jwt"
    if registration.client_secret is None:
        return "none"
    # RFC 8414 section 2: an unpublished list means client_secret_basic.
    methods = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
    if "client_secret_basic" not in methods and "client_secret_post" in methods:
        return "client_secret_post"
    return "client_secret_basic"


def client_auth(
    registration: ClientRegistration,
    metadata: ServerMetadata,
    *,
    signer: AssertionSigner | None = None,
    now: float,
) -> tuple[dict[str, str], dict[str, str]]:
    """Return the headers and form fields that authenticate the client (module docstring).

    Raises:
        FlowError: the method needs a secret or a key this client does not have.
    """
    method = _auth_method(registration, metadata, signer)
    client_id, secret = registration.client_id, registration.client_secret
    if method == "none":
        return {}, {"client_id": client_id}
    if method == "private_key_jwt":
        if signer is None:
            raise FlowError(
                f"the authorization server {metadata.issuer} wants a signed client assertion "
                "(private_key_jwt); configure the client's private key"
            )
        assertion = signer.assertion(client_id=client_id, audience=metadata.issuer, now=now)
        return {}, {"client_assertion_type": _ASSERTION_TYPE, "client_assertion": assertion}
    if secret is None:
        raise FlowError(
            f"the authorization server {metadata.issuer} wants a client secret ({method}); "
            "configure client_secret for this server"
        )
    if method == "client_secret_post":
        return {}, {"client_id": client_id, "client_secret": secret}
    if method != "client_secret_basic":
        raise FlowError(f"the token endpoint authentication method {method!r} is not supported")
    # RFC 6749 section 2.3.1: each part form-urlencoded before they are joined.
    pair = f"{urllib.parse.quote(client_id, safe='')}:{urllib.parse.quote(secret, safe='')}"
    basic = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return {"authorization": f"Basic {basic}"}, {}


async def request_token(  # noqa: PLR0913  # the request's parts, each needed
    client: httpx.AsyncClient,
    metadata: ServerMetadata,
    registration: ClientRegistration,
    form: dict[str, str],
    *,
    resource: str,
    requested: Sequence[str],
    now: float,
    signer: AssertionSigner | None = None,
) -> TokenSet:
    """POST ``form`` (its grant) to the token endpoint with ``resource`` and the client's
    authentication; return the tokens.

    Raises:
        TokenEndpointError: the server refused (its OAuth error code is kept).
        FlowError: no connection, or an answer that cannot be used.
    """
    headers, fields = client_auth(registration, metadata, signer=signer, now=now)
    answer = await post(
        client,
        metadata.token_endpoint,
        form={**form, **fields, "resource": resource},
        headers=headers,
    )
    if answer.status != 200:
        raise _refusal(metadata, answer.status, answer.document, form.get("grant_type", ""))
    return token_set_from_response(
        answer.document, now=now, requested=requested, issuer=metadata.issuer, resource=resource
    )


def _refusal(
    metadata: ServerMetadata, status: int, document: object, grant: str
) -> TokenEndpointError:
    error = description = ""
    if isinstance(document, dict):
        error = str(document.get("error") or "")
        description = str(document.get("error_description") or "")
    said = f": {error}" if error else ""
    explained = f" ({description[:300]})" if description else ""
    return TokenEndpointError(
        f"the token endpoint of {metadata.issuer} refused the {grant} request with HTTP "
        f"{status}{said}{explained}",
        error=error,
        status=status,
    )


async def register(
    client: httpx.AsyncClient,
    metadata: ServerMetadata,
    *,
    client_name: str,
    redirect_uri: str | None,
    grant_types: tuple[str, ...],
) -> ClientRegistration:
    """Register this client at ``metadata``'s registration endpoint (RFC 7591).

    Raises:
        FlowError: the server has no registration endpoint, or refused.
    """
    if metadata.registration_endpoint is None:
        raise FlowError(f"the authorization server {metadata.issuer} offers no registration")
    method = requested_auth_method(metadata)
    document = registration_request(
        client_name=client_name,
        redirect_uri=redirect_uri,
        auth_method=method,
        grant_types=grant_types,
    )
    answer = await post(client, metadata.registration_endpoint, json_body=document)
    if answer.status not in (200, 201):
        detail = ""
        if isinstance(answer.document, dict):
            detail = str(
                answer.document.get("error_description") or answer.document.get("error") or ""
            )
        said = f" ({detail[:300]})" if detail else ""
        raise FlowError(
            f"the authorization server {metadata.issuer} refused to register this client "
            f"(HTTP {answer.status}){said}; configure a client_id for this server instead"
        )
    return registration_from_response(
        answer.document, issuer=metadata.issuer, redirect_uri=redirect_uri, requested_method=method
    )
