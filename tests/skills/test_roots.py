"""The client's MCP roots narrow the jail, never widen it (``Skills.jail_for``).

MCP 2025-11-25, Client Features > Roots
(https://modelcontextprotocol.io/specification/2025-11-25/client/roots): a client that
declares ``roots`` is asked ``roots/list`` once per session, again after it sends
``notifications/roots/list_changed``. Checked through the real tools and the file resources
of a skills server, with a scripted client whose ``roots/list`` answer the test sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from trimcp.errors import InvalidParams, JsonRpcError
from trimcp.protocol import ClientCapabilities
from trimcp.skills import build_server
from trimcp.skills._resources import file_uri
from trimcp.testing import open_in_memory_client

from .conftest import call, skills_client, skills_settings, text_of

if TYPE_CHECKING:
    from pathlib import Path

    from trimcp.protocol import JsonObject
    from trimcp.testing import InMemoryClient

ROOTS = ClientCapabilities(roots=True, roots_list_changed=True)
SECRET = "TOP-SECRET-OUTSIDE-MARKER"


class Roots:
    """The client side of ``roots/list``: answers with ``uris``, counts the questions."""

    def __init__(self, *uris: str) -> None:
        self.uris = list(uris)
        self.asked = 0
        self.hold: trio.Event | None = None  # set: the answer waits for it

    async def __call__(self, params: JsonObject) -> JsonObject:
        self.asked += 1
        answer: JsonObject = {"roots": [{"uri": uri, "name": "r"} for uri in self.uris]}
        if self.hold is not None:
            await self.hold.wait()
        return answer


def root_uri(path: Path) -> str:
    return "file://" + quote(str(path))


@pytest.fixture
def tree(jail_root: Path) -> Path:
    """``jail/a/in.txt``, ``jail/b/other.txt``, ``jail/top.txt``; ``outside/secret.txt``."""
    (jail_root / "a").mkdir()
    (jail_root / "a" / "in.txt").write_text("in a\n")
    (jail_root / "b").mkdir()
    (jail_root / "b" / "other.txt").write_text("in b\n")
    (jail_root / "top.txt").write_text("top\n")
    (jail_root / "my folder").mkdir()
    (jail_root / "my folder" / "spaced.txt").write_text("spaced\n")
    (jail_root.parent / "outside" / "secret.txt").write_text(SECRET)
    (jail_root / "link-out").symlink_to(jail_root.parent / "outside")
    return jail_root


async def readable(client: InMemoryClient, path: Path) -> bool:
    """Whether both ``read_file`` and ``resources/read`` give ``path``; they must agree."""
    tool = await call(client, "read_file", path=str(path))
    if tool["isError"]:
        with pytest.raises(JsonRpcError) as refused:
            await client.request("resources/read", {"uri": file_uri(path)})
        assert refused.value.code == -32002
        return False
    await client.request("resources/read", {"uri": file_uri(path)})
    return True


async def listed(client: InMemoryClient) -> list[str]:
    result: dict[str, Any] = await client.request("resources/list")
    return [item["name"] for item in result["resources"]]


async def test_a_root_inside_the_jail_narrows_it(tree: Path) -> None:
    roots = Roots(root_uri(tree / "a"))
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        inside = await readable(client, tree / "a" / "in.txt")
        beside = await readable(client, tree / "b" / "other.txt")
        relative = await call(client, "read_file", path="in.txt")  # from the first root: a
        refusal = await call(client, "read_file", path=str(tree / "top.txt"))
        names = await listed(client)
    assert (inside, beside) == (True, False)
    assert "in a" in text_of(relative)
    assert f"allowed folders ({tree / 'a'})" in text_of(refusal)
    assert names == ["in.txt"]
    assert roots.asked == 1  # once per session


@pytest.mark.parametrize("above", ["parent", "filesystem root"])
async def test_a_root_above_the_jail_keeps_the_jail(tree: Path, above: str) -> None:
    roots = Roots(root_uri(tree.parent) if above == "parent" else "file:///")
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        inside = await readable(client, tree / "b" / "other.txt")
        outside = await readable(client, tree.parent / "outside" / "secret.txt")
        names = await listed(client)
    assert (inside, outside) == (True, False)
    assert "secret.txt" not in names
    assert "a/in.txt" in names


async def test_roots_that_overlap_none_refuse_every_tool_naming_both(tree: Path) -> None:
    outside = tree.parent / "outside"
    roots = Roots(root_uri(outside))
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        tools: dict[str, Any] = await client.request("tools/list")
        results = {
            tool["name"]: await call(client, tool["name"], **arguments_for(tool, tree))
            for tool in tools["tools"]
        }
        with pytest.raises(JsonRpcError) as read:
            await client.request("resources/read", {"uri": file_uri(tree / "top.txt")})
        with pytest.raises(JsonRpcError) as subscribe:
            await client.request("resources/subscribe", {"uri": file_uri(tree / "top.txt")})
        names = await listed(client)
    assert len(results) >= 10  # the five categories are all there
    messages = {name: text_of(result) for name, result in results.items()}
    for name, result in results.items():
        assert result["isError"], name
        assert SECRET not in messages[name]
        if name != "run_command":  # refused first for not being on the allowlist
            assert f"client's roots ({outside})" in messages[name], (name, messages[name])
            assert f"may use ({tree})" in messages[name], name
    for error in (read.value, subscribe.value):
        assert error.code == -32002
        assert f"client's roots ({outside})" in error.message
    assert names == []
    assert not (tree / "new.txt").exists()


_PATH_NAMES = ("path", "paths", "source", "destination", "cwd", "folder", "root", "repo")


def arguments_for(tool: dict[str, Any], tree: Path) -> dict[str, Any]:
    """Arguments that pass a tool's input schema, every path one inside the jail."""
    schema = tool["inputSchema"]
    arguments = value_for(schema, schema, "", tree)
    if "paths" in schema["properties"]:  # concat_files: paths or a pattern, one of them
        arguments["paths"] = [str(tree / "top.txt")]
    assert isinstance(arguments, dict)
    return arguments


