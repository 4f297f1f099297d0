"""``SessionPeer``: a real ``Session`` and a recording client, inside one trio run.

The trio half of ``ProtocolStateMachine``: it spawns the session actor (unlinked, so a crash
is recorded rather than raised into the run) over a ``memory_stream_pair``, reads everything
the server sends into the wire log, feeds it to a ``ClientConnection`` (which answers the
server's requests through ``answer``, or refuses those for undeclared capabilities), and
sends what the machine asks for. All of its state is touched only from inside the run.

It is a deliberately permissive client: requests and notifications are encoded directly, so
a test may send what the client core would refuse (a ``tools/call`` before ``initialize``, a
method the server never declared); the server is what is under test.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Final, final

import trio
import trio.testing

from trimcp.errors import (
    JsonRpcError,
    LocalProtocolError,
    MethodNotFound,
    TransportBroken,
    TransportClosed,
)
from trimcp.protocol import (
    ErrorResponse,
    Notification,
    ProtocolViolation,
    ReplyToSend,
    Request,
    RequestReceived,
    Result,
    decode_json,
    encode_message,
    error_object_for,
    parse_message,
)
from trimcp.sessions import Session
from trimcp.transports import memory_stream_pair

from ._unlinked import spawn_unlinked
from ._wire_log import WireRecord, expected_reply

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.actors import ActorRef, ExitReason
    from trimcp.protocol import ClientConnection, JsonObject, RequestId, Response
    from trimcp.sessions import RequestHandler, SessionOptions
    from trimcp.transports import MessageStream

    from ._wire_log import Direction

logger = logging.getLogger(__name__)

_NO_LIMIT: Final = 2**62
# Ids of our own requests start here; the client core spends 1 on initialize.
_FIRST_ID: Final = 2


@final
class SessionPeer:
    """The client end of one session under test (see the module docstring)."""

    def __init__(
        self,
        connection: ClientConnection,
        answer: Callable[[str, JsonObject | None], JsonObject],
        *,
        timeout: float,
    ) -> None:
        self.connection = connection
        self.log: list[WireRecord] = []
        self.notes: list[str] = []
        self.session: ActorRef | None = None
        self._answer = answer
        self._timeout = timeout
        self._action = 0
        self._label = ""
        self._next_id = _FIRST_ID
        self._answered: Counter[RequestId | None] = Counter()
        self._last: dict[RequestId, Response] = {}
        self._changed = trio.Event()
        self._stream: MessageStream | None = None

    # --- lifecycle ----------------------------------------------------------------------

    async def start(
        self,
        nursery: trio.Nursery,
        handler: RequestHandler,
        options: SessionOptions,
        wrap: Callable[[MessageStream], MessageStream],
    ) -> None:
        """Spawn the session and the reader; return once both run."""
        server_end, client_end = memory_stream_pair(max_message_size=options.max_message_size)
        self._stream = client_end
        self.session = await spawn_unlinked(nursery, Session(wrap(server_end), handler, options))
        nursery.start_soon(self._read_loop, client_end)

    async def stop(self) -> None:
        """Stop the session (if it still runs) and close the client end."""
        if self.session is not None and self.session.alive:
            with trio.move_on_after(self._timeout):
                await self.session.stop()
        if self._stream is not None:
            await self._stream.aclose()

    def exit_reason(self) -> ExitReason | None:
        """Why the session stopped, or ``None`` while it runs."""
        return None if self.session is None else self.session.exit_reason

    def begin(self, label: str) -> None:
        """Number the next helper call; its messages carry ``label`` in the log."""
        self._action += 1
        self._label = label

    # --- reading ------------------------------------------------------------------------

    async def _read_loop(self, stream: MessageStream) -> None:
        while True:
            try:
                data = await stream.receive_message()
            except TransportClosed:
                return
            self._record("received", data)
            self._count_response(data)
            await self._feed_client(data)
            self._changed.set()
            self._changed = trio.Event()

    def _count_response(self, data: bytes) -> None:
        try:
            message = parse_message(decode_json(data, max_size=_NO_LIMIT))
        except JsonRpcError:
            return  # the invariant reports it
        if isinstance(message, Result | ErrorResponse):
            self._answered[message.id] += 1
            if message.id is not None:
                self._last[message.id] = message

    async def _feed_client(self, data: bytes) -> None:
        try:
            events = self.connection.receive(data)
        except LocalProtocolError:
            return  # the client core closed after a violation; the log keeps the rest
        for event in events:
            if isinstance(event, ReplyToSend):
                await self.send(event.data)
            elif isinstance(event, RequestReceived):
                await self.send(self._answer_request(event.request))
            elif isinstance(event, ProtocolViolation):
                self.notes.append(f"client core: {event.error}")

    def _answer_request(self, request: Request) -> bytes:
        try:
            result = self._answer(request.method, request.params)
        except JsonRpcError as exc:
            return self.connection.send_error(request.id, error_object_for(exc))
        except Exception as exc:
            # The test's own hook failed: answer -32603 and report it as a failure.
            logger.error("answer_server_request failed for %s", request.method, exc_info=exc)
            self.notes.append(f"answer_server_request({request.method!r}) raised {exc!r}")
            return self.connection.send_error(request.id, error_object_for(exc))
        return self.connection.send_result(request.id, result)

    # --- sending ------------------------------------------------------------------------

    def _record(self, direction: Direction, data: bytes) -> None:
        record = WireRecord(direction=direction, data=data, action=self._action, label=self._label)
        self.log.append(record)

    async def send(self, data: bytes) -> None:
        """Record ``data`` and send it as one message."""
        assert self._stream is not None
        self._record("sent", data)
        try:
            await self._stream.send_message(data)
        except (TransportClosed, TransportBroken) as exc:
            raise AssertionError(f"the session stopped: {await self._why_gone()}") from exc

    async def _why_gone(self) -> ExitReason | str:
        if self.session is None:
            return "it never started"
        with trio.move_on_after(self._timeout):
            return await self.session.wait_exited()
        return "it closed its stream but still runs"

    def allocate_id(self) -> RequestId:
        """Return a fresh request id, alternating integers and strings."""
        number = self._next_id
        self._next_id += 1
        return number if number % 2 else f"req-{number}"

    async def wait_response(self, request_id: RequestId, already: int) -> Response | None:
        """Wait until more than ``already`` responses carry ``request_id``; ``None`` on timeout."""
        with trio.move_on_after(self._timeout):
            while self._answered[request_id] <= already:
                await self._changed.wait()
            return self._last[request_id]
        return None

    async def request(self, method: str, params: JsonObject | None) -> tuple[RequestId, Response]:
        """Send one request and return its response.

        Raises:
            AssertionError: no response within the timeout.
        """
        request_id = self.allocate_id()
        data = encode_message(Request(id=request_id, method=method, params=params))
        return request_id, await self._exchange(request_id, data, method)

    async def _exchange(self, request_id: RequestId, data: bytes, what: str) -> Response:
        already = self._answered[request_id]
        await self.send(data)
        response = await self.wait_response(request_id, already)
        if response is None:
            raise AssertionError(
                f"no response to {what} (id {request_id!r}) within {self._timeout:g} s"
            )
        return response

    async def initialize(self) -> Response:
        """Run the handshake with the client core; send ``initialized`` if it succeeded."""
        request_id, data = self.connection.send_initialize()
        response = await self._exchange(request_id, data, "initialize")
        if isinstance(response, Result) and self.connection.initialize_result is not None:
            await self.send(self.connection.send_initialized())
            await self.settle()
        return response

    @property
    def initialized(self) -> bool:
        """Tell whether the handshake completed."""
        return self.connection.initialize_result is not None

    async def notify(self, method: str, params: JsonObject | None) -> None:
        """Send a notification, then let the server react (see ``settle``)."""
        await self.send(encode_message(Notification(method=method, params=params)))
        await self.settle()

    async def send_raw(self, data: bytes, max_message_size: int) -> Response | None:
        """Send any bytes; wait for the response they are owed, if any, then settle."""
        expected = expected_reply(data, max_message_size=max_message_size)
        response: Response | None = None
        if expected.kind == "id" and expected.request_id is not None:
            response = await self._exchange(expected.request_id, data, "a raw request")
        else:
            await self.send(data)
        await self.settle()
        return response

    async def settle(self) -> None:
        """Wait until the run is idle, then until a ``ping`` comes back.

        The session answers messages that the core refuses in arrival order, so once the
        ping's answer is in, every such answer to what was sent before it is in too.
        Handlers still sleeping on a timer are not waited for.
        """
        with trio.move_on_after(self._timeout):
            await trio.testing.wait_all_tasks_blocked(cushion=0.0)
        request_id = self.allocate_id()
        ping = encode_message(Request(id=request_id, method="ping"))
        await self._exchange(request_id, ping, "the settling ping")

    def snapshot(self) -> tuple[tuple[WireRecord, ...], tuple[str, ...]]:
        """Return the wire log and the notes so far (call through ``TrioHost.run``)."""
        return tuple(self.log), tuple(self.notes)


def default_answer(method: str, params: JsonObject | None) -> JsonObject:
    """Answer server requests as a minimal client: no roots, decline elicitation.

    Raises:
        MethodNotFound: sampling and anything else.
    """
    if method == "roots/list":
        return {"roots": []}
    if method == "elicitation/create":
        return {"action": "decline"}
    raise MethodNotFound(method)
