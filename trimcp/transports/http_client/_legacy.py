"""``open_legacy_sse_client_stream``: the deprecated HTTP+SSE transport of MCP 2024-11-05.

For servers that predate Streamable HTTP (config ``"transport": "sse"``). The client GETs
the SSE endpoint and keeps it open; the server's first event, ``endpoint``, names the URL
(often relative, with a session id in its query) to POST every message to; everything the
server sends arrives as ``message`` events on the GET stream. There are no session headers,
no resumption and no DELETE: closing the GET stream ends the session.
"""

from __future__ import annotations

import math
import urllib.parse
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, final

import httpx
import trio

from trimcp.errors import ConnectFailed, TransportBroken, TransportClosed
from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE
from trimcp.transports import SSEDecoder

from ._auth import send_authorized
from ._client import DEFAULT_CONNECT_TIMEOUT, check_http_url, http_client
from ._errors import connection_error, server_message, status_error, unexpected_content
from ._inbox import Inbox
from ._link import ACCEPT_SSE
from ._resume import decode
from ._sse import is_event_stream
from ._wire import close_response, new_request, read_chunks, read_limited

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from trimcp.errors import MessageTooLarge

    from ._auth import HttpAuth

__all__ = ["LegacySseClientStream", "open_legacy_sse_client_stream"]

_ERROR_BODY_LIMIT = 64 * 1024


