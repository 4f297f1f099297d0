"""Reusing list results while the server says they are fresh (``ttlMs``, ``cacheScope``).

MCP 2026-07-28 puts caching hints on every list result (``CacheableResult``): ``ttlMs``, how
long the client SHOULD consider it fresh, and ``cacheScope``; a ``"private"`` result "MAY be
cached and reused only within the same authorization context" (schema ``CacheableResult``;
SEP-2549). ``ListCache`` keeps one session's pages of ``tools/list``, ``prompts/list``,
``resources/list`` and ``resources/templates/list`` by method and cursor: a page is served
from here while it is fresh, and, when private, only to the same credentials (the digest
the transport reports; a token refreshed for a step-up is a new context, so a miss). A
``list_changed`` notification drops the pages it concerns. Results without hints (servers
of earlier revisions) or with ``ttlMs`` 0 are never kept. The bound is on entries; the least
recently used goes first. Time is trio's, so tests run it under ``MockClock``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.transports.http_client import ServerIdentity

from ._discovery import cache_hint_from_wire

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.protocol import JsonObject
    from trimcp.transports import MessageStream

    from ._core import SessionCore

__all__ = ["CACHED_METHODS", "CachedLister", "ListCache", "invalidated_by"]

#: The list methods whose pages are kept.
CACHED_METHODS: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)

#: What each ``list_changed`` notification makes stale.
_INVALIDATES: Final = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}

#: Pages one session keeps at most (a few listings of a few pages each).
DEFAULT_MAX_PAGES: Final = 64


def invalidated_by(notification: str) -> tuple[str, ...]:
    """Return the list methods a notification makes stale (none for other methods)."""
    return _INVALIDATES.get(notification, ())


@final
@dataclass(frozen=True, slots=True)
class _Page:
    result: JsonObject
    expires: float
    #: The credentials' digest a private page belongs to; None for a public page.
    context: str | None
    private: bool


@final
class ListCache:
    """One session's fresh list pages (module docstring)."""

    def __init__(self, max_pages: int = DEFAULT_MAX_PAGES) -> None:
        if max_pages < 1:
            raise ValueError("a ListCache needs room for at least one page")
        self._max = max_pages
        self._pages: OrderedDict[tuple[str, str | None], _Page] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pages)

    def get(self, method: str, cursor: str | None, context: str | None) -> JsonObject | None:
        """Return the page of ``method`` at ``cursor`` if it is fresh and ``context`` may see it."""
        key = (method, cursor)
        page = self._pages.get(key)
        if page is None:
            return None
        if trio.current_time() >= page.expires:
            del self._pages[key]
            return None
        if page.private and page.context != context:
            return None
        self._pages.move_to_end(key)
        return page.result

    def put(self, method: str, cursor: str | None, result: JsonObject, context: str | None) -> None:
        """Keep ``result`` if ``method`` is a list method and its hints allow it."""
        hint = cache_hint_from_wire(result)
        if method not in CACHED_METHODS or hint is None or hint.ttl <= 0:
            return
        key = (method, cursor)
        self._pages[key] = _Page(
            result=result,
            expires=trio.current_time() + hint.ttl,
            context=context if hint.private else None,
            private=hint.private,
        )
        self._pages.move_to_end(key)
        while len(self._pages) > self._max:
            self._pages.popitem(last=False)

    def invalidate(self, methods: Iterable[str]) -> None:
        """Drop every page of ``methods``."""
        stale = set(methods)
        for key in [key for key in self._pages if key[0] in stale]:
            del self._pages[key]

    def clear(self) -> None:
        """Drop everything (the server may have changed: a new era, a renewed session)."""
        self._pages.clear()


@final
class CachedLister:
    """The session's page fetch: a page from ``cache`` while it is fresh, else asked for.

    A ``Requester`` for ``_pages``. The credentials' digest comes from the stream
    (``ServerIdentity``) at each lookup, so a token renewed meanwhile is a new context.
    Only a per-request-era session's pages are kept: earlier revisions send no hints.
    """

    def __init__(self, core: SessionCore, cache: ListCache, stream: MessageStream) -> None:
        self._core = core
        self._cache = cache
        self._stream = stream

    async def request(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """Return the page of ``method`` at ``params.cursor``, from the cache if fresh."""
        cursor = (params or {}).get("cursor")
        key = cursor if isinstance(cursor, str) else None
        stream = self._stream
        context = stream.authorization_context if isinstance(stream, ServerIdentity) else None
        cached = self._cache.get(method, key, context)
        if cached is not None:
            return cached
        result = await self._core.request(method, params)
        if self._core.connection.modern:
            self._cache.put(method, key, result, context)
        return result
