"""The Streamable HTTP endpoint against a real hypercorn server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import gc
import typing
from typing import TYPE_CHECKING

import httpx
import orjson
import pytest
import trio

from trimcp.http import HttpListener, HttpOptions, HttpSessionStream, ResponseStream
from trimcp.server import Context  # noqa: TC001 - tool hints are read at runtime
from trimcp.sessions import Session, SessionLimits, SessionRecord
from trimcp.transports import MemoryEventStore, SSEDecoder, SSEEvent

from ._client import (
    ACCEPT_BOTH,
    INITIALIZE,
    Answer,
    build_server,
    handshake,
    post,
    read_answer,
    running,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.server import MCPServer


def call(request_id: int, name: str, arguments: dict[str, object]) -> dict[str, object]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_session_over_sse() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        first = await post(client, listener.url, INITIALIZE)
        assert first.status == 200
        assert first.headers["content-type"] == "application/json"
        session = first.headers["mcp-session-id"]
        assert all("!" <= c <= "~" for c in session)
        assert len(session) >= 32
        assert first.message["result"]["protocolVersion"] == "2025-11-25"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(client, listener.url, note, session=session)).status == 202
        listed = await post(
            client,
            listener.url,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            session=session,
        )
        assert listed.status == 200
        assert listed.headers["content-type"].startswith("text/event-stream")
        # 2025-11-25: a priming event (an id, empty data) with retry comes first.
        priming = listed.events[0]
        assert priming.id
        assert priming.data == ""
        assert priming.retry == 1000
        assert [t["name"] for t in listed.message["result"]["tools"]] == ["echo", "slow"]
        echoed = await post(client, listener.url, call(2, "echo", {"text": "hi"}), session=session)
        assert echoed.message["result"]["content"] == [{"type": "text", "text": "hi"}]
        ping = await post(
            client, listener.url, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, session=session
        )
        assert ping.message == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_json_response_mode() -> None:
    async with (
        running(options=HttpOptions(json_response=True)) as listener,
        httpx.AsyncClient() as client,
    ):
        session = await handshake(client, listener.url)
        echoed = await post(client, listener.url, call(1, "echo", {"text": "x"}), session=session)
        assert echoed.headers["content-type"] == "application/json"
        assert echoed.message["result"]["content"] == [{"type": "text", "text": "x"}]


async def test_delete_ends_the_session() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        headers = {"mcp-session-id": session}
        deleted = await client.delete(listener.url, headers=headers)
        assert deleted.status_code == 200
        after = await post(client, listener.url, call(1, "echo", {"text": "x"}), session=session)
        assert after.status == 404
        assert "initialize a new session" in after.message["error"]["message"]
        assert (await client.delete(listener.url, headers=headers)).status_code == 404
        assert len(listener.manager.table) == 0


async def test_refusals_have_the_right_status_and_create_nothing() -> None:
    async with (
        running(options=HttpOptions(max_body_size=1024)) as listener,
        httpx.AsyncClient() as client,
    ):
        url = listener.url
        session = await handshake(client, url)
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        # (status, JSON-RPC code, the error's id, request): once the body parsed, the error
        # answers its request; before that (headers, size, unparsable body) its id is null.
        cases: list[tuple[int, int | None, int | None, dict[str, object]]] = [
            (400, None, 9, {"body": ping}),  # no session id
            (404, None, 9, {"body": ping, "session": "no-such-session"}),
            (
                400,
                None,
                9,
                {
                    "body": ping,
                    "session": session,
                    "headers": {"mcp-protocol-version": "1999-01-01"},
                },
            ),
            (
                406,
                None,
                None,
                {"body": ping, "session": session, "headers": {"accept": "application/json"}},
            ),
            (
                415,
                None,
                None,
                {"body": ping, "session": session, "headers": {"content-type": "text/plain"}},
            ),
            (413, None, None, {"body": {**INITIALIZE, "pad": "x" * 2000}}),
            (400, -32700, None, {"body": b"{not json"}),
            (400, -32600, None, {"body": []}),
            (
                400,
                -32600,
                None,
                {"body": {"jsonrpc": "2.0", "id": None, "method": "ping"}, "session": session},
            ),
            (403, None, None, {"body": INITIALIZE, "headers": {"origin": "https://evil.example"}}),
            (421, None, None, {"body": INITIALIZE, "headers": {"host": "evil.example"}}),
        ]
        for status, code, request_id, request in cases:
            answer = await post(client, url, **request)  # type: ignore[arg-type]
            assert answer.status == status, (request, answer.messages)
            error = answer.messages[0]["error"]
            assert error["message"]
            assert answer.messages[0]["id"] == request_id, (request, answer.messages)
            if code is not None:
                assert error["code"] == code
        put = await client.put(url, content=b"{}", headers={"content-type": "application/json"})
        assert put.status_code == 405
        assert put.headers["allow"] == "GET, POST, DELETE"
        elsewhere = await client.post(url.replace("/mcp", "/other"), content=b"{}")
        assert elsewhere.status_code == 404
        # Only the handshake's session exists: no refused request made one.
        assert len(listener.manager.table) == 1
        still = await post(client, url, ping, session=session)
        assert still.message == {"jsonrpc": "2.0", "id": 9, "result": {}}


async def test_requests_before_initialized_notification_and_wrong_phase() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        again = await post(client, listener.url, {**INITIALIZE, "id": 5})
        # A second initialize makes a second session, not an error in the first.
        assert again.status == 200
        assert again.headers["mcp-session-id"] != session
        unknown = await post(
            client,
            listener.url,
            {"jsonrpc": "2.0", "id": 6, "method": "nope/nope"},
            session=session,
        )
        assert unknown.message["error"]["code"] == -32601


async def test_initialize_on_an_existing_session_is_refused_with_its_id() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        again = await post(client, listener.url, {**INITIALIZE, "id": "init-2"}, session=session)
        assert again.status == 400
        assert "mcp-session-id" not in again.headers
        (refusal,) = again.messages
        assert refusal["id"] == "init-2"
        assert refusal["error"]["code"] == -32600
        assert "already initialized" in refusal["error"]["message"]
        # A session id the server does not know is 404 for initialize too (the client
        # starts over without the header), and a malformed one 400.
        unknown = await post(client, listener.url, {**INITIALIZE, "id": 3}, session="gone")
        assert (unknown.status, unknown.messages[0]["id"]) == (404, 3)
        bad = await post(client, listener.url, INITIALIZE, headers={"mcp-session-id": "x" * 300})
        assert (bad.status, bad.messages[0]["id"]) == (400, 0)
        # The session is untouched and still the only one.
        assert len(listener.manager.table) == 1
        ping = await post(
            client, listener.url, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, session=session
        )
        assert ping.message == {"jsonrpc": "2.0", "id": 4, "result": {}}


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
async def test_a_batch_is_refused_outside_2025_03_26(version: str) -> None:
    server = build_server()
    called: list[str] = []

    @server.tool()
    def record(text: str) -> str:
        called.append(text)
        return text

    async with running(server) as listener, httpx.AsyncClient() as client:
        params = {**INITIALIZE["params"], "protocolVersion": version}  # type: ignore[dict-item]
        first = await post(client, listener.url, {**INITIALIZE, "params": params})
        assert first.message["result"]["protocolVersion"] == version
        session = first.headers["mcp-session-id"]
        headers = {"mcp-protocol-version": version}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await post(client, listener.url, note, session=session, headers=headers)
        batches = [
            [call(1, "record", {"text": "a"}), call(2, "record", {"text": "b"})],
            [call(3, "record", {"text": "c"})],
            [{"jsonrpc": "2.0", "method": "notifications/initialized"}],
        ]
        for batch in batches:
            answer = await post(client, listener.url, batch, session=session, headers=headers)
            assert answer.status == 400, answer.messages
            (refusal,) = answer.messages
            assert refusal["id"] is None  # a batch is no one request
            assert refusal["error"]["code"] == -32600
            assert "batching" in refusal["error"]["message"]
            assert version in refusal["error"]["message"]
        assert called == []  # nothing of a refused batch reached the session
        # The same calls one per POST are served.
        single = await post(
            client, listener.url, call(4, "record", {"text": "d"}), session=session, headers=headers
        )
        assert single.message["result"]["content"] == [{"type": "text", "text": "d"}]
        assert called == ["d"]


async def test_a_request_already_in_flight_is_refused_with_its_id() -> None:
    server = build_server()
    started = trio.Event()

    @server.tool()
    async def wait() -> str:
        started.set()
        await trio.sleep_forever()
        return "never"

    async with running(server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        async with trio.open_nursery() as nursery:
            waiting = functools.partial(post, session=session)
            nursery.start_soon(waiting, client, listener.url, call(7, "wait", {}))
            with trio.fail_after(5):
                await started.wait()
            twin = await post(client, listener.url, call(7, "echo", {"text": "x"}), session=session)
            assert twin.status == 400
            assert twin.messages[0]["id"] == 7
            assert "already in flight" in twin.messages[0]["error"]["message"]
            await client.delete(listener.url, headers={"mcp-session-id": session})


async def test_get_stream_carries_list_changed() -> None:
    server = build_server()
    async with running(server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        events: list[SSEEvent] = []
        primed, changed = trio.Event(), trio.Event()

        async def read_stream() -> None:
            decoder = SSEDecoder()
            async with client.stream("GET", listener.url, headers=headers) as response:
                assert response.status_code == 200
                async for chunk in response.aiter_bytes():
                    events.extend(decoder.feed(chunk))
                    if events:
                        primed.set()
                    if any(e.data for e in events):
                        changed.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_stream)
            with trio.fail_after(5):
                await primed.wait()
            second = await client.get(listener.url, headers=headers)
            assert second.status_code == 409
            server.add_tool(lambda: "new", "added")
            with trio.fail_after(5):
                await changed.wait()
            # Ending the session ends its GET stream, and the reader with it.
            await client.delete(listener.url, headers={"mcp-session-id": session})
        assert events[0].data == ""  # priming
        (message,) = [orjson.loads(e.data) for e in events if e.data]
        assert message["method"] == "notifications/tools/list_changed"


async def test_session_limit_evicts_idle_sessions() -> None:
    async with (
        running(limits=SessionLimits(max_sessions=3)) as listener,
        httpx.AsyncClient() as client,
    ):
        sessions = [await handshake(client, listener.url) for _ in range(5)]
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        statuses = [(await post(client, listener.url, ping, session=s)).status for s in sessions]
        assert statuses == [404, 404, 200, 200, 200]


async def _post_and_hang_up(url: str, session: str, body: bytes) -> str:
    """POST over a raw socket, read up to the priming event, hang up; return its id."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    request = (
        f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n"
        f"accept: {ACCEPT_BOTH}\r\ncontent-type: application/json\r\n"
        f"mcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        await stream.send_all(request)
        received = b""
        while b"\n\n" not in received.partition(b"\r\n\r\n")[2]:
            received += await stream.receive_some()
    head, _, rest = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    chunk_body = rest.split(b"\r\n", 1)[1]  # chunked encoding: size line, then data
    decoder = SSEDecoder()
    decoder.feed(chunk_body)
    return decoder.last_event_id


