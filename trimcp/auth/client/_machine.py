"""``ClientCredentials``: authorization for a machine client, with no user in the loop.

The OAuth client credentials grant (OAuth 2.1 section 4.2; MCP's extension for it): the
client proves who it is at the token endpoint, with its secret (``client_secret_basic`` or
``client_secret_post``) or with a signed assertion (``private_key_jwt``, RFC 7523, see
``PrivateKeyJwt``), and gets an access token for the MCP server. There is no refresh token:
a token that expires, or meets a 401, is simply replaced by a new one. A 403
``insufficient_scope`` asks for a token with the scopes asked for before plus the
challenged ones, once for the same scopes.

The same two calls as ``OAuth`` serve the transport; discovery is ``OAuth``'s (Protected
Resource Metadata, then authorization server metadata), minus PKCE, which this grant has no
use for.

Spec: https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/oauth-client-credentials.mdx
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import HttpAuthRequired

from ._challenge import bearer_challenge
from ._discovery import discover
from ._endpoints import request_token
from ._errors import FlowError
from ._fetch import DEFAULT_TIMEOUT, new_http_client
from ._keeper import TokenKeeper
from ._oauth import DEFAULT_REFRESH_MARGIN
from ._registration import ClientRegistration
from ._scopes import select_scopes, union
from ._store import MemoryTokenStore
from ._urls import canonical_resource

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ._assertion import PrivateKeyJwt
    from ._challenge import BearerChallenge
    from ._discovery import Discovery
    from ._store import TokenStore
    from ._tokens import TokenSet

__all__ = ["ClientCredentials"]

logger = logging.getLogger(__name__)


@final
class ClientCredentials:
    """The client credentials grant for one MCP server (module docstring).

    Args:
        server_url: the MCP endpoint.
        client_id: the client's id at the authorization server.
        client_secret: its secret, for client_secret_basic / client_secret_post.
        private_key: its signing key, for private_key_jwt (instead of a secret).
        auth_method: the token endpoint authentication method, when the server's metadata
            does not settle it (None: from the metadata).
        scopes: scopes to ask for when the server's challenge names none.
        issuer: the authorization server to prefer when the metadata lists several.
        store: where tokens are kept (default: in memory only).
        store_key: the key in ``store`` (default: the server's canonical URL).
        clock: the wall clock, in seconds since the epoch.
        refresh_margin: seconds before expiry at which a new token is fetched.
        timeout: seconds for each request to the authorization server.
    """

    def __init__(  # noqa: PLR0913  # independent settings, all keyword-only
        self,
        server_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: PrivateKeyJwt | None = None,
        auth_method: str | None = None,
        scopes: Sequence[str] = (),
        issuer: str | None = None,
        store: TokenStore | None = None,
        store_key: str | None = None,
        clock: Callable[[], float] = time.time,
        refresh_margin: float = DEFAULT_REFRESH_MARGIN,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if client_secret is None and private_key is None:
            raise ValueError("client credentials need a client_secret or a private_key")
        self.server_url = server_url
        self._client = ClientRegistration(
            client_id=client_id, client_secret=client_secret, auth_method=auth_method
        )
        self._signer = private_key
        self._scopes = tuple(scopes)
        self._issuer = issuer
        self._clock = clock
        self._margin = refresh_margin
        self._timeout = timeout
        key = store_key or canonical_resource(server_url)
        self._keeper = TokenKeeper(server_url, store or MemoryTokenStore(), key)
        self._lock = trio.Lock()
        self._discovery: Discovery | None = None
        self._requested: tuple[str, ...] = ()

    @property
    def tokens(self) -> TokenSet | None:
        """The current tokens (None before the first, or when there are none)."""
        return self._keeper.tokens

    async def authorization(self) -> str | None:
        """Return the ``Authorization`` header for the next request (None: send none).

        A token about to expire is replaced first, if the server is known by then.
        """
        await self._keeper.load()
        tokens = self._keeper.tokens
        if tokens is not None and tokens.expires_within(self._margin, now=self._clock()):
            async with self._lock:
                current = self._keeper.tokens
                if current is tokens and self._discovery is not None:
                    try:
                        await self._fetch(None, self._requested)
                    except FlowError as exc:
                        logger.info("renewing the token for %s failed: %s", self.server_url, exc)
                        await self._keeper.keep(None)
        return self._keeper.header()

    async def refused(self, *, status: int, challenges: Sequence[str], sent: str | None) -> bool:
        """Handle a 401 or 403; return True to send the request again.

        Raises:
            HttpAuthRequired: no token could be had, in plain words.
        """
        async with self._lock:
            await self._keeper.load()
            current = self._keeper.header()
            if current is not None and current != sent:
                return True
            challenge = bearer_challenge(challenges)
            try:
                if status == 403:
                    return await self._step_up(challenge)
                await self._fetch(challenge, None)
            except FlowError as exc:
                raise HttpAuthRequired(
                    self.server_url,
                    status,
                    f"the server wants authorization (HTTP {status}) and getting a token with "
                    f"the client credentials failed: {exc}",
                    detail=str(exc),
                ) from exc
            return True

    async def _step_up(self, challenge: BearerChallenge | None) -> bool:
        if challenge is None or challenge.error != "insufficient_scope" or not challenge.scopes:
            return False
        tokens = self._keeper.tokens
        granted = tokens.scopes if tokens is not None else ()
        if all(scope in granted for scope in challenge.scopes):
            raise FlowError(
                f"the server asks for the scope {' '.join(challenge.scopes)}, which the token "
                "already carries"
            )
        await self._fetch(challenge, union(self._requested or granted, challenge.scopes))
        return True

    async def _fetch(self, challenge: BearerChallenge | None, scopes: Sequence[str] | None) -> None:
        async with new_http_client(self._timeout) as client:
            if self._discovery is None or challenge is not None:
                self._discovery = await discover(
                    client, self.server_url, challenge, issuer=self._issuer
                )
            discovery = self._discovery
            metadata = discovery.server
            grants = metadata.grant_types_supported
            if grants is not None and "client_credentials" not in grants:
                raise FlowError(
                    f"the authorization server {metadata.issuer} does not offer the client "
                    f"credentials grant (it offers {', '.join(grants) or 'none'})"
                )
            chosen = (
                scopes
                if scopes is not None
                else select_scopes(challenge, self._scopes, discovery.resource_metadata)
            )
            form = {"grant_type": "client_credentials"}
            if chosen:
                form["scope"] = " ".join(chosen)
            tokens = await request_token(
                client,
                metadata,
                self._client,
                form,
                resource=discovery.resource,
                requested=chosen,
                now=self._clock(),
                signer=self._signer,
            )
        self._requested = tuple(chosen)
        await self._keeper.keep(tokens)
