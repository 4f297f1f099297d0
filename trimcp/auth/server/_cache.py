"""``TtlCache``: a bounded map whose entries expire, least recently used out first (pure).

Used for introspection answers (``_introspect.py``), keyed by a token's hash. The caller
passes ``now`` (``trio.current_time()``), so the cache itself never reads a clock and tests
drive it with plain numbers or a ``MockClock``.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Generic, TypeVar, final

__all__ = ["CacheStatistics", "TtlCache"]

K = TypeVar("K")
V = TypeVar("V")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheStatistics:
    """What a cache holds and did: entries now, its bound, hits, misses, entries pushed out."""

    size: int
    max_size: int
    hits: int
    misses: int
    evictions: int


@final
class TtlCache(Generic[K, V]):
    """At most ``max_size`` entries; each expires at the time given when it was put.

    Past ``max_size``, ``put`` evicts the least recently used entry (expired ones go first
    when they are met: on ``get``, and at the front of the order on ``put``).
    """

    __slots__ = ("_entries", "_evictions", "_hits", "_misses", "max_size")

    def __init__(self, max_size: int) -> None:
        if max_size < 1:
            raise ValueError("TtlCache.max_size must be at least 1")
        self.max_size = max_size
        # key -> (expires_at, value); order: least recently used first.
        self._entries: collections.OrderedDict[K, tuple[float, V]] = collections.OrderedDict()
        self._hits = 0
        self._misses = 0
        self._evictions = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K, now: float) -> V | None:
        """Return the value under ``key`` if it has not expired at ``now``, else None."""
        entry = self._entries.get(key)
        if entry is None:
            self._misses += 1
            return None
        expires_at, value = entry
        if now >= expires_at:
            del self._entries[key]
            self._misses += 1
            return None
        self._entries.move_to_end(key)
        self._hits += 1
        return value

    def put(self, key: K, value: V, *, expires_at: float, now: float) -> None:
        """Store ``value`` until ``expires_at``; nothing is stored if that is not after ``now``."""
        if expires_at <= now:
            self._entries.pop(key, None)
            return
        self._entries[key] = (expires_at, value)
        self._entries.move_to_end(key)
        entries = self._entries
        # Expired entries at the front go first; then the least recently used.
        while entries and len(entries) > self.max_size:
            oldest_key, (oldest_expiry, _) = next(iter(entries.items()))
            del entries[oldest_key]
            if oldest_expiry > now:
                self._evictions += 1

    def statistics(self) -> CacheStatistics:
        """Return the cache's size, bound and counts so far."""
        return CacheStatistics(
            size=len(self._entries),
            max_size=self.max_size,
            hits=self._hits,
            misses=self._misses,
            evictions=self._evictions,
        )
