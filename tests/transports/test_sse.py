"""SSE framing: the encoder's exact bytes, and the decoder against the WHATWG parsing rules."""

from __future__ import annotations

import pytest

from trimcp.errors import MessageTooLarge, SSEEventTooLarge
from trimcp.transports._sse import SSEDecoder, SSEEvent, encode_event, keepalive_comment


def decode(data: bytes, *, max_event_size: int = 1024) -> list[SSEEvent]:
    """Feed ``data`` in one chunk and end the body."""
    decoder = SSEDecoder(max_event_size=max_event_size)
    return decoder.feed(data) + decoder.feed_eof()


def bytewise(decoder: SSEDecoder, data: bytes) -> list[SSEEvent]:
    return [event for i in range(len(data)) for event in decoder.feed(data[i : i + 1])]


# --- encoding --------------------------------------------------------------------------------


def test_priming_event_has_an_id_and_one_empty_data_line() -> None:
    # MCP 2025-11-25 / EXAMPLES.md 5.2: "id: s7-0" then "data: " then a blank line.
    assert encode_event(None, event_id="s7-0") == b"id: s7-0\ndata: \n\n"


def test_message_event_matches_the_streamable_http_example() -> None:
    message = b'{"jsonrpc":"2.0","method":"notifications/progress"}'
    assert encode_event(message, event_id="s7-1", event="message") == (
        b"id: s7-1\nevent: message\ndata: " + message + b"\n\n"
    )


def test_fields_come_in_the_order_id_event_retry_data() -> None:
    assert encode_event(b"x", event_id="1", event="e", retry_ms=500) == (
        b"id: 1\nevent: e\nretry: 500\ndata: x\n\n"
    )
    # The conformance harness's own priming event carries its retry the same way.
    assert encode_event(None, event_id="event-1", retry_ms=500) == (
        b"id: event-1\nretry: 500\ndata: \n\n"
    )


def test_retry_hint_alone_has_no_data_line() -> None:
    assert encode_event(None, retry_ms=1500) == b"retry: 1500\n\n"
    assert decode(b"retry: 1500\n\n") == []


def test_empty_data_is_one_empty_data_line() -> None:
    assert encode_event(b"") == b"data: \n\n"
    assert decode(encode_event(b"")) == [SSEEvent(data="")]


@pytest.mark.parametrize("data", [b"a\nb", b"a\r\nb", b"a\rb"])
def test_each_line_of_data_gets_its_own_data_line(data: bytes) -> None:
    assert encode_event(data) == b"data: a\ndata: b\n\n"
    assert decode(encode_event(data)) == [SSEEvent(data="a\nb")]


def test_data_ending_in_a_newline_keeps_it() -> None:
    assert encode_event(b"a\n") == b"data: a\ndata: \n\n"
    assert decode(encode_event(b"a\n")) == [SSEEvent(data="a\n")]


