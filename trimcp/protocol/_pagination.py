"""``Page``: one page of a paginated list (MCP 2025-11-25, Utilities > Pagination).

Not a wire shape of its own: the list methods put the items under their own key
(``tools``, ``resources``, ...) next to ``nextCursor``. A server's paginator returns a
``Page`` of wire objects, a client's ``list_*_page`` a ``Page`` of records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar, final

T = TypeVar("T")


@final
@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """The items of one page and the cursor of the next (None on the last page).

    A cursor is opaque: pass it back unchanged, never build or keep one across sessions.
    """

    items: tuple[T, ...]
    next_cursor: str | None = None