async def test_a_disconnect_is_not_a_cancellation_and_the_stream_resumes() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        body = orjson.dumps(call(7, "slow", {"seconds": 0.3}))
        last = await _post_and_hang_up(listener.url, session, body)
        assert last
        resume = {
            "accept": "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
            "last-event-id": last,
        }
        async with client.stream("GET", listener.url, headers=resume) as response:
            assert response.status_code == 200
            answer = await read_answer(response)
        (message,) = answer.messages
        assert message["id"] == 7
        assert message["result"]["content"] == [{"type": "text", "text": "done"}]
        bad = await client.get(listener.url, headers={**resume, "last-event-id": "s99-1"})
        assert bad.status_code == 400


@contextlib.asynccontextmanager
async def serving_with(
    store: MemoryEventStore, server: MCPServer | None = None
) -> AsyncIterator[HttpListener]:
    """Serve on 127.0.0.1 and a free port with ``store`` as the event store."""
    serve = functools.partial((server or build_server()).serve_http, store=store)
    async with trio.open_nursery() as nursery:
        listener: HttpListener = await nursery.start(serve)
        try:
            yield listener
        finally:
            nursery.cancel_scope.cancel()


async def resume(url: str, session: str, last: str) -> Answer:
    """GET with ``Last-Event-ID`` on a new connection, as a client that lost its own does.

    (A pooled one may have been closed meanwhile: the tests jump the clock past the
    server's keep-alive timeout.)
    """
    headers = {
        "accept": "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
        "last-event-id": last,
    }
    async with (
        httpx.AsyncClient() as client,
        client.stream("GET", url, headers=headers) as response,
    ):
        return await read_answer(response)


