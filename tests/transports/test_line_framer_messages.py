"""``LineFramer.messages`` returns exactly what repeated ``next_message`` calls would."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import MessageTooLarge
from trimcp.transports._line_framer import _COPY_THROUGH_VIEW, LineFramer

# Bytes rich in line endings, so that empty lines, CRLF and lone CRs all come up.
pieces = st.lists(
    st.sampled_from([b"\n", b"\r", b"\r\n", b"a", b"bc", b"x" * 7, b"{}"]), max_size=12
).map(b"".join)

Item = bytes | tuple[str, int, int]


def one_by_one(framer: LineFramer) -> list[Item]:
    out: list[Item] = []
    while True:
        try:
            message = framer.next_message()
        except MessageTooLarge as exc:
            out.append(("too large", exc.size, exc.limit))
            continue
        if message is None:
            return out
        out.append(message)


def all_at_once(framer: LineFramer) -> list[Item]:
    return [
        ("too large", item.size, item.limit) if isinstance(item, MessageTooLarge) else item
        for item in framer.messages()
    ]


@given(chunks=st.lists(pieces, max_size=8), limit=st.integers(1, 12))
def test_messages_matches_next_message(chunks: list[bytes], limit: int) -> None:
    reference, bulk = LineFramer(limit), LineFramer(limit)
    for chunk in chunks:
        reference.feed(chunk)
        bulk.feed(chunk)
        assert all_at_once(bulk) == one_by_one(reference)
        assert bulk.statistics() == reference.statistics()
    reference.feed_eof()
    bulk.feed_eof()
    assert all_at_once(bulk) == one_by_one(reference)
    assert bulk.messages() == []


def test_long_lines_are_copied_whole() -> None:
    framer = LineFramer(4 * _COPY_THROUGH_VIEW)
    long = b"y" * (2 * _COPY_THROUGH_VIEW)
    framer.feed(long + b"\r\nshort\n" + long)
    assert framer.messages() == [long, b"short"]
    framer.feed_eof()
    assert framer.messages() == [long]
