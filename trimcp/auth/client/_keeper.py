"""``TokenKeeper``: the tokens and registrations of one server, in memory and in its store.

Loaded from the ``TokenStore`` once, on first use; every change is saved at once, so a
token refreshed by one run is the one the next run starts with. Stored tokens are used only
if they were issued for a resource that covers this server's URL: a store entry reused
under another server's name must not send one server's token to the other (MCP 2025-11-25,
Basic > Authorization > Access Token Privilege Restriction).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, final

import trio

from ._store import StoredAuth
from ._urls import resource_covers

if TYPE_CHECKING:
    from ._registration import ClientRegistration
    from ._store import TokenStore
    from ._tokens import TokenSet

__all__ = ["TokenKeeper"]

logger = logging.getLogger(__name__)


@final
class TokenKeeper:
    """The stored state of one server (module docstring)."""

    def __init__(self, server_url: str, store: TokenStore, key: str) -> None:
        self.server_url = server_url
        self.store = store
        self.key = key
        self._record = StoredAuth()
        self._loaded = False
        self._loading = trio.Lock()

    async def load(self) -> None:
        """Read the store once; later calls do nothing.

        Tasks that call it at the same time wait for the one that reads.
        """
        async with self._loading:
            if not self._loaded:
                self._record = self._usable(await self.store.load(self.key))
                self._loaded = True

    def _usable(self, record: StoredAuth | None) -> StoredAuth:
        if record is None:
            return StoredAuth()
        tokens = record.tokens
        if tokens is not None and not (
            tokens.resource and resource_covers(tokens.resource, self.server_url)
        ):
            logger.info("stored tokens for %s are for another resource; not using them", self.key)
            return replace(record, tokens=None)
        return record

    @property
    def tokens(self) -> TokenSet | None:
        """The current tokens (None: none yet, or dropped)."""
        return self._record.tokens

    def header(self) -> str | None:
        """The ``Authorization`` value of the current token, or None."""
        tokens = self._record.tokens
        return None if tokens is None else f"Bearer {tokens.access_token}"

    def client_for(self, issuer: str) -> ClientRegistration | None:
        """The registration kept for ``issuer``, if any."""
        return self._record.clients.get(issuer)

    async def keep(self, tokens: TokenSet | None) -> None:
        """Make ``tokens`` current (None: drop them) and save."""
        self._record = replace(self._record, tokens=tokens)
        await self.store.save(self.key, self._record)

    async def keep_client(self, registration: ClientRegistration) -> None:
        """Remember ``registration`` for its issuer and save."""
        if registration.issuer is None:
            return
        clients = {**self._record.clients, registration.issuer: registration}
        self._record = replace(self._record, clients=clients)
        await self.store.save(self.key, self._record)