def test_leading_spaces_survive_the_round_trip() -> None:
    wire = encode_event(b"  two", event_id=" one", event=" type")
    assert decode(wire) == [SSEEvent(data="  two", id=" one", event=" type")]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"event_id": "a\nb"}, "id field"),
        ({"event_id": "a\rb"}, "id field"),
        ({"event_id": "a\0b"}, "id field"),
        ({"event": "a\nb"}, "event field"),
        ({"retry_ms": -1}, "retry_ms"),
    ],
)
def test_fields_that_cannot_be_read_back_are_refused(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        encode_event(b"x", **kwargs)  # type: ignore[arg-type]


def test_an_empty_event_is_refused() -> None:
    with pytest.raises(ValueError, match="needs data"):
        encode_event(None)


def test_keepalive_is_a_comment_that_changes_nothing() -> None:
    decoder = SSEDecoder()
    decoder.feed(encode_event(b"x", event_id="s1-4"))
    assert keepalive_comment().startswith(b":")
    assert decoder.feed(keepalive_comment() * 3) == []
    assert decoder.last_event_id == "s1-4"


# --- decoding: the standard's examples and rules ---------------------------------------------


def test_data_lines_are_joined_with_lf() -> None:
    assert decode(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [SSEEvent(data="YHOO\n+2\n10")]


def test_standard_example_with_comment_ids_and_spaces() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n\n"
    )
    assert events == [
        SSEEvent(data="first event", id="1"),
        SSEEvent(data="second event", id=""),
        SSEEvent(data=" third event"),
    ]
    # "id" with no value resets the last event id, and the third event sets none.
    assert decoder.last_event_id == ""


def test_standard_example_of_empty_data_and_an_unfinished_event() -> None:
    assert decode(b"data\n\ndata\ndata\n\ndata:") == [SSEEvent(data=""), SSEEvent(data="\n")]


def test_one_space_after_the_colon_is_optional() -> None:
    assert decode(b"data:test\n\ndata: test\n\n") == [SSEEvent(data="test")] * 2


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending_works(eol: bytes) -> None:
    wire = eol.join([b"id: 1", b"event: e", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert decode(wire) == [SSEEvent(data="a\nb", event="e", id="1"), SSEEvent(data="c")]


def test_mixed_line_endings() -> None:
    assert decode(b"data: a\rdata: b\r\ndata: c\n\r\n") == [SSEEvent(data="a\nb\nc")]


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r") == []
    assert decoder.feed(b"\n") == []
    # A CR ends the blank line at once; the LF after it, in the next chunk, is part of it.
    assert decoder.feed(b"\r") == [SSEEvent(data="a\nb")]
    assert decoder.feed(b"\ndata: c\n\n") == [SSEEvent(data="c")]


def test_cr_at_a_chunk_end_then_another_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"data: b\r\r") == [SSEEvent(data="a\nb")]


def test_utf8_split_anywhere() -> None:
    text = "é€😀 ünï"
    decoder = SSEDecoder()
    assert bytewise(decoder, f"id: {text}\ndata: {text}\n\n".encode()) == [
        SSEEvent(data=text, id=text)
    ]


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert decode(b"data: a\xffb\xc3\n\n") == [SSEEvent(data="a\ufffdb\ufffd")]


def test_one_leading_bom_is_dropped_even_split() -> None:
    decoder = SSEDecoder()
    assert bytewise(decoder, b"\xef\xbb\xbfdata: x\n\n") == [SSEEvent(data="x")]


def test_a_second_bom_is_part_of_the_field_name() -> None:
    # "\ufeffdata" is an unknown field, so the first block dispatches nothing.
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [SSEEvent(data="y")]


def test_bom_prefix_that_is_not_a_bom_is_kept() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef\xbb") == []
    assert decoder.feed(b"data: x\n\n") == []  # the line's name is "\ufffd\ufffddata"
    assert decoder.feed(b"data: y\n\n") == [SSEEvent(data="y")]


def test_comments_unknown_fields_and_case_are_ignored() -> None:
    wire = b": hello\nfoo: bar\nData: no\nDATA: no\nretr: 1\ndata: yes\n\n"
    assert decode(wire) == [SSEEvent(data="yes")]


def test_field_without_colon_has_an_empty_value() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 3\n\nevent\ndata\n\n") == [SSEEvent(data="")]
    assert decoder.last_event_id == "3"


def test_event_type_belongs_to_one_event() -> None:
    wire = b"event: ping\ndata: 1\n\nevent:\ndata: 2\n\ndata: 3\n\n"
    assert decode(wire) == [
        SSEEvent(data="1", event="ping"),
        SSEEvent(data="2"),
        SSEEvent(data="3"),
    ]


def test_last_event_id_persists_and_is_committed_by_a_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\ndata: a\n\ndata: b\n\n") == [
        SSEEvent(data="a", id="1"),
        SSEEvent(data="b"),
    ]
    assert decoder.last_event_id == "1"
    assert decoder.feed(b"id: 2\n") == []
    assert decoder.last_event_id == "1"  # not before the blank line
    assert decoder.feed(b"\n") == []  # a block with an id and no data dispatches nothing
    assert decoder.last_event_id == "2"


def test_id_with_nul_is_ignored() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: good\n\nid: b\0d\ndata: x\n\n") == [SSEEvent(data="x")]
    assert decoder.last_event_id == "good"


def test_last_id_field_of_a_block_wins() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\nid: 2\ndata: x\n\n") == [SSEEvent(data="x", id="2")]
    assert decoder.last_event_id == "2"


def test_retry_takes_ascii_digits_only() -> None:
    assert SSEDecoder().retry is None
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 1500\n\n") == []
    assert decoder.retry == 1500
    for bad in [b"retry: 15a", b"retry: -1", b"retry:", b"retry: 1.5", "retry: ٣".encode()]:
        assert decoder.feed(bad + b"\n\n") == []
        assert decoder.retry == 1500
    assert decoder.feed(b"retry: 0007\ndata: x\n\n") == [SSEEvent(data="x", retry=7)]
    assert decoder.retry == 7


def test_absurdly_long_retry_is_ignored_without_error() -> None:
    decoder = SSEDecoder(max_event_size=10_000)
    decoder.feed(b"retry: 1\n\n")
    assert decoder.feed(b"retry: " + b"9" * 5000 + b"\n\n") == []
    assert decoder.feed(b"retry: " + b"0" * 5000 + b"25\n\n") == []
    assert decoder.retry == 25


def test_feed_eof_discards_an_unfinished_event_and_keeps_reconnection_state() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 500\nid: s1-0\ndata: \n\nid: s1-1\ndata: part") == [
        SSEEvent(data="", id="s1-0", retry=500)
    ]
    assert decoder.feed_eof() == []
    assert (decoder.last_event_id, decoder.retry) == ("s1-0", 500)
    # The next body starts fresh: a BOM is allowed again, nothing of "part" is left.
    assert decoder.feed(b"\xef\xbb\xbfdata: next\n\n") == [SSEEvent(data="next")]
    assert decoder.last_event_id == "s1-0"


