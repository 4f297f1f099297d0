"""``open_http_client_stream``: the client side of MCP's Streamable HTTP transport.

A ``MessageStream`` over httpx (which runs on trio through anyio), so that a
``ClientSession`` runs over HTTP exactly as over stdio. Per MCP 2025-11-25, Transports >
Streamable HTTP:

* every message is its own POST (``Accept: application/json, text/event-stream``), carrying
  ``MCP-Session-Id`` (from the ``initialize`` answer) and ``MCP-Protocol-Version`` (the
  version the ``initialize`` result negotiated) once known, plus the configured headers;
* each POST runs in its own task (``_post.py``), independent of the others; at most
  ``max_requests_in_flight`` requests at once, the next ones waiting in line in their tasks;
* sending never waits for another message's answer, yet keeps the order that matters: a
  message is written only after the one sent before it (a request waiting for a slot
  aside; a cancel still waits for its request, or withdraws it), ``initialize`` waits for
  its answer (it carries the session id), and a status that comes at once (202 to a
  notification; a request's, from a server that answers with SSE streams) is waited for,
  so the server has the message before the next one leaves and refusals such as an
  expired session are raised to the sender. A server answering requests with
  ``application/json`` sends the status only with the result: its requests are waited for
  only until written (``send_message``);
* after ``notifications/initialized`` was accepted, the GET stream for server-initiated
  messages is opened before anything else is sent (``_get.py``); SSE streams that end
  early are resumed with GET and ``Last-Event-ID`` after the server's ``retry:``
  (``_sse.py``);
* a 404 for the session raises ``SessionExpired`` and drops the session id: the session above
  sends ``initialize`` again on this same stream and retries;
* with ``auth`` (``_auth.HttpAuth``), every request carries its ``Authorization`` header,
  and a request answered 401 or 403 is sent again once it renewed the credentials;
* closing sends DELETE for the session.

Requests of the per-request era (MCP 2026-07-28: ``_meta`` declares the version; a
dual-era session sends ``server/discover`` first, and ``initialize`` only for a legacy
server) go through the same stream, each a POST outside any session: no ``MCP-Session-Id``,
their headers mirroring their body (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*`` from the
tool's ``x-mcp-header`` parameters the session hands over: ``ToolHeaderSink``), no GET
stream, no DELETE, no resumption; a ``notifications/cancelled`` for one is not sent but
closes its response, which is how 2026-07-28 cancels over HTTP (Streamable HTTP >
Cancellation). The stream tells a session which server it reaches and a digest of the
credentials in use (``ServerIdentity``), so that the server's era and cached results are
reused, and private ones only with the same credentials.

Failures are explained in plain words (``_errors.py``). Not here: the 2024-11-05
HTTP+SSE transport (``_legacy.py``).
"""

from __future__ import annotations

import hashlib
import logging
import urllib.parse
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final, final

import httpx
import trio

from trimcp.errors import SessionExpired, TransportClosed
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE

from ._handoff import Handoff
from ._inbox import Inbox
from ._json import outline
from ._link import HttpLink
from ._post import run_post
from ._resume import ReconnectPolicy
from ._wire import Sender, new_request, read_limited

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.protocol import HeaderParams

    from ._auth import HttpAuth
    from ._json import Outline, RequestId
    from ._slots import SlotStatistics

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_MAX_REQUESTS_IN_FLIGHT",
    "DEFAULT_STATUS_WAIT",
    "HttpClientStream",
    "open_http_client_stream",
    "server_key",
]

logger = logging.getLogger(__name__)

#: Seconds to open a TCP (and TLS) connection to the server.
DEFAULT_CONNECT_TIMEOUT: Final = 10.0

#: Seconds ``send_message`` waits for a status that should come at once: a notification's
#: or a response's 202, a request's while the server answers with SSE streams, the GET
#: stream's after ``notifications/initialized``. Then it goes on without it (the POST's task
#: still handles it). Local servers answer within milliseconds; trimcp's own holds an SSE
#: answer's status up to 50 ms for its first event. Until a server's first answer to a
#: request shows whether it answers with JSON, a slow first request to a JSON server holds
#: later messages this long, once.
DEFAULT_STATUS_WAIT: Final = 0.25

#: Requests whose POST may be in flight at once; later ones wait in line (not the sender).
#: Each holds a connection while its answer lasts. Browsers allow 6 connections per host,
#: too few for parallel tool calls; httpx's default pool allows 100, and the GET stream and
#: resumptions need a few more.
DEFAULT_MAX_REQUESTS_IN_FLIGHT: Final = 64

# Seconds the DELETE of a session may take when the stream closes.
_DELETE_TIMEOUT = 2.0


