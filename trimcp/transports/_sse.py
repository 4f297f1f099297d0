"""Server-Sent Events framing: encode one event, decode a stream of them incrementally.

The format is the WHATWG HTML standard's ``text/event-stream`` (section 9.2 "Server-sent
events", "Parsing an event stream" and "Interpreting an event stream"): UTF-8 text, one
optional leading BOM, lines ending in CRLF, LF or CR; ``field: value`` lines (one space after
the colon is dropped); ``:`` starts a comment; a blank line dispatches the event. MCP
Streamable HTTP (2025-11-25, Transports) sends one JSON-RPC message per event's ``data``, puts
an ``id`` on events so a client can resume with ``Last-Event-ID``, and primes a stream with an
event that has an id and empty data.

Sans-IO, like ``_line_framer.py``: ``encode_event`` returns the bytes for the HTTP layer to
write, ``SSEDecoder`` turns the chunks a client reads into whole events. Nothing here awaits,
logs or parses JSON. Not here: which stream an event belongs to and replaying it
(``_event_store.py``), or HTTP itself.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import final

from trimcp.errors import SSEEventTooLarge

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "SSEDecoder",
    "SSEDecoderStatistics",
    "SSEEvent",
    "encode_event",
    "keepalive_comment",
]

# The stdio transport's default message limit: one event carries one message.
DEFAULT_MAX_EVENT_SIZE = 4 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"
_DATA_PREFIX = b"data: "
_KEEPALIVE = b": keep-alive\n\n"

# The standard takes any run of ASCII digits as a reconnection time. More than 15
# significant digits (over 30,000 years in milliseconds) means nothing to a client, and
# int() refuses digit strings past 4300 characters, so such values are ignored.
_MAX_RETRY_DIGITS = 15


def encode_event(
    data: bytes | None,
    *,
    event_id: str | None = None,
    event: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    """Return one event as it goes on the wire, ending with its blank line.

    Fields are written in the order ``id``, ``event``, ``retry``, ``data``. Each line of
    ``data`` becomes one ``data:`` line; CR, LF and CRLF all end a line and a client reads
    each of them back as LF (an orjson message has none). ``data=None`` means no message:
    with an ``event_id`` it is a priming event, written with one empty ``data:`` line because
    MCP asks for "an event ID and an empty data field" and because parsers drop an event
    without data before the application sees it (``eventsource-parser``, which the official
    TypeScript SDK uses, forgets its id too). Without an id it is a bare hint such as
    ``retry: 1500``, sent before the server closes a connection, which dispatches nothing.
    ``event=None`` leaves the type out; clients then read ``"message"``.

    Raises:
        ValueError: ``event_id`` holds CR, LF or NUL (clients would split or ignore it),
            ``event`` holds CR or LF, ``retry_ms`` is negative, or nothing would be sent.
    """
    if data and event is None and retry_ms is None and b"\n" not in data and b"\r" not in data:
        # A message event, the one a stream sends thousands of (progress): in one copy.
        if event_id is None:
            return b"data: %b\n\n" % data
        if "\n" not in event_id and "\r" not in event_id and "\0" not in event_id:
            return b"id: %b\ndata: %b\n\n" % (event_id.encode(), data)
    return _encode_fields(data, event_id, event, retry_ms)


def _encode_fields(
    data: bytes | None, event_id: str | None, event: str | None, retry_ms: int | None
) -> bytes:
    lines: list[bytes] = []
    if event_id is not None:
        lines.append(_field_line("id", event_id, forbidden="\r\n\0"))
    if event is not None:
        lines.append(_field_line("event", event, forbidden="\r\n"))
    if retry_ms is not None:
        if retry_ms < 0:
            raise ValueError(f"retry_ms must be >= 0, not {retry_ms}")
        lines.append(b"retry: %d" % retry_ms)
    if data is None and event_id is not None:
        data = b""
    if data is not None:
        if b"\n" in data or b"\r" in data:
            lines.extend(_DATA_PREFIX + line for line in data.splitlines())
            if data.endswith((b"\n", b"\r")):
                lines.append(_DATA_PREFIX)  # splitlines() drops the empty last line
        else:
            lines.append(_DATA_PREFIX + data)
    if not lines:
        raise ValueError("an SSE event needs data, an id or a retry time")
    lines.append(b"\n")
    return b"\n".join(lines)


def _field_line(name: str, value: str, *, forbidden: str) -> bytes:
    if any(char in value for char in forbidden):
        raise ValueError(f"an SSE {name} field cannot hold {forbidden!r}: {value!r}")
    return f"{name}: {value}".encode()


def keepalive_comment() -> bytes:
    """Return a comment block that keeps an idle stream's connection alive.

    Clients ignore comments; the blank line after it ends an empty block, which dispatches
    nothing and leaves the client's last event id as it was.
    """
    return _KEEPALIVE


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SSEEvent:
    """One dispatched event.

    Attributes:
        data: the event's ``data`` lines joined with LF, decoded as UTF-8 (bytes that are
            not UTF-8 become U+FFFD). ``""`` for a priming event.
        event: the event type; ``"message"`` when the event named none (or named ``""``).
        id: this event's own ``id`` field (the last one, if it had several), ``None`` when it
            had none. The id a client sends back when it reconnects is
            ``SSEDecoder.last_event_id``, which persists across events as the standard says.
        retry: this event's own valid ``retry`` field in milliseconds, ``None`` when it had
            none. The reconnection time in force is ``SSEDecoder.retry``.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SSEDecoderStatistics:
    """A snapshot of an ``SSEDecoder``'s memory.

    Attributes:
        buffered_bytes: bytes held now: an unfinished line plus the unfinished event's data.
            Never more than about twice ``max_event_size``.
        ready_events: events (and errors) decoded but not yet returned by ``feed``.
    """

    buffered_bytes: int
    ready_events: int


