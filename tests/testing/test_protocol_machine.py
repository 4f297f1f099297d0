"""ProtocolStateMachine over a tiny echo server, and over broken ones it must catch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import jsonschema
import orjson
import pytest
import trio
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import rule, run_state_machine_as_test

from trimcp.errors import InvalidParams, MethodNotFound
from trimcp.protocol import (
    ClientCapabilities,
    ErrorResponse,
    Implementation,
    JsonObject,
    Notification,
    Request,
    Result,
    ServerCapabilities,
)
from trimcp.testing._protocol_machine import ProtocolStateMachine
from trimcp.testing._schema_values import invalid_tool_arguments, tool_arguments
from trimcp.testing._trio_host import TrioHost
from trimcp.testing._wire_log import WireRecord, check_wire

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.protocol import JsonValue
    from trimcp.sessions import RequestContext, SessionHandle
    from trimcp.transports import MessageStream

ECHO_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
ECHO_TOOL: JsonObject = {"name": "echo", "inputSchema": ECHO_SCHEMA}

PASSING = settings(max_examples=20, stateful_step_count=15, deadline=None, database=None)
# Broken servers fail at once; shrinking the failure would only cost time.
FAILING = settings(
    max_examples=20,
    stateful_step_count=15,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    report_multiple_bugs=False,
)


@dataclass
class EchoHandler:
    """A RequestHandler with one tool, ``echo``, that validates its arguments."""

    notifications: list[str] = field(default_factory=list)
    server_info: Implementation = field(
        default_factory=lambda: Implementation(name="echo", version="1.0")
    )
    capabilities: ServerCapabilities = field(
        default_factory=lambda: ServerCapabilities(tools=True, logging=True)
    )
    instructions: str | None = None

    async def handle_request(self, request: Request, context: RequestContext) -> JsonObject:
        params = request.params or {}
        if request.method == "tools/list":
            return {"tools": [ECHO_TOOL]}
        if request.method == "logging/setLevel":
            return {}
        if request.method != "tools/call":
            raise MethodNotFound(request.method)
        if params.get("name") != "echo":
            raise InvalidParams(f"unknown tool {params.get('name')!r}")
        arguments = params.get("arguments", {})
        if not jsonschema.Draft202012Validator(ECHO_SCHEMA).is_valid(arguments):
            return {"content": [{"type": "text", "text": "bad arguments"}], "isError": True}
        assert isinstance(arguments, dict)
        return {"content": [{"type": "text", "text": arguments["text"]}]}

    async def handle_notification(self, notification: Notification, session: SessionHandle) -> None:
        self.notifications.append(notification.method)

    def session_opened(self, session: SessionHandle) -> None:
        pass

    def session_closed(self, session: SessionHandle) -> None:
        pass


def _text_of(response: Result | ErrorResponse) -> JsonValue:
    assert isinstance(response, Result), response
    content = response.result["content"]
    assert isinstance(content, list)
    first = content[0]
    assert isinstance(first, dict)
    return first["text"]


class EchoMachine(ProtocolStateMachine):
    builtin_rules: ClassVar[frozenset[str]] = frozenset(
        {"ping", "malformed", "list_tools", "requests", "notifications"}
    )

    def make_handler(self) -> EchoHandler:
        return EchoHandler()

    @rule(data=st.data())
    def echo(self, data: st.DataObject) -> None:
        arguments = data.draw(tool_arguments(ECHO_SCHEMA), label="arguments")
        assert isinstance(arguments, dict)
        assert _text_of(self.call_tool("echo", arguments)) == arguments["text"]

    @rule(data=st.data())
    def echo_with_bad_arguments(self, data: st.DataObject) -> None:
        arguments = data.draw(invalid_tool_arguments(ECHO_SCHEMA), label="arguments")
        response = self.call_tool("echo", arguments)
        assert isinstance(response, Result)
        assert response.result.get("isError") is True


def test_a_correct_server_passes_every_invariant() -> None:
    run_state_machine_as_test(EchoMachine, settings=PASSING)


class UninitializedMachine(ProtocolStateMachine):
    """Starts before the handshake: every step but ping must fail until initialize ran."""

    initialize_first = False
    builtin_rules: ClassVar[frozenset[str]] = frozenset({"ping", "malformed"})

    def make_handler(self) -> EchoHandler:
        return EchoHandler()

    @rule(text=st.text(max_size=5))
    def echo(self, text: str) -> None:
        response = self.call_tool("echo", {"text": text})
        if self.initialized:
            assert _text_of(response) == text
        else:
            assert isinstance(response, ErrorResponse)
            assert response.error.code == -32600


def test_requests_before_initialize_are_refused_until_the_handshake() -> None:
    run_state_machine_as_test(UninitializedMachine, settings=PASSING)


def test_the_machine_logs_the_handshake_and_its_own_requests() -> None:
    machine = EchoMachine()
    try:
        response = machine.request("tools/list")
        assert isinstance(response, Result)
        assert machine.list_tools() == [ECHO_TOOL]
        assert machine.server_capabilities.tools
        log = machine.wire_log
        sent = [orjson.loads(record.data) for record in log if record.direction == "sent"]
        assert sent[0]["method"] == "initialize"
        assert sent[1]["method"] == "notifications/initialized"
        ids = [message["id"] for message in sent if message.get("method") == "tools/list"]
        assert any(isinstance(i, int) for i in ids)
        assert any(isinstance(i, str) for i in ids)
        machine.server_follows_the_protocol()
    finally:
        machine.teardown()
        machine.teardown()  # idempotent


# --- broken servers -------------------------------------------------------------------------


@dataclass
class FaultyStream:
    """Wraps the session's stream and breaks what it sends, per ``fault``."""

    inner: MessageStream
    fault: str

    async def receive_message(self) -> bytes:
        data = await self.inner.receive_message()
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            message = None
        is_notification = isinstance(message, dict) and "method" in message and "id" not in message
        if self.fault == "answer_notifications" and is_notification:
            await self.inner.send_message(b'{"jsonrpc":"2.0","id":0,"result":{}}')
        if self.fault == "crash_on_notification" and is_notification:
            raise RuntimeError("transport bug")
        return data

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        return []  # one message per receive_message, so each passes the fault above

    async def send_message(self, data: bytes) -> None:
        await self.send_messages([data])

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        out: list[bytes] = []
        for data in messages:
            out.extend(self._corrupt(data))
        await self.inner.send_messages(out)

    def _corrupt(self, data: bytes) -> list[bytes]:
        message = orjson.loads(data)
        if self.fault == "duplicate_responses" and "method" not in message:
            return [data, data]
        if self.fault == "stringify_ids" and isinstance(message.get("id"), int):
            message["id"] = str(message["id"])
            return [orjson.dumps(message)]
        if self.fault == "bad_error_codes" and "error" in message:
            message["error"]["code"] = str(message["error"]["code"])
            return [orjson.dumps(message)]
        return [data]

    async def aclose(self) -> None:
        await self.inner.aclose()