async def test_a_delivered_answer_is_kept_only_for_the_grace(
    mock_clock: trio.testing.MockClock,
) -> None:
    # Time stands still (rate 0) and moves only by jump(): the sockets are real.
    store = MemoryEventStore(ttl=300.0, delivered_ttl=5.0)
    async with serving_with(store) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        answer = await post(client, listener.url, call(1, "echo", {"text": "x"}), session=session)
        priming = answer.events[0].id
        assert priming is not None
        await trio.testing.wait_all_tasks_blocked()  # the response task is done
        assert store.statistics().released == 1
        # Within the grace, a client whose connection broke after the last write resumes.
        mock_clock.jump(4.9)
        again = await resume(listener.url, session, priming)
        assert again.status == 200
        assert again.message["result"]["content"] == [{"type": "text", "text": "x"}]
        # Then the stream is gone: five seconds after delivery, not the ttl's 300.
        mock_clock.jump(0.1)
        gone = await resume(listener.url, session, priming)
        assert gone.status == 410
        assert gone.messages[0]["error"]["message"].startswith("Gone")
        stats = store.statistics()
        assert (stats.streams, stats.events, stats.released) == (0, 0, 0)


async def test_an_undelivered_answer_waits_for_its_client_until_the_ttl(
    mock_clock: trio.testing.MockClock,
) -> None:
    server = build_server()
    gate = trio.Event()

    @server.tool()
    async def gated() -> str:
        await gate.wait()
        return "through"

    store = MemoryEventStore(ttl=300.0, delivered_ttl=5.0)
    async with serving_with(store, server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        hung_up: list[str] = []

        async def hang_up() -> None:
            body = orjson.dumps(call(2, "gated", {}))
            hung_up.append(await _post_and_hang_up(listener.url, session, body))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(hang_up)
            # The answer waits 50 ms for its first events before it sends the priming one.
            await trio.testing.wait_all_tasks_blocked()
            mock_clock.jump(0.05)
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert store.statistics().released == 0  # stored, ended, never delivered
        mock_clock.jump(299)
        (last,) = hung_up
        answer = await resume(listener.url, session, last)
        assert answer.message["result"]["content"] == [{"type": "text", "text": "through"}]


async def test_resuming_a_stream_the_byte_bound_evicted_is_gone() -> None:
    server = build_server()
    gate = trio.Event()

    @server.tool()
    async def gated() -> str:
        await gate.wait()
        return "through"

    # Room for one POST stream (a priming event and a short answer cost ~500 bytes in the
    # store's count), not two: the next stream pushes out the oldest.
    store = MemoryEventStore(max_bytes=700)
    async with serving_with(store, server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        last = await _post_and_hang_up(listener.url, session, orjson.dumps(call(2, "gated", {})))
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        assert store.statistics().events == 2  # the priming event and the answer, kept
        echoed = await post(client, listener.url, call(3, "echo", {"text": "y"}), session=session)
        assert echoed.message["result"]["content"] == [{"type": "text", "text": "y"}]
        assert store.statistics().footprint <= 700
        gone = await resume(listener.url, session, last)
        assert gone.status == 410
        assert "no longer stored" in gone.messages[0]["error"]["message"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
async def test_older_versions(version: str) -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}  # type: ignore[dict-item]
        first = await post(client, listener.url, init)
        session = first.headers["mcp-session-id"]
        assert first.message["result"]["protocolVersion"] == version
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await post(
            client, listener.url, note, session=session, headers={"mcp-protocol-version": version}
        )
        listed = await post(
            client,
            listener.url,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            session=session,
            headers={"mcp-protocol-version": version},
        )
        assert listed.events[0].data != ""  # no priming event before 2025-11-25
        assert listed.message["result"]["tools"]


async def test_stateless_mode() -> None:
    server = build_server()

    @server.tool()
    async def ask(ctx: Context) -> str:
        return (await ctx.sample("hi", max_tokens=5)).text

    options = HttpOptions(stateless=True)
    async with running(server, options=options) as listener, httpx.AsyncClient() as client:
        first = await post(client, listener.url, INITIALIZE)
        assert first.status == 200
        assert "mcp-session-id" not in first.headers
        headers = {"mcp-protocol-version": "2025-11-25"}
        echoed = await post(client, listener.url, call(1, "echo", {"text": "s"}), headers=headers)
        assert echoed.message["result"]["content"] == [{"type": "text", "text": "s"}]
        # Without a session there is no client to ask: a clear tool error, not a hang.
        asked = await post(client, listener.url, call(2, "ask", {}), headers=headers)
        assert asked.message["result"]["isError"] is True
        assert "sampling" in asked.message["result"]["content"][0]["text"]
        get = await client.get(listener.url, headers={"accept": "text/event-stream"})
        assert get.status_code == 405
        assert "stateless" in get.json()["error"]["message"]
        assert len(listener.manager.table) == 0


@pytest.mark.slow
async def test_a_stalled_get_reader_never_delays_100_healthy_ones() -> None:
    server = build_server()
    published = 50
    async with (
        running(server) as listener,
        httpx.AsyncClient(limits=httpx.Limits(max_connections=200)) as client,
    ):
        sessions = [await handshake(client, listener.url) for _ in range(101)]
        stalled, healthy = sessions[0], sessions[1:]
        host, port = listener.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        # The stalled client opens its GET stream on a raw socket and never reads it.
        raw = await trio.open_tcp_stream(host, int(port))
        request = (
            f"GET /mcp HTTP/1.1\r\nhost: {host}:{port}\r\naccept: text/event-stream\r\n"
            f"mcp-session-id: {stalled}\r\nmcp-protocol-version: 2025-11-25\r\n\r\n"
        )
        await raw.send_all(request.encode())
        counts = dict.fromkeys(healthy, 0)
        all_primed, all_done = trio.Event(), trio.Event()
        primed: set[str] = set()

        async def read(session: str) -> None:
            headers = {
                "accept": "text/event-stream",
                "mcp-session-id": session,
                "mcp-protocol-version": "2025-11-25",
            }
            decoder = SSEDecoder()
            async with client.stream("GET", listener.url, headers=headers) as response:
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        primed.add(session)
                        if len(primed) == len(healthy):
                            all_primed.set()
                        counts[session] += bool(event.data)
                    if all(count == published for count in counts.values()):
                        all_done.set()

        async with trio.open_nursery() as nursery:
            for session in healthy:
                nursery.start_soon(read, session)
            with trio.fail_after(20):
                await all_primed.wait()
                for number in range(published):
                    server.add_tool(lambda: "x", f"tool_{number}")
                await all_done.wait()
            for session in sessions:
                await client.delete(listener.url, headers={"mcp-session-id": session})
        await raw.aclose()
        assert set(counts.values()) == {published}


@pytest.mark.slow
async def test_1000_sessions_created_and_deleted_leave_memory_at_baseline() -> None:
    per_session = (Session, HttpSessionStream, ResponseStream, SessionRecord)
    async with running() as listener, httpx.AsyncClient() as client:

        async def cycle(count: int) -> None:
            sessions = [await handshake(client, listener.url) for _ in range(count)]
            for session in sessions:
                deleted = await client.delete(listener.url, headers={"mcp-session-id": session})
                assert deleted.status_code == 200
            await trio.testing.wait_all_tasks_blocked()
            gc.collect()

        def alive() -> int:
            return sum(isinstance(o, per_session) for o in gc.get_objects())

        await cycle(20)  # warm up: caches, interned strings, pools
        baseline_objects = len(gc.get_objects())
        baseline_tasks = len(trio.lowlevel.current_root_task().child_nurseries)
        await cycle(1000)
        assert len(listener.manager.table) == 0
        assert alive() == 0
        # Everything a session held is freed: fewer objects left than one per session.
        assert len(gc.get_objects()) - baseline_objects < 1000
        assert len(trio.lowlevel.current_root_task().child_nurseries) == baseline_tasks


@pytest.mark.slow
async def test_abandoned_sessions_never_lock_out_a_new_client() -> None:
    limits = SessionLimits(max_sessions=500)
    async with running(limits=limits) as listener, httpx.AsyncClient() as client:
        for _ in range(1500):  # initialize and walk away
            assert (await post(client, listener.url, INITIALIZE)).status == 200
        assert len(listener.manager.table) == 500
        with trio.fail_after(2):
            session = await handshake(client, listener.url)
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await post(client, listener.url, ping, session=session)).status == 200


async def test_legacy_sse_is_off_by_default_and_checks_its_session() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        base = listener.url.removesuffix("/mcp")
        assert (await client.get(base + "/sse")).status_code == 404
    async with (
        running(options=HttpOptions(legacy_sse=True)) as listener,
        httpx.AsyncClient() as client,
    ):
        base = listener.url.removesuffix("/mcp")
        headers = {"content-type": "application/json"}
        unknown = await client.post(
            base + "/messages?session_id=nope", content=b"{}", headers=headers
        )
        assert unknown.status_code == 404
        assert (await client.post(base + "/sse")).status_code == 405


async def test_idle_sse_streams_get_keepalive_comments() -> None:
    options = HttpOptions(keepalive_interval=0.05)
    async with running(options=options) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        seen = b""

        async def read() -> None:
            nonlocal seen
            async with client.stream("GET", listener.url, headers=headers) as response:
                async for chunk in response.aiter_bytes():
                    seen += chunk

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            with trio.fail_after(5):
                while seen.count(b": keep-alive") < 2:
                    await trio.testing.wait_all_tasks_blocked(cushion=0.01)
            await client.delete(listener.url, headers={"mcp-session-id": session})
        # Comments only: no events besides the priming one.
        assert SSEDecoder().feed(seen)[0].data == ""


async def test_delete_cancels_requests_in_flight_and_ends_their_streams() -> None:
    server = build_server()
    started, cancelled = trio.Event(), trio.Event()

    @server.tool()
    async def forever() -> str:
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with running(server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        answers: list[object] = []

        async def call_forever() -> None:
            answers.append(
                await post(client, listener.url, call(1, "forever", {}), session=session)
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call_forever)
            with trio.fail_after(5):
                await started.wait()
                await client.delete(listener.url, headers={"mcp-session-id": session})
                await cancelled.wait()
        (answer,) = answers
        assert answer.status == 200  # type: ignore[attr-defined]
        assert [m for m in answer.messages if "id" in m] == []  # type: ignore[attr-defined]
        assert len(listener.manager.table) == 0


@pytest.mark.parametrize("json_response", [False, True])
async def test_batches_in_2025_03_26(json_response: bool) -> None:
    options = HttpOptions(json_response=json_response)
    async with running(options=options) as listener, httpx.AsyncClient() as client:
        params = {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}  # type: ignore[dict-item]
        first = await post(client, listener.url, {**INITIALIZE, "params": params})
        session = first.headers["mcp-session-id"]
        old = {"mcp-protocol-version": "2025-03-26"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await post(client, listener.url, note, session=session, headers=old)
        batch = [call(1, "echo", {"text": "a"}), call(2, "echo", {"text": "b"})]
        answer = await post(client, listener.url, batch, session=session, headers=old)
        by_id = {m["id"]: m["result"]["content"][0]["text"] for m in answer.messages}
        assert by_id == {1: "a", 2: "b"}


async def test_priming_event_ids_always_come_before_the_answer() -> None:
    async with running() as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        for request_id in range(1, 41):
            answer = await post(
                client, listener.url, call(request_id, "echo", {"text": "x"}), session=session
            )
            priming, response = answer.events
            assert priming.data == ""
            assert priming.id is not None
            assert response.id is not None
            stream, first = priming.id.rsplit("-", 1)
            assert response.id == f"{stream}-{int(first) + 1}"


async def test_a_cancelled_call_ends_its_sse_stream_without_an_answer() -> None:
    server = build_server()
    started = trio.Event()

    @server.tool()
    async def forever() -> str:
        started.set()
        await trio.sleep_forever()
        return "never"

    async with running(server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        answers: list[Answer] = []

        async def call_forever() -> None:
            body = call(5, "forever", {})
            answers.append(await post(client, listener.url, body, session=session))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call_forever)
            with trio.fail_after(5):
                await started.wait()
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 5},
                }
                assert (await post(client, listener.url, cancel, session=session)).status == 202
        (answer,) = answers  # the stream ended: no response will come (Cancellation)
        assert answer.messages == []
        assert not typing.cast("HttpSessionStream", listener.manager.table.records()[0].stream).busy


async def test_progress_goes_on_the_stream_of_its_call_in_order() -> None:
    server = build_server()

    @server.tool()
    async def count(n: int, ctx: Context) -> str:
        for done in range(1, n + 1):
            await ctx.report_progress(done, n)
        return "counted"

    async with running(server) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        body = call(3, "count", {"n": 500})
        body["params"]["_meta"] = {"progressToken": "tok"}  # type: ignore[index]
        answer = await post(client, listener.url, body, session=session)
        progress = [m["params"] for m in answer.messages if "method" in m]
        assert [p["progress"] for p in progress] == list(range(1, 501))
        assert {p["progressToken"] for p in progress} == {"tok"}
        assert answer.message["result"]["content"] == [{"type": "text", "text": "counted"}]
        # Every event has an id, in order, after the priming event's.
        ids = [int(e.id.rsplit("-", 1)[1]) for e in answer.events if e.id]
        assert ids == list(range(ids[0], ids[0] + 502))


async def test_the_byte_bound_is_taken_from_the_options() -> None:
    server = build_server()
    gate = trio.Event()

    @server.tool()
    async def gated() -> str:
        await gate.wait()
        return "through"

    # As above, with the listener building its own store from HttpOptions.
    options = HttpOptions(max_event_store_bytes=700)
    async with running(server, options=options) as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        last = await _post_and_hang_up(listener.url, session, orjson.dumps(call(2, "gated", {})))
        gate.set()
        await trio.testing.wait_all_tasks_blocked()
        echoed = await post(client, listener.url, call(3, "echo", {"text": "y"}), session=session)
        assert echoed.message["result"]["content"] == [{"type": "text", "text": "y"}]
        gone = await resume(listener.url, session, last)
        assert gone.status == 410


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
async def test_a_get_stream_is_answered_at_once(autojump_clock: object, version: str) -> None:
    # A client may wait for the GET's status before it sends requests (the server can put
    # their progress or its own requests there); nothing is on its way, so no batching wait.
    # On the mock clock any wait of the server's shows as time passed.
    async with running() as listener, httpx.AsyncClient() as client:
        session = await handshake(client, listener.url)
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": version,
        }
        began = trio.current_time()
        async with client.stream("GET", listener.url, headers=headers) as response:
            assert response.status_code == 200
            assert trio.current_time() == began
