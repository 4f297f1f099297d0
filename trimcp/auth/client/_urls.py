"""The URLs of the flow, built and checked without I/O.

* ``canonical_resource``: the MCP server's canonical URI, the RFC 8707 ``resource`` value
  when its Protected Resource Metadata names none (MCP 2025-11-25, Basic > Authorization >
  Canonical Server URI: lower-case scheme and host, no fragment, no lone trailing slash).
* ``resource_metadata_urls``: RFC 9728 section 3.1 well-known URLs, the path-suffixed one
  first, then the root (MCP 2025-11-25, Protected Resource Metadata Discovery Requirements).
* ``server_metadata_urls``: the authorization server metadata URLs in the order MCP
  2025-11-25 lists (Authorization Server Metadata Discovery): for an issuer with a path,
  RFC 8414 path insertion, then OpenID Connect Discovery with path insertion, then OpenID
  Connect Discovery with path appending; for an issuer without one, RFC 8414, then OpenID
  Connect Discovery.
* ``resource_covers``: whether a resource identifier from metadata covers the server's URL.
* ``check_fetchable`` / ``check_endpoint``: what this client agrees to send requests (and
  secrets) to: https, or plain http on the loopback interface (a developer's machine) or on
  the MCP server's own origin (metadata the server itself serves); never a link-local
  address such as the cloud metadata service at 169.254.169.254 (MCP Security Best
  Practices, Server-Side Request Forgery).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-server-metadata-discovery
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from typing import Final

from ._errors import FlowError

__all__ = [
    "UnsafeUrl",
    "canonical_resource",
    "check_endpoint",
    "check_fetchable",
    "origin_of",
    "resource_covers",
    "resource_metadata_urls",
    "server_metadata_urls",
]

_PRM_SUFFIX: Final = "/.well-known/oauth-protected-resource"
_OAUTH_SUFFIX: Final = "/.well-known/oauth-authorization-server"
_OIDC_SUFFIX: Final = "/.well-known/openid-configuration"


class UnsafeUrl(FlowError):
    """A URL this client will not send a request to; the message says why."""


def _host_port(parts: urllib.parse.SplitResult) -> str:
    host = parts.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{parts.port}" if parts.port is not None else shown


def origin_of(url: str) -> str:
    """Return ``scheme://host[:port]`` of ``url``, scheme and host lower-cased."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme.lower()}://{_host_port(parts)}"


def canonical_resource(url: str) -> str:
    """Return the canonical form of an MCP server URL (module docstring).

    No user info and no fragment; the path and query are kept as written, but a path that is
    only ``/`` is dropped (``https://mcp.example.com/`` is ``https://mcp.example.com``).
    """
    parts = urllib.parse.urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    query = f"?{parts.query}" if parts.query else ""
    return f"{origin_of(url)}{path}{query}"


def _inserted(url: str, suffix: str) -> str:
    """``url`` with ``suffix`` inserted between its host and its path (RFC 8414 / 9728)."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{origin_of(url)}{suffix}{path}{query}"


def resource_metadata_urls(server_url: str) -> list[str]:
    """Return the well-known Protected Resource Metadata URLs to try, in order."""
    urls = [_inserted(server_url, _PRM_SUFFIX), origin_of(server_url) + _PRM_SUFFIX]
    return list(dict.fromkeys(urls))


def server_metadata_urls(issuer: str) -> list[str]:
    """Return the authorization server metadata URLs to try for ``issuer``, in order."""
    parts = urllib.parse.urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = origin_of(issuer)
    if not path:
        return [origin + _OAUTH_SUFFIX, origin + _OIDC_SUFFIX]
    return [
        origin + _OAUTH_SUFFIX + path,
        origin + _OIDC_SUFFIX + path,
        origin + path + _OIDC_SUFFIX,
    ]


def resource_covers(resource: str, server_url: str) -> bool:
    """Tell whether the resource identifier ``resource`` covers ``server_url``.

    The same origin, and ``resource``'s path equal to the server's or a parent of it on a
    ``/`` boundary (a root identifier, as root-level metadata gives, covers every path).
    RFC 9728 section 3.3: metadata naming another resource must not be used.
    """
    ours = urllib.parse.urlsplit(canonical_resource(server_url))
    theirs = urllib.parse.urlsplit(canonical_resource(resource))
    if origin_of(resource) != origin_of(server_url) or theirs.query:
        return False
    prefix = theirs.path.rstrip("/")
    return ours.path == theirs.path or ours.path.startswith(prefix + "/") or not prefix


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_link_local(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_link_local
    except ValueError:
        return False


def check_fetchable(url: str, *, server_origin: str, what: str) -> str:
    """Return ``url`` if this client may send a request to it (module docstring).

    Raises:
        UnsafeUrl: not http(s), no host, a link-local address, or plain http to a host
            that is neither the loopback interface nor the MCP server's own origin.
    """
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme not in ("http", "https") or not host:
        raise UnsafeUrl(f"the {what} URL {url!r} is not an http(s) URL with a host")
    if _is_link_local(host):
        raise UnsafeUrl(f"the {what} URL {url!r} points at a link-local address; refused")
    if scheme == "http" and not _is_loopback(host) and origin_of(url) != server_origin:
        raise UnsafeUrl(
            f"the {what} URL {url!r} is plain http on another host; OAuth needs https there"
        )
    return url


def check_endpoint(url: object, *, what: str) -> str:
    """Return the endpoint ``url`` if credentials may be sent to it: https, or loopback http.

    MCP 2025-11-25, Basic > Authorization > Communication Security: authorization server
    endpoints MUST be served over HTTPS; plain http is allowed only on the loopback
    interface, where no network sees it.

    Raises:
        UnsafeUrl: it is not a string, not http(s), or plain http to another host.
    """
    if not isinstance(url, str):
        raise UnsafeUrl(f"the authorization server's {what} is missing or not a string")
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    scheme = parts.scheme.lower()
    if scheme == "https" and host and not _is_link_local(host):
        return url
    if scheme == "http" and _is_loopback(host):
        return url
    raise UnsafeUrl(
        f"the authorization server's {what} {url!r} is not an https URL; refused, since "
        "credentials would travel unencrypted"
    )
