"""One session's side of Streamable HTTP: POST bodies in, SSE streams (or JSON) out.

``HttpSessionStream`` is the ``MessageStream`` a ``Session`` actor runs on. Its input is
whatever the HTTP handlers feed it (one POST body at a time). Its output is *routed*: the
session tags every message with the client request it belongs to (``send_routed``), and each
goes on exactly one stream (CHECKLIST §7.2.4):

* a response, and the progress, log messages and server-to-client requests a handler sends
  while serving a request, go on the ``ResponseStream`` of the POST that carried that
  request; the stream ends when every request of that POST is answered;
* everything else (list changes, resource updates, requests from outside a handler) goes on
  the standalone stream a GET opened, if one is open.

Resumability: with an ``EventStore`` every event is stored before it is sent, under an id
that names its stream, so a client that lost the connection GETs with ``Last-Event-ID`` and
gets the rest of *that* stream (``resume``). A disconnect is not a cancellation: a POST's
stream keeps collecting its events while nobody listens. Storing and sending happen under
the stream's lock, as do replaying and re-attaching, so no event falls between them.
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING

import orjson
import trio

from trimcp.errors import TransportClosed, UnknownEventId

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.protocol import RequestId
    from trimcp.transports import EventStore

__all__ = [
    "HttpSessionStream",
    "ResponseStream",
    "Routed",
    "peek_id",
    "progress_token_of",
    "ready_now",
]

logger = logging.getLogger(__name__)

#: One outgoing message: its bytes, the client request it belongs to, and whether it is
#: that request's response (the last message for it). ``b""`` with ``final`` means "no
#: response will come" (the client cancelled the request).
Routed = tuple[bytes, "RequestId | None", bool]

# Events waiting for a slow live reader before the session's writer waits for it: a reader
# slows its own session only, and never past this many messages of memory.
_LIVE_QUEUE = 64
# What trimcp's own encoder writes first (``protocol._codec.dump``): key order is fixed.
_HEAD = b'{"jsonrpc":"2.0",'
_ID_HEAD = _HEAD + b'"id":'
_PROGRESS = _HEAD + b'"method":"notifications/progress"'
_PROGRESS_TOKEN = _PROGRESS + b',"params":{"progressToken":'
_INBOX = 16
# Messages the standalone stream's reader may miss before it is disconnected.
_MAX_DROPPED = 256


@typing.final
class ResponseStream:
    """One SSE stream of a session: a POST's, or the standalone one a GET opened."""

    __slots__ = (
        "_live",
        "_owner",
        "dropped",
        "ended",
        "lock",
        "stream_id",
        "waiting",
    )

    def __init__(
        self,
        owner: HttpSessionStream,
        stream_id: str | None,
        waiting: Iterable[RequestId] | None,
    ) -> None:
        self._owner = owner
        self.stream_id = stream_id
        #: Requests still to be answered on this stream; None for the standalone stream.
        self.waiting: set[RequestId] | None = None if waiting is None else set(waiting)
        self.ended = False
        #: Messages a slow reader of the standalone stream missed (still in the store).
        self.dropped = 0
        self.lock = trio.Lock()
        self._live: trio.MemorySendChannel[tuple[str | None, bytes]] | None = None

    @property
    def attached(self) -> bool:
        """True while an HTTP response is reading this stream."""
        return self._live is not None

    def attach(self) -> trio.MemoryReceiveChannel[tuple[str | None, bytes]]:
        """Start delivering to a new reader; a previous reader is cut off."""
        self.detach()
        send, receive = trio.open_memory_channel[tuple[str | None, bytes]](_LIVE_QUEUE)
        if self.ended:
            send.close()
        else:
            self._live = send
        return receive

    def detach(self) -> None:
        """The reader went away: keep collecting events (stored, if there is a store)."""
        live, self._live = self._live, None
        if live is not None:
            live.close()

    async def deliver(self, data: bytes, related: RequestId | None, final: bool) -> None:
        """Store and send one message; end the stream after its last response."""
        async with self.lock:
            if self.ended:
                return
            event_id: str | None = None
            store = self._owner.store
            if data and store is not None and self.stream_id is not None:
                event_id = await store.store_event(self._owner.session_id, self.stream_id, data)
            live = self._live
            if data and live is not None:
                if self.waiting is None:
                    self._offer(live, event_id, data)
                else:
                    try:
                        await live.send((event_id, data))
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        self._live = None
            if final and self.waiting is not None and related is not None:
                self.waiting.discard(related)
                if not self.waiting:
                    await self._end()

    def _offer(
        self,
        live: trio.MemorySendChannel[tuple[str | None, bytes]],
        event_id: str | None,
        data: bytes,
    ) -> None:
        """Hand a message to the standalone stream's reader without ever waiting for it.

        The slow-consumer policy: the session must not wait for a reader that does not
        read (its requests would stall) and memory must stay bounded, so when the reader's
        queue (``_LIVE_QUEUE``) is full the message is dropped for it and counted; it is
        still in the event store, so the client can resume from its last event id. After
        ``_MAX_DROPPED`` drops the reader is disconnected, logged once.
        """
        try:
            live.send_nowait((event_id, data))
        except trio.WouldBlock:
            self.dropped += 1
            if self.dropped >= _MAX_DROPPED:
                logger.warning(
                    "session %s: the GET stream's reader fell %d messages behind; "
                    "disconnected it (it may resume with Last-Event-ID)",
                    self._owner.session_id[:8],
                    self.dropped,
                )
                self.detach()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._live = None

    async def end(self) -> None:
        """End the stream now (the session closed)."""
        async with self.lock:
            await self._end()

    async def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        self.detach()
        store = self._owner.store
        if store is not None and self.stream_id is not None:
            await store.end_stream(self._owner.session_id, self.stream_id)

    async def priming_event_id(self) -> str | None:
        """Store the priming event (an id, no data) and return its id (None: no store)."""
        store = self._owner.store
        if store is None or self.stream_id is None:
            return None
        return await store.store_event(self._owner.session_id, self.stream_id, None)


