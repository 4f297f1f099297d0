"""A backend's asks reach a 2026-07-28 caller of the gateway as ``InputRequiredResult`` rounds.

Requests are served as a transport serves them (``ModernRequest`` over a checked ``_meta``),
so each test sees the wire: the ``InputRequiredResult`` (keys, ``requestState``), the retry
with ``inputResponses``, and the refusals of a state that is tampered, replayed, for another
request or principal, expired, or whose call was cancelled to make room. The backend is an
in-memory ``MCPServer`` in either era (``backend_era``): it asks with requests the gateway
parks, or with rounds the gateway's client session answers while parked. Timed tests run on
the autojump clock.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import orjson
import pytest
import trio
import trio.testing

from tests.gateway.conftest import Era, backend_options
from trimcp.auth import Identity
from trimcp.config import GatewaySettings
from trimcp.gateway import Gateway, ParkedStatistics
from trimcp.protocol import Request, read_request_meta
from trimcp.server import Context, MCPServer
from trimcp.sessions import ModernRequest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trio.testing import MockClock

    from trimcp.protocol import JsonObject

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CAPABLE: JsonObject = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


class Sink:
    """A request's own stream: what the gateway sends before the answer."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def send_nowait(self, data: bytes) -> bool:
        self.messages.append(orjson.loads(data))
        return True

    async def send(self, data: bytes) -> None:
        self.send_nowait(data)

    def methods(self) -> list[str]:
        return [message["method"] for message in self.messages]


class Asker:
    """A backend whose tools ask their caller, and say when a call of theirs ended."""

    def __init__(self) -> None:
        self.server = MCPServer("asker")
        self.ended: list[str] = []
        self.started = trio.Event()
        server = self.server

        @server.tool()
        async def greet(ctx: Context) -> str:
            """Ask a name, greet it."""
            try:
                await ctx.report_progress(1, 2, "asking")
                await ctx.log("warning", "about to ask")
                answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
                return f"hello {(answer.content or {}).get('name')}"
            finally:
                self.ended.append("greet")

        @server.tool()
        async def both(ctx: Context) -> str:
            """Ask two things at once."""
            answers: dict[str, str] = {}

            async def ask(key: str) -> None:
                answer = await ctx.elicit(f"{key}?", NAME_SCHEMA, key=key)
                answers[key] = str((answer.content or {}).get("name"))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask, "first")
                nursery.start_soon(ask, "last")
            return f"{answers['first']} {answers['last']}"

        @server.tool()
        async def sample_refused(ctx: Context) -> str:
            """Sample, and say how it was refused."""
            try:
                return (await ctx.sample("hi", max_tokens=5)).text
            except Exception as exc:  # noqa: BLE001 - the refusal is the answer
                return f"refused: {exc}"

        @server.tool()
        async def hold() -> str:
            """Stay in flight until cancelled."""
            try:
                self.started.set()
                await trio.sleep_forever()
            finally:
                self.ended.append("hold")
            return "never"

        @server.tool()
        async def roots(ctx: Context) -> str:
            """Name the caller's roots."""
            return ",".join(root.uri for root in await ctx.list_roots())

        @server.resource("note://asker/secret")
        async def secret(ctx: Context) -> str:
            answer = await ctx.elicit("Password?", NAME_SCHEMA, key="password")
            return f"secret for {(answer.content or {}).get('name')}"

        @server.prompt()
        async def hello(ctx: Context) -> str:
            """Greet the sampled name."""
            return f"hello {(await ctx.sample('name?', max_tokens=5)).text}"


@asynccontextmanager
async def _gateway(
    asker: Asker, era: Era, settings: GatewaySettings | None = None, *more: Asker
) -> AsyncIterator[Gateway]:
    """A gateway over ``asker`` (and ``more``: ``asker2``, ...), all in ``era``."""
    local = [("asker", asker.server)]
    local += [(f"asker{number}", other.server) for number, other in enumerate(more, 2)]
    gateway = Gateway(
        local=local,
        settings=settings,
        local_options=backend_options(era, *(name for name, _ in local)),
    )
    async with gateway.open():
        await gateway.wait_settled()
        yield gateway


