"""What a server offers: its tools, resources, templates, prompts and completion handler.

Plain registries keyed by name or URI, in registration order (the order ``*/list``
returns). No I/O and no notifications: ``MCPServer`` tells sessions about changes.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

from trimcp.errors import ResourceNotFound

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject
    from trimcp.server._agent_skills import SkillDirectory
    from trimcp.server._completion import CompletionHandler
    from trimcp.server._context import Context
    from trimcp.server._prompts import PromptEntry
    from trimcp.server._resources import ResourceEntry
    from trimcp.server._tools import ToolEntry

__all__ = ["Catalog"]


@typing.final
class Catalog:
    """The registries of one server."""

    __slots__ = ("completion", "prompts", "resources", "skills", "templates", "tools")

    def __init__(self) -> None:
        self.tools: dict[str, ToolEntry] = {}
        self.resources: dict[str, ResourceEntry] = {}
        self.templates: dict[str, ResourceEntry] = {}
        self.prompts: dict[str, PromptEntry] = {}
        self.completion: CompletionHandler | None = None
        #: The folder of Agent Skills served as ``skill://`` resources (SEP-2640), if any.
        self.skills: SkillDirectory | None = None

    def find_resource(self, uri: str) -> tuple[ResourceEntry, dict[str, object]] | None:
        """Return the resource or first template matching ``uri``, with its variables.

        Raises:
            ResourceNotFound: a template matches but a variable does not convert.
        """
        static = self.resources.get(uri)
        if static is not None:
            return static, {}
        for template in self.templates.values():
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    async def read_resource(self, uri: str, context: Context) -> list[JsonObject]:
        """Read ``uri`` and return the wire ``contents`` items.

        Raises:
            ResourceNotFound: nothing matches ``uri`` (-32002, ``data.uri``).
            InvalidParams: a ``skill://`` URI the skills folder does not serve.
        """
        skills = self.skills
        if skills is not None and skills.owns(uri):
            return skills.read_resource(uri)
        found = self.find_resource(uri)
        if found is None:
            raise ResourceNotFound(uri)
        entry, variables = found
        return await entry.read(uri, variables, context)
