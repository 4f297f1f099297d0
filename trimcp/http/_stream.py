"""One session's side of Streamable HTTP: POST bodies in, SSE streams (or JSON) out.

``HttpSessionStream`` is the ``MessageStream`` a ``Session`` actor runs on. Its input is
whatever the HTTP handlers feed it, one POST body at a time, *pushed* to the session
(``attach_input``): no task of the session waits for input between POSTs. Its output is
*routed*: the session tags every message with the client request it belongs to
(``send_routed``), and each goes on exactly one stream (MCP 2025-11-25, Transports >
Streamable HTTP > Multiple Connections):

* a response, and what a handler sends while serving a request (its progress, its log
  messages), go on the ``ResponseStream`` of the POST that carried that request; the stream
  ends when every request of that POST is answered (or cancelled by the client). A POST
  answered with JSON (``HttpOptions.json_response``) holds the responses only, so the rest
  of what belongs to its requests is sent as unrelated messages are;
* everything else (list changes, resource updates, log messages outside any request,
  server-to-client requests) goes on the standalone stream a GET opened while a client
  reads it, else on the newest POST stream read as SSE, else on the standalone stream for
  resumption.

Resumability: with an ``EventStore`` every event is stored before it is sent, under an id
that names its stream, so a client that lost the connection GETs with ``Last-Event-ID`` and
gets the rest of *that* stream (``resume``). A disconnect is not a cancellation: a POST's
stream keeps collecting its events while nobody listens.

Sending is synchronous where it can be (``send_routed_now``): a store with a synchronous
path (``MemoryEventStore.store_event_nowait``) stores the event and the reader's
``LiveQueue`` takes it, with no schedule point, so a handler reporting progress in a loop
runs until its POST reader's queue is full, and the reader sends the whole queue in one
write. The session's writer waits (``send_routed``) only for a full POST queue, or for a
store without that path (the ``EventStore`` protocol stays async for remote backends).
Asynchronous deliveries on one stream hold its lock, and a synchronous one never runs while
the lock is held, so events keep their order.
"""

from __future__ import annotations

import logging
import typing
from typing import TYPE_CHECKING

import orjson
import trio

from trimcp.errors import TransportClosed, UnknownEventId
from trimcp.http._response import ResponseStream, SyncEventStore
from trimcp.transports import InputSink, Routed

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.http._auth import SessionOwner
    from trimcp.http._live import LiveQueue
    from trimcp.protocol import RequestId
    from trimcp.transports import EventStore

__all__ = [
    "HttpSessionStream",
    "InputSink",
    "ResponseStream",
    "Routed",
    "peek_id",
    "ready_now",
]

logger = logging.getLogger(__name__)

# What trimcp's own encoder writes first (``protocol._codec.dump``): key order is fixed.
_HEAD = b'{"jsonrpc":"2.0",'
_ID_HEAD = _HEAD + b'"id":'
# Bodies queued for a session that reads its input instead of taking it pushed.
_INBOX = 16


