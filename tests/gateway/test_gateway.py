"""The gateway in memory: local MCPServer backends, a real client session in front.

Where the era matters, each test runs with the backends in either era (``backend_era``) and
the client in either era (``client_era``, ``conftest.py``).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio

from tests.gateway.conftest import Era, backend_options, session_options
from trimcp.client import ClientHandlers, ClientSession, LogMessage, Progress, prompt_ref
from trimcp.config import GatewaySettings
from trimcp.errors import JsonRpcError
from trimcp.gateway import Gateway
from trimcp.server import Context, MCPServer, ToolAnnotations
from trimcp.testing import open_client_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


def _alpha() -> MCPServer:
    server = MCPServer("alpha")

    @server.tool(title="Search alpha", annotations=ToolAnnotations(read_only_hint=True))
    async def search(query: str) -> str:
        """Search alpha."""
        return f"alpha:{query}"

    @server.tool()
    async def slow(steps: int, ctx: Context) -> str:
        """Report progress, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        await ctx.log("warning", "slow is done")
        return "done"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hello {name}"

    @server.resource("note://alpha/one")
    def one() -> str:
        return "alpha one"

    @server.resource("note://alpha/item/{id}")
    def item(id: str) -> str:  # noqa: A002
        return f"alpha item {id}"

    return server


def _beta() -> MCPServer:
    server = MCPServer("beta")

    @server.tool()
    async def search(query: str) -> str:
        """Search beta."""
        return f"beta:{query}"

    @server.tool()
    async def delete_all() -> str:
        """Dangerous."""
        return "gone"

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        """Block until cancelled."""
        await trio.sleep_forever()
        return "never"

    return server


@asynccontextmanager
async def _gateway(
    settings: GatewaySettings | None = None,
    *,
    handlers: ClientHandlers | None = None,
    servers: list[tuple[str, MCPServer]] | None = None,
    page_size: int = 50,
    eras: tuple[Era, Era] = ("modern", "modern"),
) -> AsyncIterator[tuple[Gateway, ClientSession]]:
    """A gateway over ``servers`` (backends in ``eras[0]``), a client (``eras[1]``) of it."""
    local = servers if servers is not None else [("alpha", _alpha()), ("beta", _beta())]
    options = backend_options(eras[0], *(name for name, _ in local))
    gateway = Gateway(local=local, settings=settings, page_size=page_size, local_options=options)
    async with gateway.open():
        await gateway.wait_settled()
        client_options = session_options(eras[1])
        async with open_client_pair(gateway, handlers=handlers, options=client_options) as client:
            yield gateway, client


async def test_tools_are_namespaced_and_pass_through_unchanged(
    backend_era: Era, client_era: Era
) -> None:
    async with _gateway(eras=(backend_era, client_era)) as (_, client):
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) == {
            "alpha__search",
            "alpha__slow",
            "beta__search",
            "beta__delete_all",
            "beta__wait_forever",
        }
        search = tools["alpha__search"].raw
        assert search["title"] == "Search alpha"
        assert search["annotations"] == {"readOnlyHint": True}
        assert search["description"] == "Search alpha."
        result = await client.call_tool("beta__search", {"query": "x"})
        assert result.text == "beta:x"
        assert not result.is_error


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("{server}_{name}", "alpha_search"),
        ("mcp__{server}__{name}", "mcp__alpha__search"),
    ],
)
async def test_other_namespace_schemes(scheme: str, expected: str) -> None:
    async with _gateway(GatewaySettings(namespace=scheme)) as (_, client):
        names = {tool.name for tool in await client.list_tools()}
        assert expected in names
        assert (await client.call_tool(expected, {"query": "q"})).text == "alpha:q"


async def test_bare_names_first_backend_wins_and_clash_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with _gateway(GatewaySettings(namespace="none")) as (gateway, client):
        names = [tool.name for tool in await client.list_tools()]
        assert names.count("search") == 1
        assert (await client.call_tool("search", {"query": "q"})).text == "alpha:q"
        await gateway.wait_settled()
    hidden = [r for r in caplog.records if "'search' of backend 'beta' is hidden" in r.message]
    assert len(hidden) == 1


async def test_prefix_override_and_allow_deny() -> None:
    settings = GatewaySettings(
        prefixes=("beta=b",), allow=("b__*", "alpha__search"), deny=("*__delete_*",)
    )
    async with _gateway(settings) as (_, client):
        names = {tool.name for tool in await client.list_tools()}
        assert names == {"alpha__search", "b__search", "b__wait_forever"}
        with pytest.raises(JsonRpcError):
            await client.call_tool("b__delete_all", {})


