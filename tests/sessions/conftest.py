"""A scripted MCP client (the protocol core's ClientConnection) wired to a real Session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import orjson
import trio

from trimcp.actors import ActorRef, spawn
from trimcp.errors import MethodNotFound
from trimcp.protocol import (
    ClientCapabilities,
    ClientConnection,
    Event,
    Implementation,
    JsonObject,
    Notification,
    Request,
    ServerCapabilities,
)
from trimcp.sessions import RequestContext, Session, SessionHandle, SessionOptions
from trimcp.transports import MessageStream, memory_stream_pair

Handler = Callable[[Request, RequestContext], Awaitable[JsonObject]]


@dataclass
class ScriptedHandler:
    """A RequestHandler whose methods are plain async functions in a dict."""

    methods: dict[str, Handler] = field(default_factory=dict)
    notifications: list[tuple[str, str]] = field(default_factory=list)
    sessions: set[SessionHandle] = field(default_factory=set)
    server_info: Implementation = field(
        default_factory=lambda: Implementation(name="test-server", version="1.0")
    )
    capabilities: ServerCapabilities = field(
        default_factory=lambda: ServerCapabilities(tools=True, logging=True)
    )
    instructions: str | None = None

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        method = self.methods.get(request.method)
        if method is None:
            raise MethodNotFound(request.method)
        return await method(request, context)

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        self.notifications.append((session.session_id, notification.method))

    def session_opened(self, session: SessionHandle) -> None:
        self.sessions.add(session)

    def session_closed(self, session: SessionHandle) -> None:
        self.sessions.discard(session)


@dataclass
class Client:
    """The test's side: a ClientConnection over the other end of the stream."""

    connection: ClientConnection
    stream: MessageStream
    session: ActorRef
    actor: Session

    async def send(self, data: bytes) -> None:
        await self.stream.send_message(data)

    async def receive_wire(self) -> JsonObject:
        """Return the next raw message as JSON (without feeding the client core)."""
        raw = orjson.loads(await self.stream.receive_message())
        assert isinstance(raw, dict)
        return raw

    async def events(self) -> list[Event]:
        """Feed the next message to the client core and return its events."""
        return self.connection.receive(await self.stream.receive_message())

    async def handshake(self) -> None:
        _, data = self.connection.send_initialize()
        await self.send(data)
        await self.events()
        await self.send(self.connection.send_initialized())


@asynccontextmanager
async def open_client(
    handler: ScriptedHandler,
    *,
    options: SessionOptions | None = None,
    capabilities: ClientCapabilities | None = None,
    handshake: bool = True,
) -> AsyncIterator[Client]:
    server_side, client_side = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        actor = Session(server_side, handler, options)
        ref = await spawn(nursery, actor)
        client = Client(
            ClientConnection(Implementation(name="test-client", version="0.1"), capabilities),
            client_side,
            ref,
            actor,
        )
        if handshake:
            await client.handshake()
        try:
            yield client
        finally:
            ref.request_stop()
