"""One POSTed message and its answer, in a task of its own.

Every POST is independent: its task takes a slot if it is a request (``HttpLink.slots``;
waiting for one there, not in the sender), writes the request, and reads the answer, which
may be an SSE stream that lasts as long as a tool call, or ``application/json`` that comes
only with the result. The sender waits at most for the status (``Handoff``). What the status
means is decided here:

* 202, or any success for a notification or a response: nothing more to read; after
  ``notifications/initialized``, the GET stream is started (``_get.py``).
* ``application/json``: one message or a batch, delivered in order.
* ``text/event-stream``: read (and resumed) by ``_sse.keep_reading``.
* 404 for a request with a session id: ``SessionExpired``, raised to the sender (or, once
  the sender stopped waiting, put in the inbox).
* 401 or 403 with authorization configured (``HttpLink.auth``): handed to it first, and the
  request sent again when it renewed the credentials (``_auth.send_authorized``).
* Failures that mean the server cannot be used at all (no connection, TLS, 401, 403 without
  authorization configured, a 404 without a session, any failure of ``initialize``): raised
  to the sender, ending the stream.
* Other failures of an ordinary request (400, 5xx, an HTML page, a 403 that the configured
  authorization could not overcome, ...): the transport answers that request itself with a
  JSON-RPC error saying what happened; the stream goes on.

A request of the per-request era (MCP 2026-07-28, ``Outline.modern_version``) is a POST of
its own, outside any session: its headers mirror its body (``HttpLink.modern_headers``),
its task runs in the handoff's scope (a cancel closes the response: Streamable HTTP >
Cancellation), its SSE answer is never resumed ("Resumable SSE streams via Last-Event-ID
are not supported"), a connection failure fails that request alone once the server has
answered one (there is no session to lose; a restarted server serves the next), and an
error status with a JSON-RPC error body delivers that error as
the request's answer (400 with -32022, 404 with -32601, ...); without one, the error made
up here carries the status in ``data.httpStatus``, which a session probing the server's era
reads (a legacy server's 400, 404 or 405 means: fall back to ``initialize``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import httpx
import trio

from trimcp.errors import HttpStatusError, SessionExpired, TransportBroken

from ._auth import send_authorized
from ._errors import connection_error, server_message, status_error, unexpected_content
from ._json import error_response, initialize_version, response_ids, server_error, split_body
from ._link import ACCEPT_BOTH
from ._sse import StreamState, is_event_stream, keep_reading
from ._wire import close_response, new_request, read_limited

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._handoff import Handoff
    from ._json import Outline, RequestId
    from ._link import HttpLink

__all__ = ["run_post"]

logger = logging.getLogger(__name__)

# How much of an error answer's body is read to explain it.
_ERROR_BODY_LIMIT = 64 * 1024


async def run_post(link: HttpLink, data: bytes, outline: Outline, handoff: Handoff) -> None:
    """POST ``data`` and deliver its answer (module docstring).

    A request without a slot waits for one first (in arrival order), and is not sent at all
    if it was withdrawn meanwhile. The slot is given back (or the place in line left), and
    the request forgotten, however the task ends.
    """
    if handoff.modern:
        try:
            with handoff.scope:
                await _when_allowed(link, data, outline, handoff, handoff.scope)
        finally:
            _release(link, outline, handoff)
            handoff.settle()
        return
    with link.in_session() as scope:
        try:
            await _when_allowed(link, data, outline, handoff, scope)
        finally:
            _release(link, outline, handoff)
            if scope.cancel_called and link.expired:  # another request found it expired
                handoff.settle(SessionExpired(f"the server at {link.url} ended the session"))
            handoff.settle()


async def _when_allowed(
    link: HttpLink, data: bytes, outline: Outline, handoff: Handoff, scope: trio.CancelScope
) -> None:
    """Wait for a slot (if the request has none yet), then POST unless withdrawn."""
    if handoff.slot_given is not None:
        await handoff.slot_given.wait()
    if not handoff.withdrawn:
        await _post(link, data, outline, handoff, scope)


def _release(link: HttpLink, outline: Outline, handoff: Handoff) -> None:
    """Give back the POST's slot and forget its requests (again: a no-op)."""
    if outline.request_ids:
        link.give_back(handoff)
        link.untrack(outline.request_ids, handoff)


