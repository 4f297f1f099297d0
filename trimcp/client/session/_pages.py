"""Listing methods page by page: one ``*/list`` page, or every page by following ``nextCursor``.

Shared by ``ClientSession`` (tools, resources, templates, prompts; through its list cache)
and its task methods (``tasks/list``, through the ``SessionCore``); both hand in a
``Requester`` that sends the requests. MCP 2025-11-25, Utilities > Pagination: the cursor is
opaque, and a missing ``nextCursor`` ends the listing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from trimcp.errors import RemoteProtocolError
from trimcp.protocol import Fields, Page

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.protocol import JsonObject

__all__ = ["Requester", "every_page", "one_page"]

T = TypeVar("T")


class Requester(Protocol):
    """Sends one request and returns its result (``SessionCore`` is one)."""

    async def request(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """Send ``method`` and return the result, or raise what the request raised."""
        ...


async def one_page(
    core: Requester, method: str, key: str, parse: Callable[[Fields], T], cursor: str | None
) -> Page[T]:
    """Request one page of ``method`` and parse the items under ``key``."""
    result = await core.request(method, None if cursor is None else {"cursor": cursor})
    fields = Fields(result, method)
    items = tuple(parse(item) for item in fields.obj_list(key, required=True))
    return Page(items, fields.opt_string("nextCursor") or None)


async def every_page(
    core: Requester, method: str, key: str, parse: Callable[[Fields], T]
) -> list[T]:
    """Request every page of ``method``, following ``nextCursor`` to the end.

    Raises:
        RemoteProtocolError: the server repeated a cursor (the listing would never end).
    """
    items: list[T] = []
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        page = await one_page(core, method, key, parse, cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        if page.next_cursor in seen:
            raise RemoteProtocolError(f"{method}: the server repeated cursor {page.next_cursor!r}")
        seen.add(page.next_cursor)
        cursor = page.next_cursor
