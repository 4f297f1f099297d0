"""2026-07-28 requests on a session's stream (stdio, WebSocket): served beside the handshake.

On stdio the era is chosen per message (MCP 2026-07-28, Basic > Versioning,
https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning, and
Transports > stdio > Backward Compatibility): ``initialize`` selects the handshake era for
the process, while a request that names its protocol version in ``_meta`` (or is
``server/discover``) is served statelessly, whether or not an ``initialize`` came first.
``ModernLane`` is the part of a ``Session`` that takes such messages before its protocol
core sees them; everything else goes on to the core as before.

A modern request runs in a task of its own (``ModernRequest``); its progress and log lines
and its response are written on the session's stream as they come, in any order with other
traffic (JSON-RPC matches them by id). ``notifications/cancelled`` naming one of them
cancels it, and nothing more is written for it (Basic > Patterns > Cancellation); that is
also how a client ends a ``subscriptions/listen``. A listen stream the server gives up
(its client does not read, ``ModernRequest.abandon``) ends with the server's own
``notifications/cancelled`` naming it instead of an answer (Basic > Patterns >
Cancellation). When the input ends, the requests in flight finish (the session's drain
waits for them), except listen streams, which end then: nobody is left to read them.

Cost on the handshake path: two substring searches per message, made only to find the rare
message that needs parsing here.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final, Protocol, final

import orjson
import trio

from trimcp.errors import InvalidParams, InvalidRequest, JsonRpcError
from trimcp.protocol import (
    Era,
    ErrorResponse,
    Notification,
    Request,
    choose_era,
    encode_message,
    error_object_for,
    read_request_meta,
)
from trimcp.telemetry import Peer

from ._modern import ModernRequest

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import JsonObject, RequestId

    from ._handler import RequestHandler
    from ._options import SessionOptions

__all__ = ["ModernLane"]

logger = logging.getLogger(__name__)

# What a message must contain to be a modern request (a cheap test before any parsing).
_MODERN_MARKERS: Final = (b"io.modelcontextprotocol/protocolVersion", b'"server/discover"')
_CANCELLED: Final = b"notifications/cancelled"


class LaneHost(Protocol):
    """What the session lends its modern requests."""

    def start_soon(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        """Run ``fn(*args)`` as a task of the session."""
        ...

    async def write(self, data: bytes) -> bool:
        """Write one message on the session's stream."""
        ...

    def write_now(self, data: bytes) -> bool:
        """Write one message if that needs no waiting; False: ``write`` it."""
        ...

    def modern_done(self) -> None:
        """A modern request finished (the session's drain may be over)."""
        ...

    @property
    def peer(self) -> Peer:
        """Where the client is, as telemetry reports it."""
        ...


@final
class _StreamSink:
    """A modern request's own messages, written on the session's stream."""

    __slots__ = ("_host",)

    def __init__(self, host: LaneHost) -> None:
        self._host = host

    def send_nowait(self, data: bytes) -> bool:
        return self._host.write_now(data)

    async def send(self, data: bytes) -> None:
        await self._host.write(data)


