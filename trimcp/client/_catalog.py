"""What a connected server offers (``Catalog``), and the ``Upstream`` the host reads it from.

A ``Connection`` reads the whole catalog once connected (``read_catalog``) and replaces one
kind when the server says it changed (``replace_items``); the host shows tools, resources and
prompts from these snapshots without asking the server each time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, final

from trimcp.errors import JsonRpcError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.client.session._core import ProgressCallback
    from trimcp.protocol import JsonObject

__all__ = ["Catalog", "CatalogKind", "Upstream", "read_catalog", "replace_items"]

logger = logging.getLogger(__name__)

CatalogKind = Literal["tools", "resources", "resourceTemplates", "prompts"]


class Upstream(Protocol):
    """A connected server, as the host uses it (``_upstream.py`` adapts a ``ClientSession``)."""

    async def list_all(self, kind: CatalogKind) -> list[JsonObject]:
        """Every item of ``kind`` (all pages), as the server sent them; ``[]`` if not offered."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        """Call a tool; return its ``CallToolResult`` as sent."""
        ...

    async def wait_closed(self) -> BaseException | None:
        """Return when the connection has ended, with why (``None``: closed by us)."""
        ...


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """What a connected server offers, as it sent it."""

    tools: tuple[JsonObject, ...] = ()
    resources: tuple[JsonObject, ...] = ()
    templates: tuple[JsonObject, ...] = ()
    prompts: tuple[JsonObject, ...] = ()


def replace_items(catalog: Catalog, kind: CatalogKind, items: tuple[JsonObject, ...]) -> Catalog:
    if kind == "tools":
        return Catalog(
            tools=items,
            resources=catalog.resources,
            templates=catalog.templates,
            prompts=catalog.prompts,
        )
    if kind == "resources":
        return Catalog(
            tools=catalog.tools,
            resources=items,
            templates=catalog.templates,
            prompts=catalog.prompts,
        )
    if kind == "resourceTemplates":
        return Catalog(
            tools=catalog.tools,
            resources=catalog.resources,
            templates=items,
            prompts=catalog.prompts,
        )
    return Catalog(
        tools=catalog.tools, resources=catalog.resources, templates=catalog.templates, prompts=items
    )


async def read_catalog(upstream: Upstream) -> Catalog:
    kinds: Sequence[CatalogKind] = ("tools", "resources", "resourceTemplates", "prompts")
    found: dict[str, tuple[JsonObject, ...]] = {}
    for kind in kinds:
        try:
            found[kind] = tuple(await upstream.list_all(kind))
        except JsonRpcError as exc:
            # The server refused the listing (a bug of its own, or a method it lacks): it
            # offers nothing of that kind, and its other features still work.
            logger.warning("listing %s failed: %s", kind, exc)
            found[kind] = ()
    return Catalog(
        tools=found["tools"],
        resources=found["resources"],
        templates=found["resourceTemplates"],
        prompts=found["prompts"],
    )
