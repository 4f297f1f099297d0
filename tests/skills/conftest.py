"""Shared helpers of the skills tests: a server over a temporary tree, and calling its tools."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import pytest

from trimcp.config import SkillsSettings
from trimcp.server import MCPServer
from trimcp.skills import build_server
from trimcp.testing import InMemoryClient, open_in_memory_client

if TYPE_CHECKING:
    from pathlib import Path

    from trimcp.protocol import ClientCapabilities

ALL_CATEGORIES = ("read", "search", "vcs", "write", "execute")


def skills_settings(root: Path, **changes: Any) -> SkillsSettings:
    """``SkillsSettings`` rooted at ``root`` with ``changes`` applied."""
    return dataclasses.replace(SkillsSettings(), roots=(str(root),), **changes)


@pytest.fixture
def jail_root(tmp_path: Path) -> Path:
    """An empty folder to be the jail's root; ``tmp_path / "outside"`` lies beside it."""
    root = tmp_path / "jail"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    return root


@asynccontextmanager
async def skills_client(
    root: Path,
    *,
    capabilities: ClientCapabilities | None = None,
    handlers: dict[str, Any] | None = None,
    **changes: Any,
) -> AsyncIterator[InMemoryClient]:
    """A scripted client of a skills server rooted at ``root`` (all categories unless told)."""
    changes.setdefault("enable", ALL_CATEGORIES)
    server = build_server(skills_settings(root, **changes))
    async with open_in_memory_client(
        server, capabilities=capabilities, handlers=handlers
    ) as client:
        yield client


async def call(client: InMemoryClient, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call ``tool`` and return the result object (``content``, ``isError``, ...)."""
    result: dict[str, Any] = await client.request(
        "tools/call", {"name": tool, "arguments": arguments}
    )
    return result


def text_of(result: dict[str, Any]) -> str:
    """The text blocks of a tool result, joined by newlines."""
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


ServerFactory = Callable[..., MCPServer]
