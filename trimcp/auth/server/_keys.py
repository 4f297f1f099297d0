"""Where a JWT's verification key comes from: a JWKS URL (``JwksKeys``) or one key (``StaticKey``).

``JwksKeys`` fetches the authorization server's JSON Web Key Set (RFC 7517 section 5) and
keeps it for ``max_age`` seconds. A token signed with a key id it does not hold makes it
fetch again at once (the server rotated its keys), but not more often than every
``refresh_interval`` seconds: otherwise anyone could make this server hammer the JWKS URL by
sending tokens with made-up key ids. Concurrent requests share one fetch. When a fetch fails
the keys already held stay in use; with none held, tokens cannot be checked
(``VerifierUnavailable``, 503).

A key set is untrusted input. Symmetric (``oct``) keys and keys marked ``use: enc`` are
skipped (a JWKS publishes public keys; an HMAC key in it would let whoever can read the set
sign tokens), and at most ``max_keys`` keys are kept.

The keys live in the task that calls ``key_for``: trio runs one task at a time, and the only
wait is the fetch, after which the held set is replaced whole. No lock is needed.
"""

from __future__ import annotations

import logging
import typing
from typing import Final, Protocol

import trio
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry, Key, OctKey

from trimcp.errors import InvalidToken, VerifierUnavailable

from ._fetch import FetchFailed, HttpFetcher

if typing.TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_FETCH_TIMEOUT", "JwksKeys", "JwksStatistics", "KeySource", "StaticKey"]

logger = logging.getLogger(__name__)

#: Seconds a fetch from the authorization server may take.
DEFAULT_FETCH_TIMEOUT: Final = 5.0


class KeySource(Protocol):
    """Gives ``JwtVerifier`` the key that should have signed a token.

    Implementers guarantee that ``key_for`` returns only keys this server trusts, and
    raise ``InvalidToken`` (the token names a key that is not one of them) or
    ``VerifierUnavailable`` (the keys cannot be had now) otherwise.
    """

    @property
    def symmetric(self) -> bool:
        """True if the keys are shared secrets (HMAC): only HS* algorithms then, never others."""
        ...

    async def key_for(self, kid: str | None) -> Key:
        """Return the key with id ``kid`` (None: the token names no key)."""
        ...


@typing.final
class StaticKey:
    """One key configured in advance: a PEM public key, or an HMAC secret.

    Build it with ``from_pem`` (RSA, EC or Ed25519 public key; a private key's public half
    is used) or ``from_secret`` (a shared secret for HS256/384/512, which only makes sense
    when the authorization server and this server share it on purpose).
    """

    __slots__ = ("_key",)

    def __init__(self, key: Key) -> None:
        self._key = key

    @classmethod
    def from_pem(cls, pem: bytes) -> StaticKey:
        """Return the source of the public key in ``pem``.

        Raises:
            ValueError: ``pem`` is not a PEM RSA, EC or OKP key.
        """
        for key_type in ("RSA", "EC", "OKP"):
            try:
                key = JWKRegistry.import_key(pem, key_type)
            except (JoseError, ValueError, TypeError):
                continue
            public = JWKRegistry.import_key(key.as_dict(private=False))
            public.ensure_kid()
            return cls(public)
        raise ValueError("not a PEM RSA, EC or Ed25519 key (public, or private: its public half)")

    @classmethod
    def from_secret(cls, secret: bytes) -> StaticKey:
        """Return the source of an HMAC shared secret (at least 32 bytes, RFC 7518 3.2).

        Raises:
            ValueError: the secret is shorter than 32 bytes.
        """
        if len(secret) < 32:
            raise ValueError(
                f"an HS256 shared secret must be at least 32 bytes (RFC 7518 section 3.2); "
                f"this one is {len(secret)}"
            )
        return cls(OctKey.import_key(secret))

    @property
    def symmetric(self) -> bool:
        """True for a shared secret."""
        return isinstance(self._key, OctKey)

    async def key_for(self, kid: str | None) -> Key:
        """Return the one key, whatever ``kid`` the token names."""
        return self._key


@typing.final
class JwksStatistics(typing.NamedTuple):
    """What a ``JwksKeys`` holds and did: keys held, fetches tried, fetches failed."""

    keys: int
    fetches: int
    failures: int


