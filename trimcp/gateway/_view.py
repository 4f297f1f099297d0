"""What the gateway offers now: every backend's catalog, renamed and filtered, with routes.

Names (tools and prompts) follow ``[gateway] namespace`` (``trimcp.config.GatewaySettings``):
``"{server}__{name}"`` by default, where ``{server}`` is the backend's prefix (its name, or
its ``prefixes`` override); ``"none"`` (or an empty prefix) shows names bare. When two
backends end up with the same name, the first backend in order keeps it and the later one's
item is left out (logged once per name by the caller, who keeps the log-once set).

Resource URIs and URI templates are **not** rewritten: a URI already names its own scheme and
authority, and clients hand it back verbatim (resources/read, resources/subscribe, resource
links in tool results). A read is routed to the backend that listed the URI, else to the first
backend one of whose templates matches it (RFC 6570 matching, ``trimcp.server.UriTemplate``).
Two backends listing the same URI: the first one wins, like names. This keeps every URI
round-tripping with no encoding to undo, at the cost that a URI no backend lists or matches
cannot be read through the gateway.

Tool items pass through unchanged apart from ``name``: ``title``, ``annotations``, ``icons``,
``inputSchema``, ``outputSchema`` and ``_meta`` are the backend's own.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

from trimcp.errors import TemplateError
from trimcp.server import UriTemplate

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from trimcp.client import CatalogKind
    from trimcp.config import GatewaySettings
    from trimcp.protocol import JsonObject

__all__ = ["Route", "View", "build_view", "exposed_name"]


@final
@dataclass(frozen=True, slots=True)
class Route:
    """Where an offered item comes from: its backend, its own name/URI, the item as offered."""

    backend: str
    name: str
    item: JsonObject


@final
@dataclass(frozen=True, slots=True)
class View:
    """One consistent picture of every connected backend's offer (module docstring)."""

    tools: dict[str, Route] = field(default_factory=dict)
    prompts: dict[str, Route] = field(default_factory=dict)
    resources: dict[str, Route] = field(default_factory=dict)
    templates: dict[str, Route] = field(default_factory=dict)
    #: Names and URIs a later backend also offered, with that backend: for the log-once.
    clashes: tuple[tuple[str, str], ...] = ()

    def resource_backend(self, uri: str) -> str | None:
        """The backend a read or subscription of ``uri`` goes to (module docstring)."""
        route = self.resources.get(uri)
        if route is not None:
            return route.backend
        for template, candidate in self.templates.items():
            try:
                if UriTemplate(template).match(uri) is not None:
                    return candidate.backend
            except TemplateError:
                continue
        return None


def exposed_name(settings: GatewaySettings, backend: str, name: str) -> str:
    """``name`` of ``backend`` as the gateway shows it (``[gateway] namespace``)."""
    prefix = settings.prefix_of(backend)
    if settings.namespace == "none" or not prefix:
        return name
    return settings.namespace.replace("{server}", prefix).replace("{name}", name)


def _offered(settings: GatewaySettings, name: str) -> bool:
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in settings.deny):
        return False
    return not settings.allow or any(fnmatch.fnmatchcase(name, p) for p in settings.allow)


def build_view(
    settings: GatewaySettings,
    catalogs: Sequence[tuple[str, Mapping[CatalogKind, Sequence[JsonObject]]]],
) -> View:
    """Merge ``catalogs`` (in backend order: the first wins a clash) into a ``View``."""
    view = View()
    clashes: list[tuple[str, str]] = []
    for backend, catalog in catalogs:
        for item in catalog.get("tools", ()):
            own = str(item.get("name", ""))
            shown = exposed_name(settings, backend, own)
            if not _offered(settings, shown):
                continue
            _add(view.tools, shown, Route(backend, own, {**item, "name": shown}), clashes)
        for item in catalog.get("prompts", ()):
            own = str(item.get("name", ""))
            shown = exposed_name(settings, backend, own)
            _add(view.prompts, shown, Route(backend, own, {**item, "name": shown}), clashes)
        for item in catalog.get("resources", ()):
            uri = str(item.get("uri", ""))
            _add(view.resources, uri, Route(backend, uri, item), clashes)
        for item in catalog.get("resourceTemplates", ()):
            template = str(item.get("uriTemplate", ""))
            _add(view.templates, template, Route(backend, template, item), clashes)
    return View(view.tools, view.prompts, view.resources, view.templates, tuple(clashes))


def _add(table: dict[str, Route], key: str, route: Route, clashes: list[tuple[str, str]]) -> None:
    if key in table:
        clashes.append((key, route.backend))
        return
    table[key] = route