async def _send(
    link: HttpLink, data: bytes, outline: Outline, handoff: Handoff
) -> httpx.Response | None:
    """POST ``data`` (authorized, and sent again after a renewal); None if it failed."""

    async def send(headers: dict[str, str]) -> httpx.Response:
        request = new_request(
            link.client, "POST", link.url, headers, data, on_sent=handoff.mark_sent
        )
        return await link.sender.send(request)

    session = link.session_id
    if outline.modern_version is not None:
        headers = link.modern_headers(outline)
    else:
        headers = link.headers(ACCEPT_BOTH, post=True)
    modern = outline.modern_version is not None
    try:
        response = await send_authorized(send, headers, link.auth)
        link.last_authorization = headers.get("authorization")
        link.answered = link.answered or modern
        return response
    except httpx.HTTPError as exc:
        error = connection_error(link.url, exc, connected=session is not None or link.answered)
        error.__cause__ = exc
        if modern and link.answered:
            # No session to lose: the server was there and may be back for the next request
            # (a restart). Only this request fails; the first one, failing, ends the stream.
            handoff.settle()
            await _answer_locally(link, outline.request_ids, str(error))
        else:
            await _fatal(link, handoff, error)
    except TransportBroken as exc:  # the authorization could not be renewed
        await _unauthorized(link, outline, handoff, exc)
    return None


async def _post(
    link: HttpLink, data: bytes, outline: Outline, handoff: Handoff, scope: trio.CancelScope
) -> None:
    session = link.session_id
    response = await _send(link, data, outline, handoff)
    if response is None:
        return
    try:
        if not response.is_success and outline.modern_version is not None:
            await _refused_modern(link, outline, handoff, response)
            return
        if not response.is_success:
            await _refused(link, outline, handoff, response, session=session, scope=scope)
            return
        if outline.initialize:
            link.session_id = response.headers.get("mcp-session-id") or None
        elif outline.request_ids and response.status_code != 202:
            # An SSE answer's status comes before its events, a JSON answer's only with the
            # result. (Not learned from initialize: some servers, trimcp's own among them,
            # answer it with JSON and every later request with a stream.)
            link.status_with_result = not is_event_stream(response)
        if not outline.request_ids or response.status_code == 202:
            if outline.initialized:
                handoff.get_opened = _start_get_stream(link)
            handoff.settle()
            return
        if is_event_stream(response):
            handoff.settle()
            state = StreamState(
                link, expected=outline.request_ids, initialize_id=_initialize_id(outline)
            )
            state.resumes = outline.modern_version is None
            reason = await keep_reading(link, state, response)
            if reason:
                message = f"the server's answer stream ended before the answer: {reason}"
                await _answer_locally(link, state.unanswered, message)
            return
        await _read_json(link, outline, handoff, response)
    finally:
        await close_response(response)


def _initialize_id(outline: Outline) -> RequestId | None:
    return outline.request_ids[0] if outline.initialize else None


def _start_get_stream(link: HttpLink) -> trio.Event | None:
    """Start the GET stream; return the event set once its first answer (or failure) came."""
    from ._get import run_get_stream  # the GET stream's module uses this one's helpers

    if link.nursery is None:
        return None
    opened = trio.Event()
    link.nursery.start_soon(run_get_stream, link, opened)
    return opened


async def _refused(  # noqa: PLR0913  # one answer's facts, each needed for the decision
    link: HttpLink,
    outline: Outline,
    handoff: Handoff,
    response: httpx.Response,
    *,
    session: str | None,
    scope: trio.CancelScope,
) -> None:
    """Handle an error status (module docstring)."""
    try:
        body = await read_limited(response, _ERROR_BODY_LIMIT)
    except httpx.HTTPError:
        body = b""
    status = response.status_code
    error = status_error(link.url, status, server_message(body), session=session is not None)
    if isinstance(error, SessionExpired):
        if not handoff.settle(error):
            await link.expire(session, keep=scope)  # the sender left: tell the reader, once
        else:
            link.forget(session, keep=scope)
        return
    if outline.initialize or status in (401, 404) or (status == 403 and link.auth is None):
        await _fatal(link, handoff, error)
    elif outline.request_ids:
        await _answer_locally(link, outline.request_ids, str(error))
    else:
        logger.warning("the server refused a notification or response: %s", error)