@final
class HttpClientStream:
    """A ``MessageStream`` to one MCP Streamable HTTP endpoint (module docstring).

    Made by ``open_http_client_stream``. ``send_message`` raises ``SessionExpired`` when the
    server no longer knows the session (send ``initialize`` next), a ``ConnectFailed``
    subclass when the server cannot be used at all (not running, TLS, a 401 or 403 that the
    authorization did not overcome, wrong path, ``initialize`` refused), and
    ``TransportClosed`` after ``aclose``. A failure that concerns one request only (HTTP 400
    or 500 to it, an answer that is not JSON, a stream that could not be resumed, a 403 the
    authorization could not overcome) arrives as a JSON-RPC error response to that request.
    """

    def __init__(self, link: HttpLink, nursery: trio.Nursery, *, status_wait: float) -> None:
        self._link = link
        self._nursery = nursery
        self._status_wait = status_wait
        self._closed = False

    @property
    def session_id(self) -> str | None:
        """The server's ``MCP-Session-Id`` for this client, None before (or without) one."""
        return self._link.session_id

    @property
    def protocol_version(self) -> str | None:
        """The protocol version the ``initialize`` result negotiated, None before it."""
        return self._link.protocol_version

    @property
    def server_key(self) -> str:
        """The endpoint's origin and path (``ServerIdentity``)."""
        return server_key(self._link.url)

    @property
    def authorization_context(self) -> str | None:
        """A digest of the last ``Authorization`` sent, None without one (``ServerIdentity``)."""
        value = self._link.last_authorization
        return None if value is None else hashlib.sha256(value.encode()).hexdigest()[:32]

    def set_tool_headers(self, tool: str, params: HeaderParams) -> None:
        """Mirror ``params`` into ``Mcp-Param-*`` headers of ``tool``'s calls."""
        if params:
            self._link.tool_headers[tool] = dict(params)
        else:
            self._link.tool_headers.pop(tool, None)

    def forget_tool_headers(self) -> None:
        """Forget every tool's ``x-mcp-header`` parameters (the tool list changed)."""
        self._link.tool_headers.clear()

    async def receive_message(self) -> bytes:
        """Return the next message from any of the server's answers or streams.

        Raises:
            MessageTooLarge: a message over the limit was dropped; the stream goes on.
            SessionExpired: a background request found the session gone; send ``initialize``.
            TransportClosed: after ``aclose``.
            TransportBroken: the server became unusable while no sender was waiting.
        """
        return await self._link.inbox.get()

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages received already, without waiting."""
        return self._link.inbox.ready()

    def statistics(self) -> SlotStatistics:
        """Return how many requests are in flight and how many wait for a slot."""
        return self._link.slots.statistics()

    async def send_message(self, data: bytes) -> None:
        """POST one message in a task of its own; return once it has left (module docstring).

        Waits for the request to be written, and for a status expected at once
        (``DEFAULT_STATUS_WAIT``), never for an answer that comes with a result. A request
        beyond ``max_requests_in_flight`` returns at once and leaves when a slot frees. A
        ``notifications/cancelled`` waits until its request has left; for a request still
        waiting for a slot, neither is sent. Cancelling this mid-way leaves the POST
        running; its answer still arrives.
        """
        if self._closed:
            raise TransportClosed("the HTTP client stream is closed")
        link = self._link
        shape = outline(data)
        if shape.initialize:
            link.begin_initialize()
        elif link.expired and shape.modern_version is None:
            raise SessionExpired(
                f"the server at {link.url} ended the session; send initialize to start a new one"
            )
        if shape.cancelled is not None and not await self._before_cancel(shape.cancelled):
            return
        handoff = Handoff()
        handoff.modern = shape.modern_version is not None
        if shape.request_ids:
            link.track(shape.request_ids, handoff, slot=shape.method != "subscriptions/listen")
        self._nursery.start_soon(run_post, link, data, shape, handoff)
        try:
            await self._wait(handoff, shape)
        finally:
            handoff.detached = True
        if handoff.error is not None:
            raise handoff.error
        if handoff.get_opened is not None:
            # The GET stream opens before the first request leaves (``_get.py``).
            with trio.move_on_after(self._status_wait):
                await handoff.get_opened.wait()

    async def _wait(self, handoff: Handoff, shape: Outline) -> None:
        """Wait for as much of ``handoff`` as the message's place in the order needs."""
        if shape.initialize:
            await handoff.done.wait()  # its answer carries the session id later POSTs need
            return
        if shape.request_ids and not handoff.holds_slot:
            return  # it waits in line in its task; the messages after it need not
        link = self._link
        if not (shape.request_ids and link.status_with_result):
            with trio.move_on_after(self._status_wait):
                await handoff.done.wait()
                return
            if shape.request_ids:
                link.status_with_result = True  # not at once: likely only with the result
        await handoff.sent.wait()

    async def _before_cancel(self, request_id: RequestId) -> bool:
        """Order a cancel after its request; False if the request is withdrawn instead.

        MCP 2025-11-25, Cancellation: a cancel the server gets before its request is
        ignored, and the request then runs to its end.
        """
        handoff = self._link.in_flight.get(request_id)
        if handoff is None:
            # Answered meanwhile. Without a session (the per-request era) a notification
            # has nowhere to go: 2026-07-28 defines none from client to server over HTTP.
            return self._link.protocol_version is not None
        if self._link.withdraw(handoff):
            return False  # never sent: nothing for the server to cancel
        if handoff.modern:
            handoff.scope.cancel()  # closing its response is the cancellation
            return False
        await handoff.sent.wait()
        return True

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """POST each message in turn (MCP 2025-11-25 has no batches)."""
        for data in messages:
            await self.send_message(data)

    async def aclose(self) -> None:
        """DELETE the session (a 405 or any failure is ignored), stop every task; idempotent."""
        if self._closed:
            return
        self._closed = True
        link = self._link
        session = link.session_id
        link.begin_initialize()  # ends the session's tasks, forgets its id
        if session is not None:
            await _delete(link, session)
        self._nursery.cancel_scope.cancel()
        link.inbox.close()


