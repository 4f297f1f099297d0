"""The protocol invariants of one MCP session, checked over its wire log by a pure function.

``check_wire`` replays what a client sent and what the server answered, in order, and lists
every rule the server broke:

* each request (and each invalid message whose id can be read) gets exactly one response,
  carrying that id with the same JSON type; nothing answers a notification, a response we
  sent, or a request twice;
* each message that is not a request and whose id cannot be read gets exactly one error
  response without an id (JSON-RPC 2.0 §5: parse error / invalid request);
* every message from the server is JSON-RPC 2.0 (an error has an integer ``code`` and a string
  ``message``);
* before the ``initialize`` result only ``initialize`` and ``ping`` may succeed, and a second
  ``initialize`` must fail (Lifecycle > Initialization);
* the server sends requests only for capabilities the client declared, and, before the
  client's ``notifications/initialized``, nothing but ``ping`` (plus logging and progress
  notifications once ``initialize`` was answered).

With ``complete=True`` (nothing may still be in flight) a request without its response is a
violation too, unless the client cancelled it. No trio, no hypothesis: the state machine calls
this after every step, and tests may call it on any log.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, final

from trimcp.errors import JsonRpcError
from trimcp.protocol import (
    ErrorResponse,
    Notification,
    Request,
    Result,
    decode_json,
    parse_message,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from trimcp.protocol import ClientCapabilities, JsonValue, Message, RequestId

Direction = Literal["sent", "received"]

#: Server-to-client requests and the client capability each needs (MCP 2025-11-25, §2.3).
CLIENT_CAPABILITY_FOR: Final = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "tasks/get": "tasks",
    "tasks/result": "tasks",
    "tasks/list": "tasks_list",
    "tasks/cancel": "tasks_cancel",
}
_BEFORE_INITIALIZED: Final = frozenset({"notifications/message", "notifications/progress"})
_ANY_PHASE: Final = frozenset({"initialize", "ping"})
# Received messages are checked for shape, not size: the client's own limit is not the issue.
_NO_LIMIT: Final = 2**62


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WireRecord:
    """One message as the client saw it: its bytes, its direction and the action it was part of.

    ``action`` numbers the machine's helper calls (``label`` names it, e.g. ``call_tool
    echo``); messages that arrive between actions keep the previous number.
    """

    direction: Direction
    data: bytes
    action: int = 0
    label: str = ""

    def describe(self) -> str:
        """Return a short form for failure messages."""
        shown = self.data if len(self.data) <= 200 else self.data[:200] + b"..."
        return f"#{self.action} {self.label}: {self.direction} {shown!r}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Expected:
    """What a message the client sent is owed: ``kind`` says how it must be answered.

    ``"none"``: nothing (notifications, responses). ``"id"``: one response with
    ``request_id``; ``must_fail`` when only an error is correct. ``"idless"``: one error
    response without an id.
    """

    kind: Literal["none", "id", "idless"]
    request_id: RequestId | None = None
    method: str | None = None
    must_fail: bool = False
    message: Message | None = None


def expected_reply(data: bytes, *, max_message_size: int) -> Expected:
    """Classify one message the way a conforming server reads it (``trimcp.protocol`` rules)."""
    try:
        value = decode_json(data, max_size=max_message_size)
    except JsonRpcError:
        return Expected(kind="idless")
    try:
        message = parse_message(value)
    except JsonRpcError:
        request_id = _readable_id(value)
        if request_id is None:
            return Expected(kind="idless")
        return Expected(kind="id", request_id=request_id, must_fail=True)
    if isinstance(message, Request):
        return Expected(kind="id", request_id=message.id, method=message.method, message=message)
    return Expected(kind="none", message=message)


def _readable_id(value: JsonValue) -> RequestId | None:
    # JSON-RPC 2.0 §5: an invalid request is answered with its id when it can be read; MCP's
    # core reads it only from request-shaped objects (``trimcp.protocol`` codec).
    if isinstance(value, dict) and "method" in value:
        candidate = value.get("id")
        if isinstance(candidate, str) or (
            isinstance(candidate, int) and not isinstance(candidate, bool)
        ):
            return candidate
    return None


@dataclass(slots=True)
class _Replay:
    capabilities: ClientCapabilities
    max_message_size: int
    outstanding: dict[RequestId, deque[Expected]] = field(default_factory=dict)
    idless: int = 0
    cancelled: set[RequestId] = field(default_factory=set)
    initialize_answered: bool = False
    initialized_sent: bool = False
    problems: list[str] = field(default_factory=list)

    def sent(self, record: WireRecord) -> None:
        expected = expected_reply(record.data, max_message_size=self.max_message_size)
        if expected.kind == "idless":
            self.idless += 1
        elif expected.kind == "id" and expected.request_id is not None:
            request_id = expected.request_id
            if expected.method is not None:
                expected = _with_phase(expected, self.initialize_answered)
            self.outstanding.setdefault(request_id, deque()).append(expected)
        elif isinstance(expected.message, Notification):
            self._sent_notification(expected.message)

    def _sent_notification(self, notification: Notification) -> None:
        if notification.method == "notifications/initialized" and self.initialize_answered:
            self.initialized_sent = True
        elif notification.method == "notifications/cancelled" and notification.params:
            request_id = notification.params.get("requestId")
            if isinstance(request_id, str | int) and request_id in self.outstanding:
                self.cancelled.add(request_id)

    def received(self, record: WireRecord) -> None:
        try:
            message = parse_message(decode_json(record.data, max_size=_NO_LIMIT))
        except JsonRpcError as exc:
            self.fail(record, f"the server sent a message that is not JSON-RPC 2.0: {exc.message}")
            return
        if isinstance(message, Result | ErrorResponse):
            self._response(record, message)
        elif isinstance(message, Request):
            self._server_request(record, message)
        else:
            self._server_notification(record, message)

    def _response(self, record: WireRecord, response: Result | ErrorResponse) -> None:
        if response.id is None:
            if self.idless == 0:
                self.fail(record, "an error without an id answers nothing (a notification?)")
            else:
                self.idless -= 1
            return
        waiting = self.outstanding.get(response.id)
        if not waiting:
            self.fail(
                record,
                f"response id {response.id!r} matches no request in flight (answered twice, "
                "a wrong id or id type, or an answer to a notification)",
            )
            return
        expected = waiting.popleft()
        if not waiting:
            del self.outstanding[response.id]
        if isinstance(response, Result) and expected.must_fail:
            self.fail(record, f"{expected.method or 'an invalid message'} must get an error here")
        elif isinstance(response, Result) and expected.method == "initialize":
            self.initialize_answered = True

    def _server_request(self, record: WireRecord, request: Request) -> None:
        if request.method != "ping" and not self.initialized_sent:
            self.fail(record, f"the server sent {request.method} before initialization finished")
        flag = CLIENT_CAPABILITY_FOR.get(request.method)
        if flag is not None and getattr(self.capabilities, flag) is not True:
            self.fail(record, f"the server sent {request.method} but the client lacks {flag}")

    def _server_notification(self, record: WireRecord, notification: Notification) -> None:
        if self.initialized_sent:
            return
        if not self.initialize_answered or notification.method not in _BEFORE_INITIALIZED:
            self.fail(
                record, f"the server sent {notification.method} before initialization finished"
            )

    def fail(self, record: WireRecord, problem: str) -> None:
        self.problems.append(f"{problem}\n    at {record.describe()}")

    def unanswered(self) -> list[str]:
        missing = [
            f"no response to {expected.method or 'an invalid message'} (id {request_id!r})"
            for request_id, waiting in self.outstanding.items()
            if request_id not in self.cancelled
            for expected in waiting
        ]
        if self.idless:
            missing.append(f"no error response to {self.idless} unreadable message(s)")
        return missing


def _with_phase(expected: Expected, initialize_answered: bool) -> Expected:
    if expected.method == "initialize":
        must_fail = initialize_answered
    else:
        must_fail = not initialize_answered and expected.method not in _ANY_PHASE
    if not must_fail:
        return expected
    return Expected(
        kind="id",
        request_id=expected.request_id,
        method=expected.method,
        must_fail=True,
        message=expected.message,
    )


def check_wire(
    log: Iterable[WireRecord],
    *,
    client_capabilities: ClientCapabilities,
    max_message_size: int,
    complete: bool = True,
) -> list[str]:
    """Return every protocol rule the server broke in ``log`` (see the module docstring).

    ``max_message_size`` is the server's limit: longer messages the client sent are owed an
    id-less error. With ``complete``, requests still waiting for their response count too.
    """
    replay = _Replay(client_capabilities, max_message_size)
    for record in log:
        if record.direction == "sent":
            replay.sent(record)
        else:
            replay.received(record)
    if complete:
        replay.problems.extend(replay.unanswered())
    return replay.problems
