"""The HTTP/1.1 request-head parser and chunked decoder: rules, h11 as an oracle, junk."""

from __future__ import annotations

import itertools

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.http._h1_parse import (
    MAX_HEAD_SIZE,
    ChunkedDecoder,
    HeadRejected,
    RequestHead,
    parse_head,
)

TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
CONTROL = {"host", "content-length", "transfer-encoding", "connection", "upgrade", "expect"}


def head(*lines: str) -> bytes:
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def test_a_plain_post() -> None:
    parsed = parse_head(
        head(
            "POST /mcp?x=1 HTTP/1.1",
            "Host: 127.0.0.1:8000",
            "Content-Type: application/json",
            "Content-Length:  42 ",
            "MCP-Session-Id: abc",
        )
    )
    assert parsed.method == "POST"
    assert (parsed.path, parsed.raw_path, parsed.query) == ("/mcp", b"/mcp", b"x=1")
    assert parsed.content_length == 42
    assert parsed.keep_alive
    assert parsed.headers[1] == (b"content-type", b"application/json")
    assert (b"mcp-session-id", b"abc") in parsed.headers
    assert parsed.upgrade is None
    assert not parsed.expect_continue


def test_percent_decoding_and_absolute_form() -> None:
    parsed = parse_head(head("GET http://example.com/a%20b?q HTTP/1.1", "Host: example.com"))
    assert (parsed.path, parsed.raw_path, parsed.query) == ("/a b", b"/a%20b", b"q")
    bare = parse_head(head("GET http://example.com HTTP/1.1", "Host: example.com"))
    assert bare.path == "/"


def test_keep_alive_rules() -> None:
    assert not parse_head(head("GET / HTTP/1.1", "Host: a", "Connection: close")).keep_alive
    assert not parse_head(head("GET / HTTP/1.0")).keep_alive
    assert parse_head(head("GET / HTTP/1.0", "Connection: Keep-Alive")).keep_alive


def test_chunked_upgrade_and_expect() -> None:
    parsed = parse_head(
        head(
            "POST / HTTP/1.1",
            "Host: a",
            "Transfer-Encoding: chunked",
            "Expect: 100-continue",
        )
    )
    assert parsed.content_length is None
    assert parsed.expect_continue
    upgrade = parse_head(
        head(
            "GET /mcp/ws HTTP/1.1",
            "Host: a",
            "Connection: keep-alive, Upgrade",
            "Upgrade: WebSocket",
        )
    )
    assert upgrade.upgrade == b"websocket"
    # Upgrade without "Connection: upgrade" is not an upgrade request.
    assert parse_head(head("GET / HTTP/1.1", "Host: a", "Upgrade: websocket")).upgrade is None


def test_empty_lines_before_the_request_line_are_ignored() -> None:
    assert parse_head(b"\r\n\r\n" + head("GET / HTTP/1.1", "Host: a")).method == "GET"


@pytest.mark.parametrize(
    ("lines", "status", "words"),
    [
        (("GET / HTTP/1.1",), 400, "exactly one Host"),
        (("GET / HTTP/1.1", "Host: a", "Host: b"), 400, "exactly one Host"),
        (("GET / HTTP/1.1", "Host: a", " folded: x"), 400, "line folding"),
        (("GET / HTTP/1.1", "Host : a"), 400, "not a valid token"),
        (("GET / HTTP/1.1", "Host: a", "no colon here"), 400, "has no ':'"),
        (("GET / HTTP/1.1", "Host: a", "X: a\x00b"), 400, "control characters"),
        (("POST / HTTP/1.1", "Host: a", "Content-Length: 1x"), 400, "not a non-negative"),
        (("POST / HTTP/1.1", "Host: a", "Content-Length: -1"), 400, "not a non-negative"),
        (
            ("POST / HTTP/1.1", "Host: a", "Content-Length: 1", "Content-Length: 2"),
            400,
            "different",
        ),
        (("POST / HTTP/1.1", "Host: a", "Content-Length: 1, 2"), 400, "different"),
        (
            ("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked", "Content-Length: 3"),
            400,
            "both",
        ),
        (("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: gzip, chunked"), 501, "chunked"),
        (("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked, gzip"), 501, "chunked"),
        (("POST / HTTP/1.0", "Transfer-Encoding: chunked"), 400, "HTTP/1.0"),
        (("GET / HTTP/2.0", "Host: a"), 505, "HTTP/1.1"),
        (("GET / FTP/1.0", "Host: a"), 400, "not 'HTTP/1.1'"),
        (("GET  / HTTP/1.1", "Host: a"), 400, "single spaces"),
        (("G(T / HTTP/1.1", "Host: a"), 400, "method"),
        (("GET mcp HTTP/1.1", "Host: a"), 400, "not a path"),
        (("GET /%ff HTTP/1.1", "Host: a"), 400, "UTF-8"),
    ],
)
def test_refusals(lines: tuple[str, ...], status: int, words: str) -> None:
    with pytest.raises(HeadRejected) as info:
        parse_head(head(*lines))
    assert info.value.status == status
    assert words in info.value.reason


