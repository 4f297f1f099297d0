"""trimcp's HTTP/1.1 server frames every input as h11 does, or refuses it.

Request smuggling needs two parsers that disagree on where a request ends. Each input here —
a corpus of smuggling shapes and invalid framings, and Hypothesis mutations of valid
requests — is followed by a known-good request on the same connection, sent to trimcp's
server over a real loopback socket (then half-closed), and handed to
``h11.Connection(h11.SERVER)``. The requests each one serves (method, target, body) must
be the same. trimcp may serve fewer only by refusing, with one of the reasons listed in
``STRICTER`` (rules where it refuses what h11 accepts, each allowed by RFC 9112); it never
serves a request h11 does not, except where ``h11_frames`` models a documented deliberate
difference (empty lines before a request line; HTTP/1.0 keep-alive when asked).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import h11
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.http._h1 import H1Settings, serve_h1
from trimcp.http._h1_parse import MAX_HEAD_SIZE

Served = tuple[bytes, bytes, bytes]  # method, target, body

GOOD = b"POST /good HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\ngood"
#: A complete request hidden in a body: if it is ever served, framing went wrong.
S = b"GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"

#: Refusals where trimcp is deliberately stricter than h11 (each allowed by RFC 9112). A
#: refusal whose reason is not here, of a request h11 serves, fails the test.
STRICTER = (
    "line folding",  # h11 unfolds obs-fold; RFC 9112 5.2 lets a server refuse it
    "both Transfer-Encoding and Content-Length",  # RFC 9112 6.3: "ought to be handled as an error"
    "Transfer-Encoding is not allowed in an HTTP/1.0",  # RFC 9112 6.1
    "control characters",  # h11 lets some CTLs through in values; RFC 9110 5.5 forbids them
    "not a path",  # only origin-form, absolute-form and OPTIONS * are served
    "use HTTP/1.1",  # HTTP/x.y other than 1.0 and 1.1: 505
    "bare LF",  # RFC 9112 2.2 allows refusing; h11 accepts bare LF line ends
    "chunk-size line",  # extensions are checked against RFC 9112 7.1.1; h11 skips them
    "trailer section may not contain",  # RFC 9110 6.5.1: no framing fields in trailers
    "not valid UTF-8",  # the ASGI path must be text
    "is not a non-negative integer",  # Content-Length over 18 digits
    "larger than",  # size limits
    "more than",  # field count limits
    "exactly one Host",  # more than one Host in HTTP/1.0 (h11 refuses that too in 1.1)
)


@dataclass
class Recorder:
    """The application: answers ``ok`` and records every request it read in full."""

    served: dict[int, list[Served]] = field(default_factory=dict)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            body += message["body"]
            if not message["more_body"]:
                break
        target = scope["raw_path"] + (
            b"?" + scope["query_string"] if scope["query_string"] else b""
        )
        port = scope["client"][1]
        self.served.setdefault(port, []).append((scope["method"].encode(), target, body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


_STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) [^\r\n]*\r\n")


def refusal_of(received: bytes) -> tuple[int, str] | None:
    """The last response's status and body when it is a refusal (>= 400)."""
    matches = list(_STATUS.finditer(received))
    if not matches:
        return None
    last = matches[-1]
    status = int(last.group(1))
    if status < 400:
        return None
    body = received[last.end() :].partition(b"\r\n\r\n")[2]
    return status, body.decode("utf-8", "replace")


async def _trimcp_frames(data: bytes) -> tuple[list[Served], tuple[int, str] | None]:
    recorder = Recorder()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(
            functools.partial(serve_h1, recorder, listeners, settings=H1Settings(head_timeout=5))
        )
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        local_port = stream.socket.getsockname()[1]
        received = b""
        with trio.fail_after(10):
            try:
                await stream.send_all(data)
                await stream.send_eof()
            except trio.BrokenResourceError:
                pass  # refused and closed before all was sent
            while True:
                try:
                    chunk = await stream.receive_some(65536)
                except trio.BrokenResourceError:
                    break
                if not chunk:
                    break
                received += chunk
        await stream.aclose()
        nursery.cancel_scope.cancel()
    return recorder.served.get(local_port, []), refusal_of(received)


def trimcp_frames(data: bytes) -> tuple[list[Served], tuple[int, str] | None]:
    """What trimcp's server serves of ``data`` over a socket, and its refusal if any."""
    return trio.run(_trimcp_frames, data)


def _keeps_alive(request: h11.Request) -> bool:
    tokens = {
        token.strip().lower()
        for name, value in request.headers
        if name == b"connection"
        for token in value.split(b",")
    }
    if b"close" in tokens:
        return False
    return request.http_version == b"1.1" or b"keep-alive" in tokens


