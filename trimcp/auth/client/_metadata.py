"""The two metadata documents of the flow, read and checked without I/O.

* ``ResourceMetadata``: RFC 9728 Protected Resource Metadata, which names the resource and
  its authorization servers (MCP 2025-11-25 requires at least one).
* ``ServerMetadata``: RFC 8414 authorization server metadata, or an OpenID Connect
  Discovery document (the fields MCP uses have the same names in both). Its ``issuer`` must
  be the very issuer the document was looked up for (RFC 8414 section 3.3, OpenID Connect
  Discovery section 4.3), or a server could point the client at another one's endpoints.

A document that breaks a rule raises ``MetadataRejected`` naming the field; fields this
client does not use are ignored, and a field of the wrong type is treated as absent when
it is optional.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-server-metadata-discovery
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from ._errors import FlowError
from ._urls import UnsafeUrl, check_endpoint

__all__ = ["MetadataRejected", "ResourceMetadata", "ServerMetadata"]


class MetadataRejected(FlowError):
    """A metadata document that cannot be used; the message names the field and the rule."""


def _strings(value: object) -> tuple[str, ...] | None:
    """A JSON array of strings as a tuple; anything else as None (absent)."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceMetadata:
    """An RFC 9728 Protected Resource Metadata document.

    Attributes:
        resource: the resource identifier, sent as RFC 8707 ``resource`` exactly as written.
        authorization_servers: issuer identifiers, at least one.
        scopes_supported: the scopes the resource knows (None: not published).
        url: where the document was read.
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    url: str = ""

    @classmethod
    def from_document(cls, document: object, *, url: str) -> ResourceMetadata:
        """Read a parsed JSON document.

        Raises:
            MetadataRejected: not an object, no ``resource``, or no authorization server.
        """
        if not isinstance(document, dict):
            raise MetadataRejected("the protected resource metadata is not a JSON object")
        resource = _string(document.get("resource"))
        if resource is None:
            raise MetadataRejected("the protected resource metadata has no `resource`")
        servers = _strings(document.get("authorization_servers"))
        if not servers:
            raise MetadataRejected(
                "the protected resource metadata lists no `authorization_servers`"
            )
        return cls(
            resource=resource,
            authorization_servers=servers,
            scopes_supported=_strings(document.get("scopes_supported")),
            url=url,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerMetadata:
    """An authorization server's metadata (RFC 8414, or OpenID Connect Discovery).

    Attributes:
        issuer: the issuer identifier; checked equal to the one looked up.
        authorization_endpoint: where the user is sent (None: no authorization code flow).
        token_endpoint: where codes, refresh tokens and client credentials are exchanged.
        registration_endpoint: RFC 7591 dynamic client registration (None: not offered).
        scopes_supported: scopes the server knows (None: not published).
        grant_types_supported: None means RFC 8414's default, authorization_code and implicit.
        code_challenge_methods_supported: PKCE methods (None: not published).
        token_endpoint_auth_methods_supported: None means RFC 8414's default,
            client_secret_basic.
        token_endpoint_auth_signing_alg_values_supported: JWS algorithms for
            ``private_key_jwt`` (None: not published).
        client_id_metadata_document_supported: URL client ids are accepted (the Client ID
            Metadata Document draft).
        authorization_response_iss_parameter_supported: redirects carry ``iss`` (RFC 9207).
        url: where the document was read.
    """

    issuer: str
    token_endpoint: str
    authorization_endpoint: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_signing_alg_values_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    authorization_response_iss_parameter_supported: bool = False
    url: str = ""

    @classmethod
    def from_document(cls, document: object, *, issuer: str, url: str) -> ServerMetadata:
        """Read a parsed JSON document looked up for ``issuer``.

        Raises:
            MetadataRejected: not an object, another issuer, no token endpoint, or an
                endpoint that is not https (loopback http aside).
        """
        if not isinstance(document, dict):
            raise MetadataRejected("the authorization server metadata is not a JSON object")
        found = document.get("issuer")
        if found != issuer:
            raise MetadataRejected(
                f"the authorization server metadata at {url} names the issuer {found!r}, "
                f"not {issuer!r}; refused, since its endpoints could belong to another server"
            )
        try:
            token_endpoint = check_endpoint(document.get("token_endpoint"), what="token_endpoint")
            authorization = _optional_endpoint(document, "authorization_endpoint")
            registration = _optional_endpoint(document, "registration_endpoint")
        except UnsafeUrl as exc:
            raise MetadataRejected(str(exc)) from exc
        return cls(
            issuer=issuer,
            token_endpoint=token_endpoint,
            authorization_endpoint=authorization,
            registration_endpoint=registration,
            scopes_supported=_strings(document.get("scopes_supported")),
            grant_types_supported=_strings(document.get("grant_types_supported")),
            code_challenge_methods_supported=_strings(
                document.get("code_challenge_methods_supported")
            ),
            token_endpoint_auth_methods_supported=_strings(
                document.get("token_endpoint_auth_methods_supported")
            ),
            token_endpoint_auth_signing_alg_values_supported=_strings(
                document.get("token_endpoint_auth_signing_alg_values_supported")
            ),
            client_id_metadata_document_supported=(
                document.get("client_id_metadata_document_supported") is True
            ),
            authorization_response_iss_parameter_supported=(
                document.get("authorization_response_iss_parameter_supported") is True
            ),
            url=url,
        )

    def require_pkce(self) -> None:
        """Refuse a server that does not publish S256 among its PKCE methods.

        MCP 2025-11-25, Basic > Authorization > Authorization Code Protection: clients MUST
        verify PKCE support from the metadata, and MUST refuse to proceed when
        ``code_challenge_methods_supported`` is absent (OpenID Connect documents included).

        Raises:
            MetadataRejected: S256 is not listed, or there is no authorization endpoint.
        """
        if self.authorization_endpoint is None:
            raise MetadataRejected(
                f"the authorization server {self.issuer} publishes no authorization_endpoint, "
                "so no user can sign in through it"
            )
        methods = self.code_challenge_methods_supported
        if methods is None or "S256" not in methods:
            listed = ", ".join(methods) if methods else "none"
            raise MetadataRejected(
                f"the authorization server {self.issuer} does not support PKCE with S256 "
                f"(code_challenge_methods_supported: {listed}); MCP requires it, so the "
                "sign-in was not started"
            )


def _optional_endpoint(document: dict[str, object], name: str) -> str | None:
    value = document.get(name)
    return None if value is None else check_endpoint(value, what=name)