def test_feed_eof_after_a_lone_cr() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r\r") == [SSEEvent(data="a")]
    assert decoder.feed_eof() == []
    assert decoder.feed(b"\ndata: b\n\n") == [SSEEvent(data="b")]  # that LF is a new line


def test_max_event_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_event_size"):
        SSEDecoder(max_event_size=0)


# --- decoding: the size limit ----------------------------------------------------------------


def test_data_of_exactly_the_limit_passes() -> None:
    assert decode(b"data: 12345\n\n", max_event_size=5) == [SSEEvent(data="12345")]
    assert decode(b"data: 12\ndata: 3\n\n", max_event_size=4) == [SSEEvent(data="12\n3")]


def test_data_over_the_limit_raises_and_the_stream_goes_on() -> None:
    decoder = SSEDecoder(max_event_size=4)
    with pytest.raises(SSEEventTooLarge) as caught:
        decoder.feed(b"id: big\ndata: 12\ndata: 34\n\n")
    assert isinstance(caught.value, MessageTooLarge)
    assert (caught.value.size, caught.value.limit) == (len(b"id: bigdata: 12data: 34"), 4)
    assert decoder.last_event_id == "big"  # a reconnecting client does not get it again
    assert decoder.feed(b"data: ok\n\n") == [SSEEvent(data="ok")]


def test_events_around_an_oversized_one_come_in_order() -> None:
    decoder = SSEDecoder(max_event_size=4)
    assert decoder.feed(b"data: a\n\ndata: 123456\n\ndata: b\n\ndata: c\n\n") == [
        SSEEvent(data="a")
    ]
    with pytest.raises(SSEEventTooLarge):
        decoder.feed(b"")
    assert decoder.feed(b"") == [SSEEvent(data="b"), SSEEvent(data="c")]
    assert decoder.feed(b"") == []
    assert decoder.statistics().ready_events == 0


def test_an_over_long_line_is_never_buffered() -> None:
    decoder = SSEDecoder(max_event_size=8)
    assert decoder.feed(b"event: ") == []
    for _ in range(100):
        assert decoder.feed(b"x" * 50) == []
        assert decoder.statistics().buffered_bytes <= 8 + len(b"data: ")
    with pytest.raises(SSEEventTooLarge) as caught:
        decoder.feed(b"\ndata: y\n\n")
    assert caught.value.size == len(b"event: ") + 5000 + len(b"data: y")
    assert decoder.feed(b"data: z\n\n") == [SSEEvent(data="z")]


def test_an_over_long_comment_is_skipped_silently() -> None:
    decoder = SSEDecoder(max_event_size=4)
    assert decoder.feed(b":" + b"x" * 100 + b"\ndata: a\n\n") == [SSEEvent(data="a")]
    assert decoder.feed(b": " + b"y" * 20) == []
    assert decoder.feed(b"y" * 20 + b"\ndata: b\n\n") == [SSEEvent(data="b")]


def test_an_unfinished_oversized_event_is_reported_at_eof() -> None:
    decoder = SSEDecoder(max_event_size=4)
    assert decoder.feed(b"data: 123456789") == []
    with pytest.raises(SSEEventTooLarge):
        decoder.feed_eof()
    assert decoder.feed(b"data: ok\n\n") == [SSEEvent(data="ok")]


def test_an_unfinished_small_event_is_dropped_silently_at_eof() -> None:
    decoder = SSEDecoder(max_event_size=4)
    assert decoder.feed(b"data: 12") == []
    assert decoder.feed_eof() == []
