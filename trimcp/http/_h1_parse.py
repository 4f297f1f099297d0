"""HTTP/1.1 request heads and chunked bodies, parsed without I/O (RFC 9112).

``parse_head`` turns the bytes of one request head (request line and header fields, up to
and including the empty line) into a ``RequestHead``, or raises ``HeadRejected`` with the
status to answer and a plain sentence saying what was wrong. ``ChunkedDecoder`` undoes
``Transfer-Encoding: chunked``. ``_h1.py`` does the reading and writing.

Why not h11 for the heads: on this machine h11 costs several times this parser's CPU per
request (``bench/http_framing.py`` measures both in one run; bench/RESULTS.md). This parser
only serves requests and frames every input as h11 does or refuses it —
tests/http/test_h1_differential.py feeds both a corpus of smuggling shapes and Hypothesis
mutations of valid requests and fails on any difference. Where it is stricter than h11,
RFC 9112 allows the choice:

* a header field line starting with whitespace (obsolete line folding) -> 400;
* whitespace between a field name and its colon -> 400;
* ``Content-Length`` that is not all digits, or several with different values -> 400;
* ``Transfer-Encoding`` together with ``Content-Length`` -> 400; anything but exactly one
  ``Transfer-Encoding: chunked`` -> 501; ``Transfer-Encoding`` in an HTTP/1.0 request -> 400;
* an HTTP/1.1 request without exactly one ``Host`` (any request with more than one) -> 400;
* control characters inside a field value, a bare LF anywhere, bytes outside visible
  ASCII in the request target -> 400;
* chunk-size lines checked against the RFC's grammar (extensions included), trailers parsed
  as header fields (no framing fields among them) and bounded -> 400 / 431.

The one place it is more lenient: empty lines before a request line are skipped (RFC 9112
section 2.2 says a server SHOULD); h11 refuses them. They frame nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NoReturn, final
from urllib.parse import unquote_to_bytes

__all__ = [
    "BARE_LF",
    "MAX_HEADERS",
    "MAX_HEAD_SIZE",
    "ChunkedDecoder",
    "HeadRejected",
    "RequestHead",
    "parse_head",
]

#: Bytes a request head (request line + fields) may take; more is refused with 431.
MAX_HEAD_SIZE: Final = 64 * 1024
#: Header fields a request may carry; more is refused with 431.
MAX_HEADERS: Final = 128

# RFC 9110 section 5.6.2: token = 1*tchar.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_METHOD = _TOKEN
_TCHARS: Final = b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Field values: visible characters, spaces and tabs, and obs-text; no CR, LF, NUL or other
# controls.
_VCHARS: Final = bytes(range(0x21, 0x7F)) + bytes(range(0x80, 0x100)) + b" \t"
# The request target: visible ASCII only (RFC 9112 section 3.2 builds it from URI
# characters; raw non-ASCII bytes are refused, as by h11).
_TARGET = re.compile(rb"[\x21-\x7e]+")
_VERSIONS: Final = {b"HTTP/1.1": "1.1", b"HTTP/1.0": "1.0"}
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")


# RFC 9112 section 2.2 lets a server take a bare LF as a line end, and h11 does: a front end
# may frame such a head differently, so it is refused, never read on to the next CRLF.
BARE_LF: Final = "a line of the request head ends in a bare LF, not CRLF"


@final
class HeadRejected(Exception):
    """A request that cannot be served: answer ``status`` with ``reason`` and close."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@final
# Not frozen: one is built per request, and a frozen dataclass's __init__ costs several
# times a plain one's. Nothing changes it after parse_head.
@dataclass(slots=True, kw_only=True)
class RequestHead:
    """One parsed request head.

    Attributes:
        method: e.g. ``"POST"`` (case-sensitive, as sent).
        path: the target's path, percent-decoded (ASGI ``path``).
        raw_path: the target's path as sent (ASGI ``raw_path``).
        query: the query string after ``?``, without it.
        http_version: ``"1.1"`` or ``"1.0"``.
        headers: ``(lowercased name, value)`` pairs in order, values without surrounding
            whitespace.
        content_length: the body's length; 0 without a body; ``None`` when chunked.
        keep_alive: whether the connection may serve another request after this one.
        expect_continue: the client waits for ``100 Continue`` before sending the body.
        upgrade: the requested protocol, lowercased (``b"websocket"``), or ``None``.
    """

    method: str
    path: str
    raw_path: bytes
    query: bytes
    http_version: str
    headers: list[tuple[bytes, bytes]]
    content_length: int | None
    keep_alive: bool
    expect_continue: bool
    upgrade: bytes | None


