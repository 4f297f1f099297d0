"""A backend's sampling, elicitation and roots requests reach the client whose call caused them.

In memory: a local ``MCPServer`` backend whose tools call ``ctx.sample`` / ``ctx.elicit`` /
``ctx.list_roots``, the gateway in front, and scripted downstream clients answering; each
side in either era (``backend_era``: the backend asks with requests, or with
``InputRequiredResult`` rounds the gateway's client session answers; ``client_era``: the
gateway asks the client with requests, or with ``InputRequiredResult`` rounds while the
backend call waits, parked). Also: refusals (outside any call, a client without the
capability, two clients' calls in flight) and a subscription restored when the backend
reconnects.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio

from tests.gateway.conftest import Era, backend_options, session_options
from trimcp.client import ClientHandlers, ElicitRequest, SamplingRequest, SamplingResult
from trimcp.errors import JsonRpcError
from trimcp.gateway import Gateway
from trimcp.protocol import ElicitResult, Root
from trimcp.server import Context, MCPServer
from trimcp.testing import open_client_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.client import ClientSession

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class _Asker:
    """A backend that asks its client things while serving calls."""

    def __init__(self) -> None:
        self.server = MCPServer("asker")
        self.kept: list[Context] = []
        self.declared: set[tuple[bool, bool]] = set()
        self.entered = trio.Event()
        self.release = trio.Event()
        server = self.server

        @server.tool()
        async def sample(prompt: str, ctx: Context) -> str:
            """Ask the client's model."""
            return (await ctx.sample(prompt, max_tokens=10)).text

        @server.tool()
        async def ask_name(ctx: Context) -> str:
            """Ask the user for a name."""
            answer = await ctx.elicit("Your name?", NAME_SCHEMA)
            return f"{answer.action}:{answer.content}"

        @server.tool()
        async def roots(ctx: Context) -> str:
            """The client's roots."""
            declared = ctx.session.client_capabilities
            self.declared.add((declared.roots, declared.roots_list_changed))
            return ",".join(root.uri for root in await ctx.list_roots())

        @server.tool()
        async def sample_refused(ctx: Context) -> str:
            """Sample, and say how it was refused."""
            try:
                await ctx.sample("hi", max_tokens=10)
            except JsonRpcError as exc:
                return f"{exc.code}: {exc}"
            return "not refused"

        @server.tool()
        async def keep(ctx: Context) -> str:
            """Keep the context for after the call."""
            self.kept.append(ctx)
            return "kept"

        @server.tool()
        async def hold() -> str:
            """Stay in flight until released."""
            self.entered.set()
            await self.release.wait()
            return "released"

        @server.resource("note://asker/one")
        def one() -> str:
            return "one"


async def _sampling(request: SamplingRequest) -> SamplingResult:
    text = request.messages[0]["content"]["text"]  # type: ignore[index]
    return SamplingResult(content={"type": "text", "text": f"model says {text}"}, model="m1")


async def _elicitation(request: ElicitRequest) -> ElicitResult:
    assert request.message == "Your name?"
    return ElicitResult(action="accept", content={"name": "Ada"})


FULL = ClientHandlers(
    sampling=_sampling,
    elicitation=_elicitation,
    roots=[Root(uri="file:///work/project", name="project")],
)


@asynccontextmanager
async def _gateway(asker: _Asker, era: Era = "modern") -> AsyncIterator[Gateway]:
    gateway = Gateway(local=[("asker", asker.server)], local_options=backend_options(era, "asker"))
    async with gateway.open():
        await gateway.wait_settled()
        yield gateway


@asynccontextmanager
async def _client(
    gateway: Gateway, handlers: ClientHandlers, era: Era = "modern"
) -> AsyncIterator[ClientSession]:
    async with open_client_pair(gateway, handlers=handlers, options=session_options(era)) as c:
        yield c