@typing.final
class HttpSessionStream:
    """The ``MessageStream`` of one HTTP session (see the module docstring)."""

    __slots__ = (
        "_by_request",
        "_closed",
        "_pulled",
        "_sink",
        "_unsent",
        "owner",
        "protocol_version",
        "session_id",
        "standalone",
        "store",
        "sync_store",
    )

    def __init__(self, session_id: str, store: EventStore | None) -> None:
        self.session_id = session_id
        self.store = store
        #: ``store``, if it can store and end streams without waiting.
        candidate: object = store  # an EventStore may also offer the synchronous path
        self.sync_store = candidate if isinstance(candidate, SyncEventStore) else None
        # The session that takes the bodies (``attach_input``); otherwise they wait in a
        # channel, made on first use, for ``receive_message``.
        self._sink: InputSink | None = None
        self._pulled: (
            tuple[trio.MemorySendChannel[bytes], trio.MemoryReceiveChannel[bytes]] | None
        ) = None
        self._by_request: dict[RequestId, ResponseStream] = {}
        # Messages ``send_routed_now`` took but could not deliver yet, in order.
        self._unsent: list[Routed] | None = None
        self.standalone: ResponseStream | None = None
        #: The version ``initialize`` negotiated (requests without the header speak it).
        self.protocol_version: str | None = None
        #: Who started the session, with ``HttpOptions.auth`` (None without authorization).
        self.owner: SessionOwner | None = None
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

    @property
    def open_streams(self) -> int:
        """Response streams open now: one per unanswered POST, plus an attached GET stream.

        (``trimcp.sessions.StreamCounter``, for the admin app's session list.)
        """
        open_posts = len({id(stream) for stream in self._by_request.values()})
        standalone = self.standalone
        return open_posts + (1 if standalone is not None and standalone.attached else 0)

    def in_flight(self, request_id: RequestId) -> bool:
        """Tell whether a request with this id still awaits its response here."""
        return request_id in self._by_request

    async def open_post(
        self, request_ids: Sequence[RequestId], *, resumable: bool = True
    ) -> ResponseStream:
        """Make the stream on which the responses to ``request_ids`` will come.

        ``resumable=False`` (an answer sent as one JSON body, which nobody can resume)
        stores nothing.
        """
        stream_id = None
        if self.store is not None and resumable:
            stream_id = await self.store.open_stream(self.session_id)
        stream = ResponseStream(self, stream_id, request_ids)
        for request_id in request_ids:
            self._by_request[request_id] = stream
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
        if self._closed:
            raise TransportClosed("the session has ended")
        if self._sink is not None:
            await self._sink.push_input(body)
            return
        send, _ = self._pull_channel()
        try:
            await send.send(body)
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
            self._answered(request_id)

    async def resume(
        self, last_event_id: str
    ) -> tuple[ResponseStream, list[tuple[str, bytes]], LiveQueue]:
        """Find the stream ``last_event_id`` belongs to, the events after it, and attach.

        The caller sends the returned events, then reads the returned queue: it was
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
            # The stream ended; what was stored is all there is. It keeps its id, so that
            # once the replay is delivered the store can let it go.
            target = ResponseStream(self, stream_id, ())
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

    def attach_input(self, sink: InputSink) -> None:
        """Push every POST body to ``sink`` from now on (the session calls this in its init)."""
        self._sink = sink
        if self._closed:
            sink.input_ended()

    def _pull_channel(
        self,
    ) -> tuple[trio.MemorySendChannel[bytes], trio.MemoryReceiveChannel[bytes]]:
        if self._pulled is None:
            self._pulled = trio.open_memory_channel[bytes](_INBOX)
            if self._closed:
                self._pulled[0].close()
        return self._pulled

    async def receive_message(self) -> bytes:
        """Return the next POST body, for a session that did not ``attach_input``."""
        _, receive = self._pull_channel()
        try:
            return await receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the HTTP session was closed") from None

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the bodies already fed, without waiting (see ``receive_message``)."""
        return [] if self._pulled is None else ready_now(self._pulled[1])

    async def send_message(self, data: bytes) -> None:
        """Send one untagged message on the stream it belongs to (see ``route_of``)."""
        await self.send_routed([self.route_of(data)])

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """Send untagged messages, each on the stream it belongs to (see ``route_of``)."""
        await self.send_routed([self.route_of(data) for data in messages])

    def route_of(self, data: bytes) -> Routed:
        """Tell, from the message alone, where an untagged message goes.

        A response belongs to its id; anything else to no request. The session tags its
        messages itself (``send_routed``); this serves ``MessageStream.send_messages``.
        """
        related, is_response = peek_id(data)
        if is_response:
            return data, related, True
        return data, None, False

    def send_routed_now(self, messages: Sequence[Routed]) -> bool:
        """Deliver messages without waiting, as far as their streams take them now.

        Returns True when all were delivered. Otherwise the rest is kept, in order, and
        the next ``send_routed`` delivers it first. Never a schedule point.
        """
        if self._unsent:
            self._unsent.extend(messages)
            return False
        for index, (data, related, final) in enumerate(messages):
            if not self._deliver_now(data, related, final):
                self._unsent = list(messages[index:])
                return False
        return True

    def send_one_now(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        """Deliver one message if it can go now; False (nothing done): use ``send_routed``.

        The session's common case (a handler's progress, an answer), without a batch.
        """
        return not self._unsent and self._deliver_now(data, related, final)

    async def send_routed(self, messages: Sequence[Routed]) -> None:
        """Send each message on the stream it belongs to (see the module docstring).

        What ``send_routed_now`` kept back goes first. Waits where a POST stream's reader
        has a full queue, and for a store without a synchronous path.
        """
        backlog, self._unsent = self._unsent, None
        for data, related, final in [*backlog, *messages] if backlog else messages:
            if not self._deliver_now(data, related, final):
                target = self._target(related, final)
                assert target is not None  # _deliver_now fails only on a target
                await target.deliver(data, related, final)
                if final and related is not None:
                    self._answered(related)

    def _deliver_now(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        target = self._target(related, final)
        if target is None:
            logger.debug("session %s: no open stream for a message", self.session_id[:8])
        elif not target.deliver_nowait(data, related, final):
            return False
        if final and related is not None:
            self._answered(related)
        return True

    def _target(self, related: RequestId | None, final: bool) -> ResponseStream | None:
        """Return the open stream a message goes on, or None if it has none.

        A message that belongs to no request goes on the standalone stream if a client is
        reading it; otherwise on the newest POST stream still read, so that a client that
        never opened a GET stream still gets the requests and notifications the server
        sends while serving it (a message goes on exactly one stream either way).
        """
        target = None if related is None else self._by_request.get(related)
        if target is not None and not final and target.attached and not target.carries_events:
            # A JSON answer holds only responses: a request's log lines and progress go
            # where an unrelated message would, rather than nowhere.
            target = None
        if target is None:
            if final and related is not None:
                return None  # the POST never reached us (or was answered): nobody waits
            target = self._unrelated_target()
        if target is None or target.ended:
            return None
        return target

    def _answered(self, request_id: RequestId) -> None:
        by_request = self._by_request
        if by_request.pop(request_id, None) is not None and not by_request:
            # An emptied dict keeps its grown table; an idle session keeps a fresh one.
            self._by_request = {}

    def _unrelated_target(self) -> ResponseStream | None:
        standalone = self.standalone
        if standalone is not None and standalone.attached:
            return standalone
        for stream in reversed(self._by_request.values()):
            if stream.carries_events:
                return stream
        return standalone

    async def aclose(self) -> None:
        """End the session's input and every stream; forget its stored events."""
        if self._closed:
            return
        self._closed = True
        if self._sink is not None:
            self._sink.input_ended()
        if self._pulled is not None:
            self._pulled[0].close()
        streams = {id(stream): stream for stream in self._by_request.values()}
        if self.standalone is not None:
            streams[id(self.standalone)] = self.standalone
        self._by_request = {}
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