def test_oversized_heads_and_too_many_fields_get_431() -> None:
    with pytest.raises(HeadRejected) as big:
        parse_head(head("GET / HTTP/1.1", "Host: a", "X: " + "a" * MAX_HEAD_SIZE))
    assert big.value.status == 431
    many = [f"X-{n}: y" for n in range(200)]
    with pytest.raises(HeadRejected) as fields:
        parse_head(head("GET / HTTP/1.1", "Host: a", *many))
    assert fields.value.status == 431


# --- h11 as an oracle ------------------------------------------------------------------------

names = st.text(TCHARS, min_size=1, max_size=12).filter(lambda n: n.lower() not in CONTROL)
values = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20).map(
    lambda v: v.strip()
)
segments = st.text("abcXYZ019-._~%20", min_size=0, max_size=8).filter(
    lambda s: "%" not in s.replace("%20", "")
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[bytes, bytes]:
    method = draw(st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "X-CUSTOM"]))
    path = "/" + "/".join(draw(st.lists(segments, max_size=4)))
    query = draw(st.one_of(st.none(), st.text("a=1&b2c", max_size=10)))
    target = path if query is None else f"{path}?{query}"
    fields = draw(st.lists(st.tuples(names, values), max_size=8))
    body = draw(st.binary(max_size=40))
    chunked = draw(st.booleans()) and bool(body)
    lines = [f"{method} {target} HTTP/1.1", "Host: example.org"]
    lines += [f"{name}:{draw(st.sampled_from(['', ' ', '  ']))}{value}" for name, value in fields]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        framed = b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)
    else:
        lines.append(f"Content-Length: {len(body)}")
        framed = body
    return head(*lines), framed


@settings(max_examples=300, deadline=None)
@given(requests())
def test_the_parse_agrees_with_h11(request: tuple[bytes, bytes]) -> None:
    raw, framed = request
    ours = parse_head(raw)
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(raw + framed)
    theirs = connection.next_event()
    assert isinstance(theirs, h11.Request)
    assert ours.method.encode() == theirs.method
    target = ours.raw_path + (b"?" + ours.query if ours.query or b"?" in theirs.target else b"")
    assert target == theirs.target
    assert ours.headers == [(name, value) for name, value in theirs.headers]
    body = b""
    while True:
        event = connection.next_event()
        if isinstance(event, h11.Data):
            body += event.data
        else:
            assert isinstance(event, h11.EndOfMessage)
            break
    if ours.content_length is None:
        decoded, used = ChunkedDecoder().feed(framed)
        assert (decoded, used) == (body, len(framed))
    else:
        assert framed[: ours.content_length] == body


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_junk_is_parsed_or_refused_never_crashes(junk: bytes) -> None:
    outcome: object
    try:
        outcome = parse_head(junk.replace(b"\r\n\r\n", b"") + b"\r\n\r\n")
    except HeadRejected as refusal:
        outcome = refusal
    if isinstance(outcome, HeadRejected):
        assert 400 <= outcome.status < 600
        assert outcome.reason
    else:
        assert isinstance(outcome, RequestHead)
        assert outcome.method


