"""``ClientRegistration``: who this client is at one authorization server (pure).

MCP 2025-11-25, Basic > Authorization > Client Registration Approaches, in the order a
client should try them: pre-registered credentials (configured), a Client ID Metadata
Document (the client id is an https URL whose document describes the client, when the
server advertises ``client_id_metadata_document_supported``), then RFC 7591 dynamic client
registration (when it publishes a ``registration_endpoint``). ``choose`` makes that choice
from what is known; the registration request itself is ``_endpoints.register``.

Registrations are per authorization server: a client id issued by one means nothing to
another (RFC 6749 section 2.2), so a stored one is used only with its own issuer.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#client-registration-approaches
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

from ._errors import FlowError

if TYPE_CHECKING:
    from ._metadata import ServerMetadata

__all__ = [
    "ClientRegistration",
    "RegistrationKind",
    "choose",
    "is_metadata_document_url",
    "registration_from_response",
    "registration_request",
    "requested_auth_method",
]

RegistrationKind = Literal["configured", "metadata_document", "dynamic"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ClientRegistration:
    """A client id (and maybe a secret) at one authorization server.

    ``repr`` does not show the secret.

    Attributes:
        client_id: the id, or for a metadata document its https URL.
        client_secret: for a confidential client (None: a public client).
        auth_method: the ``token_endpoint_auth_method`` to use; None chooses one from the
            server's metadata (``_endpoints.client_auth``).
        redirect_uris: the redirect URIs registered (dynamic registration only).
        issuer: the authorization server it belongs to (None: any, for a configured one).
        kind: how it came about.
    """

    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None
    redirect_uris: tuple[str, ...] = ()
    issuer: str | None = None
    kind: RegistrationKind = "configured"

    def __repr__(self) -> str:
        secret = "***" if self.client_secret else None
        return (
            f"ClientRegistration(client_id={self.client_id!r}, client_secret={secret!r}, "
            f"auth_method={self.auth_method!r}, issuer={self.issuer!r}, kind={self.kind!r})"
        )

    def to_json(self) -> dict[str, object]:
        """Return the fields as JSON-ready values (for a token store)."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "auth_method": self.auth_method,
            "redirect_uris": list(self.redirect_uris),
            "issuer": self.issuer,
            "kind": self.kind,
        }

    @classmethod
    def from_json(cls, data: object) -> ClientRegistration | None:
        """Read ``to_json``'s output back; None when it is not such a record."""
        if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
            return None
        kind = data.get("kind")
        uris = data.get("redirect_uris")
        return cls(
            client_id=data["client_id"],
            client_secret=_text(data.get("client_secret")),
            auth_method=_text(data.get("auth_method")),
            redirect_uris=tuple(u for u in uris if isinstance(u, str))
            if isinstance(uris, list)
            else (),
            issuer=_text(data.get("issuer")),
            kind=kind if kind in ("configured", "metadata_document", "dynamic") else "dynamic",
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def is_metadata_document_url(url: str) -> bool:
    """Tell whether ``url`` may be a Client ID Metadata Document's client id.

    The draft requires an https URL with a path component (not just ``/``).
    """
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "https" and bool(parts.hostname) and parts.path not in ("", "/")


def choose(
    metadata: ServerMetadata,
    *,
    configured: ClientRegistration | None,
    stored: ClientRegistration | None,
    metadata_document_url: str | None,
) -> ClientRegistration | Literal["register"] | None:
    """Pick the registration to use with ``metadata``'s server (module docstring).

    Returns a registration, ``"register"`` when dynamic registration is the way, or None
    when there is none at all (the caller explains what to configure).
    """
    if configured is not None:
        return configured
    if stored is not None and stored.issuer == metadata.issuer:
        return stored
    if (
        metadata_document_url is not None
        and metadata.client_id_metadata_document_supported
        and is_metadata_document_url(metadata_document_url)
    ):
        return ClientRegistration(
            client_id=metadata_document_url,
            auth_method="none",
            issuer=metadata.issuer,
            kind="metadata_document",
        )
    if metadata.registration_endpoint is not None:
        return "register"
    return None


def requested_auth_method(metadata: ServerMetadata) -> str:
    """The ``token_endpoint_auth_method`` to ask for when registering dynamically.

    A public client (``none``, PKCE alone) when the server accepts one: a native app cannot
    keep a secret anyway (RFC 8252 section 8.4). Otherwise a secret, sent the way the
    server prefers. RFC 8414's default for an unpublished list is client_secret_basic.
    """
    methods = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in methods:
            return method
    return "client_secret_basic"


def registration_request(
    *,
    client_name: str,
    redirect_uri: str | None,
    auth_method: str,
    grant_types: tuple[str, ...],
    scopes: tuple[str, ...] = (),
) -> dict[str, object]:
    """Return the RFC 7591 section 2 client metadata to register.

    ``application_type: native`` (OpenID Connect Dynamic Client Registration; MCP's
    SEP-837): the client runs on the user's machine and redirects to the loopback interface.
    """
    document: dict[str, object] = {
        "client_name": client_name,
        "grant_types": list(grant_types),
        "response_types": ["code"] if "authorization_code" in grant_types else [],
        "token_endpoint_auth_method": auth_method,
        "application_type": "native",
    }
    if redirect_uri is not None:
        document["redirect_uris"] = [redirect_uri]
    if scopes:
        document["scope"] = " ".join(scopes)
    return document


def registration_from_response(
    document: object, *, issuer: str, redirect_uri: str | None, requested_method: str
) -> ClientRegistration:
    """Read an RFC 7591 section 3.2.1 registration answer.

    Raises:
        FlowError: not an object, or no ``client_id``.
    """
    if not isinstance(document, dict) or not _text(document.get("client_id")):
        raise FlowError("the authorization server's registration answer holds no client_id")
    method = _text(document.get("token_endpoint_auth_method"))
    secret = _text(document.get("client_secret"))
    if method is None:
        method = requested_method if secret or requested_method == "none" else "none"
    return ClientRegistration(
        client_id=str(document["client_id"]),
        client_secret=secret,
        auth_method=method,
        redirect_uris=(redirect_uri,) if redirect_uri else (),
        issuer=issuer,
        kind="dynamic",
    )