def h11_frames(data: bytes) -> list[Served]:
    """The requests h11 serves of ``data`` (then end of input), one cycle at a time.

    Two documented differences of trimcp are modelled: empty lines before a request line
    are skipped (RFC 9112 2.2; h11 refuses them), and an HTTP/1.0 request that asks for
    keep-alive keeps the connection (h11 always closes after HTTP/1.0).
    """
    served: list[Served] = []
    rest = data
    while True:
        while rest.startswith(b"\r\n"):
            rest = rest[2:]
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_SIZE)
        connection.receive_data(rest)
        connection.receive_data(b"")
        request: h11.Request | None = None
        body = b""
        try:
            while True:
                event = connection.next_event()
                if isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:  # ConnectionClosed, NEED_DATA, PAUSED: nothing more is served
                    return served
        except h11.RemoteProtocolError:
            return served
        assert request is not None
        served.append((request.method, request.target, body))
        if not _keeps_alive(request):
            return served
        rest = connection.trailing_data[0]


def check_same_framing(data: bytes) -> None:
    theirs = h11_frames(data)
    ours, refusal = trimcp_frames(data)
    assert ours == theirs[: len(ours)], f"trimcp framed {data!r} differently: {ours} vs {theirs}"
    if len(ours) < len(theirs):
        assert refusal is not None, f"trimcp dropped {theirs[len(ours)]} of {data!r} silently"
        status, reason = refusal
        assert any(words in reason for words in STRICTER), (
            f"trimcp refused what h11 serves ({status} {reason.strip()!r}) in {data!r}"
        )


# --- the corpus --------------------------------------------------------------------------------

TE = b"POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
CL = b"POST /mcp HTTP/1.1\r\nHost: a\r\n"

CORPUS = {
    # Found from the wire (the chunked-extension LF is the CVE-2025-55315 class).
    "bare LF in a chunk extension": TE + b"2;\nxx\r\nd5\r\n0\r\n\r\n" + S + b"\r\n0\r\n\r\n",
    "bare LF ends the trailer section": TE + b"0\r\n\n" + S,
    "a request right after the last chunk": TE + b"0\r\n" + S,
    "a request line as a trailer": TE + b"0\r\nGET / HTTP/1.1\r\n\r\n",
    "a trailer without a colon": TE + b"0\r\nnot a header line\r\n\r\n",
    "NUL in a trailer": TE + b"0\r\nx: a\x00b\r\n\r\n",
    "whitespace before the chunk size": TE + b" 2\r\nab\r\n0\r\n\r\n",
    "non-ASCII in the target": b"GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n",
    "bare LF after the chunk data": TE + b"2\r\nab\n0\r\n\r\n",
    "bare CR after the chunk data": TE + b"2\r\nab\r0\r\n\r\n",
    "chunk data longer than its size": TE + b"2\r\nabc\r\n0\r\n\r\n",
    "a chunk size with a sign": TE + b"+2\r\nab\r\n0\r\n\r\n",
    "a chunk size in 0x form": TE + b"0x2\r\nab\r\n0\r\n\r\n",
    "an overlong chunk size": TE + b"1" * 17 + b"\r\nab\r\n0\r\n\r\n",
    "whitespace before a chunk extension": TE + b"2 ;x\r\nab\r\n0\r\n\r\n",
    "a framing field in the trailers": TE + b"0\r\nContent-Length: 5\r\n\r\n",
    "a valid chunk extension": TE + b'2;a=b;c="d e"\r\nab\r\n0\r\n\r\n',
    "valid trailers": TE + b"2\r\nab\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n",
    "trailing whitespace after the chunk size": TE + b"2 \t\r\nab\r\n0\r\n\r\n",
    # The classic shapes.
    "CL.CL": CL + b"Content-Length: 4\r\nContent-Length: 40\r\n\r\n" + S,
    "CL list": CL + b"Content-Length: 4, 40\r\n\r\n" + S,
    "CL.TE": CL + b"Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + S,
    "TE.CL": CL + b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n" + S,
    "TE.TE list": CL + b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + S,
    "TE.TE twice": CL + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n0\r\n\r\n",
    "TE with a leading comma": CL + b"Transfer-Encoding: , chunked\r\n\r\n0\r\n\r\n" + S,
    "TE with a tab": CL + b"Transfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n" + S,
    "TE capitalised": CL + b"Transfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n" + S,
    "TE with a vertical tab": CL + b"Transfer-Encoding: chunked\x0b\r\n\r\n0\r\n\r\n" + S,
    "TE name with a space": CL + b"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n" + S,
    "TE folded": CL + b"X: y\r\n Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + S,
    "CL folded onto the next line": CL + b"Content-Length:\r\n 0\r\n\r\n" + S,
    "TE in HTTP/1.0": b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + S,
    "CR in a value": CL + b"X: a\rContent-Length: 40\r\n\r\n" + S,
    "bare LF in the head": b"POST / HTTP/1.1\nHost: a\nContent-Length: 40\n\n" + S,
    "bare LF ends a field line": CL + b"Content-Length: 40\nX: y\r\n\r\n" + S,
    "duplicate Host": b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "duplicate Host in HTTP/1.0": b"GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
    "no Host": b"GET / HTTP/1.1\r\n\r\n",
    "a negative Content-Length": CL + b"Content-Length: -1\r\n\r\n" + S,
    "Content-Length with a plus": CL + b"Content-Length: +4\r\n\r\n" + S,
    "a huge Content-Length": CL + b"Content-Length: 99999999999999999999\r\n\r\n" + S,
    "an empty line first": b"\r\n" + GOOD,
    "a lone LF first": b"\n" + GOOD,
    "a pipelined pair": GOOD + GOOD,
    "HTTP/1.0 with keep-alive": b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "HTTP/1.0 without keep-alive": b"GET /ten HTTP/1.0\r\n\r\n",
    "an unknown version": b"GET / HTTP/1.2\r\nHost: a\r\n\r\n",
    "a space in the target": b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
    "two spaces after the method": b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
    "a body cut short": CL + b"Content-Length: 10\r\n\r\nabc",
    "chunked cut short": TE + b"5\r\nab",
}