@final
class LegacySseClientStream:
    """A ``MessageStream`` over the 2024-11-05 HTTP+SSE transport (module docstring)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        endpoint: str,
        inbox: Inbox,
        *,
        headers: dict[str, str],
        auth: HttpAuth | None = None,
    ) -> None:
        self._client = client
        self.endpoint = endpoint
        self._inbox = inbox
        self._headers = headers
        self._auth = auth
        self._closed = False

    async def receive_message(self) -> bytes:
        """Return the next ``message`` event's data.

        Raises:
            MessageTooLarge: one was over the limit and dropped; the stream goes on.
            TransportClosed: after ``aclose``, or when the server ended the SSE stream.
            TransportBroken: the SSE connection broke.
        """
        return await self._inbox.get()

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        """Return the messages received already, without waiting."""
        return self._inbox.ready()

    async def send_message(self, data: bytes) -> None:
        """POST one message to the endpoint the server named; its answer comes as an event.

        Raises:
            TransportClosed: after ``aclose``.
            ConnectFailed / TransportBroken: the POST failed (in plain words).
        """
        if self._closed:
            raise TransportClosed("the HTTP+SSE client stream is closed")
        headers = {**self._headers, "content-type": "application/json"}

        async def send(sent: dict[str, str]) -> httpx.Response:
            request = new_request(self._client, "POST", self.endpoint, sent, data)
            return await self._client.send(request, stream=True)

        try:
            response = await send_authorized(send, headers, self._auth)
        except httpx.HTTPError as exc:
            raise connection_error(self.endpoint, exc, connected=True) from exc
        try:
            if response.is_success:
                return
            body = await read_limited(response, _ERROR_BODY_LIMIT)
        except httpx.HTTPError as exc:
            raise connection_error(self.endpoint, exc, connected=True) from exc
        finally:
            await close_response(response)
        if response.status_code == 404:
            raise TransportBroken(
                f"the server at {self.endpoint} ended the HTTP+SSE session (HTTP 404)"
            )
        detail = server_message(body)
        raise status_error(self.endpoint, response.status_code, detail, session=False)

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        """POST each message in turn."""
        for data in messages:
            await self.send_message(data)

    async def aclose(self) -> None:
        """Stop reading the SSE stream (which ends the session); idempotent."""
        self._closed = True
        self._inbox.close()


@asynccontextmanager
async def open_legacy_sse_client_stream(  # noqa: PLR0913  # independent settings, keyword-only
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    read_timeout: float | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    auth: HttpAuth | None = None,
) -> AsyncIterator[LegacySseClientStream]:
    """Open the SSE endpoint at ``url``, wait for its ``endpoint`` event, yield the stream.

    ``connect_timeout`` bounds connecting and the wait for the ``endpoint`` event, and a
    sign-in that a 401 to the SSE request starts. The other settings are
    ``open_http_client_stream``'s. An exception from the block is raised
    as is, not in an exception group.

    Raises:
        ValueError: ``url`` is not an http:// or https:// URL with a host.
        ConnectFailed: no connection, an error status, no event stream, no ``endpoint``
            event in time, or an endpoint on another origin.
    """
    check_http_url(url)
    sent = {name.lower(): value for name, value in (headers or {}).items()}
    try:
        async with (
            http_client(connect_timeout, read_timeout) as sender,
            trio.open_nursery() as nursery,
        ):
            client = sender.client  # the legacy transport is not a hot path: httpx's send
            inbox = Inbox()
            reader = _Reader(client, url, inbox, sent, max_message_size=max_message_size, auth=auth)
            endpoint: str = await nursery.start(reader.run, connect_timeout)
            stream = LegacySseClientStream(client, endpoint, inbox, headers=sent, auth=auth)
            try:
                yield stream
            finally:
                await stream.aclose()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise


@final
class _Reader:
    """The GET stream's task: the ``endpoint`` event first, then messages for the inbox."""

    def __init__(  # noqa: PLR0913  # the connection's parts, each named
        self,
        client: httpx.AsyncClient,
        url: str,
        inbox: Inbox,
        headers: dict[str, str],
        *,
        max_message_size: int,
        auth: HttpAuth | None,
    ) -> None:
        self._client = client
        self._auth = auth
        self._url = url
        self._inbox = inbox
        self._headers = headers
        self._decoder = SSEDecoder(max_event_size=max_message_size)
        self._task_status: trio.TaskStatus[str] | None = None
        self._waiting: trio.CancelScope | None = None

    async def run(
        self,
        connect_timeout: float,
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        self._task_status = task_status
        with trio.CancelScope(deadline=trio.current_time() + connect_timeout) as waiting:
            self._waiting = waiting
            await self._read()
        if self._task_status is not None:  # the endpoint never came
            problem = (
                f"no `endpoint` event within {connect_timeout:g} s"
                if waiting.cancelled_caught
                else "the server closed the SSE stream before sending its `endpoint` event"
            )
            raise ConnectFailed(self._url, f"{problem}; is this a 2024-11-05 HTTP+SSE endpoint?")

    async def _read(self) -> None:
        headers = {**self._headers, "accept": ACCEPT_SSE}

        async def send(sent: dict[str, str]) -> httpx.Response:
            request = new_request(self._client, "GET", self._url, sent)
            return await self._client.send(request, stream=True)

        try:
            response = await send_authorized(send, headers, self._auth)
        except httpx.HTTPError as exc:
            await self._fail(connection_error(self._url, exc, connected=False), exc)
            return
        try:
            await self._check(response)
            await read_chunks(response, self._consume)
            self._decoder.feed_eof()
        except httpx.HTTPError as exc:
            await self._fail(connection_error(self._url, exc, connected=True), exc)
            return
        finally:
            await close_response(response)
        await self._inbox.put(TransportClosed("the server closed the HTTP+SSE stream"))

    async def _check(self, response: httpx.Response) -> None:
        if not response.is_success:
            body = await read_limited(response, _ERROR_BODY_LIMIT)
            detail = server_message(body)
            raise status_error(self._url, response.status_code, detail, session=False)
        if not is_event_stream(response):
            body = await read_limited(response, _ERROR_BODY_LIMIT)
            kind = response.headers.get("content-type", "")
            raise unexpected_content(self._url, kind, body)

    async def _fail(self, error: TransportBroken, cause: httpx.HTTPError) -> None:
        error.__cause__ = cause
        if self._task_status is not None:
            raise error
        await self._inbox.put(error)

    async def _consume(self, chunk: bytes) -> bool:
        for item in decode(self._decoder, chunk):
            if isinstance(item, BaseException):
                await self._inbox.put(item)
            elif item.event == "endpoint" and self._task_status is not None:
                self._started(item.data.strip())
            elif item.event == "message" and item.data.strip():
                await self._inbox.put(item.data.encode())
        return True

    def _started(self, endpoint: str) -> None:
        resolved = urllib.parse.urljoin(self._url, endpoint)
        mine = urllib.parse.urlsplit(self._url)
        theirs = urllib.parse.urlsplit(resolved)
        if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc):
            raise ConnectFailed(
                self._url,
                f"the server named an endpoint on another origin ({resolved}); refused, "
                "since messages could leak to a third party",
            )
        assert self._task_status is not None
        assert self._waiting is not None
        self._waiting.deadline = math.inf
        self._task_status.started(resolved)
        self._task_status = None
