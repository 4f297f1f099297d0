"""Multi round-trip requests (2026-07-28): ``InputRequiredResult`` answered and retried.

The pure parts (``input_required_from_wire``, ``retry_params``, the ``rounds`` loop) are
tested directly, the reader on any JSON with Hypothesis; the session's rounds against a
2026-07-28 server played by the test (new ids, the exact ``requestState``, the handlers of
2025-11-25 answering, undeclared capabilities, the bound on rounds).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from trimcp.client.session import (
    ClientHandlers,
    ClientSessionOptions,
    ElicitRequest,
    EraCache,
    SamplingRequest,
    SamplingResult,
    open_client_session,
)
from trimcp.client.session._mrtr import (
    InputRequest,
    input_required_from_wire,
    retry_params,
    rounds,
)
from trimcp.errors import RemoteProtocolError
from trimcp.protocol import ElicitResult, Root
from trimcp.transports import memory_stream_pair

from ._fakes import FakeServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.client.session import ClientSession

ELICIT = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "default": "Ada"}},
        },
    },
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 5,
    },
}
ROOTS = {"method": "roots/list", "params": {}}


def input_required(requests: dict[str, Any] | None, state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


# --- the pure parts --------------------------------------------------------------------------


def test_a_result_is_read_with_its_keys_and_state() -> None:
    needed = input_required_from_wire(input_required({"a": ELICIT, "b": ROOTS}, "s1"), "tools/call")
    assert [(r.key, r.method) for r in needed.requests] == [
        ("a", "elicitation/create"),
        ("b", "roots/list"),
    ]
    assert needed.request_state == "s1"
    state_only = input_required_from_wire(input_required(None, "shed"), "prompts/get")
    assert (state_only.requests, state_only.request_state) == ((), "shed")


@pytest.mark.parametrize(
    ("result", "method"),
    [
        (input_required({"a": ELICIT}), "tools/list"),  # only three methods may ask
        (input_required(None), "tools/call"),  # neither member
        (input_required({"a": {"method": "tools/call", "params": {}}}), "tools/call"),
        (input_required({"a": {"method": "roots/list", "params": []}}), "tools/call"),
        (input_required({"a": "x"}), "tools/call"),
        ({"resultType": "input_required", "inputRequests": []}, "tools/call"),
        ({"resultType": "input_required", "requestState": 7}, "tools/call"),
    ],
)
def test_malformed_results_are_protocol_errors(result: dict[str, Any], method: str) -> None:
    with pytest.raises(RemoteProtocolError):
        input_required_from_wire(result, method)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)
entries = st.fixed_dictionaries(
    {"method": st.sampled_from(["elicitation/create", "roots/list", "x"]) | json_values},
    optional={"params": json_values},
)
results = st.fixed_dictionaries(
    {},
    optional={
        "inputRequests": st.dictionaries(st.text(max_size=4), entries | json_values, max_size=3)
        | json_values,
        "requestState": st.text(max_size=8) | json_values,
        "resultType": st.just("input_required"),
    },
)


@given(result=results, method=st.sampled_from(["tools/call", "resources/read", "x/y"]))
def test_any_result_is_read_or_refused_as_a_protocol_error(
    result: dict[str, Any], method: str
) -> None:
    try:
        needed = input_required_from_wire(result, method)
    except RemoteProtocolError:
        return
    assert all(r.method in ("elicitation/create", "roots/list") for r in needed.requests)
    assert needed.request_state is None or isinstance(needed.request_state, str)


def test_the_retry_keeps_the_params_and_replaces_the_round() -> None:
    original = {"name": "t", "arguments": {"x": 1}, "requestState": "old", "inputResponses": {}}
    retry = retry_params(original, {"k": {"action": "accept"}}, "new")
    assert retry == {
        "name": "t",
        "arguments": {"x": 1},
        "inputResponses": {"k": {"action": "accept"}},
        "requestState": "new",
    }
    assert retry_params({"uri": "u"}, {}, None) == {"uri": "u"}  # no state: none sent


async def test_rounds_end_with_a_complete_or_unmarked_result() -> None:
    sent: list[Any] = []
    answers = [input_required({"k": ROOTS}, "s"), {"content": []}]

    async def send(params: Any) -> dict[str, Any]:
        sent.append(params)
        return answers.pop(0)

    async def answer(request: InputRequest) -> dict[str, Any]:
        return {"roots": []}

    result = await rounds(send, "tools/call", {"name": "t"}, answer, 3)
    assert result == {"content": []}  # no resultType: complete
    assert sent == [
        {"name": "t"},
        {"name": "t", "inputResponses": {"k": {"roots": []}}, "requestState": "s"},
    ]


async def test_rounds_are_bounded() -> None:
    calls = 0

    async def send(params: Any) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        return input_required(None, "again")

    async def answer(request: InputRequest) -> dict[str, Any]:
        raise AssertionError("nothing was asked")

    with pytest.raises(RemoteProtocolError, match="after 2 rounds"):
        await rounds(send, "tools/call", {}, answer, 2)
    assert calls == 3


async def test_an_unknown_result_type_is_refused() -> None:
    async def send(params: Any) -> dict[str, Any]:
        return {"resultType": "task"}

    async def answer(request: InputRequest) -> dict[str, Any]:
        raise AssertionError

    with pytest.raises(RemoteProtocolError, match="unknown resultType"):
        await rounds(send, "tools/call", {}, answer, 2)


# --- a session's rounds ----------------------------------------------------------------------


@asynccontextmanager
async def modern_session(
    handlers: ClientHandlers, **options: Any
) -> AsyncIterator[tuple[ClientSession, FakeServer]]:
    client_end, server_end = memory_stream_pair()
    server = FakeServer(server_end)
    settings = ClientSessionOptions(listen=False, era_cache=EraCache(), **options)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.discover)
        async with open_client_session(client_end, handlers=handlers, options=settings) as s:
            yield s, server
        await server_end.aclose()


async def elicit(request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={})


async def sample(request: SamplingRequest) -> SamplingResult:
    return SamplingResult(content={"type": "text", "text": "sampled"}, model="m")


async def test_a_tool_call_is_retried_with_the_answers_and_the_exact_state() -> None:
    handlers = ClientHandlers(elicitation=elicit, sampling=sample, roots=[Root(uri="file:///r")])
    state = 'opaque "state" \u00e9 {}'
    async with modern_session(handlers) as (session, server):

        async def serve() -> None:
            first = await server.expect("tools/call")
            await server.answer(
                first, input_required({"n": ELICIT, "s": SAMPLE, "r": ROOTS}, state)
            )
            second = await server.expect("tools/call")
            assert second["id"] != first["id"]
            params = second["params"]
            assert params["requestState"] == state
            assert params["name"] == "t"
            assert params["arguments"] == {"x": 1}
            assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            responses = params["inputResponses"]
            assert responses["n"] == {"action": "accept", "content": {"name": "Ada"}}
            assert responses["s"]["content"] == {"type": "text", "text": "sampled"}
            assert responses["r"] == {"roots": [{"uri": "file:///r"}]}
            await server.answer(second, input_required({"again": ROOTS}))
            third = await server.expect("tools/call")
            assert "requestState" not in third["params"]  # none was given this round
            await server.answer(third, {"content": [{"type": "text", "text": "done"}]})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            result = await session.call_tool("t", {"x": 1})
        assert result.text == "done"


async def test_resources_and_prompts_take_rounds_too() -> None:
    async with modern_session(ClientHandlers(roots=[])) as (session, server):

        async def serve() -> None:
            for method in ("resources/read", "prompts/get"):
                first = await server.expect(method)
                await server.answer(first, input_required({"r": ROOTS}))
                retry = await server.expect(method)
                assert retry["params"]["inputResponses"] == {"r": {"roots": []}}
                done = (
                    {"contents": [{"uri": "u", "text": "t"}]}
                    if method == "resources/read"
                    else {"messages": []}
                )
                await server.answer(retry, done)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            assert (await session.read_resource("u"))[0].text == "t"
            assert (await session.get_prompt("p")).messages == ()


async def test_an_undeclared_capability_fails_the_call() -> None:
    async with modern_session(ClientHandlers()) as (session, server):

        async def serve() -> None:
            call = await server.expect("tools/call")
            assert call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
            await server.answer(call, input_required({"s": SAMPLE}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with pytest.raises(RemoteProtocolError, match="sampling"):
                await session.call_tool("t")


async def test_the_session_bounds_the_rounds() -> None:
    async with modern_session(ClientHandlers(), max_input_rounds=1) as (session, server):

        async def serve() -> None:
            for _ in range(2):
                call = await server.expect("tools/call")
                await server.answer(call, input_required(None, "more"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            with pytest.raises(RemoteProtocolError, match="max_input_rounds"):
                await session.call_tool("t")


async def test_a_raw_request_returns_the_input_required_result_as_is() -> None:
    async with modern_session(ClientHandlers()) as (session, server):

        async def serve() -> None:
            call = await server.expect("tools/call")
            await server.answer(call, input_required(None, "s"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            raw = await session.request("tools/call", {"name": "t"})
        assert raw["requestState"] == "s"