@final
class ModernLane:
    """The modern requests of one session's stream (see the module docstring)."""

    __slots__ = ("_handler", "_host", "_in_flight", "_options", "_peer", "_sink", "served")

    def __init__(self, handler: RequestHandler, options: SessionOptions, host: LaneHost) -> None:
        self._handler = handler
        self._options = options
        self._host = host
        self._sink = _StreamSink(host)
        # Request id -> (its cancel scope, whether it is a listen stream).
        self._in_flight: dict[RequestId, tuple[trio.CancelScope, bool]] = {}
        #: True once a 2026-07-28 request was taken: the client need never initialize.
        self.served = False
        # The host's peer without its session id (a modern request is in no session); made
        # on first use, once the host's peer is known.
        self._peer: Peer | None = None

    @property
    def in_flight(self) -> int:
        """Modern requests running now."""
        return len(self._in_flight)

    def take(self, data: bytes) -> bool:
        """Serve ``data`` here if it is a modern request or cancels one; True if taken.

        Never waits: a request starts in a task of its own, a refusal is queued for
        writing in one as well.
        """
        if self._in_flight and _CANCELLED in data and self._cancel(data):
            return True
        if not any(marker in data for marker in _MODERN_MARKERS):
            return False
        found = _modern_request(data)
        if found is None:
            return False
        request_id, method, params = found
        if request_id in self._in_flight:
            self._refuse(request_id, _duplicate(request_id))
            return True
        try:
            if params is not None and not isinstance(params, dict):
                raise InvalidParams("params must be an object", {"param": "params"})
            meta = read_request_meta(params)
        except JsonRpcError as exc:
            self._refuse(request_id, exc)
            return True
        request = Request(id=request_id, method=method, params=params)
        scope = trio.CancelScope()
        self._in_flight[request_id] = (scope, method == "subscriptions/listen")
        self.served = True
        peer = self._peer
        if peer is None:
            peer = self._peer = Peer(self._host.peer.transport)
        modern = ModernRequest(
            self._handler, request, meta, self._sink, options=self._options, peer=peer
        )
        self._host.start_soon(self._serve, request, modern, scope)
        return True

    def end_listeners(self) -> None:
        """Cancel every listen stream (the input ended: nobody reads them any more)."""
        for scope, listening in self._in_flight.values():
            if listening:
                scope.cancel()

    def cancel_all(self) -> None:
        """Cancel every modern request (the session is stopping)."""
        for scope, _ in self._in_flight.values():
            scope.cancel()

    async def _serve(
        self, request: Request, modern: ModernRequest, scope: trio.CancelScope
    ) -> None:
        try:
            with scope:
                answer = await modern.run()
                if answer is None:  # abandoned: a listen stream that did not keep up
                    answer = _torn_down(request.id)
                await self._host.write(answer)
        finally:
            del self._in_flight[request.id]
            self._host.modern_done()
        if scope.cancelled_caught:
            logger.debug("%s %r: cancelled by the client", request.method, request.id)

    def _cancel(self, data: bytes) -> bool:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
            return False  # anything else that mentions it (a batch, a log line): the core's
        params = message.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        # A request id is a string or an integer; true is neither, though it equals 1.
        if isinstance(target, bool) or not isinstance(target, str | int):
            return False
        found = self._in_flight.get(target)
        if found is None:
            return False  # not ours: a handshake-era request's, for the core
        found[0].cancel()
        return True

    def _refuse(self, request_id: RequestId, error: Exception) -> None:
        data = encode_message(ErrorResponse(id=request_id, error=error_object_for(error)))
        self._host.start_soon(self._host.write, data)


def _modern_request(data: bytes) -> tuple[RequestId, str, object] | None:
    """Return the id, method and params of a modern request; None for anything else."""
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None  # the core answers it with -32700
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    request_id = message.get("id")
    if not isinstance(method, str) or not isinstance(request_id, str | int):
        return None  # a notification or a malformed request: the core's to judge
    if isinstance(request_id, bool):
        return None
    params = message.get("params")
    if choose_era(None, method, params) is not Era.MODERN:
        return None
    return request_id, method, params


def _torn_down(request_id: RequestId) -> bytes:
    """The notice that the server ended the listen stream ``request_id`` on its own.

    "A server MUST send notifications/cancelled referencing a subscriptions/listen request
    ID when it tears down that subscription stream" (2026-07-28, Basic > Patterns >
    Cancellation); on stdio there is no stream of its own to close instead.
    """
    params: JsonObject = {
        "requestId": request_id,
        "reason": "the client did not read the subscription's notifications in time",
    }
    return encode_message(Notification(method="notifications/cancelled", params=params))


def _duplicate(request_id: RequestId) -> InvalidRequest:
    return InvalidRequest(
        f"Request id {request_id!r} is already in use by a request in flight; use a new id"
    )
