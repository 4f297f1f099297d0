"""The endpoint's calls into a session: start one, feed it a body, collect a finished answer.

Every request that starts a session goes through ``start_session``: an ``initialize`` POST,
a POST in stateless mode, the 2024-11-05 transport's SSE GET and a WebSocket connection. So
a server at its ``sessions.max_sessions`` limit refuses them all with the same 503 and the
same words (a WebSocket carries them as its close reason). The session manager has already
evicted an idle session by then if it could (``SessionManager.create_session``).

``exchange`` is a request answered in one piece, as a JSON body rather than an SSE stream:
``initialize`` always is, whatever ``HttpOptions.json_response`` says, and so is the
``initialize`` the stateless mode sends on a client's behalf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.errors import SessionLimitReached, TransportClosed
from trimcp.http._checks import HttpRefusal
from trimcp.protocol import ErrorCode
from trimcp.sessions import SHUTTING_DOWN, SHUTTING_DOWN_MESSAGE
from trimcp.supervision import current_drain

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.http._live import LiveQueue
    from trimcp.http._stream import HttpSessionStream
    from trimcp.protocol import RequestId
    from trimcp.sessions import SessionManager, SessionRecord
    from trimcp.transports import MessageStream

__all__ = ["collect", "exchange", "feed", "shutting_down_refusal", "start_session"]


def shutting_down_refusal(message: str = SHUTTING_DOWN_MESSAGE) -> HttpRefusal:
    """Return the 503 a draining server answers new work with (``trimcp.supervision.Drain``).

    Its body is the JSON-RPC -32000 error a session answers a refused request with
    (``trimcp.sessions.SHUTTING_DOWN``); ``Retry-After`` is the drain's time budget, after
    which this server is gone and a restarted one may be listening.
    """
    drain = current_drain()
    retry_after = str(drain.retry_after if drain is not None else 5).encode("ascii")
    return HttpRefusal(
        503,
        f"Service Unavailable: {message}",
        code=SHUTTING_DOWN,
        headers=((b"retry-after", retry_after),),
    )


async def start_session(
    manager: SessionManager, session_id: str, stream: MessageStream
) -> SessionRecord:
    """Start a session on ``stream`` under ``session_id``.

    Raises:
        HttpRefusal: 503, every session is busy (``SessionLimitReached``). Its body is a
            JSON-RPC internal error: the request was valid, the server cannot take it now.
            Or 503 with ``Retry-After``, the server is shutting down (``shutting_down_refusal``).
    """
    try:
        return await manager.create_session(session_id, stream)
    except SessionLimitReached as exc:
        if manager.draining:
            raise shutting_down_refusal(str(exc)) from None
        message = f"Service Unavailable: {exc}"
        raise HttpRefusal(503, message, code=ErrorCode.INTERNAL_ERROR) from None


async def feed(stream: HttpSessionStream, body: bytes) -> None:
    """Hand a POST body to the session.

    Raises:
        HttpRefusal: 404, the session has ended (the client must initialize a new one).
    """
    try:
        await stream.feed(body)
    except TransportClosed:
        raise HttpRefusal(
            404, "Not Found: the session has ended; initialize a new session"
        ) from None


async def collect(live: LiveQueue) -> list[bytes]:
    """Return the messages of a stream once it has ended."""
    collected: list[bytes] = []
    try:
        while (item := await live.get()) is not None:
            collected.append(item)
    finally:
        live.abandon()
    return collected


async def exchange(
    stream: HttpSessionStream, request_ids: Sequence[RequestId], body: bytes
) -> list[bytes]:
    """Feed ``body`` (which carries ``request_ids``) and return all it got, as bare messages.

    Nothing is stored for a resumption: the answer leaves as one JSON body.

    Raises:
        HttpRefusal: 404, the session has ended.
    """
    response = await stream.open_post(request_ids, resumable=False)
    live = response.attach(sse=False)
    await feed(stream, body)
    return await collect(live)