def _split_target(target: bytes, method: bytes) -> tuple[bytes, bytes]:
    if target.startswith(b"/"):
        raw_path, _, query = target.partition(b"?")
        return raw_path, query
    if target == b"*" and method == b"OPTIONS":
        return b"*", b""
    lowered = target[:8].lower()
    if lowered.startswith((b"http://", b"https://")):
        # absolute-form: what a client talking to a proxy sends; the path is what follows
        # the authority.
        rest = target.split(b"//", 1)[1]
        slash = rest.find(b"/")
        raw = b"/" if slash < 0 else rest[slash:]
        raw_path, _, query = raw.partition(b"?")
        if b"?" in rest and slash < 0:
            query = rest.partition(b"?")[2]
        return raw_path, query
    # Not the query: it may hold a credential (access_token=...), and refusals are logged.
    shown = target.partition(b"?")[0][:100]
    raise HeadRejected(400, f"the request target {shown!r} is not a path such as '/mcp'")


def _request_line(line: bytes) -> tuple[bytes, bytes, str]:
    parts = line.split(b" ")
    if b"\n" in line:
        raise HeadRejected(400, BARE_LF)
    if len(parts) != 3:
        raise HeadRejected(
            400, "the request line must be 'METHOD /path HTTP/1.1', separated by single spaces"
        )
    method, target, version = parts
    if not _METHOD.fullmatch(method):
        raise HeadRejected(400, f"the request method {method[:40]!r} is not a valid token")
    if not _TARGET.fullmatch(target):
        raise HeadRejected(400, "the request target is empty or contains spaces or controls")
    known = _VERSIONS.get(version)
    if known is None:
        if version.startswith(b"HTTP/"):
            raise HeadRejected(505, f"{version[:20]!r} is not supported; use HTTP/1.1")
        raise HeadRejected(400, f"the request line ends in {version[:20]!r}, not 'HTTP/1.1'")
    return method, target, known


def _fields(block: bytes) -> list[tuple[bytes, bytes]]:
    """Parse the field lines ``block`` (each ending in CRLF) into lowercased pairs."""
    lines = block.split(b"\r\n")
    del lines[-1]  # the block ends with a CRLF
    if len(lines) > MAX_HEADERS:
        raise HeadRejected(431, f"more than {MAX_HEADERS} header fields")
    headers: list[tuple[bytes, bytes]] = []
    append = headers.append
    for line in lines:
        name, colon, value = line.partition(b":")
        # bytes.translate with a delete set leaves what is not allowed: one C pass each.
        if not colon or not name or name.translate(None, _TCHARS) or value.translate(None, _VCHARS):
            _refuse_field(line)
        append((name.lower(), value.strip(b" \t")))
    return headers


def _refuse_field(line: bytes) -> NoReturn:
    """Raise the refusal that says what is wrong with a field line ``_fields`` rejected."""
    if b"\n" in line:
        raise HeadRejected(400, BARE_LF)
    if line[:1] in (b" ", b"\t"):
        # Obsolete line folding, whether or not the continuation holds a colon.
        raise HeadRejected(400, "a header line starts with whitespace (line folding)")
    name, colon, _ = line.partition(b":")
    # Only the first word: the rest of a broken "Authorization Bearer ..." line is a token,
    # and refusals are logged.
    first = name.split(b" ", 1)[0].split(b"\t", 1)[0][:40]
    if not colon:
        raise HeadRejected(400, f"the header line starting {first!r} has no ':'")
    if not _TOKEN.fullmatch(name):
        raise HeadRejected(400, f"the header name starting {first!r} is not a valid token")
    raise HeadRejected(400, f"the {name.decode('latin-1')} header contains control characters")


def _content_length(values: list[bytes]) -> int:
    lengths = {value for item in values for value in item.split(b",")}
    stripped = {value.strip(b" \t") for value in lengths}
    if len(stripped) != 1:
        raise HeadRejected(400, "Content-Length is given more than once with different values")
    (value,) = stripped
    if not value.isdigit() or not value.isascii() or len(value) > 18:
        raise HeadRejected(400, f"Content-Length {value[:30]!r} is not a non-negative integer")
    return int(value)


def _tokens(values: list[bytes]) -> list[bytes]:
    return [
        token.strip(b" \t").lower()
        for value in values
        for token in value.split(b",")
        if token.strip(b" \t")
    ]


#: The fields whose values decide how a request is framed and its connection handled.
_CONTROL: Final = frozenset(
    (b"host", b"content-length", b"transfer-encoding", b"connection", b"upgrade", b"expect")
)