def value_for(  # noqa: PLR0911  (one return per kind of schema)
    schema: dict[str, Any], top: dict[str, Any], name: str, tree: Path
) -> Any:
    """The simplest value ``schema`` accepts (required members only)."""
    if "$ref" in schema:
        return value_for(top["$defs"][schema["$ref"].rsplit("/", 1)[-1]], top, name, tree)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [option for option in schema[key] if option.get("type") != "null"]
            return value_for(options[0], top, name, tree)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            key: value_for(properties[key], top, key, tree) for key in schema.get("required", [])
        }
    if kind == "array":
        return [value_for(schema.get("items", {}), top, name, tree)]
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return str(tree / "new.txt") if name in _PATH_NAMES else "top"


async def test_an_empty_roots_list_narrows_nothing(tree: Path) -> None:
    roots = Roots()
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        found = [await readable(client, tree / name) for name in ("a/in.txt", "b/other.txt")]
    assert found == [True, True]
    assert roots.asked == 1


async def test_roots_that_are_not_local_files_are_ignored(tree: Path) -> None:
    only_others = Roots("https://example.com/repo", "file://example.com" + str(tree / "a"))
    mixed = Roots("https://example.com/repo", root_uri(tree / "a"))
    async with skills_client(
        tree, capabilities=ROOTS, handlers={"roots/list": only_others}
    ) as client:
        untouched = await readable(client, tree / "b" / "other.txt")
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": mixed}) as client:
        narrowed = await readable(client, tree / "b" / "other.txt")
    assert (untouched, narrowed) == (True, False)


async def test_percent_encoded_and_localhost_roots(tree: Path) -> None:
    roots = Roots("file://localhost" + quote(str(tree / "my folder")))
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        found = [await readable(client, tree / p) for p in ("my folder/spaced.txt", "top.txt")]
    assert found == [True, False]