# --- chunked bodies ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=30), max_size=6),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=20),
    st.booleans(),
)
def test_chunked_bodies_decode_whatever_the_reads(
    chunks: list[bytes], cuts: list[int], trailers: bool
) -> None:
    framed = b"".join(b"%x;ext=1\r\n%b\r\n" % (len(c), c) for c in chunks) + b"0\r\n"
    framed += b"X-Trailer: 1\r\n\r\n" if trailers else b"\r\n"
    framed += b"NEXT"
    decoder = ChunkedDecoder()
    pending = b""
    body = b""
    at = 0
    for cut in itertools.islice(itertools.cycle(cuts), len(framed)):
        if decoder.done or at >= len(framed):
            break
        pending += framed[at : at + cut]
        at += cut
        piece, used = decoder.feed(pending)
        body += piece
        pending = pending[used:]
    assert decoder.done
    assert body == b"".join(chunks)
    assert (pending + framed[at:]) == b"NEXT"


@pytest.mark.parametrize(
    "framed", [b"zz\r\n", b"3\r\nabcd\r\n", b"12345678901234567\r\n", b"-1\r\n"]
)
def test_malformed_chunks_are_refused(framed: bytes) -> None:
    with pytest.raises(HeadRejected) as info:
        ChunkedDecoder().feed(framed)
    assert info.value.status == 400


@pytest.mark.parametrize(
    ("framed", "status", "words"),
    [
        (b"2;\nxx\r\nd5\r\n", 400, "bare LF"),
        (b"0\r\n\n", 400, "bare LF"),
        (b"2\r\nab\n", 400, "not followed by CRLF"),
        (b" 2\r\nab\r\n", 400, "hexadecimal"),
        (b"2 ;x\r\nab\r\n", 400, "malformed"),
        (b"2;x=\r\nab\r\n", 400, "malformed"),
        (b"2;" + b"a" * 5000, 400, "longer than"),
        (b"0\r\nGET / HTTP/1.1\r\n\r\n", 400, "has no ':'"),
        (b"0\r\nno colon\r\n\r\n", 400, "has no ':'"),
        (b"0\r\nx: a\x00b\r\n\r\n", 400, "control characters"),
        (b"0\r\n folded: x\r\n\r\n", 400, "line folding"),
        (b"0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "may not contain"),
        (b"0\r\nx: " + b"y" * 17_000, 431, "trailer section"),
        (b"0\r\n" + b"x-long-name: y\r\n" * 100 + b"x: " + b"y" * 16_000, 431, "trailer section"),
        (b"0\r\n" + b"x: y\r\n" * 200 + b"\r\n", 431, "trailer fields"),
    ],
)
def test_chunked_framing_refusals(framed: bytes, status: int, words: str) -> None:
    with pytest.raises(HeadRejected) as info:
        ChunkedDecoder().feed(framed)
    assert info.value.status == status
    assert words in info.value.reason


def test_chunk_extensions_and_trailers_that_are_well_formed_are_accepted() -> None:
    framed = b'2;a=b; c = "d \\" e";f\t\r\nab\r\n0\r\nX-Sum: 1\r\nY:\r\n\r\nNEXT'
    decoder = ChunkedDecoder()
    assert decoder.feed(framed) == (b"ab", len(framed) - 4)
    assert decoder.done


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=1, max_value=50))
def test_chunked_junk_is_decoded_or_refused_never_crashes(junk: bytes, cut: int) -> None:
    decoder = ChunkedDecoder()
    pending = b""
    try:
        for at in range(0, len(junk), cut):
            pending += junk[at : at + cut]
            _, used = decoder.feed(pending)
            assert 0 <= used <= len(pending)
            pending = pending[used:]
    except HeadRejected as refusal:
        outcome = (refusal.status, bool(refusal.reason))
        assert outcome in ((400, True), (431, True))