@typing.final
class HttpSessionStream:
    """The ``MessageStream`` of one HTTP session (see the module docstring)."""

    __slots__ = (
        "_by_request",
        "_by_token",
        "_closed",
        "_inbox_receive",
        "_inbox_send",
        "protocol_version",
        "session_id",
        "standalone",
        "store",
    )

    def __init__(self, session_id: str, store: EventStore | None) -> None:
        self.session_id = session_id
        self.store = store
        send, receive = trio.open_memory_channel[bytes](_INBOX)
        self._inbox_send = send
        self._inbox_receive = receive
        self._by_request: dict[RequestId, ResponseStream] = {}
        self._by_token: dict[str | int, RequestId] = {}
        self.standalone: ResponseStream | None = None
        #: The version ``initialize`` negotiated (requests without the header speak it).
        self.protocol_version: str | None = None
        self._closed = False

    # --- what the manager and the HTTP handlers see -------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a request is unanswered or a stream is being read (never expired)."""
        if self._by_request:
            return True
        standalone = self.standalone
        return standalone is not None and standalone.attached

    @property
    def closed(self) -> bool:
        """True once the session's stream is closed (it ended, expired or was deleted)."""
        return self._closed

    def in_flight(self, request_id: RequestId) -> bool:
        """Tell whether a request with this id still awaits its response here."""
        return request_id in self._by_request

    async def open_post(
        self,
        request_ids: Sequence[RequestId],
        progress_tokens: Sequence[tuple[str | int, RequestId]] = (),
        *,
        resumable: bool = True,
    ) -> ResponseStream:
        """Make the stream on which the responses to ``request_ids`` will come.

        Progress for the ``progress_tokens`` goes on it too. ``resumable=False`` (an answer
        sent as one JSON body, which nobody can resume) stores nothing.
        """
        stream_id = None
        if self.store is not None and resumable:
            stream_id = await self.store.open_stream(self.session_id)
        stream = ResponseStream(self, stream_id, request_ids)
        for request_id in request_ids:
            self._by_request[request_id] = stream
        for token, request_id in progress_tokens:
            self._by_token[token] = request_id
        return stream

    async def open_standalone(self) -> ResponseStream:
        """Make the session's standalone stream (a GET); the caller attaches to it."""
        stream_id = None
        if self.store is not None:
            stream_id = await self.store.open_stream(self.session_id)
        previous, self.standalone = self.standalone, ResponseStream(self, stream_id, None)
        if previous is not None:
            await previous.end()
        return self.standalone

    async def feed(self, body: bytes) -> None:
        """Hand one POST body to the session.

        Raises:
            TransportClosed: the session has ended.
        """
        try:
            await self._inbox_send.send(body)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed("the session has ended") from None

    def close_request_stream(self, request_id: RequestId) -> bool:
        """Cut the live connection of the stream ``request_id`` answers on; keep the stream.

        Its events are still stored, and the client resumes it with ``Last-Event-ID``.
        """
        stream = self._by_request.get(request_id)
        if stream is None or not stream.attached:
            return False
        stream.detach()
        return True

    def forget_requests(self, request_ids: Iterable[RequestId]) -> None:
        """Stop routing responses for these ids (their body never reached the session)."""
        for request_id in request_ids:
            self._by_request.pop(request_id, None)

    async def resume(
        self, last_event_id: str
    ) -> tuple[
        ResponseStream,
        list[tuple[str, bytes]],
        trio.MemoryReceiveChannel[tuple[str | None, bytes]],
    ]:
        """Find the stream ``last_event_id`` belongs to, the events after it, and attach.

        The caller sends the returned events, then reads the returned channel: it was
        attached right after the replay was read, with no checkpoint in between, so no event
        falls between the two (for a store whose reads do not checkpoint, as the memory
        store's do not).

        Raises:
            UnknownEventId: not an id this session issued.
            EventsLost: the events after it are no longer stored.
        """
        if self.store is None:
            raise UnknownEventId(last_event_id)
        replayed: list[tuple[str, bytes]] = []

        async def collect(event_id: str, data: bytes) -> None:
            replayed.append((event_id, data))

        stream_id = await self.store.replay_events_after(self.session_id, last_event_id, collect)
        target = self._stream_by_id(stream_id)
        if target is None:
            # The stream ended; what was stored is all there is.
            target = ResponseStream(self, None, ())
            target.ended = True
        return target, replayed, target.attach()

    def _stream_by_id(self, stream_id: str) -> ResponseStream | None:
        if self.standalone is not None and self.standalone.stream_id == stream_id:
            return self.standalone
        for stream in self._by_request.values():
            if stream.stream_id == stream_id:
                return stream
        return None

    # --- MessageStream (the session's side) ---------------------------------------------------

    async def receive_message(self) -> bytes:
        """Return the next POST body (see ``MessageStream``)."""
        try:
            return await self._inbox_receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the HTTP session was closed") from None

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the bodies already fed, without waiting."""
        return ready_now(self._inbox_receive)

    async def send_message(self, data: bytes) -> None:
        """Send one message on the stream it belongs to (see ``route_of``)."""
        await self.send_routed([self.route_of(data)])

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Send messages, each on the stream it belongs to (see ``route_of``)."""
        await self.send_routed([self.route_of(data) for data in messages])

    def route_of(self, data: bytes) -> Routed:
        """Tell which request a message belongs to, from the message itself.

        A response belongs to its id; progress to the request that gave the token; other
        messages to no request (the standalone stream).
        """
        related, is_response = peek_id(data)
        if is_response:
            if related is not None:
                for token in [t for t, owner in self._by_token.items() if owner == related]:
                    del self._by_token[token]
            return data, related, True
        if data.startswith(_PROGRESS) and self._by_token:
            progress_token = progress_token_of(data)
            owner = None if progress_token is None else self._by_token.get(progress_token)
            return data, owner, False
        return data, None, False

    async def send_routed(self, messages: Sequence[Routed]) -> None:
        """Send each message on the stream it belongs to (see the module docstring).

        A message that belongs to no request goes on the standalone stream if a client is
        reading it; otherwise on the newest POST stream still open, so that a client that
        never opened a GET stream still gets the requests and notifications the server
        sends while serving it (a message goes on exactly one stream either way).
        """
        for data, related, final in messages:
            target = None if related is None else self._by_request.get(related)
            if final and related is not None:
                self._by_request.pop(related, None)
            if target is None:
                if final and related is not None:
                    continue  # the POST never reached us (or was answered): nobody waits
                target = self._unrelated_target()
            if target is None or target.ended:
                logger.debug("session %s: no open stream for a message", self.session_id[:8])
                continue
            await target.deliver(data, related, final)

    def _unrelated_target(self) -> ResponseStream | None:
        standalone = self.standalone
        if standalone is not None and standalone.attached:
            return standalone
        for stream in reversed(self._by_request.values()):
            if stream.attached:
                return stream
        return standalone

    async def aclose(self) -> None:
        """End the session's input and every stream; forget its stored events."""
        if self._closed:
            return
        self._closed = True
        self._inbox_send.close()
        streams = {id(stream): stream for stream in self._by_request.values()}
        if self.standalone is not None:
            streams[id(self.standalone)] = self.standalone
        self._by_request.clear()
        with trio.CancelScope(shield=True):
            for stream in streams.values():
                await stream.end()
            if self.store is not None:
                await self.store.forget_session(self.session_id)


