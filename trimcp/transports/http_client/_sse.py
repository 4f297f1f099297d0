"""Reading SSE streams from the server, across their connections.

One logical stream is a POST's answer (done once the responses to the POSTed requests
arrived) or the standalone GET stream (never done). Each connection's events are decoded
with ``trimcp.transports.SSEDecoder`` and every ``message`` event's data is delivered to the
``Inbox``. When a connection ends early, on purpose (SEP-1699 polling) or not, the stream is
resumed with ``GET`` and ``Last-Event-ID`` after the server's ``retry:`` delay, with backoff
and a bounded number of fruitless attempts (``ReconnectPolicy``); replayed events already
seen are dropped (``SeenIds``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import httpx
import trio

from trimcp.errors import SSEEventTooLarge, TransportBroken
from trimcp.transports import SSEDecoder

from ._auth import send_authorized
from ._errors import server_message
from ._json import initialize_version, response_ids
from ._link import ACCEPT_SSE
from ._resume import SeenIds, decode
from ._wire import close_response, new_request, read_chunks, read_limited

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.transports import SSEEvent

    from ._json import RequestId
    from ._link import HttpLink

__all__ = ["StreamState", "is_event_stream", "keep_reading"]

logger = logging.getLogger(__name__)

# How much of an error answer's body is read to explain it.
_ERROR_BODY_LIMIT = 64 * 1024


@final
class StreamState:
    """One logical SSE stream: its decoder (last event id, ``retry``), and what it awaits."""

    def __init__(
        self,
        link: HttpLink,
        *,
        expected: Iterable[RequestId] = (),
        initialize_id: RequestId | None = None,
        standalone: bool = False,
        opened: trio.Event | None = None,
    ) -> None:
        self.decoder = SSEDecoder(max_event_size=link.max_message_size)
        self.seen = SeenIds()
        self.unanswered: set[RequestId] = set(expected)
        self.initialize_id = initialize_id
        self.standalone = standalone
        # Set once a connection attempt got its answer (or failed): the stream is open,
        # or will not be soon.
        self.opened = opened
        # An event over the size limit was dropped (maybe the answer itself).
        self.dropped = False
        # False for a per-request-era answer (2026-07-28): "Resumable SSE streams via
        # Last-Event-ID are not supported", so a broken one loses its request.
        self.resumes = True

    @property
    def done(self) -> bool:
        """Every awaited response arrived (never, for the GET stream)."""
        return not self.standalone and not self.unanswered

    @property
    def resumable(self) -> bool:
        """A new connection can continue the stream: it had an event id, or is the GET one."""
        return self.standalone or self.decoder.last_event_id != ""


@final
@dataclass(frozen=True, slots=True)
class _Read:
    """What one connection brought: new events, and whether it broke (not a clean end)."""

    events: int
    broken: bool


def is_event_stream(response: httpx.Response) -> bool:
    """Return whether ``response`` carries ``text/event-stream``."""
    kind = str(response.headers.get("content-type", ""))
    return kind.split(";", 1)[0].strip().lower() == "text/event-stream"


async def keep_reading(link: HttpLink, state: StreamState, first: httpx.Response | None) -> str:
    """Read ``first`` and then resumptions until ``state`` is done.

    Without ``first``, connects at once with a GET. Returns ``""`` when done (or when the
    session expired: the reader was told), else why the stream was given up, in words.
    Closes every response it reads.
    """
    failures = 0
    response = first
    session = link.session_id
    wait = first is not None
    while True:
        if response is not None:
            read = await _read_connection(link, state, response)
            failures = 0 if read.events else failures + 1
            if state.done:
                return ""
            if not read.broken and state.dropped:
                return "its answer was larger than the message size limit and was dropped"
        refusal = _not_resumable(state)
        if refusal:
            return refusal
        if wait:
            delay = link.policy.delay(state.decoder.retry, failures)
            if delay is None:
                return f"{failures} reconnections in a row brought nothing new"
            await trio.sleep(delay)
        wait = True
        outcome = await _reconnect(link, state, session)
        if isinstance(outcome, str):
            return outcome
        if outcome is None:
            failures += 1
        response = outcome


def _not_resumable(state: StreamState) -> str:
    """Say why ``state`` cannot be continued by a new connection (``""``: it can)."""
    if not state.resumes:
        return (
            "the stream ended without it (MCP 2026-07-28 streams are not resumed; "
            "send the request again)"
        )
    if not state.resumable:
        return "the server closed it early, and its events carry no id to resume from"
    return ""


async def _reconnect(
    link: HttpLink, state: StreamState, session: str | None
) -> httpx.Response | str | None:
    """GET the endpoint (with ``Last-Event-ID`` if there is one); then set ``state.opened``.

    Returns the open event stream, None for a failure worth another attempt, or a reason
    to stop (``""`` when the session expired and the reader has been told).
    """
    outcome = await _connect(link, state, session)
    if state.opened is not None:
        state.opened.set()
    return outcome


async def _connect(
    link: HttpLink, state: StreamState, session: str | None
) -> httpx.Response | str | None:
    headers = link.headers(ACCEPT_SSE, last_event_id=state.decoder.last_event_id)

    async def send(sent: dict[str, str]) -> httpx.Response:
        return await link.sender.send(new_request(link.client, "GET", link.url, sent))

    try:
        response = await send_authorized(send, headers, link.auth)
    except httpx.HTTPError as exc:
        logger.debug("reconnecting an SSE stream to %s failed: %r", link.url, exc)
        return None
    except TransportBroken as exc:  # no credentials could be had: the next POST says so too
        return f"no authorization for it ({exc})"
    if response.is_success and is_event_stream(response):
        return response
    try:
        body = await read_limited(response, _ERROR_BODY_LIMIT)
    except httpx.HTTPError:
        body = b""
    finally:
        await close_response(response)
    return await _refused(link, response.status_code, server_message(body), session)


async def _refused(link: HttpLink, status: int, detail: str, session: str | None) -> str | None:
    said = f" ({detail})" if detail else ""
    if status == 404 and session is not None:
        await link.expire(session, keep=None)
        return ""
    if status == 405:
        return "the server offers no GET stream, so it cannot be resumed"
    if status in (400, 410):
        return f"the server could not resume it (HTTP {status}{said})"
    logger.debug("reconnecting an SSE stream to %s got HTTP %d%s", link.url, status, said)
    return None


async def _read_connection(link: HttpLink, state: StreamState, response: httpx.Response) -> _Read:
    """Deliver one connection's messages; close it."""
    events = 0
    broken = False

    async def consume(chunk: bytes) -> bool:
        nonlocal events
        events += await _deliver(link, state, decode(state.decoder, chunk))
        return True

    try:
        await read_chunks(response, consume)
    except httpx.HTTPError as exc:
        logger.debug("an SSE connection to %s broke: %r", link.url, exc)
        broken = True
    finally:
        await close_response(response)
    # The end of a connection discards an unfinished event and resets the decoder for the
    # next one (keeping the last event id and retry).
    events += await _deliver(link, state, decode(state.decoder, b"", eof=True))
    return _Read(events, broken)


async def _deliver(
    link: HttpLink, state: StreamState, items: list[SSEEvent | SSEEventTooLarge]
) -> int:
    """Deliver the messages among ``items``; return how many events were new."""
    fresh = 0
    for item in items:
        if isinstance(item, SSEEventTooLarge):
            state.dropped = True
            fresh += 1
            await link.inbox.put(item)
            continue
        if item.id is not None and not state.seen.add(item.id):
            continue  # replayed after a resumption: delivered already
        fresh += 1
        if item.event != "message" or not item.data.strip():
            continue  # a priming event (an id, empty data), or a type MCP does not use
        data = item.data.encode()
        _note(link, state, data)
        await link.inbox.put(data)
    return fresh


def _note(link: HttpLink, state: StreamState, data: bytes) -> None:
    """Record what ``data`` answers; learn the negotiated version from the initialize result."""
    if not state.unanswered:
        return
    answered = response_ids(data)
    if not answered:
        return
    state.unanswered.difference_update(answered)
    if state.initialize_id is not None and state.initialize_id in answered:
        version = initialize_version(data, state.initialize_id)
        if version is not None:
            link.protocol_version = version
