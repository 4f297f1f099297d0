"""An in-memory MCP client for testing servers: a real ``Session`` and a scripted client.

``open_in_memory_client(server)`` runs ``server`` (any ``RequestHandler``, such as an
``MCPServer``) in a real ``Session`` actor over ``memory_stream_pair()``, performs the
handshake with the protocol core's ``ClientConnection``, and yields an ``InMemoryClient``:

    async with open_in_memory_client(server, capabilities=ClientCapabilities(roots=True),
                                     handlers={"roots/list": list_roots}) as client:
        result = await client.request("tools/call", {"name": "add", "arguments": {...}})
        assert client.notifications[0].method == "notifications/message"

``request`` returns the result or raises the ``JsonRpcError`` the server answered with.
Server-to-client requests (sampling, elicitation, roots) are answered by ``handlers``,
coroutine functions taking the params and returning the result (or raising
``JsonRpcError``); a method without a handler is answered with -32601. Notifications,
including ``notifications/progress``, are recorded in order in ``notifications``.

Not a production client: no reconnection, no timeouts of its own (use trio's).
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from trimcp.actors import spawn
from trimcp.errors import JsonRpcError, MethodNotFound, TransportBroken, TransportClosed
from trimcp.protocol import (
    ClientConnection,
    ClientOptions,
    ErrorObject,
    Implementation,
    InitializeCompleted,
    Notification,
    NotificationReceived,
    ProgressReceived,
    ReplyToSend,
    RequestReceived,
    ResponseReceived,
    Result,
    UnexpectedResponse,
    error_object_for,
)
from trimcp.sessions import Session, SessionOptions
from trimcp.transports import memory_stream_pair

if TYPE_CHECKING:
    from trimcp.actors import ActorRef
    from trimcp.protocol import (
        ClientCapabilities,
        Event,
        InitializeResult,
        JsonObject,
        ProgressToken,
        Request,
        RequestId,
        Response,
    )
    from trimcp.sessions import RequestHandler
    from trimcp.transports import MessageStream

__all__ = ["ClientRequestHandler", "InMemoryClient", "open_in_memory_client"]

ClientRequestHandler = Callable[["JsonObject"], Awaitable["JsonObject"]]


@typing.final
class InMemoryClient:
    """The test's side of one session (see the module docstring)."""

    def __init__(
        self,
        connection: ClientConnection,
        stream: MessageStream,
        session: ActorRef,
        handlers: Mapping[str, ClientRequestHandler],
    ) -> None:
        self.connection = connection
        self.stream = stream
        self.session = session
        self.handlers = dict(handlers)
        self.notifications: list[Notification] = []
        self.server_requests: list[Request] = []
        self._responses: dict[RequestId, Response] = {}
        self._changed = trio.Event()
        self._initialized: InitializeResult | None = None

    @property
    def initialize_result(self) -> InitializeResult:
        """What the server answered to ``initialize``."""
        assert self._initialized is not None, "the handshake has not finished"
        return self._initialized

    # --- sending ----------------------------------------------------------------------------

    async def start_request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        progress_token: ProgressToken | None = None,
    ) -> RequestId:
        """Send a request without waiting; return its id (for ``cancel``/``wait_response``)."""
        if progress_token is not None:
            params = dict(params or {})
            params["_meta"] = {"progressToken": progress_token}
        request_id, data = self.connection.send_request(method, params)
        await self.stream.send_message(data)
        return request_id

    def has_response(self, request_id: RequestId) -> bool:
        """Tell whether an answer to ``request_id`` arrived and was not collected yet."""
        return request_id in self._responses

    async def wait_response(self, request_id: RequestId) -> JsonObject:
        """Wait for the answer to ``request_id``.

        Raises:
            JsonRpcError: the server answered with an error.
        """
        while request_id not in self._responses:
            await self._wait_change()
        response = self._responses.pop(request_id)
        if isinstance(response, Result):
            return response.result
        error = response.error
        data = error.data if isinstance(error.data, dict | list | str | int | float) else None
        raise JsonRpcError(error.code, error.message, data)

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        progress_token: ProgressToken | None = None,
    ) -> JsonObject:
        """Send a request and wait for its result (see ``wait_response``)."""
        request_id = await self.start_request(method, params, progress_token=progress_token)
        return await self.wait_response(request_id)

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification to the server."""
        await self.stream.send_message(self.connection.send_notification(method, params))

    async def cancel(self, request_id: RequestId, reason: str | None = None) -> None:
        """Send ``notifications/cancelled`` for one of our pending requests."""
        await self.stream.send_message(self.connection.send_cancel(request_id, reason))

    # --- waiting ----------------------------------------------------------------------------

    async def _wait_change(self) -> None:
        await self._changed.wait()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def received(self, method: str) -> list[Notification]:
        """Return the notifications received so far with ``method``."""
        return [item for item in self.notifications if item.method == method]

    async def wait_notification(self, method: str, count: int = 1) -> Notification:
        """Wait until ``count`` notifications with ``method`` arrived; return the last."""
        while len(self.received(method)) < count:
            await self._wait_change()
        return self.received(method)[count - 1]

    # --- receiving --------------------------------------------------------------------------

    async def read_loop(self, nursery: trio.Nursery) -> None:
        """Feed the client core until the stream ends; answer server requests in ``nursery``."""
        while True:
            try:
                data = await self.stream.receive_message()
            except (TransportClosed, TransportBroken, trio.ClosedResourceError):
                return
            for event in self.connection.receive(data):
                await self._on_event(event, nursery)
            self._signal()

    async def _on_event(self, event: Event, nursery: trio.Nursery) -> None:
        if isinstance(event, ResponseReceived | UnexpectedResponse):
            # Unexpected: answers to raw requests the test wrote itself (``stream``).
            if event.response.id is not None:
                self._responses[event.response.id] = event.response
        elif isinstance(event, NotificationReceived):
            self.notifications.append(event.notification)
        elif isinstance(event, ProgressReceived):
            params: JsonObject = {
                "progressToken": event.params.progress_token,
                "progress": event.params.progress,
            }
            if event.params.total is not None:
                params["total"] = event.params.total
            if event.params.message is not None:
                params["message"] = event.params.message
            self.notifications.append(Notification(method="notifications/progress", params=params))
        elif isinstance(event, RequestReceived):
            self.server_requests.append(event.request)
            nursery.start_soon(self._answer, event.request)
        elif isinstance(event, ReplyToSend):
            await self.stream.send_message(event.data)
        elif isinstance(event, InitializeCompleted):
            self._initialized = event.result

    async def _answer(self, request: Request) -> None:
        handler = self.handlers.get(request.method)
        try:
            if handler is None:
                raise MethodNotFound(request.method)
            data = self.connection.send_result(request.id, await handler(request.params or {}))
        except JsonRpcError as exc:
            error: ErrorObject = error_object_for(exc)
            data = self.connection.send_error(request.id, error)
        if data:
            await self.stream.send_message(data)

    async def handshake(self) -> None:
        """Send ``initialize``, wait for the answer, send ``notifications/initialized``."""
        _, data = self.connection.send_initialize()
        await self.stream.send_message(data)
        while self._initialized is None:
            await self._wait_change()
        await self.stream.send_message(self.connection.send_initialized())


@asynccontextmanager
async def open_in_memory_client(
    server: RequestHandler,
    *,
    capabilities: ClientCapabilities | None = None,
    handlers: Mapping[str, ClientRequestHandler] | None = None,
    options: SessionOptions | None = None,
    protocol_version: str | None = None,
) -> AsyncIterator[InMemoryClient]:
    """Run ``server`` in a real session and yield a handshaken client for it.

    ``options`` default to the server's ``session_options`` when it has them (an
    ``MCPServer``). On exit the client's tasks are cancelled and the session is stopped.
    """
    if options is None:
        options = getattr(server, "session_options", None) or SessionOptions()
    client_options = (
        ClientOptions()
        if protocol_version is None
        else ClientOptions(protocol_version=protocol_version)
    )
    server_side, client_side = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(server_side, server, options))
        connection = ClientConnection(
            Implementation(name="trimcp-test-client", version="0.1"), capabilities, client_options
        )
        client = InMemoryClient(connection, client_side, ref, handlers or {})
        try:
            async with trio.open_nursery() as tasks:
                tasks.start_soon(client.read_loop, tasks)
                await client.handshake()
                try:
                    yield client
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            ref.request_stop()