def ready_now(receive: trio.MemoryReceiveChannel[bytes]) -> list[bytes | MessageTooLarge]:
    """Return what ``receive`` holds now, without waiting (``MessageStream.receive_ready``)."""
    ready: list[bytes | MessageTooLarge] = []
    while True:
        try:
            ready.append(receive.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
            return ready


def peek_id(data: bytes) -> tuple[RequestId | None, bool]:
    """Return a message's id and whether it is a response, reading as little as possible.

    Messages from trimcp's encoder start ``{"jsonrpc":"2.0","id":<id>,`` followed by
    ``"result"``/``"error"`` (a response) or ``"method"`` (a request); anything else is parsed
    in full.
    """
    if data.startswith(_ID_HEAD):
        start = len(_ID_HEAD)
        end = data.find(b',"', start)
        if end > start and b"\\" not in data[start:end]:
            try:
                value = orjson.loads(data[start:end])
            except orjson.JSONDecodeError:
                value = None
            rest = data[end + 2 : end + 9]
            if isinstance(value, str | int) and not isinstance(value, bool):
                return value, rest.startswith((b"result", b"error"))
    elif data.startswith(_HEAD + b'"method"'):
        return None, False
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None, False
    if not isinstance(message, dict):
        return None, False
    value = message.get("id")
    is_response = "method" not in message and ("result" in message or "error" in message)
    if isinstance(value, str | int) and not isinstance(value, bool):
        return value, is_response
    return None, is_response


def progress_token_of(data: bytes) -> str | int | None:
    """Return the ``progressToken`` of an encoded progress notification.

    trimcp's encoder writes ``"params":{"progressToken":<token>,`` right after the method;
    only that token is decoded then, not the whole message.
    """
    start = len(_PROGRESS_TOKEN)
    if data.startswith(_PROGRESS_TOKEN):
        end = data.find(b',"', start)
        if end > start and b"\\" not in data[start:end]:
            try:
                token = orjson.loads(data[start:end])
            except orjson.JSONDecodeError:
                token = None
            if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)):
                return token
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    token = params.get("progressToken") if isinstance(params, dict) else None
    if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)):
        return token
    return None
