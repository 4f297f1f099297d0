"""The official MCP Python SDK (``mcp``, test-only) drives ``trimcp skills``.

Every test runs twice: over stdio (the SDK starts ``python -m trimcp skills --root ROOT``
and talks to its stdin/stdout) and over Streamable HTTP (``trimcp skills --http --port 0``
listens on 127.0.0.1 and a free port the OS picks, which it prints on stderr; the SDK's
``streamable_http_client`` connects). The SDK client is anyio-based and runs under trio here.
Each test starts and stops its own server process, over a small tree with a git repository
in ``tmp_path / "jail"`` and a secret beside it in ``tmp_path / "outside"``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import anyio
import mcp_types as types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from mcp.client.session import ClientRequestContext

# The tools of the categories on by default, and of those off by default (issue 12).
DEFAULT_TOOLS = {
    "read_file",
    "read_many_files",
    "file_info",
    "list_directory",
    "directory_tree",
    "glob",
    "grep",
    "concat_files",
    "git_status",
    "git_log",
    "git_diff",
    "git_show",
    "git_blame",
    "git_branches",
}
OFF_BY_DEFAULT = {
    "write_file",
    "edit_file",
    "append_file",
    "make_directory",
    "move",
    "copy",
    "delete",
    "run_command",
}
README = "# hello skills\n"
SECRET = "TOP SECRET outside the jail\n"
URL_LINE = "trimcp skills: MCP over Streamable HTTP at "

pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize(
        "transport",
        [
            "stdio",
            # The SDK's HTTP client leaves its own httpx2 response generators to the garbage
            # collector when it closes; trio reports them as unraisable ResourceWarnings.
            pytest.param(
                "http",
                marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
            ),
        ],
    ),
    # mcp 2.3.0 deprecates roots for its 2026-07-28 protocol; they are a current feature of
    # 2025-11-25, which these tests speak (mode="legacy").
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def _git(root: Path, *args: str) -> None:
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(root.parent),
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``jail/``: README.md, src/main.py, committed to git, then README.md changed."""
    root = tmp_path / "jail"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# first\n", encoding="utf-8")
    (root / "src" / "main.py").write_text("def needle() -> None:\n    pass\n", encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "README.md", "src/main.py")
    _git(root, "commit", "-q", "-m", "first")
    (root / "README.md").write_text(README, encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    return root


def run(
    transport: str,
    root: Path,
    test: Callable[[Client], Awaitable[None]],
    **options: Any,
) -> None:
    """Connect an SDK client to a fresh ``trimcp skills`` over ``root``, run ``test``, stop it.

    The server runs in ``root``'s parent with ``TRIMCP_CONFIG`` unset, so no configuration
    file is read and the flags alone decide.
    """
    options.setdefault("mode", "legacy")
    command = ["-m", "trimcp", "skills", "--root", str(root), "--log-level", "warning"]
    env = {key: value for key, value in os.environ.items() if key != "TRIMCP_CONFIG"}

    async def over_stdio() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=command, cwd=root.parent, env=env
        )
        with (root.parent / "stderr.log").open("w") as log:
            async with Client(
                stdio_client(params, errlog=log), read_timeout_seconds=10, **options
            ) as client:
                with anyio.fail_after(20):
                    await test(client)

    async def over_http() -> None:
        log_path = root.parent / "stderr.log"
        with log_path.open("w") as log:
            process = await anyio.open_process(
                [sys.executable, *command, "--http", "--port", "0"],
                stderr=log,
                cwd=root.parent,
                env=env,
            )
            try:
                url = await _listening_url(log_path)
                async with Client(
                    streamable_http_client(url), read_timeout_seconds=10, **options
                ) as client:
                    with anyio.fail_after(20):
                        await test(client)
            finally:
                process.terminate()
                await process.wait()

    anyio.run(over_stdio if transport == "stdio" else over_http, backend="trio")


