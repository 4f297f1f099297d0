"""The per-request era (MCP 2026-07-28) on the MCP endpoint: one POST, one request.

A POST the router (``choose_era``, ``_app.py``) finds modern is served here, statelessly,
beside the sessions of the handshake era (MCP 2026-07-28, Transports > Streamable HTTP,
https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http):

* the body is one JSON-RPC request (a notification is taken with 202 and ignored: the core
  protocol defines none over HTTP; a response or a batch is 400);
* checks, in the order the spec's errors need them: ``_meta`` and its protocol version
  (-32602), the ``MCP-Protocol-Version`` header against it (-32020), the version (-32022),
  the rest of ``_meta`` (-32602), then ``Mcp-Method``, ``Mcp-Name`` and the tool's
  ``Mcp-Param-*`` headers against the body (-32020);
* the answer is JSON unless the request sends something before it (progress, a log line,
  a listen stream's notifications): then an SSE stream opens with the first of those, with
  no event ids and no priming event (nothing is resumable), and ends with the response;
* a request refused by the server answers with the HTTP status the spec gives its error:
  404 for -32601, 400 for the request's own faults (-32600, -32602, -32020, -32021,
  -32022); a result, and any other error, 200;
* the client closing the connection cancels the request (Cancellation): nothing more is
  sent for it;
* a request the server abandons (a listen stream whose client stopped reading) ends with
  its response unfinished, and the connection is closed.
"""

from __future__ import annotations

import contextvars
import logging
import math
import typing
from typing import TYPE_CHECKING, Final

import trio

from trimcp.errors import HeaderMismatch, InvalidParams, JsonRpcError
from trimcp.http._asgi import chunk, send_fixed
from trimcp.http._checks import HttpRefusal
from trimcp.http._sse_writer import SSE_HEADERS
from trimcp.protocol import (
    META_PROTOCOL_VERSION,
    ErrorCode,
    Request,
    check_request_headers,
    read_request_meta,
)
from trimcp.sessions import ModernRequest, run_inline
from trimcp.transports import encode_event, keepalive_comment

if TYPE_CHECKING:
    from trimcp.auth import Identity
    from trimcp.http._asgi import Receive, Send
    from trimcp.http._body import PostBody
    from trimcp.http._checks import Headers
    from trimcp.http._options import HttpOptions
    from trimcp.protocol import JsonObject, RequestId, RequestMeta
    from trimcp.sessions import RequestHandler, SessionOptions

__all__ = ["ModernEndpoint"]

logger = logging.getLogger(__name__)

_JSON: Final = [(b"content-type", b"application/json")]

#: HTTP status of a JSON-RPC error answered as JSON, by code (everything else: 200).
_STATUS: Final = {
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.PARSE_ERROR: 400,
    -32020: 400,
    -32021: 400,
    -32022: 400,
}


def _refusal(error: JsonRpcError) -> HttpRefusal:
    return HttpRefusal(
        _STATUS.get(error.code, 400), error.message, code=error.code, data=error.data
    )


@typing.final
class _ResponseStream:
    """Where a modern request's own messages go: SSE, opened by the first of them.

    A ``trimcp.sessions.RequestSink``. The lock keeps a keep-alive comment from
    interleaving with an event.
    """

    __slots__ = ("_lock", "_send", "last_write", "started")

    def __init__(self, send: Send) -> None:
        self._send = send
        self._lock = trio.Lock()
        self.started = False
        self.last_write = -math.inf

    def send_nowait(self, data: bytes) -> bool:
        return False  # an ASGI send is always awaited

    async def send(self, data: bytes) -> None:
        await self._write(encode_event(data))

    async def finish(self, data: bytes) -> None:
        """Send the response as the stream's last event, and end it."""
        async with self._lock:
            await self._send(
                {"type": "http.response.body", "body": encode_event(data), "more_body": False}
            )

    async def keepalive(self, interval: float, scope: trio.CancelScope) -> None:
        """Write a comment whenever the open stream was quiet for ``interval`` seconds,
        until ``scope`` is cancelled (a system task: a failed write just ends it)."""
        with scope:
            try:
                while True:
                    await trio.sleep(interval)
                    if self.started and trio.current_time() - self.last_write >= interval:
                        await self._write(keepalive_comment())
            except Exception:  # noqa: BLE001 - the connection is gone; the watcher saw it
                logger.debug("keep-alive: the stream is gone")

    async def _write(self, body: bytes) -> None:
        async with self._lock:
            if not self.started:
                await self._send(
                    {"type": "http.response.start", "status": 200, "headers": SSE_HEADERS}
                )
                self.started = True
            await self._send(chunk(body))
            self.last_write = trio.current_time()


