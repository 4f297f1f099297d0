"""``OAuth``: a user's authorization for one MCP server, as the HTTP transport uses it.

The transport asks ``authorization()`` for the ``Authorization`` header of every request
and reports each 401 and 403 to ``refused()``, then sends the request again when it
returns True (``trimcp.transports.http_client.HttpAuth``). Behind those two calls:

* a token expiring within ``refresh_margin`` seconds is refreshed before it is sent; one
  that cannot be refreshed is dropped, so the request goes without it, meets a 401 and
  starts a new sign-in;
* a 401: refresh the token it carried, once; otherwise sign in (``_code_flow``):
  discovery from the challenge, registration (configured → stored → Client ID Metadata
  Document → dynamic), the browser step, the token request;
* a 403 with ``error="insufficient_scope"``: sign in again for the scopes asked for before
  plus the challenged ones (a step-up). Not when the token already carries them, nor when
  they were asked for and not granted before: signing in again would change nothing. Other
  403s are not the token's to fix (False).

One renewal runs at a time; a request refused with a token that has been renewed meanwhile
is simply sent again with the new one. The transport bounds the retries of one request.
Without a browser step (``browser=None``), a sign-in that needs the user fails with words
saying how to sign in instead.

Failures reach the transport as ``trimcp.errors.HttpAuthRequired``, the error it reports
for 401 and 403 anyway. Tokens are never logged.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.errors import HttpAuthRequired, SignInRequired

from ._challenge import bearer_challenge
from ._code_flow import run_code_flow
from ._discovery import discover, discover_server, probe_challenge
from ._endpoints import request_token
from ._errors import FlowError, NoBrowser, TokenEndpointError
from ._fetch import DEFAULT_TIMEOUT, new_http_client
from ._keeper import TokenKeeper
from ._registration import ClientRegistration, choose
from ._scopes import select_scopes, union
from ._store import MemoryTokenStore
from ._urls import canonical_resource, origin_of

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import httpx

    from ._browser import BrowserStep
    from ._challenge import BearerChallenge
    from ._metadata import ServerMetadata
    from ._store import TokenStore
    from ._tokens import TokenSet

__all__ = ["DEFAULT_REFRESH_MARGIN", "OAuth"]

logger = logging.getLogger(__name__)

#: Seconds before expiry at which a token is refreshed rather than sent: a request must not
#: arrive with a token that expired on the way.
DEFAULT_REFRESH_MARGIN: Final = 60.0


@final
class OAuth:
    """The authorization code flow for one MCP server (module docstring).

    Args:
        server_url: the MCP endpoint (the URL the transport dials).
        client_id: a pre-registered client id (and ``client_secret`` for a confidential
            client); None registers by metadata document or dynamically.
        client_metadata_url: the https URL of this client's Client ID Metadata Document,
            used as client id where the server accepts one.
        scopes: scopes to ask for when the server's challenge names none.
        issuer: the authorization server to prefer when the metadata lists several.
        client_name: the name shown to the user when registering dynamically.
        browser: the browser step; None: no sign-in needing the user (it fails instead).
        store: where tokens and registrations are kept (default: in memory only).
        store_key: the key in ``store`` (default: the server's canonical URL).
        sign_in_hint: how a user signs in, for the error when ``browser`` is None.
        clock: the wall clock, in seconds since the epoch (tests pass a virtual one).
        refresh_margin: see ``DEFAULT_REFRESH_MARGIN``.
        timeout: seconds for each request to the authorization server.
    """

    def __init__(  # noqa: PLR0913  # independent settings, all keyword-only
        self,
        server_url: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        scopes: Sequence[str] = (),
        issuer: str | None = None,
        client_name: str = "trimcp",
        browser: BrowserStep | None = None,
        store: TokenStore | None = None,
        store_key: str | None = None,
        sign_in_hint: str = "",
        clock: Callable[[], float] = time.time,
        refresh_margin: float = DEFAULT_REFRESH_MARGIN,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.server_url = server_url
        self._configured = (
            ClientRegistration(client_id=client_id, client_secret=client_secret)
            if client_id
            else None
        )
        self._metadata_url = client_metadata_url
        self._scopes = tuple(scopes)
        self._issuer = issuer
        self._client_name = client_name
        self._browser = browser
        self._hint = sign_in_hint
        self._clock = clock
        self._margin = refresh_margin
        self._timeout = timeout
        key = store_key or canonical_resource(server_url)
        self._keeper = TokenKeeper(server_url, store or MemoryTokenStore(), key)
        self._lock = trio.Lock()
        # Issuer -> its metadata, read once per run (refreshes need the token endpoint).
        self._servers: dict[str, ServerMetadata] = {}
        # The scopes asked for last, and those asked for but not granted (step-up limits).
        self._requested: tuple[str, ...] = ()
        self._denied: set[str] = set()
        # The header of a token a 401 made this refresh: a 401 to it means sign in again.
        self._refreshed_after_401: str | None = None

    @property
    def tokens(self) -> TokenSet | None:
        """The current tokens, once loaded or obtained (None before, or when there are none)."""
        return self._keeper.tokens

    async def authorization(self) -> str | None:
        """Return the ``Authorization`` header for the next request (None: send none).

        Refreshes first a token that expires within the margin (module docstring).
        """
        await self._keeper.load()
        tokens = self._keeper.tokens
        if tokens is None:
            return None
        if tokens.expires_within(self._margin, now=self._clock()):
            async with self._lock:
                await self._refresh_expiring()
        return self._keeper.header()

    async def refused(self, *, status: int, challenges: Sequence[str], sent: str | None) -> bool:
        """Handle a 401 or 403; return True to send the request again (module docstring).

        Raises:
            HttpAuthRequired: a new token was needed and could not be had, in plain words.
        """
        async with self._lock:
            await self._keeper.load()
            current = self._keeper.header()
            if current is not None and current != sent:
                return True  # renewed by another request meanwhile
            challenge = bearer_challenge(challenges)
            try:
                if status == 403:
                    return await self._step_up(challenge)
                await self._renew(challenge, sent)
            except FlowError as exc:
                raise self._failure(status, exc) from exc
            return True

    async def login(self) -> TokenSet:
        """Sign in now, without waiting for a 401; return the tokens.

        Asks the server for its challenge first (an unauthenticated request), so that the
        scopes and metadata location it names are used, as on a real 401.

        Raises:
            HttpAuthRequired: the sign-in failed, in plain words.
        """
        async with self._lock:
            await self._keeper.load()
            try:
                async with new_http_client(self._timeout) as client:
                    challenge = await probe_challenge(client, self.server_url)
                return await self._sign_in(challenge, scopes=None)
            except FlowError as exc:
                raise self._failure(401, exc) from exc

    async def logout(self) -> None:
        """Forget the tokens (registrations stay, for the next sign-in)."""
        async with self._lock:
            await self._keeper.load()
            await self._keeper.keep(None)

    async def _refresh_expiring(self) -> None:
        tokens = self._keeper.tokens
        now = self._clock()
        if tokens is None or not tokens.expires_within(self._margin, now=now):
            return  # another task refreshed (or dropped) it meanwhile
        if tokens.refresh_token and await self._refresh(tokens):
            return
        if tokens.expires_within(0, now=now):
            await self._keeper.keep(None)  # expired, no way to renew: the 401 starts a sign-in

    async def _renew(self, challenge: BearerChallenge | None, sent: str | None) -> None:
        tokens = self._keeper.tokens
        if (
            sent is not None
            and tokens is not None
            and tokens.refresh_token
            and sent != self._refreshed_after_401
            and await self._refresh(tokens)
        ):
            self._refreshed_after_401 = self._keeper.header()
            return
        await self._sign_in(challenge, scopes=None)

    async def _step_up(self, challenge: BearerChallenge | None) -> bool:
        if challenge is None or challenge.error != "insufficient_scope":
            return False
        needed = challenge.scopes
        if not needed:
            raise FlowError(
                "the server refused the request for insufficient scope without naming the "
                "scope it needs"
            )
        tokens = self._keeper.tokens
        granted = tokens.scopes if tokens is not None else ()
        missing = [scope for scope in needed if scope not in granted]
        if not missing:
            raise FlowError(
                f"the server asks for the scope {' '.join(needed)}, which the token already "
                "carries; signing in again would not change that"
            )
        denied = [scope for scope in missing if scope in self._denied]
        if denied:
            raise FlowError(
                f"the scope {' '.join(denied)} was asked for before and not granted; "
                "the request needs it"
            )
        fresh = await self._sign_in(challenge, scopes=union(self._requested or granted, needed))
        self._denied.update(scope for scope in needed if scope not in fresh.scopes)
        return True

    async def _sign_in(
        self, challenge: BearerChallenge | None, *, scopes: Sequence[str] | None
    ) -> TokenSet:
        if self._browser is None:
            hint = f"; {self._hint}" if self._hint else ""
            raise NoBrowser(f"the server needs a sign-in in a browser{hint}")
        async with new_http_client(self._timeout) as client:
            discovery = await discover(client, self.server_url, challenge, issuer=self._issuer)
            metadata = discovery.server
            metadata.require_pkce()
            self._servers[metadata.issuer] = metadata
            chosen = scopes or select_scopes(challenge, self._scopes, discovery.resource_metadata)
            choice = choose(
                metadata,
                configured=self._configured,
                stored=self._keeper.client_for(metadata.issuer),
                metadata_document_url=self._metadata_url,
            )
            if choice is None:
                raise FlowError(
                    f"the authorization server {metadata.issuer} offers no way to register "
                    "this client (no dynamic registration, no client id metadata documents); "
                    "configure the client_id (and client_secret) it gave you for this server"
                )
            tokens, registration = await run_code_flow(
                client,
                discovery,
                choice=choice,
                scopes=chosen,
                browser=self._browser,
                client_name=self._client_name,
                now=self._clock,
                on_registered=self._keeper.keep_client,
            )
        self._requested = tuple(chosen)
        if registration.kind == "metadata_document":
            await self._keeper.keep_client(registration)
        await self._keeper.keep(tokens)
        logger.info("signed in to %s at %s", self.server_url, metadata.issuer)
        return tokens

    async def _refresh(self, tokens: TokenSet) -> bool:
        """Exchange the refresh token; False (tokens dropped) when the server refuses."""
        assert tokens.refresh_token is not None
        issuer, resource = tokens.issuer, tokens.resource
        if issuer is None or resource is None:
            return False
        try:
            async with new_http_client(self._timeout) as client:
                metadata = await self._server(client, issuer)
                registration = self._configured or self._keeper.client_for(issuer)
                if metadata is None or registration is None:
                    return False
                form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
                fresh = await request_token(
                    client,
                    metadata,
                    registration,
                    form,
                    resource=resource,
                    requested=tokens.scopes,
                    now=self._clock(),
                )
        except TokenEndpointError as exc:
            logger.info("the refresh token for %s was refused (%s)", self.server_url, exc.error)
            await self._keeper.keep(None)
            return False
        except FlowError as exc:
            logger.info("refreshing the token for %s failed: %s", self.server_url, exc)
            return False
        await self._keeper.keep(fresh.with_refresh_token(tokens.refresh_token))
        return True

    async def _server(self, client: httpx.AsyncClient, issuer: str) -> ServerMetadata | None:
        known = self._servers.get(issuer)
        if known is None:
            origin = origin_of(self.server_url)
            known = await discover_server(client, issuer, server_origin=origin)
            if known is not None:
                self._servers[issuer] = known
        return known

    def _failure(self, status: int, exc: FlowError) -> HttpAuthRequired:
        # Nobody can sign in here: the error no retry cures until someone signs in elsewhere.
        kind = SignInRequired if isinstance(exc, NoBrowser) else HttpAuthRequired
        return kind(
            self.server_url,
            status,
            f"the server wants authorization (HTTP {status}) and signing in failed: {exc}",
            detail=str(exc),
        )
