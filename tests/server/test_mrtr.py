"""Multi round-trip requests (MCP 2026-07-28): ``ctx.elicit`` and friends without a session.

Each test serves requests as a transport does (``ModernRequest`` over a checked ``_meta``),
with no transport around them, and retries as a client would: the same method with a new
id, the answers under the keys the server named, and the ``requestState`` echoed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import trio

from tests.modern_requests import ModernClient, accept, identity
from trimcp.protocol import ClientCapabilities
from trimcp.server import Context, MCPServer
from trimcp.server._cache_hints import CacheHint
from trimcp.server._request_state import RequestStateKeys, RequestStateSealer
from trimcp.testing import open_in_memory_client

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject

NAME: JsonObject = {"type": "object", "properties": {"name": {"type": "string"}}}
ELICITATION: JsonObject = {"elicitation": {}}
EVERYTHING: JsonObject = {"elicitation": {}, "sampling": {}, "roots": {}}


def make_client(
    server: MCPServer, capabilities: JsonObject | None = None
) -> ModernClient:  # reads as the class it makes
    """A client declaring every capability unless told otherwise."""
    return ModernClient(server, EVERYTHING if capabilities is None else capabilities)


def text(answer: Any) -> str:
    (block,) = answer["result"]["content"]
    return str(block["text"])


def greeter() -> MCPServer:
    server = MCPServer("mrtr")

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME, key="who")
        return f"hello {answer.content['name']}"

    return server


async def test_an_ask_answers_input_required_and_the_retry_completes() -> None:
    client = make_client(greeter())
    first = await client.call("greet")
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "who": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Your name?", "requestedSchema": NAME},
        }
    }
    state = result["requestState"]
    assert isinstance(state, str)
    # No cache hints on a result that is not the call's answer.
    assert "ttlMs" not in result
    second = await client.call(
        "greet", inputResponses={"who": accept(name="Ada")}, requestState=state
    )
    assert second["result"]["resultType"] == "complete"
    assert text(second) == "hello Ada"


async def test_answers_without_a_state_are_taken_and_extra_keys_ignored() -> None:
    client = make_client(greeter())
    answer = await client.call(
        "greet", inputResponses={"who": accept(name="Bo"), "spare": {"action": "decline"}}
    )
    assert text(answer) == "hello Bo"


async def test_a_missing_answer_is_asked_for_again() -> None:
    client = make_client(greeter())
    first = (await client.call("greet"))["result"]
    again = await client.call(
        "greet",
        inputResponses={"someone-else": accept(name="x")},
        requestState=first["requestState"],
    )
    assert again["result"]["resultType"] == "input_required"
    assert list(again["result"]["inputRequests"]) == ["who"]


@pytest.mark.parametrize(
    ("responses", "fragment"),
    [
        (42, "inputResponses must be an object"),
        (None, "not null"),
        ({"who": 7}, "inputResponses['who'] must be an object"),
        ({"who": [accept(name="x")]}, "inputResponses['who'] must be an object"),
    ],
)
async def test_malformed_input_responses_are_invalid_params(
    responses: object, fragment: str
) -> None:
    client = make_client(greeter())
    answer = await client.call("greet", inputResponses=responses)
    assert answer["error"]["code"] == -32602
    assert fragment in answer["error"]["message"]


async def test_asks_started_together_go_out_in_one_result() -> None:
    server = MCPServer("batch")

    @server.tool()
    async def survey(ctx: Context) -> str:
        found: dict[str, str] = {}

        async def name() -> None:
            found["name"] = str((await ctx.elicit("Name?", NAME)).content["name"])

        async def poem() -> None:
            found["poem"] = (await ctx.sample("A poem", max_tokens=10)).text

        async def roots() -> None:
            found["roots"] = ",".join(root.uri for root in await ctx.list_roots())

        async with trio.open_nursery() as nursery:
            for ask in (name, poem, roots):
                nursery.start_soon(ask)
        return f"{found['name']}|{found['poem']}|{found['roots']}"

    client = make_client(server)
    first = (await client.call("survey"))["result"]
    # Keys default to the kind of input: elicitation, sampling, roots.
    assert set(first["inputRequests"]) == {"elicitation", "sampling", "roots"}
    assert first["inputRequests"]["roots"] == {"method": "roots/list", "params": {}}
    sampling = first["inputRequests"]["sampling"]["params"]
    assert sampling["maxTokens"] == 10
    responses = {
        "elicitation": accept(name="Cy"),
        "sampling": {
            "role": "assistant",
            "content": {"type": "text", "text": "roses"},
            "model": "m",
        },
        "roots": {"roots": [{"uri": "file:///a"}]},
    }
    done = await client.call("survey", inputResponses=responses, requestState=first["requestState"])
    assert text(done) == "Cy|roses|file:///a"


async def test_rounds_carry_earlier_answers_and_once_runs_once() -> None:
    server = MCPServer("rounds")
    minted: list[int] = []

    @server.tool()
    async def order(ctx: Context) -> str:
        async def mint() -> int:
            minted.append(len(minted) + 1)
            return 1000 + len(minted)

        number = await ctx.once("order", mint)
        first = await ctx.elicit("Name?", NAME)
        second = await ctx.elicit("Again?", NAME)
        return f"{number}: {first.content['name']} {second.content['name']}"

    client = make_client(server)
    one = (await client.call("order"))["result"]
    assert list(one["inputRequests"]) == ["elicitation"]
    two = (
        await client.call(
            "order",
            inputResponses={"elicitation": accept(name="A")},
            requestState=one["requestState"],
        )
    )["result"]
    # The second ask has the next automatic key; the first answer travels in the state.
    assert list(two["inputRequests"]) == ["elicitation-2"]
    assert two["requestState"] != one["requestState"]
    three = await client.call(
        "order",
        inputResponses={"elicitation-2": accept(name="B")},
        requestState=two["requestState"],
    )
    assert text(three) == "1001: A B"
    assert minted == [1]


async def test_once_just_runs_in_a_session() -> None:
    server = MCPServer("session")
    runs: list[str] = []

    @server.tool()
    async def step(ctx: Context) -> str:
        value = await ctx.once("x", lambda: runs.append("ran") or "v")
        return str(value)

    async with open_in_memory_client(server) as client:
        result = await client.request("tools/call", {"name": "step", "arguments": {}})
    assert result["content"][0]["text"] == "v"
    assert runs == ["ran"]


async def test_the_same_code_sends_requests_in_a_session() -> None:
    asked: list[object] = []

    async def elicit(params: JsonObject) -> JsonObject:
        asked.append(params)
        return accept(name="Di")

    capabilities = ClientCapabilities(elicitation_form=True)
    async with open_in_memory_client(
        greeter(), capabilities=capabilities, handlers={"elicitation/create": elicit}
    ) as client:
        result = await client.request("tools/call", {"name": "greet", "arguments": {}})
    assert result["content"][0]["text"] == "hello Di"
    assert len(asked) == 1


async def test_tampered_replayed_and_rebound_states_are_refused() -> None:
    client = make_client(greeter())
    state = (await client.call("greet"))["result"]["requestState"]
    answers = {"who": accept(name="E")}
    flipped = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    tampered = await client.call("greet", inputResponses=answers, requestState=flipped)
    assert tampered["error"]["code"] == -32602
    assert tampered["error"]["data"] == {"reason": "invalid"}
    other = await client.call(
        "greet", {"unexpected": 1}, inputResponses=answers, requestState=state
    )
    assert other["error"]["data"] == {"reason": "mismatch"}
    assert text(await client.call("greet", inputResponses=answers, requestState=state)) == (
        "hello E"
    )
    replayed = await client.call("greet", inputResponses=answers, requestState=state)
    assert replayed["error"]["data"] == {"reason": "replayed"}
    assert "already used" in replayed["error"]["message"]


async def test_a_state_belongs_to_its_principal() -> None:
    client = make_client(greeter())
    client.identity = identity("alice")
    state = (await client.call("greet"))["result"]["requestState"]
    client.identity = identity("mallory")
    stolen = await client.call(
        "greet", inputResponses={"who": accept(name="M")}, requestState=state
    )
    assert stolen["error"]["data"] == {"reason": "mismatch"}
    assert "another principal" in stolen["error"]["message"]


async def test_an_expired_state_is_refused() -> None:
    now = [1_000_000.0]
    sealer = RequestStateSealer(RequestStateKeys(), ttl=60, clock=lambda: now[0])
    server = MCPServer("ttl", request_state=sealer)

    @server.tool()
    async def greet(ctx: Context) -> str:
        await ctx.elicit("Name?", NAME, key="who")
        return "done"

    client = make_client(server)
    state = (await client.call("greet"))["result"]["requestState"]
    now[0] += 61
    late = await client.call("greet", inputResponses={"who": accept(name="F")}, requestState=state)
    assert late["error"]["data"] == {"reason": "expired"}


@pytest.mark.parametrize(
    ("asking", "required"),
    [
        ("sample", {"sampling": {}}),
        ("elicit", {"elicitation": {"form": {}}}),
        ("roots", {"roots": {}}),
    ],
)
async def test_an_undeclared_capability_is_32021(asking: str, required: JsonObject) -> None:
    server = MCPServer("caps")

    @server.tool()
    async def needy(ctx: Context) -> str:
        if asking == "sample":
            await ctx.sample("hi", max_tokens=5)
        elif asking == "elicit":
            await ctx.elicit("hi", NAME)
        else:
            await ctx.list_roots()
        return "unreachable"

    answer = await make_client(server, capabilities={}).call("needy")
    assert answer["error"]["code"] == -32021
    assert answer["error"]["data"] == {"requiredCapabilities": required}


async def test_two_asks_with_one_key_are_a_server_bug(caplog: pytest.LogCaptureFixture) -> None:
    server = MCPServer("keys")

    @server.tool()
    async def twice(ctx: Context) -> str:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ctx.elicit, "a", NAME)
            nursery.start_soon(ctx.elicit, "b", NAME)
        return "no"

    # Automatic keys count up; naming one key twice is the bug refused here.
    @server.tool()
    async def clash(ctx: Context) -> str:
        async def ask(message: str) -> None:
            await ctx.elicit(message, NAME, key="same")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "a")
            nursery.start_soon(ask, "b")
        return "no"

    client = make_client(server)
    assert set((await client.call("twice"))["result"]["inputRequests"]) == {
        "elicitation",
        "elicitation-2",
    }
    clashed = await client.call("clash")
    # A server bug: an internal error for the client, the reason in the server's log.
    assert clashed["error"] == {"code": -32603, "message": "Internal error"}
    assert "share the key 'same'" in caplog.text


async def test_prompts_and_resource_reads_ask_too() -> None:
    server = MCPServer("others")

    @server.prompt()
    async def poem(ctx: Context) -> str:
        answer = await ctx.elicit("For whom?", NAME, key="who")
        return f"A poem for {answer.content['name']}"

    @server.resource("test://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit("Password?", NAME, key="pw")
        return f"secret for {answer.content['name']}"

    client = make_client(server)
    first = (await client.send("prompts/get", {"name": "poem"}))["result"]
    assert first["resultType"] == "input_required"
    done = await client.send(
        "prompts/get",
        {"name": "poem", "inputResponses": {"who": accept(name="G")}},
    )
    assert done["result"]["messages"][0]["content"]["text"] == "A poem for G"
    read = (await client.send("resources/read", {"uri": "test://secret"}))["result"]
    assert list(read["inputRequests"]) == ["pw"]
    read_done = (
        await client.send(
            "resources/read",
            {"uri": "test://secret", "inputResponses": {"pw": accept(name="H")}},
        )
    )["result"]
    assert read_done["contents"][0]["text"] == "secret for H"
    assert read_done["ttlMs"] == 0
    assert read_done["cacheScope"] == "public"


async def test_cache_hints_and_their_overrides() -> None:
    server = MCPServer("hints", cache_hints={"tools/list": CacheHint(5000, "private")})

    @server.tool()
    def nothing() -> str:
        return ""

    client = make_client(server)
    tools = (await client.send("tools/list"))["result"]
    assert (tools["ttlMs"], tools["cacheScope"]) == (5000, "private")
    discovered = (await client.send("server/discover"))["result"]
    assert (discovered["ttlMs"], discovered["cacheScope"]) == (60_000, "public")
    client.identity = identity("u")
    assert (await client.send("server/discover"))["result"]["cacheScope"] == "private"
    with pytest.raises(ValueError, match="no cache hints for tools/call"):
        MCPServer("bad", cache_hints={"tools/call": CacheHint(1)})
    with pytest.raises(ValueError, match="ttl_ms"):
        CacheHint(-1)