async def test_sampling_elicitation_and_roots_reach_the_calling_client(
    backend_era: Era, client_era: Era
) -> None:
    asker = _Asker()
    async with (
        _gateway(asker, backend_era) as gateway,
        _client(gateway, FULL, client_era) as client,
    ):
        assert (await client.call_tool("asker__sample", {"prompt": "hi"})).text == "model says hi"
        assert (await client.call_tool("asker__ask_name", {})).text == "accept:{'name': 'Ada'}"
        assert (await client.call_tool("asker__roots", {})).text == "file:///work/project"


async def test_roots_are_each_callers_own_and_none_without_the_capability(
    backend_era: Era, client_era: Era
) -> None:
    asker = _Asker()
    other = ClientHandlers(roots=[Root(uri="file:///work/other")])
    async with (
        _gateway(asker, backend_era) as gateway,
        _client(gateway, FULL, client_era) as first,
        _client(gateway, other, client_era) as second,
        _client(gateway, ClientHandlers(sampling=_sampling), client_era) as rootless,
    ):
        for _ in range(2):  # asked again on every call: no answer is kept for another
            assert (await first.call_tool("asker__roots", {})).text == "file:///work/project"
            assert (await second.call_tool("asker__roots", {})).text == "file:///work/other"
            result = await rootless.call_tool("asker__roots", {})
            assert not result.is_error
            assert result.text == ""  # declared no roots: named no folders
        # What the backend was told: roots, and no promise of listChanged.
        assert asker.declared == {(True, False)}


async def _refuse(request: SamplingRequest) -> SamplingResult:
    raise JsonRpcError(-1, "the user rejected the sampling request")


async def test_a_session_client_refusal_goes_back_to_a_legacy_backend() -> None:
    asker = _Asker()
    async with (
        _gateway(asker, "legacy") as gateway,
        _client(gateway, ClientHandlers(sampling=_refuse), "legacy") as client,
    ):
        result = await client.call_tool("asker__sample_refused", {})
        assert result.text == "-1: the user rejected the sampling request"


async def test_a_session_client_refusal_ends_a_modern_backend_s_call() -> None:
    # A round cannot carry an error back to a 2026-07-28 backend: the call ends with it.
    asker = _Asker()
    async with (
        _gateway(asker, "modern") as gateway,
        _client(gateway, ClientHandlers(sampling=_refuse), "legacy") as client,
    ):
        with pytest.raises(JsonRpcError) as caught:
            await client.call_tool("asker__sample_refused", {})
        assert caught.value.code == -1
        assert (await client.call_tool("asker__keep", {})).text == "kept"  # still serving


async def test_refused_outside_any_call(client_era: Era) -> None:
    # Only a 2025-11-25 backend can ask outside a call (a request of its own).
    asker = _Asker()
    async with (
        _gateway(asker, "legacy") as gateway,
        _client(gateway, FULL, client_era) as client,
    ):
        assert (await client.call_tool("asker__keep", {})).text == "kept"
        with pytest.raises(JsonRpcError) as caught:
            await asker.kept[0].sample("late", max_tokens=10)
        assert caught.value.code == -32600
        assert "'asker'" in str(caught.value)
        assert "no call to it is in flight" in str(caught.value)
        # Roots asked outside any call name no folders (the gateway's own requests, such
        # as reading a backend's catalog, have no client behind them).
        assert await asker.kept[0].list_roots() == []


async def test_refused_when_the_calling_client_lacks_the_capability(client_era: Era) -> None:
    # A 2025-11-25 backend gets -32601, as from a client without the capability.
    asker = _Asker()
    handlers = ClientHandlers(roots=[Root(uri="file:///x")])
    async with (
        _gateway(asker, "legacy") as gateway,
        _client(gateway, handlers, client_era) as client,
    ):
        result = await client.call_tool("asker__sample_refused", {})
        assert result.text.startswith("-32601: ")
        assert "did not declare sampling" in result.text
        result = await client.call_tool("asker__ask_name", {})
        assert result.is_error
        assert "did not declare elicitation.form" in result.text