def _content_length_of(version: str, control: dict[bytes, list[bytes]]) -> int | None:
    """Return the body's length, ``None`` for a chunked body (refusing ambiguous framing)."""
    codings = control.get(b"transfer-encoding")
    lengths = control.get(b"content-length")
    if codings:
        if version == "1.0":
            raise HeadRejected(400, "Transfer-Encoding is not allowed in an HTTP/1.0 request")
        if lengths:
            raise HeadRejected(
                400, "a request may not have both Transfer-Encoding and Content-Length"
            )
        # Exactly one field whose value is exactly "chunked", as h11 requires: a list such
        # as ", chunked" or two fields are read differently by different parsers.
        if len(codings) != 1 or codings[0].lower() != b"chunked":
            raise HeadRejected(501, "only 'Transfer-Encoding: chunked' is supported")
        return None
    return _content_length(lengths) if lengths else 0


def _split_head(head: bytes) -> tuple[bytes, bytes]:
    """Return the request line and the field lines (each with its CRLF) of ``head``."""
    if len(head) > MAX_HEAD_SIZE:
        raise HeadRejected(431, f"the request head is larger than {MAX_HEAD_SIZE} bytes")
    # RFC 9112 section 2.2: a server SHOULD ignore at least one empty line before the
    # request line (clients send a CRLF after a POST body). h11 refuses them instead; it is
    # a deliberate difference, and no framing depends on it: the lines carry nothing.
    start = 0
    while head.startswith(b"\r\n", start):
        start += 2
    end = head.find(b"\r\n", start)
    if end <= start:
        raise HeadRejected(400, "the request has no request line")
    # The head ends with the empty line's CRLF, which is not a field line.
    return head[start:end], head[end + 2 : -2]


def parse_head(head: bytes) -> RequestHead:
    """Parse one request head: the bytes up to and including the ending ``CRLF CRLF``.

    Raises:
        HeadRejected: the head is malformed or asks for something not supported; its
            ``status`` is the answer (400, 431, 501 or 505).
    """
    request_line, block = _split_head(head)
    method, target, version = _request_line(request_line)
    headers = _fields(block)
    control: dict[bytes, list[bytes]] = {}
    for name, value in headers:
        if name in _CONTROL:
            control.setdefault(name, []).append(value)
    hosts = len(control.get(b"host", ()))
    if hosts > 1 or (version == "1.1" and hosts != 1):
        raise HeadRejected(400, "an HTTP/1.1 request needs exactly one Host header")
    content_length = _content_length_of(version, control)
    options = _tokens(control.get(b"connection", []))
    keep_alive = b"close" not in options and (version == "1.1" or b"keep-alive" in options)
    upgrades = control.get(b"upgrade")
    upgrade = upgrades[0].lower() if upgrades and b"upgrade" in options else None
    raw_path, query = _split_target(target, method)
    try:
        path = (unquote_to_bytes(raw_path) if b"%" in raw_path else raw_path).decode("utf-8")
    except UnicodeDecodeError:
        raise HeadRejected(
            400, "the request path is not valid UTF-8 once percent-decoded"
        ) from None
    return RequestHead(
        method=method.decode("ascii"),
        path=path,
        raw_path=raw_path,
        query=query,
        http_version=version,
        headers=headers,
        content_length=content_length,
        keep_alive=keep_alive,
        expect_continue=version == "1.1" and b"100-continue" in _tokens(control.get(b"expect", [])),
        upgrade=upgrade,
    )


#: Bytes a chunk-size line (the size and its extensions) may take; more is refused.
MAX_CHUNK_LINE: Final = 4096
#: Bytes the trailer section of a chunked body may take (h11's bound for an incomplete
#: event); more is refused with 431.
MAX_TRAILERS: Final = 16 * 1024

# RFC 9112 section 7.1.1: chunk-size [ chunk-ext ] CRLF, where
#   chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
#   chunk-ext-val = token / quoted-string
# Deliberately stricter than the RFC in one place, as h11 is: no whitespace between the size
# and the first ";" (h11 refuses "2 ;x"; a front end and trimcp must never disagree on where
# a chunk starts). Whitespace after the last extension (or the size) is accepted, as by h11.
# The line was cut at its CRLF, so a bare CR or LF inside it fails the match.
_TOKEN_CLASS: Final = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_QUOTED: Final = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
_CHUNK_LINE = re.compile(
    rb"([0-9A-Fa-f]{1,16})(?:;[ \t]*%b(?:[ \t]*=[ \t]*(?:%b|%b))?[ \t]*)*[ \t]*"
    % (_TOKEN_CLASS, _TOKEN_CLASS, _QUOTED)
)
_LONG_SIZE_LINE: Final = (400, f"a chunk-size line is longer than {MAX_CHUNK_LINE} bytes")
_LARGE_TRAILERS: Final = (431, f"the trailer section is larger than {MAX_TRAILERS} bytes")
#: Fields that frame a message: never allowed in a trailer section (RFC 9110 section 6.5.1).
_FRAMING: Final = frozenset((b"content-length", b"transfer-encoding"))


