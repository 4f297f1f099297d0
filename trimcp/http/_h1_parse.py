"""HTTP/1.1 request heads and chunked bodies, parsed without I/O (RFC 9112).

``parse_head`` turns the bytes of one request head (request line and header fields, up to
and including the empty line) into a ``RequestHead``, or raises ``HeadRejected`` with the
status to answer and a plain sentence saying what was wrong. ``ChunkedDecoder`` undoes
``Transfer-Encoding: chunked``. ``_h1.py`` does the reading and writing.

Why not h11: it is correct and general, and it costs more CPU per request than the whole
MCP exchange should (bench/RESULTS.md: parsing one response with h11 ~160 µs). This parser
only serves requests, accepts exactly what RFC 9112 requires a server to accept, and refuses
what it may refuse — the ambiguous framings used for request smuggling first of all:

* a header field line starting with whitespace (obsolete line folding) -> 400;
* whitespace between a field name and its colon -> 400;
* ``Content-Length`` that is not all digits, or several with different values -> 400;
* ``Transfer-Encoding`` together with ``Content-Length`` -> 400; a transfer coding other than
  a final ``chunked`` -> 501; ``Transfer-Encoding`` in an HTTP/1.0 request -> 400;
* an HTTP/1.1 request without exactly one ``Host`` -> 400;
* control characters (CR, LF, NUL) inside a field value -> 400.

tests/http/test_h1_parse.py checks these rules, and compares the parse of generated valid
requests with h11's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NoReturn, final
from urllib.parse import unquote_to_bytes

__all__ = [
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
_TARGET = re.compile(rb"[\x21-\x7e\x80-\xff]+")
_VERSIONS: Final = {b"HTTP/1.1": "1.1", b"HTTP/1.0": "1.0"}
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")


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
    raise HeadRejected(400, f"the request target {target[:100]!r} is not a path such as '/mcp'")


def _request_line(line: bytes) -> tuple[bytes, bytes, str]:
    parts = line.split(b" ")
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
    name, colon, _ = line.partition(b":")
    if not colon:
        raise HeadRejected(400, f"the header line {line[:60]!r} has no ':'")
    if not _TOKEN.fullmatch(name):
        if name[:1] in (b" ", b"\t"):
            raise HeadRejected(400, "a header line starts with whitespace (line folding)")
        raise HeadRejected(400, f"the header name {name[:60]!r} is not a valid token")
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
        if _tokens(codings) != [b"chunked"]:
            raise HeadRejected(501, "only 'Transfer-Encoding: chunked' is supported")
        return None
    return _content_length(lengths) if lengths else 0


def _split_head(head: bytes) -> tuple[bytes, bytes]:
    """Return the request line and the field lines (each with its CRLF) of ``head``."""
    if len(head) > MAX_HEAD_SIZE:
        raise HeadRejected(431, f"the request head is larger than {MAX_HEAD_SIZE} bytes")
    # RFC 9112 section 2.2: ignore empty lines before the request line.
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
    if version == "1.1" and len(control.get(b"host", ())) != 1:
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


@final
class ChunkedDecoder:
    """Undoes ``Transfer-Encoding: chunked``: feed bytes, take body pieces, see ``done``.

    ``feed`` returns the body bytes it could decode and how many input bytes it used; the
    caller keeps the rest (an incomplete chunk header, or the next request after the end).
    Chunk extensions and trailer fields are read and dropped; a chunk header or trailer
    section longer than ``MAX_HEAD_SIZE`` is refused.
    """

    __slots__ = ("_left", "_state", "done")

    def __init__(self) -> None:
        self.done = False
        self._state = "size"  # "size" | "data" | "data-end" | "trailer"
        self._left = 0

    def feed(self, data: bytes | bytearray | memoryview) -> tuple[bytes, int]:
        """Decode from ``data``; return ``(body bytes, input bytes consumed)``.

        Raises:
            HeadRejected: the chunked framing is malformed (400).
        """
        view = memoryview(data)
        pieces: list[bytes] = []
        at = 0
        end = len(view)
        while at < end and not self.done:
            if self._state == "data":
                take = min(self._left, end - at)
                pieces.append(bytes(view[at : at + take]))
                at += take
                self._left -= take
                if self._left == 0:
                    self._state = "data-end"
                continue
            line_end = bytes(view[at : min(end, at + MAX_HEAD_SIZE + 2)]).find(b"\r\n")
            if line_end < 0:
                if end - at > MAX_HEAD_SIZE:
                    raise HeadRejected(400, "a chunk header or trailer line is too long")
                break
            line = bytes(view[at : at + line_end])
            at += line_end + 2
            if self._state == "data-end":
                if line:
                    raise HeadRejected(400, "a chunk's data is longer than its size says")
                self._state = "size"
            elif self._state == "size":
                self._size_line(line)
            elif not line:  # trailer section ends with an empty line
                self.done = True
        return b"".join(pieces), at

    def _size_line(self, line: bytes) -> None:
        size = line.partition(b";")[0].strip(b" \t")
        if not _HEX.fullmatch(size):
            raise HeadRejected(400, f"the chunk size {size[:20]!r} is not a hexadecimal number")
        self._left = int(size, 16)
        self._state = "data" if self._left else "trailer"
