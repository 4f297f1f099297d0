"""``IntrospectionVerifier``: ask the authorization server about a token (RFC 7662).

For opaque tokens, or when revocation must take effect at once: the token is POSTed to the
introspection endpoint (``token=...&token_type_hint=access_token``, section 2.1), this server
authenticating as an OAuth client (``client_secret_basic`` or ``client_secret_post``, RFC 6749
section 2.3.1). ``active: false`` refuses the token; ``active: true`` is then checked like a
JWT's claims (``ClaimsPolicy``), except that ``exp`` and ``iss`` may be absent.

Answers are cached briefly (``cache_ttl``, never past the token's ``exp``), refusals too, so
that a client's burst of requests costs one round trip. The cache is keyed by the token's
SHA-256, never the token, holds at most ``cache_size`` entries, and concurrent requests with
the same token share one introspection call. A revoked token is therefore still accepted for
up to ``cache_ttl`` seconds: set it to what the deployment tolerates.

Spec: RFC 7662, OAuth 2.0 Token Introspection.
"""

from __future__ import annotations

import hashlib
import logging
import time
import typing
import urllib.parse
from typing import TYPE_CHECKING, Literal

import trio

from trimcp.errors import InvalidToken, VerifierUnavailable

from ._cache import CacheStatistics, TtlCache
from ._fetch import FetchFailed, HttpFetcher
from ._keys import DEFAULT_FETCH_TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from ._claims import ClaimsPolicy
    from ._identity import Identity

__all__ = ["ClientAuthMethod", "IntrospectionVerifier"]

logger = logging.getLogger(__name__)

#: How this server authenticates to the introspection endpoint (RFC 6749 section 2.3.1).
ClientAuthMethod = Literal["client_secret_basic", "client_secret_post"]

_NOT_ACTIVE = (
    "the authorization server says the token is not active (expired, revoked or never "
    "issued); get a new access token"
)


@typing.final
class IntrospectionVerifier(trio.abc.AsyncResource):
    """Verify tokens with an RFC 7662 endpoint (see the module docstring).

    ``clock`` returns seconds since the epoch, for the token's ``exp``; cache lifetimes use
    trio's clock. ``transport`` is httpx's (``httpx.MockTransport`` in tests).
    """

    def __init__(  # noqa: PLR0913 - the endpoint, its credentials, and the cache bounds
        self,
        url: str,
        policy: ClaimsPolicy,
        *,
        client_id: str,
        client_secret: str,
        client_auth: ClientAuthMethod = "client_secret_basic",
        cache_ttl: float = 60.0,
        cache_size: int = 10_000,
        timeout: float = DEFAULT_FETCH_TIMEOUT,
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if cache_ttl < 0:
            raise ValueError("IntrospectionVerifier.cache_ttl must not be negative")
        self.url = url
        self.policy = policy
        self._client_id = client_id
        self._client_secret = client_secret
        self._client_auth: ClientAuthMethod = client_auth
        self.cache_ttl = cache_ttl
        self._cache: TtlCache[bytes, Identity | str] = TtlCache(cache_size)
        self._inflight: dict[bytes, trio.Event] = {}
        self._fetcher = HttpFetcher(timeout, transport)
        self._clock = clock

    async def verify(self, token: str) -> Identity:
        """Return the identity of an active token for this server.

        Raises:
            InvalidToken: the endpoint says the token is not active, or a claim check
                failed (now or when it was cached).
            VerifierUnavailable: the endpoint failed or refused this server's credentials.
        """
        digest = hashlib.sha256(token.encode("ascii", "replace")).digest()
        while True:
            cached = self._cache.get(digest, trio.current_time())
            if cached is not None:
                return self._from_cache(cached)
            waiting = self._inflight.get(digest)
            if waiting is None:
                break
            await waiting.wait()
        done = self._inflight[digest] = trio.Event()
        try:
            return await self._introspect(token, digest)
        finally:
            del self._inflight[digest]
            done.set()

    def statistics(self) -> CacheStatistics:
        """Return the answer cache's size, bound, hits, misses and evictions."""
        return self._cache.statistics()

    async def aclose(self) -> None:
        """Close the HTTP client (the cache stays; a later call opens a new client)."""
        await self._fetcher.aclose()

    def _from_cache(self, cached: Identity | str) -> Identity:
        if isinstance(cached, str):
            raise InvalidToken(cached)
        expires_at = cached.expires_at
        if expires_at is not None and self._clock() - self.policy.leeway >= expires_at:
            raise InvalidToken("the token expired; get a new access token")
        return cached

    async def _introspect(self, token: str, digest: bytes) -> Identity:
        form = {"token": token, "token_type_hint": "access_token"}
        auth: tuple[str, str] | None = None
        if self._client_auth == "client_secret_post":
            form.update(client_id=self._client_id, client_secret=self._client_secret)
        else:
            # RFC 6749 section 2.3.1: both are form-encoded before Basic encoding.
            auth = (_form_encode(self._client_id), _form_encode(self._client_secret))
        try:
            answer = await self._fetcher.post_form(self.url, form, auth=auth)
        except FetchFailed as exc:
            if exc.status in (401, 403):
                logger.error(
                    "the introspection endpoint refused this server's client credentials "
                    "(%s); check the client id and secret ([auth] client_id, "
                    "client_secret_env)",
                    exc,
                )
            else:
                logger.warning("token introspection failed: %s", exc)
            raise VerifierUnavailable(
                "this server cannot check tokens now: its authorization server's "
                "introspection endpoint failed; try again shortly"
            ) from None
        now = trio.current_time()
        active = answer.get("active")
        if active is not True:
            if not isinstance(active, bool):
                logger.warning("the introspection answer has no boolean 'active'; refusing")
            self._cache.put(digest, _NOT_ACTIVE, expires_at=now + self.cache_ttl, now=now)
            raise InvalidToken(_NOT_ACTIVE)
        try:
            identity = self.policy.identity(answer, self._clock(), introspected=True)
        except InvalidToken as exc:
            self._cache.put(digest, exc.message, expires_at=now + self.cache_ttl, now=now)
            raise
        lifetime = self.cache_ttl
        if identity.expires_at is not None:
            lifetime = min(lifetime, identity.expires_at - self._clock())
        self._cache.put(digest, identity, expires_at=now + lifetime, now=now)
        return identity


def _form_encode(value: str) -> str:
    return urllib.parse.quote_plus(value, safe="")
