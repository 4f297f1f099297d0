"""Finding the authorization server of an MCP server: the two metadata lookups.

1. Protected Resource Metadata (RFC 9728): the URL in the challenge's
   ``resource_metadata`` if there is one, else (or if it cannot be read) the well-known
   URLs, path-suffixed first, then the root. Its ``resource`` must cover the server's URL
   (RFC 9728 section 3.3); it is what is sent as RFC 8707 ``resource``, exactly as written.
2. Authorization server metadata for the first of its ``authorization_servers`` (or the
   configured issuer, when it is among them), tried at the URLs ``server_metadata_urls``
   lists, in that order; the first document found is used (a wrong issuer in it is an
   error, not a reason to try the next URL).

A server without Protected Resource Metadata is taken to be its own authorization server
(the issuer is its origin), as MCP 2025-03-26 had it.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-server-discovery
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from ._challenge import bearer_challenge
from ._errors import FlowError
from ._fetch import get_json, post
from ._metadata import MetadataRejected, ResourceMetadata, ServerMetadata
from ._urls import (
    canonical_resource,
    check_fetchable,
    origin_of,
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)

if TYPE_CHECKING:
    import httpx

    from ._challenge import BearerChallenge

# An unauthenticated request a protected MCP server answers with its challenge: a ping
# outside any session, which creates nothing on a server that does not want authorization.
_PROBE: Final = {"jsonrpc": "2.0", "id": "trimcp-auth-probe", "method": "ping"}
_PROBE_HEADERS: Final = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}

__all__ = ["Discovery", "discover", "discover_server", "probe_challenge"]

logger = logging.getLogger(__name__)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Discovery:
    """What the lookups found for one MCP server.

    Attributes:
        resource: the RFC 8707 ``resource`` value to send.
        resource_metadata: the Protected Resource Metadata (None: the server has none).
        server: the authorization server's metadata.
    """

    resource: str
    resource_metadata: ResourceMetadata | None
    server: ServerMetadata


async def discover(
    client: httpx.AsyncClient,
    server_url: str,
    challenge: BearerChallenge | None,
    *,
    issuer: str | None = None,
) -> Discovery:
    """Look up the resource's metadata and its authorization server's (module docstring).

    ``issuer`` is a configured preference among the servers the metadata lists.

    Raises:
        FlowError: a document breaks a rule, or none was found where one must be.
    """
    found = await _resource_metadata(client, server_url, challenge)
    if found is None:
        chosen = origin_of(server_url)
        resource = canonical_resource(server_url)
    else:
        servers = found.authorization_servers
        chosen = issuer if issuer in servers else servers[0]
        resource = found.resource
    server = await discover_server(client, chosen, server_origin=origin_of(server_url))
    if server is None:
        where = "its protected resource metadata names" if found else "the server's origin is"
        raise FlowError(
            f"no authorization server metadata found for {chosen} (the issuer {where}); "
            f"tried {', '.join(server_metadata_urls(chosen))}"
        )
    return Discovery(resource=resource, resource_metadata=found, server=server)


async def _resource_metadata(
    client: httpx.AsyncClient, server_url: str, challenge: BearerChallenge | None
) -> ResourceMetadata | None:
    origin = origin_of(server_url)
    urls = resource_metadata_urls(server_url)
    if challenge is not None and challenge.resource_metadata:
        urls = [challenge.resource_metadata, *(u for u in urls if u != challenge.resource_metadata)]
    for url in urls:
        check_fetchable(url, server_origin=origin, what="protected resource metadata")
        answer = await get_json(client, url)
        if answer.status != 200 or answer.document is None:
            logger.debug("no protected resource metadata at %s (HTTP %d)", url, answer.status)
            continue
        metadata = ResourceMetadata.from_document(answer.document, url=url)
        if not resource_covers(metadata.resource, server_url):
            raise MetadataRejected(
                f"the protected resource metadata at {url} is for {metadata.resource!r}, "
                f"not for {server_url!r}; refused, since a token for it could reach another "
                "server"
            )
        return metadata
    return None


async def discover_server(
    client: httpx.AsyncClient, issuer: str, *, server_origin: str
) -> ServerMetadata | None:
    """Return ``issuer``'s metadata from the first URL that has it; None if none does.

    Raises:
        FlowError: the issuer's URL is not acceptable, or the document breaks a rule.
    """
    for url in server_metadata_urls(issuer):
        check_fetchable(url, server_origin=server_origin, what="authorization server metadata")
        answer = await get_json(client, url)
        if answer.status == 200 and answer.document is not None:
            return ServerMetadata.from_document(answer.document, issuer=issuer, url=url)
        logger.debug("no authorization server metadata at %s (HTTP %d)", url, answer.status)
    return None


async def probe_challenge(client: httpx.AsyncClient, server_url: str) -> BearerChallenge | None:
    """Send the MCP server an unauthenticated request; return the challenge of its 401.

    None when it answers otherwise (it may not want authorization, or may publish its
    metadata at the well-known URLs only).

    Raises:
        FlowError: the server could not be reached.
    """
    answer = await post(client, server_url, json_body=_PROBE, headers=_PROBE_HEADERS)
    if answer.status not in (401, 403):
        logger.debug("the probe of %s got HTTP %d, no challenge", server_url, answer.status)
        return None
    return bearer_challenge(answer.headers.get_list("www-authenticate"))