@typing.final
class ModernEndpoint:
    """Serves the modern POSTs of one MCP endpoint (see the module docstring)."""

    __slots__ = ("_handler", "_keepalive", "_session_options", "in_flight")

    def __init__(
        self, handler: RequestHandler, options: HttpOptions, session_options: SessionOptions
    ) -> None:
        self._handler = handler
        self._session_options = session_options
        self._keepalive = options.keepalive_interval
        #: Requests being served now: they belong to no session, so no session counts them.
        self.in_flight = 0

    async def post(
        self,
        headers: Headers,
        outline: PostBody,
        receive: Receive,
        send: Send,
        identity: Identity | None,
    ) -> None:
        """Serve one modern POST.

        Raises:
            HttpRefusal: the request is refused before it runs (the caller answers).
        """
        message = outline.message
        if outline.batch or not isinstance(message, dict):
            raise HttpRefusal(
                400,
                "Invalid Request: a 2026-07-28 POST carries exactly one JSON-RPC message, "
                "not a batch",
            )
        method = message.get("method")
        if not isinstance(method, str):
            raise HttpRefusal(
                400,
                "Invalid Request: 2026-07-28 clients send only requests (with a string "
                "method); there are no server-to-client requests to respond to",
            )
        request_id = outline.request_id
        if request_id is None:
            await send_fixed(send, 202, b"", [])  # a notification: none is defined; ignored
            return
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            raise _refusal(InvalidParams("params must be an object", {"param": "params"}))
        try:
            checked = self._checked(headers, request_id, method, params)
        except JsonRpcError as error:
            raise _refusal(error) from None
        self.in_flight += 1
        try:
            await self._serve(checked, receive, send, identity)
        finally:
            self.in_flight -= 1

    def _checked(
        self,
        headers: Headers,
        request_id: RequestId,
        method: str,
        params: JsonObject | None,
    ) -> tuple[Request, RequestMeta]:
        """Check ``_meta`` and the mirrored headers (see the module docstring).

        Raises:
            JsonRpcError: -32602, -32020 or -32022, as the spec orders them.
        """
        meta = None if params is None else params.get("_meta")
        body_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if isinstance(body_version, str):  # else read_request_meta refuses it (-32602)
            header = headers.get("mcp-protocol-version")
            if header is None or header.strip() != body_version:
                raise HeaderMismatch(
                    f"the MCP-Protocol-Version header is {header!r} but "
                    f'params._meta["{META_PROTOCOL_VERSION}"] is {body_version!r}; send '
                    "the same version in both",
                    "MCP-Protocol-Version",
                )
        request_meta = read_request_meta(params)
        tool = None if params is None or method != "tools/call" else params.get("name")
        mirrored = self._handler.header_parameters(tool) if isinstance(tool, str) else None
        check_request_headers(headers.as_text(), method, params, mirrored)
        return Request(id=request_id, method=method, params=params), request_meta

    async def _serve(
        self,
        checked: tuple[Request, RequestMeta],
        receive: Receive,
        send: Send,
        identity: Identity | None,
    ) -> None:
        """Run the request; answer in JSON, or end the SSE stream it opened."""
        request, meta = checked
        stream = _ResponseStream(send)
        modern = ModernRequest(
            self._handler, request, meta, stream, identity=identity, options=self._session_options
        )
        answers: list[bytes | None] = []  # empty if the client went away first
        handler_scope = trio.CancelScope()
        helpers: list[trio.CancelScope] = []

        async def watch(scope: trio.CancelScope) -> None:
            # Closing the response stream is the cancellation (Cancellation, 2026-07-28).
            with scope:
                try:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                except Exception:  # noqa: BLE001 - a broken connection is a gone client
                    logger.debug("%s %r: receive failed", request.method, request.id)
                handler_scope.cancel()

        def suspending() -> None:
            # Most requests answer without ever waiting, and need no watcher: one starts
            # only when the handler first suspends (a task per request cost ~130 µs).
            scope = trio.CancelScope()
            helpers.append(scope)
            trio.lowlevel.spawn_system_task(watch, scope)
            if self._keepalive is not None and request.method == "subscriptions/listen":
                beat = trio.CancelScope()
                helpers.append(beat)
                trio.lowlevel.spawn_system_task(stream.keepalive, self._keepalive, beat)

        try:
            with handler_scope:
                run = modern.run()
                answers.append(await run_inline(run, contextvars.copy_context(), suspending))
        finally:
            for scope in helpers:
                scope.cancel()
        if not answers:
            logger.debug("%s %r: the client went away; cancelled", request.method, request.id)
            return
        if answers[0] is None:
            # Abandoned (a listen stream whose client reads nothing): the stream may be stuck
            # mid-event, so it ends here unfinished and the server closes the connection.
            return
        if stream.started:
            await stream.finish(answers[0])
            return
        code = modern.error_code
        status = 200 if code is None else _STATUS.get(code, 200)
        await send_fixed(send, status, answers[0], _JSON)