async def test_pagination_over_backends() -> None:
    async with _gateway(page_size=2) as (_, client):
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await client.list_tools_page(cursor)
            pages += 1
            seen.extend(tool.name for tool in page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 3
        assert len(seen) == len(set(seen)) == 5


async def test_progress_and_logs_are_relayed(backend_era: Era, client_era: Era) -> None:
    logs: list[LogMessage] = []
    logged = trio.Event()

    def on_log(message: LogMessage) -> None:
        logs.append(message)
        logged.set()

    handlers = ClientHandlers(on_log=on_log)
    progress: list[Progress] = []
    async with _gateway(handlers=handlers, eras=(backend_era, client_era)) as (_, client):
        result = await client.call_tool("alpha__slow", {"steps": 3}, on_progress=progress.append)
        assert result.text == "done"
        assert [p.progress for p in progress] == [1, 2, 3]
        assert progress[-1].message == "step 3"
        with trio.fail_after(5):
            await logged.wait()
    assert logs[0].logger == "alpha"
    assert logs[0].data == "slow is done"


async def test_prompts_resources_and_templates_route_to_their_backend(
    backend_era: Era, client_era: Era
) -> None:
    async with _gateway(eras=(backend_era, client_era)) as (_, client):
        prompts = [prompt.name for prompt in await client.list_prompts()]
        assert prompts == ["alpha__greet"]
        got = await client.get_prompt("alpha__greet", {"name": "Ada"})
        assert "hello Ada" in str(got.messages)
        uris = [resource.uri for resource in await client.list_resources()]
        assert uris == ["note://alpha/one"]
        templates = [t.uri_template for t in await client.list_resource_templates()]
        assert templates == ["note://alpha/item/{id}"]
        assert (await client.read_resource("note://alpha/one"))[0].text == "alpha one"
        assert (await client.read_resource("note://alpha/item/7"))[0].text == "alpha item 7"
        with pytest.raises(JsonRpcError):
            await client.read_resource("note://nowhere")


async def test_cancelling_downstream_cancels_the_backend_call(
    backend_era: Era, client_era: Era
) -> None:
    async with _gateway(eras=(backend_era, client_era)) as (_, client):
        with trio.move_on_after(0.2) as scope:
            await client.call_tool("beta__wait_forever", {})
        assert scope.cancelled_caught
        # The gateway and the backend still answer.
        assert (await client.call_tool("beta__search", {"query": "z"})).text == "beta:z"


async def test_backend_catalog_change_becomes_list_changed(
    backend_era: Era, client_era: Era
) -> None:
    alpha = _alpha()
    changed = trio.Event()
    handlers = ClientHandlers(on_tools_changed=changed.set)
    eras = (backend_era, client_era)
    async with _gateway(handlers=handlers, servers=[("alpha", alpha)], eras=eras) as (_, client):

        async def extra() -> str:
            """Added later."""
            return "extra"

        alpha.add_tool(extra)
        with trio.fail_after(5):
            await changed.wait()
        names = {tool.name for tool in await client.list_tools()}
        assert "alpha__extra" in names


async def test_unknown_tool_is_a_protocol_error(backend_era: Era, client_era: Era) -> None:
    async with _gateway(eras=(backend_era, client_era)) as (_, client):
        with pytest.raises(JsonRpcError):
            await client.call_tool("nobody__search", {})


REGION_SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
}


def _gamma() -> MCPServer:
    server = MCPServer("gamma")

    @server.tool(description="Look up a region", input_schema=REGION_SCHEMA)
    def lookup(region: str) -> str:
        return f"in {region}"

    @server.prompt()
    def weather(city: str) -> str:
        """The weather of a city."""
        return f"weather in {city}"

    @server.completion()
    async def cities(ref: object, argument: str, value: str, context: object = None) -> list[str]:
        return [city for city in ("Paris", "Perth", "Oslo") if city.startswith(value)]

    return server


async def test_completion_and_header_parameters(backend_era: Era, client_era: Era) -> None:
    servers = [("gamma", _gamma())]
    async with _gateway(servers=servers, eras=(backend_era, client_era)) as (gateway, client):
        completion = await client.complete(prompt_ref("gamma__weather"), "city", "P")
        assert completion.values == ("Paris", "Perth")
        assert (await client.call_tool("gamma__lookup", {"region": "eu"})).text == "in eu"
        # The backend's x-mcp-header annotations, mirrored for 2026-07-28 callers over HTTP.
        assert gateway.header_parameters("gamma__lookup") == {("region",): "Region"}
        assert gateway.header_parameters("gamma__nothing") is None


def _chatty() -> MCPServer:
    server = MCPServer("chatty")

    @server.tool()
    async def talk(ctx: Context) -> str:
        """Log at two levels."""
        await ctx.log("debug", "detail")
        await ctx.log("error", "trouble")
        return "talked"

    return server


@pytest.mark.parametrize(
    ("level", "heard"), [("debug", ["detail", "trouble"]), ("error", ["trouble"])]
)
async def test_each_client_hears_the_backend_s_log_lines_at_its_own_level(
    backend_era: Era, client_era: Era, level: str, heard: list[str]
) -> None:
    # A 2025-11-25 client sets its level with logging/setLevel, a 2026-07-28 one per request
    # in _meta; a 2026-07-28 backend is asked for the least severe level wanted.
    logs: list[object] = []
    handlers = ClientHandlers(on_log=lambda message: logs.append(message.data))
    servers = [("chatty", _chatty())]
    eras = (backend_era, client_era)
    async with _gateway(handlers=handlers, servers=servers, eras=eras) as (_, client):
        await client.set_logging_level(level)
        assert (await client.call_tool("chatty__talk", {})).text == "talked"
        await client.ping()  # a session's log lines may trail the answer: one more trip
    assert logs == heard
