"""OAuth 2.1 for MCP over HTTP: the resource-server side here, the client side in ``.client``.

MCP 2025-11-25, Basic > Authorization (link below): an MCP server over HTTP is an OAuth 2.1
resource server. It publishes RFC 9728 Protected Resource Metadata, checks the bearer token of
every request (signature or introspection, issuer, audience, expiry, scopes) and answers a
refusal with the status and ``WWW-Authenticate`` challenge of RFC 6750 section 3. An MCP client
is an OAuth client: ``trimcp.auth.client`` discovers the authorization server from a 401 and
obtains tokens.

This package is not an authorization server: it issues no tokens and keeps no users.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from __future__ import annotations

__all__: list[str] = []