@pytest.mark.slow
@pytest.mark.parametrize("data", list(CORPUS.values()), ids=list(CORPUS))
def test_the_corpus_is_framed_as_h11_frames_it(data: bytes) -> None:
    check_same_framing(data + GOOD)


@pytest.mark.slow
def test_the_found_shapes_are_refused_not_answered() -> None:
    for name in (
        "bare LF in a chunk extension",
        "bare LF ends the trailer section",
        "a request right after the last chunk",
        "a request line as a trailer",
        "a trailer without a colon",
        "NUL in a trailer",
        "whitespace before the chunk size",
        "non-ASCII in the target",
    ):
        served, refusal = trimcp_frames(CORPUS[name] + GOOD)
        assert served == [], name  # neither the hidden request S nor the good one
        assert refusal is not None, name
        assert refusal[0] == 400, (name, refusal)


# --- mutations of valid requests ---------------------------------------------------------------

_INTERESTING = [b" ", b"\t", b"\r", b"\n", b"\r\n", b"\x00", b"\x0b", b";", b"=", b'"', b",", b":"]
_INTERESTING += [b"0", b"a", b"F", b"\x80", b"\xff", b"-", b"+", b"x"]


@st.composite
def valid_requests(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from([b"1.1", b"1.1", b"1.0"]))
    method = draw(st.sampled_from([b"POST", b"GET", b"PUT"]))
    body = draw(st.binary(max_size=12))
    lines = [method + b" /p?q=1 HTTP/" + version]
    if version == b"1.1" or draw(st.booleans()):
        lines.append(b"Host: a")
    extra = draw(st.lists(st.sampled_from([b"X-A: 1", b"Accept: */*", b"Connection: keep-alive"])))
    lines += extra
    framed = body
    if version == b"1.1" and draw(st.booleans()):
        lines.append(b"Transfer-Encoding: chunked")
        sizes = draw(st.sampled_from([b"%x", b"%X", b"00%x"]))
        exts = draw(st.sampled_from([b"", b";a", b";a=b", b'; a="q"']))
        pieces = [body[:3], body[3:]] if len(body) > 3 else [body]
        framed = b"".join(
            (sizes % len(piece)) + exts + b"\r\n" + piece + b"\r\n" for piece in pieces if piece
        )
        trailers = draw(st.sampled_from([b"", b"T: 1\r\n"]))
        framed += b"0\r\n" + trailers + b"\r\n"
    else:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + framed


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = draw(valid_requests())
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["insert", "replace", "delete", "crlf", "duplicate"]))
        at = draw(st.integers(min_value=0, max_value=len(data)))
        if kind == "insert":
            data = data[:at] + draw(st.sampled_from(_INTERESTING)) + data[at:]
        elif kind == "replace" and at < len(data):
            data = data[:at] + draw(st.sampled_from(_INTERESTING)) + data[at + 1 :]
        elif kind == "delete" and at < len(data):
            data = data[:at] + data[at + 1 :]
        elif kind == "crlf":
            lines = data.split(b"\r\n")
            if len(lines) > 1:
                which = draw(st.integers(min_value=0, max_value=len(lines) - 2))
                ending = draw(st.sampled_from([b"\n", b"\r", b"\n\r", b"\r\r\n", b"\r\n\r\n"]))
                data = b"\r\n".join(lines[: which + 1]) + ending + b"\r\n".join(lines[which + 1 :])
        elif kind == "duplicate":
            lines = data.split(b"\r\n")
            which = draw(st.integers(min_value=1, max_value=max(1, len(lines) - 1)))
            if which < len(lines) and lines[which]:
                lines.insert(which, lines[which])
                data = b"\r\n".join(lines)
    return data + draw(st.sampled_from([b"", S]))


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_requests_are_framed_as_h11_frames_them(data: bytes) -> None:
    check_same_framing(data + GOOD)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(valid_requests())
def test_valid_requests_are_served_exactly(data: bytes) -> None:
    theirs = h11_frames(data + GOOD)
    ours, refusal = trimcp_frames(data + GOOD)
    assert refusal is None
    assert ours == theirs
