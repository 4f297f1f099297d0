"""Sessions on a stream that pushes its input and takes routed output (as HTTP's does).

The stream here is a scripted fake with the two optional capabilities a session looks for:
``attach_input`` (the session then gets each body through ``push_input``, and runs a reader
task only while there is input to act on) and ``send_routed_now`` / ``send_one_now`` /
``send_routed`` (every message comes tagged with the request it belongs to).
"""

from __future__ import annotations

import math
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import orjson
import pytest
import trio
import trio.testing

from trimcp.actors import spawn
from trimcp.errors import TransportClosed
from trimcp.sessions import RequestContext, Session, SessionOptions

from .conftest import ScriptedHandler

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from trimcp.errors import MessageTooLarge
    from trimcp.protocol import JsonObject, Request, RequestId

Routed = tuple[bytes, "RequestId | None", bool]

INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def call(request_id: int, method: str = "tools/call", *, token: str | None = None) -> bytes:
    params: JsonObject = {} if token is None else {"_meta": {"progressToken": token}}
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def cancel(request_id: int) -> bytes:
    params = {"requestId": request_id}
    return orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


class PushingStream:
    """Pushes what the test feeds; records routed output; can hold output back."""

    def __init__(self) -> None:
        self.sink: Session | None = None
        self.sent: list[Routed] = []
        self.sent_event = trio.Event()
        self.take_now = True  # False: the *_now calls take nothing (a full reader queue)
        self.kept: list[Routed] = []
        self.closed = False

    # What the session looks for.
    def attach_input(self, sink: Session) -> None:
        self.sink = sink

    def send_routed_now(self, messages: Sequence[Routed]) -> bool:
        if not self.take_now or self.kept:
            self.kept.extend(messages)  # kept, in order, for the next send_routed
            return False
        self._record(messages)
        return True

    def send_one_now(self, data: bytes, related: RequestId | None, final: bool) -> bool:
        if not self.take_now or self.kept:
            return False  # nothing done
        self._record([(data, related, final)])
        return True

    async def send_routed(self, messages: Sequence[Routed]) -> None:
        await trio.lowlevel.checkpoint()
        kept, self.kept = self.kept, []
        self._record([*kept, *messages])

    def _record(self, messages: Sequence[Routed]) -> None:
        self.sent.extend(messages)
        self.sent_event.set()
        self.sent_event = trio.Event()

    # MessageStream, never read from: the input is pushed.
    async def receive_message(self) -> bytes:
        raise AssertionError("a session on a pushing stream must not read it")

    def receive_ready(self) -> list[bytes | MessageTooLarge]:
        raise AssertionError("a session on a pushing stream must not read it")

    async def send_message(self, data: bytes) -> None:
        raise AssertionError("routed streams get routed messages")

    async def send_messages(self, messages: Sequence[bytes]) -> None:
        raise AssertionError("routed streams get routed messages")

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            assert self.sink is not None
            self.sink.input_ended()

    # The test's side.
    async def push(self, body: bytes) -> None:
        assert self.sink is not None
        await self.sink.push_input(body)

    async def wait_sent(self, count: int) -> list[Routed]:
        while len(self.sent) < count:
            await self.sent_event.wait()
        return self.sent

    def decoded(self) -> list[tuple[object, RequestId | None, bool]]:
        return [(orjson.loads(d) if d else None, r, f) for d, r, f in self.sent]


@asynccontextmanager
async def open_session(
    handler: ScriptedHandler, options: SessionOptions | None = None
) -> AsyncIterator[tuple[PushingStream, Session, trio.Nursery]]:
    stream = PushingStream()
    options = options or SessionOptions(initialization_timeout=math.inf)
    async with trio.open_nursery() as nursery:
        session = Session(stream, handler, options)  # type: ignore[arg-type]
        ref = await spawn(nursery, session)
        await stream.push(INITIALIZE)
        await stream.push(INITIALIZED)
        await stream.wait_sent(1)
        try:
            yield stream, session, nursery
        finally:
            ref.request_stop()


def session_tasks(nursery: trio.Nursery) -> int:
    """Count the tasks under the spawn nursery: the session's own and its helpers."""
    count = 0
    pending = list(nursery.child_tasks)
    while pending:
        task = pending.pop()
        count += 1
        for child in task.child_nurseries:
            pending.extend(child.child_tasks)
    return count


async def quick(request: Request, context: RequestContext) -> JsonObject:
    return {"id": request.id}


async def test_an_idle_session_on_pushed_input_is_one_task() -> None:
    handler = ScriptedHandler(methods={"tools/call": quick})
    async with open_session(handler) as (stream, _, nursery):
        await stream.push(call(1))
        await stream.wait_sent(2)
        await trio.testing.wait_all_tasks_blocked()
        # No reader parked on empty input: the session's own task, and nothing else.
        assert session_tasks(nursery) == 1


async def test_answers_come_routed_to_their_requests_in_order() -> None:
    handler = ScriptedHandler(methods={"tools/call": quick})
    async with open_session(handler) as (stream, _, _):
        await stream.push(call(1))
        await stream.push(call(2))
        await stream.push(call(3, "nope"))
        await stream.wait_sent(4)
        initialize, *rest = stream.decoded()
        assert initialize[1:] == (0, True)
        assert [(m["id"], r, f) for m, r, f in rest] == [  # type: ignore[index]
            (1, 1, True),
            (2, 2, True),
            (3, 3, True),  # an error answer is routed like any other
        ]


async def test_progress_is_tagged_and_sent_without_a_schedule_point() -> None:
    others_ran = []

    async def other() -> None:
        others_ran.append(True)

    async def flood(request: Request, context: RequestContext) -> JsonObject:
        context.session.start_soon(other)  # runs at the handler's first schedule point
        for n in range(1, 11):
            assert await context.report_progress(n, 10)
        return {"others_ran": bool(others_ran)}

    handler = ScriptedHandler(methods={"tools/call": flood})
    async with open_session(handler) as (stream, _, _):
        await stream.push(call(1, token="t"))
        sent = await stream.wait_sent(12)
        progress = [(orjson.loads(d)["params"]["progress"], r, f) for d, r, f in sent[1:11]]
        assert progress == [(n, 1, False) for n in range(1, 11)]
        answer = orjson.loads(sent[11][0])
        assert sent[11][1:] == (1, True)
        # The handler ran to its end without letting another task in.
        assert answer["result"] == {"others_ran": False}


async def test_output_the_stream_cannot_take_now_goes_in_a_flush_in_order() -> None:
    async def flood(request: Request, context: RequestContext) -> JsonObject:
        for n in range(1, 6):
            await context.report_progress(n)
        return {}

    handler = ScriptedHandler(methods={"tools/call": flood})
    async with open_session(handler) as (stream, _, _):
        stream.take_now = False
        await stream.push(call(1, token="t"))
        sent = await stream.wait_sent(7)
        tags = [(r, f) for _, r, f in sent[1:]]
        assert tags == [(1, False)] * 5 + [(1, True)]
        progress = [orjson.loads(d)["params"]["progress"] for d, _, _ in sent[1:6]]
        assert progress == [1, 2, 3, 4, 5]


async def test_a_cancelled_request_tells_the_stream_that_no_answer_comes() -> None:
    started = trio.Event()

    async def slow(request: Request, context: RequestContext) -> JsonObject:
        started.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    handler = ScriptedHandler(methods={"tools/call": slow})
    async with open_session(handler) as (stream, _, _):
        await stream.push(call(1))
        await started.wait()
        await stream.push(cancel(1))
        sent = await stream.wait_sent(2)
        assert sent[1] == (b"", 1, True)


async def test_push_waits_while_sixteen_bodies_wait_and_all_are_answered() -> None:
    handler = ScriptedHandler(methods={"tools/call": quick})
    async with open_session(handler) as (stream, _, _):
        # No checkpoint while there is room: the 17th push waits for the reader.
        for n in range(1, 41):
            await stream.push(call(n))
        sent = await stream.wait_sent(41)
        assert [r for _, r, _ in sent[1:]] == list(range(1, 41))


async def test_input_ended_answers_requests_in_flight_then_stops(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow(request: Request, context: RequestContext) -> JsonObject:
        await trio.sleep(1)
        return {"done": True}

    handler = ScriptedHandler(methods={"tools/call": slow})
    async with open_session(handler) as (stream, session, _):
        await stream.push(call(1))
        await trio.testing.wait_all_tasks_blocked()
        await stream.aclose()
        with pytest.raises(TransportClosed):
            await stream.push(call(2))
        await session.ref.wait_exited()
        assert trio.current_time() == 1.0
        assert orjson.loads(stream.sent[1][0])["result"] == {"done": True}


async def test_input_ended_while_idle_stops_at_once() -> None:
    async with open_session(ScriptedHandler()) as (stream, session, _):
        await stream.aclose()
        await session.ref.wait_exited()
        assert session.stopping


async def test_an_uninitialized_session_closes_at_its_deadline(
    autojump_clock: trio.testing.MockClock,
) -> None:
    stream = PushingStream()
    options = SessionOptions(initialization_timeout=30.0)
    async with trio.open_nursery() as nursery:
        session = Session(stream, ScriptedHandler(), options)  # type: ignore[arg-type]
        ref = await spawn(nursery, session)
        await stream.push(INITIALIZE)  # but never initialized
        await ref.wait_exited()
        assert trio.current_time() == 30.0