def _line_end(view: memoryview, at: int, end: int, limit: int, too_long: tuple[int, str]) -> int:
    """Return where the CRLF-ended line starting at ``at`` ends (its CR), or -1 if incomplete.

    Raises:
        HeadRejected: the line ends in a bare LF (RFC 9112 section 7.1 frames chunks with
            CRLF only; a front end that accepts a bare LF would see different chunks), or
            ``too_long`` when the line is longer than ``limit``.
    """
    window = bytes(view[at : min(end, at + limit + 2)])
    newline = window.find(b"\n")
    if newline < 0:
        if len(window) > limit:
            raise HeadRejected(*too_long)
        return -1
    if newline == 0 or window[newline - 1] != 0x0D:
        raise HeadRejected(400, "a line of the chunked body ends in a bare LF instead of CRLF")
    if newline - 1 > limit:
        raise HeadRejected(*too_long)
    return at + newline - 1


@final
class ChunkedDecoder:
    """Undoes ``Transfer-Encoding: chunked``: feed bytes, take body pieces, see ``done``.

    ``feed`` returns the body bytes it could decode and how many input bytes it used; the
    caller keeps the rest (an incomplete chunk header, or the next request after the end).
    Everything is checked as strictly as h11 checks it, or more (RFC 9112 section 7.1):
    chunk-size lines (hex digits, then well-formed extensions, which are dropped), the CRLF
    after each chunk's data, and the trailer section, whose lines must be header fields (not
    framing ones) and which ends only at an empty CRLF line. Bare LFs are refused anywhere.
    A chunk-size line longer than ``MAX_CHUNK_LINE`` or a trailer section longer than
    ``MAX_TRAILERS`` (or with more than ``MAX_HEADERS`` fields) is refused.
    """

    __slots__ = ("_fields", "_left", "_state", "_trailer_bytes", "done")

    def __init__(self) -> None:
        self.done = False
        self._state = "size"  # "size" | "data" | "data-end" | "trailer"
        self._left = 0
        self._trailer_bytes = 0
        self._fields = 0

    def feed(self, data: bytes | bytearray | memoryview) -> tuple[bytes, int]:
        """Decode from ``data``; return ``(body bytes, input bytes consumed)``.

        Raises:
            HeadRejected: the chunked framing is malformed (400) or its trailer section is
                too large (431).
        """
        view = memoryview(data)
        pieces: list[bytes] = []
        at = 0
        end = len(view)
        while at < end and not self.done:
            state = self._state
            if state == "data":
                take = min(self._left, end - at)
                pieces.append(bytes(view[at : at + take]))
                at += take
                self._left -= take
                if self._left == 0:
                    self._state = "data-end"
                continue
            if state == "data-end":
                ending = bytes(view[at : at + 2])
                if ending != b"\r\n"[: len(ending)]:
                    raise HeadRejected(
                        400, "a chunk's data is not followed by CRLF (its size does not match)"
                    )
                if len(ending) < 2:
                    break
                at += 2
                self._state = "size"
                continue
            if state == "size":
                line_end = _line_end(view, at, end, MAX_CHUNK_LINE, _LONG_SIZE_LINE)
            else:
                left = MAX_TRAILERS - self._trailer_bytes
                line_end = _line_end(view, at, end, left, _LARGE_TRAILERS)
            if line_end < 0:
                break
            line = bytes(view[at:line_end])
            at = line_end + 2
            if state == "size":
                self._size_line(line)
            else:
                self._trailer_line(line)
        return b"".join(pieces), at

    def _size_line(self, line: bytes) -> None:
        match = _CHUNK_LINE.fullmatch(line)
        if match is None:
            if not _HEX.match(line):
                raise HeadRejected(400, f"the chunk size {line[:20]!r} is not a hexadecimal number")
            raise HeadRejected(400, f"the chunk-size line {line[:60]!r} is malformed")
        self._left = int(match.group(1), 16)
        self._state = "data" if self._left else "trailer"

    def _trailer_line(self, line: bytes) -> None:
        if not line:  # the trailer section ends with an empty line
            self.done = True
            return
        self._trailer_bytes += len(line) + 2
        self._fields += 1
        if self._trailer_bytes > MAX_TRAILERS:
            raise HeadRejected(*_LARGE_TRAILERS)
        if self._fields > MAX_HEADERS:
            raise HeadRejected(431, f"more than {MAX_HEADERS} trailer fields")
        name, colon, value = line.partition(b":")
        if not colon or not name or name.translate(None, _TCHARS) or value.translate(None, _VCHARS):
            _refuse_field(line)
        if name.lower() in _FRAMING:
            raise HeadRejected(400, f"the trailer section may not contain {name.decode('latin-1')}")