@final
class SSEDecoder:
    """Decode a ``text/event-stream`` body, chunk by chunk, into events.

    Chunk boundaries may fall anywhere: inside a CRLF, a UTF-8 sequence or the BOM. Call
    ``feed`` with each chunk a connection delivers and ``feed_eof`` when its body ends; the
    same decoder then takes the next connection's body, keeping ``last_event_id`` and
    ``retry``, which is what a client needs to reconnect (``Last-Event-ID``, and how long to
    wait first).

    ``max_event_size`` bounds an event's data (its lines joined with LF, in bytes), and any
    single line to that plus the 6 bytes of a ``data: `` prefix: nothing longer is ever
    buffered.
    An event over the limit is dropped as its bytes arrive, and ``SSEEventTooLarge`` is raised
    in its place in the stream once it ends; its ``id`` still becomes the last event id, so
    a client that reconnects does not get it again. A comment line over the limit is
    skipped silently.
    """

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        if max_event_size < 1:
            raise ValueError(f"max_event_size must be >= 1, not {max_event_size}")
        self._limit = max_event_size
        self._line_limit = max_event_size + len(_DATA_PREFIX)
        self._last_event_id = ""
        self._retry: int | None = None
        self._ready: deque[SSEEvent | SSEEventTooLarge] = deque()
        self._start_connection()

    def _start_connection(self) -> None:
        """Reset the per-connection state: line splitting, the BOM, the unfinished event."""
        # True until the body's first 3 bytes are seen; meanwhile _partial holds them.
        self._at_start = True
        # A line's bytes so far; never longer than _line_limit.
        self._partial = bytearray()
        # Length so far of an over-long line being dropped, or None.
        self._skipping: int | None = None
        self._skipping_comment = False
        # The last chunk ended in CR: an LF opening the next chunk belongs to it.
        self._after_cr = False
        # The standard's "last event ID buffer": set by an id field, committed to
        # _last_event_id by the next blank line.
        self._id_buffer = self._last_event_id
        self._start_event()

    def _start_event(self) -> None:
        # The standard's data buffer: each data line's value plus LF.
        self._data = bytearray()
        self._event_type = b""
        self._event_id: str | None = None
        self._event_retry: int | None = None
        # Bytes of this event's lines, line endings excluded (reported if it is too large).
        self._event_bytes = 0
        self._too_large = False

    @property
    def last_event_id(self) -> str:
        """The id to send as ``Last-Event-ID`` on reconnection; ``""`` means none.

        Set when a blank line ends a block that had an ``id`` field (with or without data),
        as the standard's "last event ID string"; an ``id`` field holding NUL is ignored and
        an empty ``id`` field resets it to ``""``.
        """
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The server's last valid ``retry`` time in milliseconds; ``None`` if it sent none."""
        return self._retry

    def statistics(self) -> SSEDecoderStatistics:
        """Return a snapshot of the buffers (see ``SSEDecoderStatistics``)."""
        return SSEDecoderStatistics(
            buffered_bytes=len(self._partial) + len(self._data),
            ready_events=len(self._ready),
        )

    def feed(self, chunk: bytes | bytearray) -> list[SSEEvent]:
        """Take one chunk of the body; return the events that are complete, in stream order.

        Events end at a blank line, so an event whose blank line has not arrived yet comes
        out of a later call.

        Raises:
            SSEEventTooLarge: the next event in the stream was over the limit. A call returns
                the events up to such an event, and the following call raises for it; after
                catching it, call ``feed(b"")`` until it returns ``[]`` to collect the events
                that came after it.
        """
        if self._at_start:
            chunk = self._strip_bom(chunk)
        self._split_lines(chunk)
        return self._take_ready()

    def feed_eof(self) -> list[SSEEvent]:
        """End this connection's body; the next ``feed`` starts a new body (and BOM check).

        An unfinished event is discarded, as the standard says, and its ``id`` is not
        committed. Returns events still waiting behind an error, like ``feed``.

        Raises:
            SSEEventTooLarge: as for ``feed``; also for an unfinished event that was already
                over the limit.
        """
        skipped = self._skipping
        if self._too_large or (skipped is not None and not self._skipping_comment):
            self._ready.append(SSEEventTooLarge(self._event_bytes + (skipped or 0), self._limit))
        self._start_connection()
        return self._take_ready()

    def _take_ready(self) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        ready = self._ready
        while ready:
            item = ready[0]
            if isinstance(item, SSEEventTooLarge):
                if events:
                    break
                ready.popleft()
                raise item
            events.append(item)
            ready.popleft()
        return events

    def _strip_bom(self, chunk: bytes | bytearray) -> bytes | bytearray:
        """Drop one leading BOM, which may arrive split across chunks."""
        head = self._partial + chunk
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._partial = head
            return b""
        self._partial = bytearray()
        self._at_start = False
        return head[len(_BOM) :] if head.startswith(_BOM) else head

    def _split_lines(self, chunk: bytes | bytearray) -> None:
        size = len(chunk)
        start = 0
        if self._after_cr and chunk:
            self._after_cr = False
            if chunk[0] == 0x0A:  # the LF of a CRLF split across chunks
                start = 1
        # bytes.find is memchr, two orders of magnitude faster than a regex search here. The
        # next LF is remembered, so lines ended by a lone CR do not rescan for it.
        lf = -2
        while True:
            if lf != -1 and lf < start:
                lf = chunk.find(b"\n", start)
            cr = chunk.find(b"\r", start, size if lf < 0 else lf)
            if cr >= 0:
                end = cr
                after = cr + 2 if cr + 1 < size and chunk[cr + 1] == 0x0A else cr + 1
            elif lf >= 0:
                end, after = lf, lf + 1
            else:
                self._extend_line(chunk[start:])
                return
            self._end_line(chunk[start:end])
            start = after
            if start == size:
                self._after_cr = chunk[-1] == 0x0D
                return

    def _extend_line(self, piece: bytes | bytearray) -> None:
        """Add the start of a line whose end has not arrived; drop it once it is over-long."""
        if not piece:
            return
        if self._skipping is not None:
            self._skipping += len(piece)
            return
        size = len(self._partial) + len(piece)
        if size > self._line_limit:
            self._skipping_comment = (self._partial or piece)[0] == 0x3A  # b":"
            self._skipping = size
            self._partial = bytearray()
        else:
            self._partial += piece

    def _end_line(self, piece: bytes | bytearray) -> None:
        """Handle the rest of a line that ended just after ``piece``."""
        if self._skipping is not None:
            self._drop_line(self._skipping + len(piece), comment=self._skipping_comment)
            self._skipping = None
            return
        if self._partial:
            if len(self._partial) + len(piece) > self._line_limit:
                self._drop_line(len(self._partial) + len(piece), comment=self._partial[0] == 0x3A)
                self._partial = bytearray()
                return
            self._partial += piece
            piece = self._partial
            self._partial = bytearray()
        elif len(piece) > self._line_limit:
            self._drop_line(len(piece), comment=piece[0] == 0x3A)
            return
        self._take_line(piece)

    def _drop_line(self, size: int, *, comment: bool) -> None:
        self._event_bytes += size
        if not comment:
            self._too_large = True
            self._data = bytearray()

    def _take_line(self, line: bytes | bytearray) -> None:
        """Interpret one whole line, as the standard's "Interpreting an event stream"."""
        if not line:
            self._dispatch()
            return
        self._event_bytes += len(line)
        if line.startswith(b"data:"):  # the common case, without copying the value
            self._add_data(line, start=6 if line[5:6] == b" " else 5)
            return
        if line[0] == 0x3A:  # a comment
            return
        field, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if field == b"data":  # "data" without a colon: an empty data line
            self._add_data(value, start=0)
        elif field == b"id":
            if b"\0" not in value:
                self._id_buffer = self._event_id = value.decode("utf-8", "replace")
        elif field == b"event":
            self._event_type = bytes(value)
        elif field == b"retry":
            self._set_retry(value)
        # Any other field is ignored, as the standard says.

    def _add_data(self, line: bytes | bytearray, *, start: int) -> None:
        """Append ``line[start:]`` and an LF to the data buffer, unless that is too much."""
        if self._too_large:
            return
        if len(self._data) + len(line) - start > self._limit:
            self._too_large = True
            self._data = bytearray()
            return
        with memoryview(line) as view, view[start:] as value:
            self._data += value
        self._data += b"\n"

    def _set_retry(self, value: bytes | bytearray) -> None:
        # bytes.isdigit() accepts ASCII digits only, as the standard requires.
        if value.isdigit() and len(value.lstrip(b"0")) <= _MAX_RETRY_DIGITS:
            self._retry = self._event_retry = int(value.lstrip(b"0") or b"0")

    def _dispatch(self) -> None:
        self._last_event_id = self._id_buffer
        if self._too_large:
            self._ready.append(SSEEventTooLarge(self._event_bytes, self._limit))
        elif self._data:
            del self._data[-1]  # the LF after the last data line
            self._ready.append(
                SSEEvent(
                    data=self._data.decode("utf-8", "replace"),
                    event=self._event_type.decode("utf-8", "replace") or "message",
                    id=self._event_id,
                    retry=self._event_retry,
                )
            )
        self._start_event()