async def _send(
    gateway: Gateway,
    method: str,
    params: JsonObject,
    *,
    capabilities: JsonObject = CAPABLE,
    meta: JsonObject | None = None,
    sink: Sink | None = None,
    identity: Identity | None = None,
    request_id: int = 7,
) -> Any:
    body: JsonObject = {
        **params,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            **(meta or {}),
        },
    }
    request = Request(id=request_id, method=method, params=body)
    modern = ModernRequest(
        gateway, request, read_request_meta(body), sink or Sink(), identity=identity
    )
    return orjson.loads(await modern.run())


def _call(name: str, **extra: Any) -> JsonObject:
    return {"name": name, "arguments": {}, **extra}


def _retry(first: Any, answers: JsonObject, name: str = "asker__greet") -> JsonObject:
    return _call(name, inputResponses=answers, requestState=first["result"]["requestState"])


ADA = {"action": "accept", "content": {"name": "Ada"}}


def _only_key(result: Any) -> str:
    (key,) = result["result"]["inputRequests"]
    return str(key)


async def test_an_ask_becomes_an_input_required_result_and_the_retry_answers_it(
    backend_era: Era,
) -> None:
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        first = await _send(gateway, "tools/call", _call("asker__greet"))
        result = first["result"]
        assert result["resultType"] == "input_required"
        assert "ttlMs" not in result
        (key,) = result["inputRequests"]
        ask = result["inputRequests"][key]
        assert ask["method"] == "elicitation/create"
        assert ask["params"]["message"] == "Your name?"
        assert isinstance(result["requestState"], str)
        assert gateway.parked_calls() == ParkedStatistics(calls=1, parked=1, max_parked=256)

        done = await _send(gateway, "tools/call", _retry(first, {key: ADA}), request_id=8)
        assert done["id"] == 8
        assert done["result"]["content"] == [{"type": "text", "text": "hello Ada"}]
        assert done["result"]["resultType"] == "complete"
        assert gateway.parked_calls().calls == 0


async def test_sampling_and_roots_of_prompts_resources_and_tools(backend_era: Era) -> None:
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        first = await _send(gateway, "prompts/get", {"name": "asker__hello"})
        key = _only_key(first)
        assert first["result"]["inputRequests"][key]["method"] == "sampling/createMessage"
        sampled = {"role": "assistant", "content": {"type": "text", "text": "Ada"}, "model": "m"}
        retry = {
            "name": "asker__hello",
            "inputResponses": {key: sampled},
            "requestState": first["result"]["requestState"],
        }
        got = (await _send(gateway, "prompts/get", retry))["result"]
        assert got["messages"][0]["content"]["text"] == "hello Ada"

        first = await _send(gateway, "resources/read", {"uri": "note://asker/secret"})
        key = _only_key(first)
        retry = {
            "uri": "note://asker/secret",
            "inputResponses": {key: ADA},
            "requestState": first["result"]["requestState"],
        }
        read = (await _send(gateway, "resources/read", retry))["result"]
        assert read["contents"][0]["text"] == "secret for Ada"
        assert (read["resultType"], read["ttlMs"]) == ("complete", 0)

        first = await _send(gateway, "tools/call", _call("asker__roots"))
        key = _only_key(first)
        assert first["result"]["inputRequests"][key]["method"] == "roots/list"
        listed = {"roots": [{"uri": "file:///srv/app"}]}
        done = await _send(gateway, "tools/call", _retry(first, {key: listed}, "asker__roots"))
        assert done["result"]["content"][0]["text"] == "file:///srv/app"


async def test_asks_made_together_are_all_answered(backend_era: Era) -> None:
    # How many rounds depends on the backend (a 2026-07-28 backend's asks are answered
    # one by one by the gateway's client session); what is asked and the result do not.
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        answer = await _send(gateway, "tools/call", _call("asker__both"))
        asked: list[str] = []
        for request_id in range(8, 12):
            result = answer["result"]
            if result["resultType"] == "complete":
                break
            requests = result["inputRequests"]
            asked += [request["params"]["message"] for request in requests.values()]
            answers = dict.fromkeys(requests, ADA)
            retry = _retry(answer, answers, "asker__both")
            answer = await _send(gateway, "tools/call", retry, request_id=request_id)
        assert answer["result"]["content"][0]["text"] == "Ada Ada"
        assert sorted(asked) == ["first?", "last?"]