def _broken_machine(fault: str) -> type[ProtocolStateMachine]:
    class BrokenMachine(ProtocolStateMachine):
        builtin_rules: ClassVar[frozenset[str]] = frozenset({"ping", "notifications", "malformed"})
        response_timeout = 0.5

        def make_handler(self) -> EchoHandler:
            return EchoHandler()

        def wrap_server_stream(self, stream: MessageStream) -> MessageStream:
            return FaultyStream(stream, fault)

        @rule(text=st.text(max_size=5))
        def echo(self, text: str) -> None:
            self.call_tool("echo", {"text": text})

    BrokenMachine.__name__ = f"BrokenMachine_{fault}"
    return BrokenMachine


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("duplicate_responses", "matches no request in flight"),
        ("answer_notifications", "matches no request in flight"),
        ("bad_error_codes", "not JSON-RPC 2.0: An error code must be an integer"),
        ("crash_on_notification", "the session stopped: error"),
    ],
)
def test_the_invariants_catch_a_broken_server(fault: str, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        run_state_machine_as_test(_broken_machine(fault), settings=FAILING)


def test_a_wrong_id_type_leaves_the_request_unanswered() -> None:
    # The handshake itself never gets its answer (id 1 comes back as "1").
    with pytest.raises(AssertionError, match=r"no response to initialize \(id 1\)"):
        run_state_machine_as_test(_broken_machine("stringify_ids"), settings=FAILING)


# --- the pure checker -----------------------------------------------------------------------

INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
INIT_OK = b'{"jsonrpc":"2.0","id":1,"result":{}}'
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def _log(*messages: tuple[str, bytes]) -> list[WireRecord]:
    return [
        WireRecord(direction="sent" if way == ">" else "received", data=data)
        for way, data in messages
    ]


def _check(*messages: tuple[str, bytes], complete: bool = True) -> list[str]:
    return check_wire(
        _log(*messages),
        client_capabilities=ClientCapabilities(),
        max_message_size=100,
        complete=complete,
    )


HANDSHAKE = ((">", INIT), ("<", INIT_OK), (">", INITIALIZED))


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        (((">", b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),), "no response to tools/list"),
        (
            (
                (">", b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
                ("<", b'{"jsonrpc":"2.0","id":2,"result":{}}'),
            ),
            "tools/list must get an error here",
        ),
        (((">", b"{"),), "no error response to 1 unreadable"),
        (
            (
                (">", b"x" * 101),
                ("<", b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"big"}}'),
            ),
            "",
        ),
        (
            (*HANDSHAKE, ("<", b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"?"}}')),
            "an error without an id answers nothing",
        ),
        ((*HANDSHAKE, (">", INIT), ("<", INIT_OK)), "initialize must get an error here"),
        (
            (
                (">", INIT),
                ("<", INIT_OK),
                ("<", b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'),
            ),
            "before initialization finished",
        ),
        (
            (*HANDSHAKE, ("<", b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}')),
            "the client lacks roots",
        ),
        (
            ((">", INIT), ("<", INIT_OK), ("<", b'{"jsonrpc":"2.0","id":1,"method":"ping"}')),
            "",
        ),
        (
            ((">", b'{"jsonrpc":"2.0","id":3,"method":5}'),),
            "no response to an invalid message (id 3)",
        ),
        ((*HANDSHAKE, ("<", b"[1]")), "not JSON-RPC 2.0"),
    ],
)
def test_check_wire_names_each_violation(
    messages: tuple[tuple[str, bytes], ...], problem: str
) -> None:
    problems = _check(*messages)
    if problem:
        assert any(problem in found for found in problems), problems
    else:
        assert problems == []


def test_a_cancelled_request_may_stay_unanswered() -> None:
    request = (">", b'{"jsonrpc":"2.0","id":"a","method":"tools/call"}')
    cancel = (
        ">",
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}',
    )
    assert _check(*HANDSHAKE, request, cancel) == []
    assert _check(*HANDSHAKE, request, complete=False) == []
    assert _check(*HANDSHAKE, request) != []


# --- the trio host ----------------------------------------------------------------------------


def test_the_trio_host_runs_code_and_reports_a_crashed_run() -> None:
    host = TrioHost(name="test-host")

    async def add(a: int, b: int) -> int:
        await trio.lowlevel.checkpoint()
        return a + b

    async def crash_later() -> None:
        await trio.lowlevel.checkpoint()
        raise ValueError("boom")

    async def start_crash() -> None:
        host.nursery.start_soon(crash_later)

    assert host.run(add, 1, 2) == 3
    assert host.run_sync(lambda: 4) == 4
    host.run(start_crash)
    with pytest.raises(ExceptionGroup) as caught:
        host.run(trio.sleep_forever)  # the crash ends the run under this call
    assert caught.group_contains(ValueError, match="boom")
    assert not host.running
    with pytest.raises(RuntimeError, match="has ended"):
        host.run_sync(lambda: 5)
    host.close()  # idempotent once the error was reported
