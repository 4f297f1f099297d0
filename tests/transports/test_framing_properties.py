"""Hypothesis: however the bytes are chunked, StdioStream yields the same messages and errors."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ._support import Outcome, TooLarge, chunked, receive_all, stdio_from_chunks

LIMIT = 16
RECEIVE_SIZE = 8


def message_bytes(max_size: int) -> st.SearchStrategy[bytes]:
    """Anything but b"\\n", not ending in b"\\r" (CRLF framing would strip it)."""
    return st.binary(min_size=1, max_size=max_size).filter(
        lambda m: b"\n" not in m and not m.endswith(b"\r")
    )


endings = st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\r\n\r\n"])


@st.composite
def framed_streams(draw: st.DrawFn, *, max_size: int) -> tuple[bytes, list[int], list[Outcome]]:
    """Draw (stream bytes, cut points, expected outcomes) for a sequence of lines."""
    lines = draw(st.lists(st.tuples(message_bytes(max_size), endings)))
    unterminated = draw(st.none() | message_bytes(max_size))
    data = b"".join(message + ending for message, ending in lines)
    expected = [expect(message, ending) for message, ending in lines]
    if unterminated is not None:
        data += unterminated
        expected.append(expect(unterminated, b""))
    cuts = draw(st.lists(st.integers(0, len(data)), max_size=len(data)))
    return data, cuts, expected


def expect(message: bytes, ending: bytes) -> Outcome:
    if len(message) <= LIMIT:
        return message
    return TooLarge(len(message) + ending.startswith(b"\r"))


def by_receive_size(data: bytes, cuts: list[int]) -> list[bytes]:
    """Cut ``data`` at ``cuts`` and wherever a piece would exceed one read."""
    pieces = chunked(data, cuts)
    return [p[i : i + RECEIVE_SIZE] for p in pieces for i in range(0, len(p), RECEIVE_SIZE)]


@given(framed_streams(max_size=LIMIT))
async def test_messages_arrive_intact_and_in_order(
    drawn: tuple[bytes, list[int], list[Outcome]],
) -> None:
    data, cuts, expected = drawn
    assert all(isinstance(outcome, bytes) for outcome in expected)
    stream, _, _ = stdio_from_chunks(
        by_receive_size(data, cuts), max_message_size=LIMIT, receive_size=RECEIVE_SIZE
    )
    assert await receive_all(stream) == expected


@given(framed_streams(max_size=3 * LIMIT))
async def test_over_long_lines_give_the_same_errors_however_chunked(
    drawn: tuple[bytes, list[int], list[Outcome]],
) -> None:
    data, cuts, expected = drawn
    stream, _, _ = stdio_from_chunks(
        by_receive_size(data, cuts), max_message_size=LIMIT, receive_size=RECEIVE_SIZE
    )
    assert await receive_all(stream) == expected
    assert stream.statistics().peak_buffered_bytes <= LIMIT + 1 + RECEIVE_SIZE