@typing.final
class JwksKeys(trio.abc.AsyncResource):
    """The keys of a JWKS URL, cached and refreshed (see the module docstring).

    Times are trio's clock (``trio.current_time()``), so a ``MockClock`` drives them in tests;
    ``transport`` is httpx's (see ``HttpFetcher``).
    """

    def __init__(  # noqa: PLR0913 - the URL and the bounds of its cache, each with a default
        self,
        url: str,
        *,
        max_age: float = 300.0,
        refresh_interval: float = 30.0,
        max_keys: int = 32,
        timeout: float = DEFAULT_FETCH_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if max_keys < 1:
            raise ValueError("JwksKeys.max_keys must be at least 1")
        if not (0 < refresh_interval <= max_age):
            raise ValueError("JwksKeys needs 0 < refresh_interval <= max_age")
        self.url = url
        self.max_age = max_age
        self.refresh_interval = refresh_interval
        self.max_keys = max_keys
        self._fetcher = HttpFetcher(timeout, transport)
        self._keys: dict[str, Key] | None = None
        self._fresh_until = -float("inf")
        self._last_attempt = -float("inf")
        self._fetching: trio.Event | None = None
        self._fetches = 0
        self._failures = 0

    @property
    def symmetric(self) -> bool:
        """Always False: symmetric keys in a JWKS are skipped."""
        return False

    async def key_for(self, kid: str | None) -> Key:
        """Return the key ``kid`` names, fetching the set when stale or when ``kid`` is new.

        A token without ``kid`` is accepted only while the set holds exactly one key.

        Raises:
            InvalidToken: no such key, even after a fetch (or a fetch was made too recently).
            VerifierUnavailable: no keys are held and the fetch failed.
        """
        if trio.current_time() >= self._fresh_until:
            await self._refresh()
        key = self._find(kid)
        if key is None and kid is not None:
            await self._refresh()
            key = self._find(kid)
        if key is not None:
            return key
        if kid is None:
            raise InvalidToken(
                "the token names no signing key (no kid in its header) and the authorization "
                "server publishes several; get a token whose header has a kid"
            )
        raise InvalidToken(
            f"the token was signed with a key this server does not know (kid "
            f"{kid[:64]!r} is not in {self.url}); get a new token from the authorization server"
        )

    def statistics(self) -> JwksStatistics:
        """Return the number of keys held and of fetches tried and failed."""
        return JwksStatistics(len(self._keys or ()), self._fetches, self._failures)

    async def aclose(self) -> None:
        """Close the HTTP client; the keys held stay (a later fetch opens a new client)."""
        await self._fetcher.aclose()

    def _find(self, kid: str | None) -> Key | None:
        keys = self._keys or {}
        if kid is None:
            return next(iter(keys.values())) if len(keys) == 1 else None
        return keys.get(kid)

    async def _refresh(self) -> None:
        """Fetch the set unless a fetch is running (then wait for it) or was made recently.

        Raises:
            VerifierUnavailable: no keys are held after trying.
        """
        if self._fetching is not None:
            await self._fetching.wait()
        elif trio.current_time() - self._last_attempt >= self.refresh_interval:
            self._fetching = trio.Event()
            try:
                await self._fetch()
            finally:
                self._fetching.set()
                self._fetching = None
        if self._keys is None:
            raise VerifierUnavailable(
                f"this server cannot check tokens now: its signing keys could not be fetched "
                f"from {self.url}; try again shortly"
            )

    async def _fetch(self) -> None:
        now = self._last_attempt = trio.current_time()
        self._fetches += 1
        try:
            data = await self._fetcher.get_json(self.url)
            keys = self._import(data)
        except FetchFailed as exc:
            self._failures += 1
            # Keep what is held until the next allowed attempt; log where it is handled.
            logger.warning(
                "cannot fetch the JWKS: %s; %s",
                exc,
                "keeping the keys held" if self._keys else "tokens cannot be checked",
            )
            return
        self._keys = keys
        self._fresh_until = now + self.max_age
        logger.info("fetched %d signing keys from %s", len(keys), self.url)

    def _import(self, data: dict[str, object]) -> dict[str, Key]:
        """Return the usable keys of a JWKS document, by kid (see the module docstring).

        Raises:
            FetchFailed: not a key set, or no usable key in it.
        """
        entries = data.get("keys")
        if not isinstance(entries, list):
            raise FetchFailed(f"{self.url} is not a JWKS (no keys array)")
        keys: dict[str, Key] = {}
        skipped = 0
        for entry in entries:
            key = _public_key(entry)
            if key is None:
                skipped += 1
                continue
            if len(keys) == self.max_keys:
                logger.warning(
                    "%s publishes more than %d keys; using the first %d (auth jwks max_keys)",
                    self.url,
                    self.max_keys,
                    self.max_keys,
                )
                break
            keys.setdefault(key.kid or "", key)
        if skipped:
            logger.info(
                "skipped %d keys of %s (symmetric, encryption or unreadable)", skipped, self.url
            )
        if not keys:
            raise FetchFailed(f"{self.url} holds no usable signing key")
        return keys


def _public_key(entry: object) -> Key | None:
    """Return a JWKS entry as a verification key, or None for one to skip."""
    if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
        return None
    if entry.get("kty") not in ("RSA", "EC", "OKP"):
        return None
    try:
        key = JWKRegistry.import_key(typing.cast("dict[str, typing.Any]", entry))
        # Only the public half, whatever the set published; its kid kept, else a thumbprint.
        key = JWKRegistry.import_key(key.as_dict(private=False))
        key.ensure_kid()
    except (JoseError, ValueError, TypeError, KeyError):
        return None
    return key