async def _refused_modern(
    link: HttpLink, outline: Outline, handoff: Handoff, response: httpx.Response
) -> None:
    """Handle an error status to a per-request-era POST (module docstring).

    A 401, or a 403 without authorization configured, ends the stream as in a session:
    nothing can be sent without credentials.
    """
    try:
        body = await read_limited(response, _ERROR_BODY_LIMIT)
    except httpx.HTTPError:
        body = b""
    status = response.status_code
    error = status_error(link.url, status, server_message(body), session=False)
    if status == 401 or (status == 403 and link.auth is None):
        await _fatal(link, handoff, error)
        return
    handoff.settle()
    for request_id in outline.request_ids:
        answer = server_error(body, request_id)
        await link.inbox.put(answer or error_response(request_id, str(error), status=status))


async def _unauthorized(
    link: HttpLink, outline: Outline, handoff: Handoff, error: TransportBroken
) -> None:
    """A 401 that could not be answered ends the stream; a 403 fails its request only.

    A 403 is about this request (a scope this token lacks, and could not get), and the
    session's other requests may still be allowed.
    """
    status = error.status if isinstance(error, HttpStatusError) else 401
    if status == 403 and outline.request_ids and not outline.initialize:
        handoff.settle()
        await _answer_locally(link, outline.request_ids, str(error))
    else:
        await _fatal(link, handoff, error)


async def _read_json(
    link: HttpLink, outline: Outline, handoff: Handoff, response: httpx.Response
) -> None:
    """Deliver an ``application/json`` answer; answer locally for what it lacks."""
    kind = response.headers.get("content-type", "")
    try:
        body = await read_limited(response, link.max_message_size + 1)
    except httpx.HTTPError as exc:
        error = connection_error(link.url, exc, connected=True)
        await _answer_or_fail(link, outline, handoff, error)
        return
    if len(body) > link.max_message_size:
        message = f"the server's answer is larger than the limit of {link.max_message_size} bytes"
        await _answer_or_fail(link, outline, handoff, TransportBroken(message))
        return
    try:
        if not kind.lower().startswith("application/json"):
            raise ValueError(kind)
        messages = split_body(body)
    except ValueError:
        await _answer_or_fail(link, outline, handoff, unexpected_content(link.url, kind, body))
        return
    init_id = _initialize_id(outline)
    waiting = set(outline.request_ids)
    for item in messages:
        if init_id is not None and (version := initialize_version(item, init_id)):
            link.protocol_version = version
        waiting.difference_update(response_ids(item))
    handoff.settle()
    # The exchange is over once its body is in: the slot is free before anyone can see the
    # answer (and send the next request), whichever task the scheduler runs first.
    await close_response(response)
    _release(link, outline, handoff)
    for item in messages:
        await link.inbox.put(item)
    await _answer_locally(link, waiting, "the server's answer held no response to this request")


async def _answer_or_fail(
    link: HttpLink, outline: Outline, handoff: Handoff, error: TransportBroken
) -> None:
    """Fail ``initialize`` for good; answer any other request with ``error``'s words."""
    if outline.initialize:
        await _fatal(link, handoff, error)
    else:
        handoff.settle()
        await _answer_locally(link, outline.request_ids, str(error))


async def _fatal(link: HttpLink, handoff: Handoff, error: TransportBroken) -> None:
    """Raise ``error`` to the sender, or end the stream with it if nobody waits."""
    if not handoff.settle(error):
        await link.inbox.put(error)


async def _answer_locally(link: HttpLink, request_ids: Iterable[RequestId], message: str) -> None:
    """Deliver a made-up JSON-RPC error response to each of ``request_ids``."""
    for request_id in request_ids:
        await link.inbox.put(error_response(request_id, message))
