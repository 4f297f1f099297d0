"""Hypothesis: SSE round trips, chunking never matters, junk raises only the typed error."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import SSEEventTooLarge
from trimcp.transports._sse import SSEDecoder, SSEEvent, encode_event, keepalive_comment

from ._support import chunked

LIMIT = 24


@dataclass(frozen=True, slots=True)
class TooLarge:
    """Stands for an ``SSEEventTooLarge(size, ...)`` in a sequence of outcomes."""

    size: int


Outcome = SSEEvent | TooLarge


@dataclass(frozen=True, slots=True)
class Decoded:
    outcomes: list[Outcome]
    last_event_id: str
    retry: int | None


def drain(decoder: SSEDecoder, chunk: bytes | None) -> list[Outcome]:
    """Feed one chunk (``None``: end the body), then call ``feed(b"")`` until nothing is left."""
    outcomes: list[Outcome] = []
    while True:
        try:
            events = decoder.feed_eof() if chunk is None else decoder.feed(chunk)
        except SSEEventTooLarge as exc:
            outcomes.append(TooLarge(exc.size))
        else:
            if not events:
                return outcomes
            outcomes.extend(events)
        chunk = b""


def decode_chunks(chunks: list[bytes], *, max_event_size: int = LIMIT) -> Decoded:
    decoder = SSEDecoder(max_event_size=max_event_size)
    outcomes: list[Outcome] = []
    for chunk in chunks:
        outcomes += drain(decoder, chunk)
        # Memory stays bounded whatever arrives: a partial line plus one event's data.
        assert decoder.statistics().buffered_bytes <= 2 * max_event_size + 7
    outcomes += drain(decoder, None)
    return Decoded(outcomes, decoder.last_event_id, decoder.retry)


# --- round trip ------------------------------------------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=40)
ids = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=12)
types = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)
retries = st.integers(0, 10**15 - 1)


@st.composite
def event_args(draw: st.DrawFn) -> tuple[str | None, str | None, str | None, int | None]:
    data = draw(st.none() | texts)
    event_id = draw(st.none() | ids)
    event = draw(st.none() | types)
    retry = draw(st.none() | retries)
    if data is None and event_id is None and retry is None:
        data = ""
    return data, event_id, event, retry


@given(st.lists(event_args(), max_size=8), st.data())
def test_encode_then_decode_gives_the_events_back(
    events: list[tuple[str | None, str | None, str | None, int | None]], data: st.DataObject
) -> None:
    wire = b"".join(
        encode_event(
            None if text is None else text.encode(),
            event_id=event_id,
            event=event,
            retry_ms=retry,
        )
        for text, event_id, event, retry in events
    )
    if data.draw(st.booleans(), label="keep-alives between events"):
        wire = keepalive_comment() + wire.replace(b"\n\n", b"\n\n" + keepalive_comment())
    cuts = data.draw(st.lists(st.integers(0, len(wire))), label="cuts")
    decoded = decode_chunks(chunked(wire, cuts), max_event_size=10_000)
    expected: list[Outcome] = [
        SSEEvent(data=text or "", event=event or "message", id=event_id, retry=retry)
        for text, event_id, event, retry in events
        if text is not None or event_id is not None
    ]
    assert decoded.outcomes == expected
    last_ids = [event_id for _, event_id, _, _ in events if event_id is not None]
    last_retries = [retry for *_, retry in events if retry is not None]
    assert decoded.last_event_id == (last_ids[-1] if last_ids else "")
    assert decoded.retry == (last_retries[-1] if last_retries else None)


# --- chunking never matters ------------------------------------------------------------------

# Pieces that make the parser's every branch likely: fields, line endings split from each
# other, a BOM, NUL, split UTF-8, over-long runs and comments.
pieces = st.sampled_from(
    [
        b"data:",
        b"data: ",
        b"id: ",
        b"id:7",
        b"event: ",
        b"retry: 12",
        b"retry: x",
        b": c",
        b":",
        b"\r",
        b"\n",
        b"\r\n",
        b"\n\n",
        b"\xef\xbb\xbf",
        b"\xef",
        b"\0",
        b"\xc3",
        b"\xa9",
        b"x",
        b" ",
        b"y" * 30,
        b"data: ab\n",
        b"data: ab\n\n",
        b"id: s1-2\n",
        b"\r\n\r\n",
    ]
)
streams = st.one_of(
    st.lists(pieces, max_size=60).map(b"".join),
    st.lists(pieces, max_size=60).map(b"".join),
    st.binary(max_size=200),
)


@given(streams, st.data())
def test_any_chunking_gives_the_same_outcomes(stream: bytes, data: st.DataObject) -> None:
    whole = decode_chunks([stream])
    cuts = data.draw(st.lists(st.integers(0, len(stream))), label="cuts")
    assert decode_chunks(chunked(stream, cuts)) == whole


@given(streams)
def test_byte_by_byte_gives_the_same_outcomes(stream: bytes) -> None:
    assert decode_chunks([stream[i : i + 1] for i in range(len(stream))]) == decode_chunks([stream])


@given(st.lists(st.binary(max_size=64), max_size=10))
def test_random_bytes_only_ever_raise_the_typed_error(chunks: list[bytes]) -> None:
    # decode_chunks lets anything but SSEEventTooLarge propagate and fail the test.
    decoded = decode_chunks(chunks)
    assert all(
        isinstance(outcome, SSEEvent) or outcome.size > LIMIT for outcome in decoded.outcomes
    )
