"""RFC 9728 Protected Resource Metadata: how a client finds this server's authorization server.

The document names the resource (this MCP server's canonical URL), its authorization
servers, the scopes it knows and how it takes tokens (``bearer_methods_supported``: the
header only, as MCP requires). MCP 2025-11-25 (Basic > Authorization > Protected Resource
Metadata Discovery Requirements) lets clients find it at the path-suffixed well-known URL
(``/.well-known/oauth-protected-resource/mcp`` for ``https://host/mcp``: RFC 9728 section
3.1 inserts the well-known segment between host and path) and then at the root form
(``/.well-known/oauth-protected-resource``), and through ``resource_metadata`` in every
challenge. This server serves the same document at both: clients check that ``resource``
is the server they asked for, and a root document naming ``https://host`` would fail that
check for a server at ``https://host/mcp``.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#protected-resource-metadata-discovery-requirements
"""

from __future__ import annotations

import typing
import urllib.parse
from dataclasses import dataclass
from typing import Final

import orjson

from ._challenge import scope_token_ok
from ._claims import canonical_uri

__all__ = ["WELL_KNOWN", "ResourceMetadata", "check_https_url"]

#: RFC 9728 section 3: the well-known URI suffix.
WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def check_https_url(url: str, what: str) -> str:
    """Return ``url`` if it is an absolute https URL (http only on a loopback host).

    OAuth 2.1 section 1.5 requires TLS for every endpoint; loopback http is for local use
    and tests.

    Raises:
        ValueError: naming ``what`` and the rule broken.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname in _LOOPBACK:
        return url
    raise ValueError(
        f"{what} must be an absolute https:// URL (http:// only on localhost, 127.0.0.1 or "
        f"[::1]); got {url!r}"
    )


@typing.final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceMetadata:
    """The Protected Resource Metadata document of one MCP server.

    Attributes:
        resource: this server's canonical URL (RFC 8707), e.g. ``https://mcp.example.com/mcp``;
            tokens must name it (or another configured audience).
        authorization_servers: issuer URLs of the authorization servers (at least one).
        scopes_supported: the scopes clients may request (None: left out).
        resource_name: a name for people.
        resource_documentation: a URL of documentation for people.
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None

    def __post_init__(self) -> None:
        check_https_url(self.resource, "the resource (this server's canonical URL)")
        parts = urllib.parse.urlsplit(self.resource)
        if parts.fragment or "#" in self.resource:
            raise ValueError(f"the resource must not have a fragment (RFC 8707): {self.resource!r}")
        if canonical_uri(self.resource) != self.resource:
            raise ValueError(
                f"write the resource in canonical form (lowercase scheme and host, no "
                f"trailing /): {canonical_uri(self.resource)!r}, not {self.resource!r}"
            )
        if not self.authorization_servers:
            raise ValueError("at least one authorization server is required (RFC 9728 / MCP)")
        for issuer in self.authorization_servers:
            check_https_url(issuer, "an authorization server")
        bad = [s for s in self.scopes_supported or () if not scope_token_ok(s)]
        if bad:
            raise ValueError(f"invalid scopes {bad}: no spaces, quotes or backslashes")

    @property
    def url(self) -> str:
        """The path-suffixed metadata URL, which challenges name (``resource_metadata``)."""
        parts = urllib.parse.urlsplit(self.resource)
        path = WELL_KNOWN + (parts.path if parts.path not in ("", "/") else "")
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))

    @property
    def paths(self) -> tuple[str, ...]:
        """The local paths the document is served at: path-suffixed, then the root form."""
        path = urllib.parse.urlsplit(self.url).path
        return (path,) if path == WELL_KNOWN else (path, WELL_KNOWN)

    def to_json(self) -> bytes:
        """Return the document (RFC 9728 section 2), empty members left out."""
        document: dict[str, object] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported is not None:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name:
            document["resource_name"] = self.resource_name
        if self.resource_documentation:
            document["resource_documentation"] = self.resource_documentation
        return orjson.dumps(document)