async def test_a_missing_answer_is_asked_again_and_extra_ones_are_ignored(
    backend_era: Era,
) -> None:
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        first = await _send(gateway, "tools/call", _call("asker__greet"))
        key = _only_key(first)
        again = await _send(gateway, "tools/call", _retry(first, {"unrelated": ADA}))
        assert again["result"]["resultType"] == "input_required"
        assert list(again["result"]["inputRequests"]) == [key]
        assert again["result"]["requestState"] != first["result"]["requestState"]
        done = await _send(gateway, "tools/call", _retry(again, {key: ADA, "more": ADA}))
        assert done["result"]["content"][0]["text"] == "hello Ada"


async def test_progress_and_logs_of_the_backend_call_reach_the_waiting_request(
    backend_era: Era,
) -> None:
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        sink = Sink()
        meta: JsonObject = {"progressToken": "p1", "io.modelcontextprotocol/logLevel": "info"}
        await _send(gateway, "tools/call", _call("asker__greet"), meta=meta, sink=sink)
        progress, log = sink.messages
        assert progress["method"] == "notifications/progress"
        assert progress["params"]["progressToken"] == "p1"
        assert progress["params"]["message"] == "asking"
        assert log["method"] == "notifications/message"
        assert log["params"] == {"level": "warning", "logger": "asker", "data": "about to ask"}

        quiet = Sink()  # no logLevel: no log lines (2026-07-28, Basic > _meta); no token
        await _send(gateway, "tools/call", _call("asker__greet"), sink=quiet)
        assert quiet.messages == []


async def test_a_legacy_backend_hears_32601_for_what_the_caller_did_not_declare() -> None:
    asker = Asker()
    async with _gateway(asker, "legacy") as gateway:
        answer = await _send(gateway, "tools/call", _call("asker__sample_refused"), capabilities={})
        text = answer["result"]["content"][0]["text"]
        assert text.startswith("refused: ")
        assert "did not declare sampling" in text
        roots = await _send(gateway, "tools/call", _call("asker__roots"), capabilities={})
        assert roots["result"]["content"] == [{"type": "text", "text": ""}]  # no folders
        assert gateway.parked_calls().calls == 0


async def test_a_modern_backend_s_call_ends_with_32021_for_an_undeclared_capability() -> None:
    asker = Asker()
    async with _gateway(asker, "modern") as gateway:
        answer = await _send(gateway, "tools/call", _call("asker__sample_refused"), capabilities={})
        assert answer["error"]["code"] == -32021
        assert answer["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
        assert gateway.parked_calls().calls == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("tamper", "invalid"),
        ("replay", "replayed"),
        ("other-arguments", "mismatch"),
        ("other-method", "mismatch"),
    ],
)
async def test_a_state_that_is_not_this_call_s_next_is_refused(
    backend_era: Era, change: str, reason: str
) -> None:
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        first = await _send(gateway, "tools/call", _call("asker__greet"))
        key = _only_key(first)
        state = first["result"]["requestState"]
        method, retry = "tools/call", _retry(first, {key: ADA})
        if change == "tamper":
            retry["requestState"] = state[:-2] + ("AA" if state[-2:] != "AA" else "BB")
        elif change == "replay":
            again = await _send(gateway, "tools/call", _retry(first, {}))
            assert again["result"]["resultType"] == "input_required"
        elif change == "other-arguments":
            retry["arguments"] = {"x": 1}
        else:
            method, retry = "prompts/get", {**retry, "name": "asker__hello"}
        refused = await _send(gateway, method, retry)
        assert refused["error"]["code"] == -32602
        assert refused["error"]["data"] == {"reason": reason}


async def test_a_state_is_bound_to_the_principal(backend_era: Era) -> None:
    def identity(subject: str) -> Identity:
        return Identity(
            subject=subject,
            client_id="app",
            scopes=frozenset(),
            expires_at=None,
            issuer="https://auth.example",
        )

    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        ada, bob = identity("ada"), identity("bob")
        first = await _send(gateway, "tools/call", _call("asker__greet"), identity=ada)
        retry = _retry(first, {_only_key(first): ADA})
        refused = await _send(gateway, "tools/call", retry, identity=bob)
        assert refused["error"]["data"] == {"reason": "mismatch"}
        assert "another principal" in refused["error"]["message"]
        done = await _send(gateway, "tools/call", retry, identity=ada)
        assert done["result"]["content"][0]["text"] == "hello Ada"