async def test_a_modern_backend_s_call_ends_with_32021_when_the_client_lacks_it(
    client_era: Era,
) -> None:
    # A 2026-07-28 backend cannot be told in a round: the call ends as it does for a
    # client that declared nothing, with -32021 naming the capability.
    asker = _Asker()
    handlers = ClientHandlers(roots=[Root(uri="file:///x")])
    async with (
        _gateway(asker, "modern") as gateway,
        _client(gateway, handlers, client_era) as client,
    ):
        with pytest.raises(JsonRpcError) as caught:
            await client.call_tool("asker__sample_refused", {})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"sampling": {}}}
        assert "did not declare sampling" in str(caught.value)
        with pytest.raises(JsonRpcError) as caught:
            await client.call_tool("asker__ask_name", {})
        assert caught.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_a_legacy_backend_s_ask_is_refused_when_two_clients_calls_are_in_flight(
    client_era: Era,
) -> None:
    asker = _Asker()
    async with (
        _gateway(asker, "legacy") as gateway,
        _client(gateway, FULL, client_era) as first,
    ):
        async with _client(gateway, FULL, client_era) as second, trio.open_nursery() as nursery:
            held: list[str] = []

            async def hold() -> None:
                held.append((await second.call_tool("asker__hold", {})).text)

            nursery.start_soon(hold)
            with trio.fail_after(5):
                await asker.entered.wait()
            result = await first.call_tool("asker__sample_refused", {})
            assert result.text.startswith("-32600: ")
            assert "2 clients at once" in result.text
            asker.release.set()
        assert held == ["released"]
        # One client's call in flight again: relayed.
        assert (await first.call_tool("asker__sample", {"prompt": "x"})).text == "model says x"


async def test_a_modern_backend_s_ask_reaches_its_own_caller_among_several(
    client_era: Era,
) -> None:
    # A 2026-07-28 backend asks inside the call: the caller is known exactly.
    asker = _Asker()
    async with (
        _gateway(asker, "modern") as gateway,
        _client(gateway, FULL, client_era) as first,
        _client(gateway, FULL, client_era) as second,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(second.call_tool, "asker__hold", {})
        with trio.fail_after(5):
            await asker.entered.wait()
        assert (await first.call_tool("asker__sample", {"prompt": "x"})).text == "model says x"
        asker.release.set()


async def test_several_calls_of_one_session_still_reach_it(backend_era: Era) -> None:
    # A 2026-07-28 client has no session: two of its calls are two callers, so only a
    # session client (or a 2026-07-28 backend, test above) is known to be one client.
    asker = _Asker()
    async with (
        _gateway(asker, backend_era) as gateway,
        _client(gateway, FULL, "legacy") as client,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(client.call_tool, "asker__hold", {})
        with trio.fail_after(5):
            await asker.entered.wait()
        result = await client.call_tool("asker__sample", {"prompt": "y"})
        assert result.text == "model says y"
        asker.release.set()


async def test_subscription_is_restored_after_the_backend_reconnects(
    backend_era: Era, client_era: Era
) -> None:
    asker = _Asker()
    updated: list[str] = []
    arrived = trio.Event()

    def on_updated(uri: str) -> None:
        updated.append(uri)
        arrived.set()

    changes = trio.Semaphore(0, max_value=100)

    def on_changed() -> None:
        changes.release()

    handlers = ClientHandlers(on_resource_updated=on_updated, on_tools_changed=on_changed)
    async with (
        _gateway(asker, backend_era) as gateway,
        _client(gateway, handlers, client_era) as client,
    ):
        await client.subscribe_resource("note://asker/one")
        assert list(asker.server.subscribed_uris()) == ["note://asker/one"]
        before = await gateway.manager.get_connection("asker")
        await gateway.manager.reconnect("asker")
        with trio.fail_after(5):
            await changes.acquire()  # its tools went away with the old connection...
            await changes.acquire()  # ...and came back with the new one
        assert await gateway.manager.get_connection("asker") is not before
        # The new backend session is subscribed (the old one's subscription went with it).
        assert list(asker.server.subscribed_uris()) == ["note://asker/one"]
        await asker.server.notify_resource_updated("note://asker/one")
        with trio.fail_after(5):
            await arrived.wait()
        assert updated == ["note://asker/one"]
