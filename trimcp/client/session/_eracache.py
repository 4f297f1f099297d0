"""``EraCache``: which era each server spoke, remembered across sessions of one process.

MCP 2026-07-28, Basic > Versioning > Backward Compatibility: "The era determination is a
property of the server, not of an individual request. Clients SHOULD cache the result for
the lifetime of the server process (stdio) or origin (HTTP)"
(https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). Keyed by the
stream's ``server_key``; ``_era`` reads and writes it when a session opens.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

import trio

if TYPE_CHECKING:
    from ._discovery import DiscoverResult

__all__ = ["DEFAULT_ERA_CACHE", "DEFAULT_MAX_SERVERS", "EraCache", "EraMemo"]

#: Servers whose era ``EraCache`` remembers by default; the least recently used goes first.
DEFAULT_MAX_SERVERS: Final = 256


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EraMemo:
    """What one server spoke last time.

    ``discover`` is its ``DiscoverResult``, reusable until ``expires`` (trio time of the run
    whose ``run`` token it carries; another run's clock means nothing here) and, when its
    ``cacheScope`` was private, only with the credentials digested as ``context``.
    """

    modern: bool
    version: str
    discover: DiscoverResult | None = None
    expires: float = 0.0
    run: object = None
    context: str | None = None

    def fresh_discover(self, context: str | None) -> DiscoverResult | None:
        """Return the cached ``DiscoverResult`` if it may still be used (see the class)."""
        if self.discover is None or self.run is not trio.lowlevel.current_trio_token():
            return None
        cache = self.discover.cache
        if cache is not None and cache.private and context != self.context:
            return None
        return self.discover if trio.current_time() < self.expires else None


@final
class EraCache:
    """The era of each server, by ``server_key``; bounded, least recently used dropped first.

    Shared by the sessions of one process (``DEFAULT_ERA_CACHE``); touched only from trio
    tasks of one thread.
    """

    def __init__(self, max_servers: int = DEFAULT_MAX_SERVERS) -> None:
        if max_servers < 1:
            raise ValueError("an EraCache needs room for at least one server")
        self._max = max_servers
        self._memos: OrderedDict[str, EraMemo] = OrderedDict()

    def __len__(self) -> int:
        return len(self._memos)

    def get(self, key: str) -> EraMemo | None:
        """Return what ``key`` spoke last time, if it is remembered."""
        memo = self._memos.get(key)
        if memo is not None:
            self._memos.move_to_end(key)
        return memo

    def put(self, key: str, memo: EraMemo) -> None:
        """Remember ``memo`` for ``key``, forgetting the least recently used beyond the bound."""
        self._memos[key] = memo
        self._memos.move_to_end(key)
        while len(self._memos) > self._max:
            self._memos.popitem(last=False)

    def forget(self, key: str) -> None:
        """Drop what is remembered of ``key`` (its assumption failed)."""
        self._memos.pop(key, None)


#: The cache sessions use unless ``ClientSessionOptions.era_cache`` names another.
DEFAULT_ERA_CACHE: Final = EraCache()