async def _delete(link: HttpLink, session: str) -> None:
    headers = link.headers("application/json, text/event-stream")
    headers["mcp-session-id"] = session
    with trio.move_on_after(_DELETE_TIMEOUT, shield=True):
        if link.auth is not None and (value := await link.auth.authorization()) is not None:
            headers["authorization"] = value
        request = new_request(link.client, "DELETE", link.url, headers)
        try:
            response = await link.client.send(request, stream=True)
            try:
                await read_limited(response, 4096)
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            logger.debug("DELETE of the session at %s failed: %r", link.url, exc)
            return
        if response.status_code not in (200, 202, 204, 404, 405):
            logger.debug("DELETE of the session at %s: HTTP %d", link.url, response.status_code)


def server_key(url: str) -> str:
    """Return the origin and path of ``url``, where a server's era is remembered."""
    parts = urllib.parse.urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    host = (parts.hostname or "").lower()
    return f"{parts.scheme}://{host}:{parts.port or default}{parts.path or '/'}"


def check_http_url(url: str) -> str:
    """Return ``url`` if it is an http(s) URL with a host.

    Raises:
        ValueError: it is not.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"an MCP HTTP URL starts with http:// or https:// and names a host: {url!r}"
        )
    return url


def http_client(connect_timeout: float, read_timeout: float | None) -> Sender:
    """Return the httpx client of one stream, and its transport to send through (``Sender``):
    no pool limit, no timeout on long answers."""
    timeout = httpx.Timeout(
        connect=connect_timeout, read=read_timeout, write=connect_timeout, pool=None
    )
    # SSE streams hold a connection each for as long as they last; a pool limit would make
    # the next POST wait behind them.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=20)
    transport = httpx.AsyncHTTPTransport(limits=limits)
    client = httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=True)
    return Sender(client, transport)


@asynccontextmanager
async def open_http_client_stream(  # noqa: PLR0913  # independent settings, all keyword-only
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    read_timeout: float | None = None,
    status_wait: float = DEFAULT_STATUS_WAIT,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    reconnect: ReconnectPolicy | None = None,
    max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    auth: HttpAuth | None = None,
) -> AsyncIterator[HttpClientStream]:
    """Yield a ``MessageStream`` to the Streamable HTTP endpoint at ``url``; close it on exit.

    Nothing is sent before the first message (``initialize``), so connection problems are
    raised by that ``send_message``. ``headers`` go with every request (``Authorization``,
    ...; the transport's own headers win). ``auth`` supplies the ``Authorization`` header
    of each request and deals with 401 and 403 answers (``HttpAuth``, e.g.
    ``trimcp.auth.client.OAuth``): a request it renews credentials for is sent again.
    ``read_timeout`` bounds silence on a connection (None: none; an SSE stream that times
    out is resumed). ``status_wait``: see
    ``DEFAULT_STATUS_WAIT``. ``max_message_size`` bounds one received message in bytes.
    ``max_requests_in_flight``: see ``DEFAULT_MAX_REQUESTS_IN_FLIGHT``.
    Leaving the block runs ``aclose`` (DELETE of the session). An exception from the
    block is raised as is, not in an exception group.

    Raises:
        ValueError: ``url`` is not an http:// or https:// URL with a host, or
            ``max_requests_in_flight`` is below 1.
    """
    check_http_url(url)
    if max_requests_in_flight < 1:
        raise ValueError("max_requests_in_flight must be at least 1")
    policy = reconnect or ReconnectPolicy()
    try:
        async with (
            http_client(connect_timeout, read_timeout) as sender,
            trio.open_nursery() as nursery,
        ):
            link = HttpLink(
                sender,
                url,
                Inbox(),
                headers=headers or {},
                max_message_size=max_message_size,
                policy=policy,
                max_requests=max_requests_in_flight,
                auth=auth,
            )
            link.nursery = nursery
            stream = HttpClientStream(link, nursery, status_wait=status_wait)
            try:
                yield stream
            finally:
                await stream.aclose()
    except BaseExceptionGroup as group:
        # The nursery wraps the block's own exception: hand it back unwrapped.
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise
