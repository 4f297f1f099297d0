"""Requests run inline in the reader task until their handler waits (``Session._read_loop``).

A handler that answers without waiting costs no task; one that waits is handed its own task
(the one it suspended in) while a new reader carries on, so requests still run concurrently
and stay cancellable. These tests pin both halves, over real pipes where the write path
matters and over in-memory streams elsewhere.
"""

from __future__ import annotations

import contextvars
import os
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import orjson
import trio
import trio.testing

from trimcp.actors import NORMAL, spawn
from trimcp.errors import JsonRpcError
from trimcp.protocol import ClientConnection, Implementation, JsonObject, Request
from trimcp.sessions import RequestContext, Session, SessionOptions
from trimcp.transports import StdioStream

from .conftest import Client, ScriptedHandler, open_client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.transports import MessageStream

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
    b'"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


def call(request_id: int | str, method: str = "tools/call") -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}})


def cancel(request_id: int | str) -> bytes:
    params = {"requestId": request_id}
    return orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


async def quick(request: Request, context: RequestContext) -> JsonObject:
    return {"content": [], "id": request.id}


def pipe_pair() -> tuple[StdioStream, StdioStream]:
    """Return (server end, client end) over two real pipes, as a stdio server sees them."""
    to_server_read, to_server_write = os.pipe()
    to_client_read, to_client_write = os.pipe()
    server = StdioStream(
        trio.lowlevel.FdStream(to_server_read), trio.lowlevel.FdStream(to_client_write)
    )
    client = StdioStream(
        trio.lowlevel.FdStream(to_client_read), trio.lowlevel.FdStream(to_server_write)
    )
    return server, client


@asynccontextmanager
async def open_pipe_client(handler: ScriptedHandler) -> AsyncIterator[Client]:
    """Like ``open_client``, over pipes: the session writes with ``send_messages_now``."""
    server_side, client_side = pipe_pair()
    async with trio.open_nursery() as nursery:
        actor = Session(server_side, handler)
        ref = await spawn(nursery, actor)
        client = Client(
            ClientConnection(Implementation(name="test-client", version="0.1")),
            client_side,
            ref,
            actor,
        )
        await client.handshake()
        try:
            yield client
        finally:
            ref.request_stop()
            await ref.wait_exited()
            await client_side.aclose()


class SpawnCounter(trio.abc.Instrument):
    """Count the tasks spawned while installed."""

    def __init__(self) -> None:
        self.spawned = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


async def test_quick_requests_over_pipes_start_no_task() -> None:
    handler = ScriptedHandler({"tools/call": quick})
    async with open_pipe_client(handler) as client:
        counter = SpawnCounter()
        trio.lowlevel.add_instrument(counter)
        try:
            for request_id in range(20):
                await client.send(call(request_id))
                reply = await client.receive_wire()
                assert reply["result"] == {"content": [], "id": request_id}
        finally:
            trio.lowlevel.remove_instrument(counter)
    assert counter.spawned == 0  # no request task, no reader hand-over, no flush task


async def test_a_waiting_handler_gets_its_own_task_and_reading_goes_on() -> None:
    gate = trio.Event()
    tasks: dict[str, trio.lowlevel.Task] = {}

    async def slow(request: Request, context: RequestContext) -> JsonObject:
        tasks["slow before"] = trio.lowlevel.current_task()
        await gate.wait()
        tasks["slow after"] = trio.lowlevel.current_task()
        return {"content": [], "slow": True}

    async def where(request: Request, context: RequestContext) -> JsonObject:
        tasks[str(request.id)] = trio.lowlevel.current_task()
        return {}

    handler = ScriptedHandler({"tools/call": slow, "tools/list": where})
    async with open_client(handler) as client:
        await client.send(call(0, "tools/list"))
        assert (await client.receive_wire())["id"] == 0
        await client.send(call(1))
        await client.send(call(2, "tools/list"))
        assert (await client.receive_wire())["id"] == 2  # answered while 1 waits
        gate.set()
        answer = await client.receive_wire()
        assert answer["id"] == 1
        assert answer["result"] == {"content": [], "slow": True}
        await client.send(call(3, "tools/list"))
        assert (await client.receive_wire())["id"] == 3
    reader = tasks["0"]
    assert tasks["slow before"] is reader  # run inline, in the reader
    assert tasks["slow after"] is reader  # and it stayed there: the task adopted the request
    assert tasks["2"] is tasks["3"] is not reader  # a new reader took over


async def test_a_batch_with_a_waiting_request_and_its_cancellation() -> None:
    cancelled = trio.Event()

    async def stuck(request: Request, context: RequestContext) -> JsonObject:
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    handler = ScriptedHandler({"tools/call": stuck, "tools/list": quick})
    async with open_pipe_client(handler) as client:
        batch = [call(1), call(2, "tools/list"), cancel(1), call(3, "tools/list")]
        await client.stream.send_messages(batch)  # one write: one read on the server side
        replies = [await client.receive_wire() for _ in range(2)]
        await cancelled.wait()
        await client.send(call(4, "tools/list"))
        replies.append(await client.receive_wire())
        assert [reply["id"] for reply in replies] == [2, 3, 4]  # nothing for 1
        assert client.actor.connection.statistics().inbound_in_flight == frozenset()


async def test_a_handler_that_fails_after_waiting_gets_an_internal_error() -> None:
    async def late_failure(request: Request, context: RequestContext) -> JsonObject:
        await trio.lowlevel.checkpoint()
        raise RuntimeError("secret")

    async def late_refusal(request: Request, context: RequestContext) -> JsonObject:
        await trio.lowlevel.checkpoint()
        raise JsonRpcError(-32001, "not now")

    handler = ScriptedHandler({"tools/call": late_failure, "tools/list": late_refusal})
    async with open_client(handler) as client:
        await client.send(call(1))
        failed = await client.receive_wire()
        await client.send(call(2, "tools/list"))
        refused = await client.receive_wire()
    assert failed["error"]["code"] == -32603  # type: ignore[index,call-overload]
    assert "secret" not in str(failed)
    assert refused["error"] == {"code": -32001, "message": "not now"}


async def test_context_variables_set_by_a_handler_stay_in_that_request() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    seen: list[str] = []

    async def setter(request: Request, context: RequestContext) -> JsonObject:
        seen.append(var.get())
        var.set(f"set by {request.id}")
        if request.id == "waits":
            await trio.lowlevel.checkpoint()
            seen.append(var.get())  # still its own value after resuming
        return {}

    handler = ScriptedHandler({"tools/call": setter})
    async with open_client(handler) as client:
        for request_id in ("a", "b", "waits", "c"):
            await client.send(call(request_id))
            await client.receive_wire()
    assert seen == ["unset", "unset", "unset", "set by waits", "unset"]


async def test_with_the_write_queue_full_replies_wait_in_tasks_not_in_the_reader(
    autojump_clock: trio.testing.MockClock,
) -> None:
    handled_at: list[float] = []

    async def record(request: Request, context: RequestContext) -> JsonObject:
        handled_at.append(trio.current_time())
        return {}

    class SlowSend(trio.abc.SendStream):
        """Every write takes a second (a client slow to read its stdin)."""

        def __init__(self, inner: trio.abc.SendStream) -> None:
            self.inner = inner

        async def send_all(self, data: bytes | bytearray | memoryview) -> None:
            await trio.sleep(1)
            await self.inner.send_all(data)

        async def wait_send_all_might_not_block(self) -> None:
            await self.inner.wait_send_all_might_not_block()

        async def aclose(self) -> None:
            await self.inner.aclose()

    to_server_send, to_server_receive = trio.testing.memory_stream_one_way_pair()
    to_client_send, to_client_receive = trio.testing.memory_stream_one_way_pair()
    stream = StdioStream(to_server_receive, SlowSend(to_client_send))
    replies = StdioStream(to_client_receive, trio.testing.MemorySendStream())
    handler = ScriptedHandler({"tools/call": record})
    requests = INITIALIZE + b"".join(call(n) + b"\n" for n in range(1, 6))
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(stream, handler, SessionOptions(write_queue=1)))
        await to_server_send.send_all(requests)
        ids = [orjson.loads(await replies.receive_message())["id"] for _ in range(6)]
        await to_server_send.aclose()
        assert await ref.wait_exited() == NORMAL
    assert handled_at == [0.0] * 5  # all handled before the first write finished
    assert sorted(ids) == [0, 1, 2, 3, 4, 5]


async def _serve_until_closed(stream: MessageStream, handler: ScriptedHandler) -> None:
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(stream, handler))
        assert await ref.wait_exited() == NORMAL


async def test_end_of_input_right_after_quick_requests_answers_them_all() -> None:
    to_server_read, to_server_write = os.pipe()
    to_client_read, to_client_write = os.pipe()
    server_side = StdioStream(
        trio.lowlevel.FdStream(to_server_read), trio.lowlevel.FdStream(to_client_write)
    )
    handler = ScriptedHandler({"tools/call": quick})
    requests = INITIALIZE + b"".join(call(n) + b"\n" for n in range(1, 4))
    ids: list[object] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_serve_until_closed, server_side, handler)
        # The client closes only the server's stdin, right after its last request.
        async with trio.lowlevel.FdStream(to_server_write) as stdin:
            await stdin.send_all(requests)
        replies = StdioStream(
            trio.lowlevel.FdStream(to_client_read), trio.testing.MemorySendStream()
        )
        with trio.fail_after(5):
            while len(ids) < 4:
                ids.append(orjson.loads(await replies.receive_message())["id"])
        await replies.aclose()
    assert ids == [0, 1, 2, 3]