@pytest.mark.parametrize("case", ["symlink out", "a file", "missing folder"])
async def test_a_root_that_is_no_folder_inside_counts_for_nothing(tree: Path, case: str) -> None:
    """Resolved first: a symlink inside the jail pointing out widens nothing."""
    target = {"symlink out": "link-out", "a file": "top.txt", "missing folder": "gone"}[case]
    roots = Roots(root_uri(tree / target))
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        via_link = await call(client, "read_file", path=str(tree / "link-out" / "secret.txt"))
        inside = await call(client, "read_file", path=str(tree / "top.txt"))
    assert via_link["isError"]
    assert SECRET not in text_of(via_link)
    assert inside["isError"]
    assert "overlap none" in text_of(inside)


async def test_list_changed_makes_the_next_call_ask_again(tree: Path) -> None:
    roots = Roots(root_uri(tree / "a"))
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        before = [await readable(client, tree / p) for p in ("a/in.txt", "b/other.txt")]
        asked_before = roots.asked
        roots.uris = [root_uri(tree / "b")]
        still = await readable(client, tree / "a" / "in.txt")  # not told yet: kept
        await client.notify("notifications/roots/list_changed")
        await wait_all_tasks_blocked()
        after = [await readable(client, tree / p) for p in ("a/in.txt", "b/other.txt")]
    assert (before, asked_before, still) == ([True, False], 1, True)
    assert after == [False, True]
    assert roots.asked == 2


async def test_a_change_while_the_roots_are_being_asked_is_not_lost(tree: Path) -> None:
    """The answer in flight when list_changed arrives serves its call, but is not kept."""
    roots = Roots(root_uri(tree / "a"))
    roots.hold = trio.Event()
    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": roots}) as client:
        pending = await client.start_request(
            "tools/call", {"name": "read_file", "arguments": {"path": str(tree / "a/in.txt")}}
        )
        await wait_all_tasks_blocked()
        assert roots.asked == 1  # the answer (with a) waits
        await client.notify("notifications/roots/list_changed")
        await wait_all_tasks_blocked()
        roots.hold.set()
        first = await client.wait_response(pending)
        roots.hold = None
        roots.uris = [root_uri(tree / "b")]
        now = await readable(client, tree / "b" / "other.txt")
    assert not first["isError"]
    assert now
    assert roots.asked == 2


async def test_a_client_without_roots_is_never_asked(tree: Path) -> None:
    roots = Roots(root_uri(tree / "a"))
    async with skills_client(tree, handlers={"roots/list": roots}) as client:
        found = [await readable(client, tree / p) for p in ("a/in.txt", "b/other.txt")]
        asked = [r.method for r in client.server_requests]
    assert found == [True, True]
    assert roots.asked == 0
    assert asked == []


async def test_a_client_that_cannot_list_its_roots_gets_refusals(tree: Path) -> None:
    async def refuse(params: JsonObject) -> JsonObject:
        raise InvalidParams("no roots today")

    async with skills_client(tree, capabilities=ROOTS, handlers={"roots/list": refuse}) as client:
        result = await call(client, "read_file", path=str(tree / "top.txt"))
        with pytest.raises(JsonRpcError) as read:
            await client.request("resources/read", {"uri": file_uri(tree / "top.txt")})
    assert result["isError"]
    assert "did not list them" in text_of(result)
    assert read.value.code == -32002
    assert "did not list them" in read.value.message


async def test_each_session_has_its_own_roots(tree: Path) -> None:
    """Two sessions of one server: the roots of one never narrow or widen the other."""
    server = build_server(skills_settings(tree))
    only_a, only_b = Roots(root_uri(tree / "a")), Roots(root_uri(tree / "b"))
    async with (
        open_in_memory_client(server, capabilities=ROOTS, handlers={"roots/list": only_a}) as a,
        open_in_memory_client(server, capabilities=ROOTS, handlers={"roots/list": only_b}) as b,
        open_in_memory_client(server) as plain,
    ):
        seen = {
            name: [await readable(client, tree / p) for p in ("a/in.txt", "b/other.txt")]
            for name, client in (("a", a), ("b", b), ("plain", plain))
        }
        blob = await plain.request("resources/read", {"uri": file_uri(tree / "top.txt")})
    assert seen == {"a": [True, False], "b": [False, True], "plain": [True, True]}
    assert blob["contents"][0]["text"] == "top\n"  # type: ignore[index,call-overload]
