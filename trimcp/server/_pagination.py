"""Opaque cursors for the paginated list methods, and paging a sequence with them.

MCP 2025-11-25 (Utilities > Pagination): ``tools/list``, ``prompts/list``,
``resources/list``, ``resources/templates/list`` and ``tasks/list`` take an opaque
``cursor`` and answer ``nextCursor`` until the end; the page size is the server's choice;
an invalid cursor SHOULD be answered with -32602 Invalid params (the server maps
``trimcp.errors.InvalidCursor`` to ``InvalidParams``).

A cursor is ``base64url(payload) "." base64url(HMAC-SHA256(secret, payload)[:16])`` where
the payload is compact JSON ``{"v":1,"m":method,"o":offset,"s":snapshot}``. The MAC makes
cursors tamper-evident and foreign ones (another server, another process: the default
secret is random per ``CursorCodec``) fail; ``m`` ties a cursor to the list method that
issued it; ``s`` is a snapshot token of the list, so a cursor issued before the list
changed is refused instead of silently skipping or repeating items ("SHOULD give stable
cursors"). Clients must not persist cursors across sessions, so losing them on restart is
fine.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import typing
from dataclasses import dataclass

from trimcp.errors import InvalidCursor
from trimcp.protocol import Page

if typing.TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "CursorCodec",
    "Paginator",
    "snapshot_of",
]

#: Items per page unless the server says otherwise (clients must not assume any size).
DEFAULT_PAGE_SIZE = 100
# Our cursors are ~100 characters; anything far longer is refused before decoding.
_MAX_CURSOR_LENGTH = 512
_MAC_BYTES = 16
_VERSION = 1

T = typing.TypeVar("T")


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    """Decode canonical unpadded base64url only, so no two spellings give the same bytes."""
    try:
        data = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursor("malformed", "not a cursor this server issued") from exc
    if _b64encode(data) != text:
        raise InvalidCursor("malformed", "not a cursor this server issued")
    return data


def snapshot_of(keys: Iterable[str]) -> str:
    """Return a short token that changes whenever the listed keys (names, URIs) change."""
    digest = hashlib.sha256()
    for key in keys:
        digest.update(key.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return _b64encode(digest.digest()[:12])


@typing.final
class CursorCodec:
    """Encode and check cursors under one secret (one per server, random by default).

    Pass a fixed ``secret`` (at least 16 bytes) only if cursors must survive across
    processes, such as behind a load balancer.
    """

    __slots__ = ("_secret",)

    def __init__(self, secret: bytes | None = None) -> None:
        if secret is not None and len(secret) < 16:
            raise ValueError("a cursor secret needs at least 16 bytes")
        self._secret = secret if secret is not None else os.urandom(32)

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(self, *, method: str, offset: int, snapshot: str = "") -> str:
        """Return the cursor for ``offset`` in ``method``'s list as of ``snapshot``."""
        if offset < 0:
            raise ValueError("a cursor offset cannot be negative")
        body = {"v": _VERSION, "m": method, "o": offset, "s": snapshot}
        payload = json.dumps(body, separators=(",", ":")).encode("utf-8")
        return f"{_b64encode(payload)}.{_b64encode(self._mac(payload))}"

    def decode(self, cursor: object, *, method: str, snapshot: str = "") -> int:
        """Return the offset ``cursor`` points at, after checking it fully.

        Raises:
            InvalidCursor: not a string, malformed, bad signature (tampered or foreign),
                issued by another list method, or the list changed since (``snapshot``).
        """
        if not isinstance(cursor, str) or len(cursor) > _MAX_CURSOR_LENGTH:
            raise InvalidCursor("malformed", "not a cursor this server issued")
        encoded_payload, dot, encoded_mac = cursor.partition(".")
        if not dot:
            raise InvalidCursor("malformed", "not a cursor this server issued")
        payload = _b64decode(encoded_payload)
        if not hmac.compare_digest(_b64decode(encoded_mac), self._mac(payload)):
            raise InvalidCursor("signature", "not a cursor this server issued")
        body = json.loads(payload)  # signed by us, so it is our own JSON
        if body.get("m") != method:
            raise InvalidCursor("method", f"issued for {body.get('m')!r}, not {method!r}")
        if body.get("s") != snapshot:
            raise InvalidCursor("stale", "the list changed since; list again from the start")
        offset = body.get("o")
        if body.get("v") != _VERSION or not isinstance(offset, int) or offset < 0:
            raise InvalidCursor("malformed", "not a cursor this server issued")
        return offset


@typing.final
@dataclass(frozen=True, slots=True)
class Paginator:
    """Page lists with one codec and one page size (the server's choice: MCP Pagination)."""

    codec: CursorCodec
    page_size: int = DEFAULT_PAGE_SIZE

    def __post_init__(self) -> None:
        if self.page_size < 1:
            raise ValueError("page_size must be at least 1")

    def page(
        self, items: Sequence[T], cursor: str | None, *, method: str, snapshot: str = ""
    ) -> Page[T]:
        """Return the page of ``items`` that ``cursor`` points at (the first if None).

        Pass ``snapshot=snapshot_of(keys)`` for a list that can change between calls, so
        that an old cursor is refused rather than skipping or repeating items.

        Raises:
            InvalidCursor: see ``CursorCodec.decode``; also an offset past the end.
        """
        start = 0
        if cursor is not None:
            start = self.codec.decode(cursor, method=method, snapshot=snapshot)
        if start > len(items):
            raise InvalidCursor("range", "points past the end of the list; list again")
        end = start + self.page_size
        next_cursor = None
        if end < len(items):
            next_cursor = self.codec.encode(method=method, offset=end, snapshot=snapshot)
        return Page(tuple(items[start:end]), next_cursor)
