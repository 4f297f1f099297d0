"""Opaque list cursors: paging, and refusing garbage, tampered, foreign and stale cursors."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.server import CursorCodec, InvalidCursor, Paginator, snapshot_of

SECRET = b"0123456789abcdef0123456789abcdef"


def test_pages_cover_the_list_once_in_order() -> None:
    paginator = Paginator(CursorCodec(SECRET), page_size=3)
    items = list(range(8))
    seen: list[int] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = paginator.page(items, cursor, method="tools/list")
        seen.extend(page.items)
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == items
    assert pages == 3


def test_exact_multiple_has_no_empty_last_page_and_empty_list_one_page() -> None:
    paginator = Paginator(CursorCodec(SECRET), page_size=2)
    first = paginator.page([1, 2, 3, 4], None, method="m")
    assert first.next_cursor is not None
    second = paginator.page([1, 2, 3, 4], first.next_cursor, method="m")
    assert (second.items, second.next_cursor) == ((3, 4), None)
    assert paginator.page([], None, method="m").items == ()


def test_cursor_from_another_method_is_refused() -> None:
    paginator = Paginator(CursorCodec(SECRET), page_size=1)
    cursor = paginator.page(["a", "b"], None, method="tools/list").next_cursor
    assert cursor is not None
    with pytest.raises(InvalidCursor, match="tools/list") as info:
        paginator.page(["a", "b"], cursor, method="prompts/list")
    assert info.value.reason == "method"


def test_cursor_from_another_server_is_refused() -> None:
    cursor = CursorCodec(SECRET).encode(method="m", offset=1)
    with pytest.raises(InvalidCursor) as info:
        CursorCodec().decode(cursor, method="m")
    assert info.value.reason == "signature"


def test_stale_cursor_is_refused_when_the_list_changed() -> None:
    paginator = Paginator(CursorCodec(SECRET), page_size=1)
    before = ["a", "b", "c"]
    cursor = paginator.page(before, None, method="m", snapshot=snapshot_of(before)).next_cursor
    assert cursor is not None
    after = ["a", "c"]
    with pytest.raises(InvalidCursor) as info:
        paginator.page(after, cursor, method="m", snapshot=snapshot_of(after))
    assert info.value.reason == "stale"
    same = paginator.page(before, cursor, method="m", snapshot=snapshot_of(list(before)))
    assert same.items == ("b",)


def test_snapshot_tokens() -> None:
    assert snapshot_of(["a", "b"]) == snapshot_of(["a", "b"])
    assert snapshot_of(["a", "b"]) != snapshot_of(["ab"])
    assert snapshot_of(["a", "b"]) != snapshot_of(["b", "a"])


def test_offset_past_the_end_is_refused() -> None:
    codec = CursorCodec(SECRET)
    cursor = codec.encode(method="m", offset=10)
    with pytest.raises(InvalidCursor) as info:
        Paginator(codec).page([1, 2], cursor, method="m")
    assert info.value.reason == "range"


def test_tampered_payload_is_refused() -> None:
    codec = CursorCodec(SECRET)
    payload, mac = codec.encode(method="m", offset=2).split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["o"] = 0
    forged = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    with pytest.raises(InvalidCursor) as info:
        codec.decode(f"{forged}.{mac}", method="m")
    assert info.value.reason == "signature"


@pytest.mark.parametrize("garbage", ["", ".", "abc", "a.b", "!!!.???", "é.é", "x" * 600, 5, None])
def test_garbage_is_refused(garbage: object) -> None:
    with pytest.raises(InvalidCursor):
        CursorCodec(SECRET).decode(garbage, method="m")


def test_bad_construction() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        CursorCodec(b"short")
    with pytest.raises(ValueError, match="page_size"):
        Paginator(CursorCodec(), page_size=0)
    with pytest.raises(ValueError, match="negative"):
        CursorCodec().encode(method="m", offset=-1)


@given(cursor=st.text(max_size=200) | st.binary(max_size=50).map(lambda b: b.hex()))
def test_random_cursors_only_ever_raise_invalid_cursor(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        CursorCodec(SECRET).decode(cursor, method="m")


@given(
    offset=st.integers(0, 10**6),
    position=st.integers(0, 10**3),
    replacement=st.sampled_from(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.="
    ),
)
def test_any_single_character_change_is_refused(
    offset: int, position: int, replacement: str
) -> None:
    codec = CursorCodec(SECRET)
    cursor = codec.encode(method="m", offset=offset)
    position %= len(cursor)
    changed = cursor[:position] + replacement + cursor[position + 1 :]
    if changed == cursor:
        assert codec.decode(changed, method="m") == offset
        return
    with pytest.raises(InvalidCursor):
        codec.decode(changed, method="m")


@given(offset=st.integers(0, 2**62), method=st.text(max_size=30), snapshot=st.text(max_size=20))
def test_encode_decode_round_trip(offset: int, method: str, snapshot: str) -> None:
    codec = CursorCodec(SECRET)
    cursor = codec.encode(method=method, offset=offset, snapshot=snapshot)
    assert codec.decode(cursor, method=method, snapshot=snapshot) == offset