async def _listening_url(log: Path) -> str:
    """Wait (up to 10 s) for the line ``trimcp skills --http`` prints with its URL."""
    with anyio.fail_after(10):
        while True:
            for line in (await anyio.Path(log).read_text()).splitlines():
                if line.startswith(URL_LINE):
                    return line.removeprefix(URL_LINE).strip()
            await anyio.sleep(0.02)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def _tools(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


async def _call(client: Client, name: str, **arguments: Any) -> types.CallToolResult:
    """Call ``name`` with those of ``arguments`` its input schema has (names may vary)."""
    tools = await _tools(client)
    assert name in tools, f"{name} is not registered; the tools are {sorted(tools)}"
    properties = tools[name].input_schema.get("properties", {})
    return await client.call_tool(
        name, {key: value for key, value in arguments.items() if key in properties}
    )


def test_initialize_and_the_default_tools(transport: str, tree: Path) -> None:
    async def body(client: Client) -> None:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None
        assert client.server_info.name == "trimcp-skills"
        assert client.server_capabilities.tools is not None
        tools = await _tools(client)
        assert not set(tools) & OFF_BY_DEFAULT
        assert set(tools) >= DEFAULT_TOOLS, f"missing: {sorted(DEFAULT_TOOLS - set(tools))}"
        for tool in tools.values():
            assert tool.annotations is not None, tool.name
            assert tool.annotations.read_only_hint is True, tool.name
            assert tool.annotations.open_world_hint is False, tool.name

    run(transport, tree, body)


def test_list_and_read(transport: str, tree: Path) -> None:
    async def body(client: Client) -> None:
        listed = await _call(client, "list_directory", path=str(tree))
        assert not listed.is_error, text_of(listed)
        assert "README.md" in text_of(listed)
        assert "src" in text_of(listed)

        read = await _call(client, "read_file", path="README.md")
        assert not read.is_error, text_of(read)
        assert "hello skills" in text_of(read)

    run(transport, tree, body)


def test_grep(transport: str, tree: Path) -> None:
    async def body(client: Client) -> None:
        found = await _call(client, "grep", pattern="needle", path=str(tree))
        assert not found.is_error, text_of(found)
        assert "main.py" in text_of(found)
        assert "def needle" in text_of(found)

    run(transport, tree, body)


def test_git_status(transport: str, tree: Path) -> None:
    async def body(client: Client) -> None:
        status = await _call(client, "git_status", repo=str(tree))
        assert not status.is_error, text_of(status)
        assert "README.md" in text_of(status)
        assert "main.py" not in text_of(status)

    run(transport, tree, body)


def test_paths_outside_the_root_are_refused_without_leaking(transport: str, tree: Path) -> None:
    async def body(client: Client) -> None:
        for path in ("../outside/secret.txt", str(tree.parent / "outside" / "secret.txt")):
            refused = await _call(client, "read_file", path=path)
            assert refused.is_error
            assert "TOP SECRET" not in text_of(refused)

    run(transport, tree, body)


def test_files_are_resources(transport: str, tree: Path) -> None:
    offered: list[bool] = []
    expected = os.path.realpath(tree / "README.md")

    async def body(client: Client) -> None:
        offered.append(client.server_capabilities.resources is not None)
        if not offered[0]:
            return
        uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
        readme = [uri for uri in uris if uri.startswith("file://") and uri.endswith("/README.md")]
        assert readme, uris
        assert unquote(urlsplit(readme[0]).path) == expected
        (contents,) = (await client.read_resource(readme[0])).contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == README

    run(transport, tree, body)
    if not offered[0]:
        pytest.skip("the server offers no resources")


def test_client_roots_narrow_the_jail(transport: str, tree: Path) -> None:
    src = tree / "src"

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=src.as_uri(), name="src")])

    async def body(client: Client) -> None:
        inside = await _call(client, "read_file", path=str(src / "main.py"))
        assert not inside.is_error, text_of(inside)
        assert "def needle" in text_of(inside)
        narrowed = await _call(client, "read_file", path=str(tree / "README.md"))
        assert narrowed.is_error
        assert "hello skills" not in text_of(narrowed)

    run(transport, tree, body, list_roots_callback=roots)