async def test_a_parked_call_expires_and_is_cancelled_at_its_backend(
    backend_era: Era, autojump_clock: MockClock
) -> None:
    asker = Asker()
    settings = GatewaySettings(parked_call_ttl=30.0)
    async with _gateway(asker, backend_era, settings) as gateway:
        first = await _send(gateway, "tools/call", _call("asker__greet"))
        parked_at = trio.current_time()
        await trio.sleep(29.5)
        assert gateway.parked_calls().parked == 1
        await trio.sleep(1.0)
        assert gateway.parked_calls().calls == 0
        if backend_era == "legacy":
            # The backend's call was waiting for the answer: it was cancelled.
            assert asker.ended == ["greet"]
        refused = await _send(gateway, "tools/call", _retry(first, {_only_key(first): ADA}))
        assert refused["error"]["code"] == -32602
        assert refused["error"]["data"] == {"reason": "expired"}
        assert trio.current_time() - parked_at == pytest.approx(30.5)


async def test_past_the_limit_the_call_parked_longest_is_cancelled(
    backend_era: Era, autojump_clock: MockClock
) -> None:
    # Three backends: a 2025-11-25 backend's ask during two callers' calls is ambiguous.
    askers = [Asker(), Asker(), Asker()]
    settings = GatewaySettings(max_parked_calls=2)
    async with _gateway(askers[0], backend_era, settings, *askers[1:]) as gateway:
        calls = []
        for name in ("asker__greet", "asker2__greet", "asker3__greet"):
            calls.append((name, await _send(gateway, "tools/call", _call(name))))
            await trio.sleep(1.0)
        assert gateway.parked_calls() == ParkedStatistics(calls=2, parked=2, max_parked=2)
        if backend_era == "legacy":
            # The first one was cancelled at its backend.
            assert [asker.ended for asker in askers] == [["greet"], [], []]
        (name, oldest), *kept = calls
        retry = _retry(oldest, {_only_key(oldest): ADA}, name)
        refused = await _send(gateway, "tools/call", retry)
        assert refused["error"]["data"] == {"reason": "expired"}
        assert "make room" in refused["error"]["message"]
        for name, call in kept:
            retry = _retry(call, {_only_key(call): ADA}, name)
            done = await _send(gateway, "tools/call", retry)
            assert done["result"]["content"][0]["text"] == "hello Ada"
        assert gateway.parked_calls().calls == 0


async def test_a_caller_that_goes_away_cancels_its_backend_call(backend_era: Era) -> None:
    asker = Asker()
    async with _gateway(asker, backend_era) as gateway:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_send, gateway, "tools/call", _call("asker__hold"))
            with trio.fail_after(5):
                await asker.started.wait()
            assert gateway.parked_calls() == ParkedStatistics(calls=1, parked=0, max_parked=256)
            nursery.cancel_scope.cancel()  # the client closed the request's stream
        await trio.testing.wait_all_tasks_blocked()
        assert asker.ended == ["hold"]
        assert gateway.parked_calls().calls == 0


async def test_a_request_waiting_when_the_gateway_stops_gets_an_error(backend_era: Era) -> None:
    asker = Asker()
    answers: list[Any] = []

    async def call(gateway: Gateway) -> None:
        answers.append(await _send(gateway, "tools/call", _call("asker__hold")))

    # The nursery outlives the gateway: the request is still waiting when it stops, and its
    # parked calls stop first (the gateway's children stop in reverse order).
    async with trio.open_nursery() as nursery, _gateway(asker, backend_era) as gateway:
        nursery.start_soon(call, gateway)
        with trio.fail_after(5):
            await asker.started.wait()
    (answer,) = answers
    assert answer["error"]["code"] == -32603
    assert "the trimcp gateway stopped" in answer["error"]["message"]
    assert asker.ended == ["hold"]
