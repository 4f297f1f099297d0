"""``build_server``: the skills ``MCPServer`` for a ``[skills]`` table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.server import MCPServer

from ._resources import register as register_resources
from ._runtime import Skills
from .tools import (
    register_execute,
    register_read,
    register_search,
    register_vcs,
    register_write,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.config import SkillCategory, SkillsSettings
    from trimcp.protocol import JsonObject
    from trimcp.sessions import SessionHandle

__all__ = ["build_server", "resolve_roots"]

_REGISTER: dict[SkillCategory, Callable[[MCPServer, Skills], None]] = {
    "read": register_read,
    "search": register_search,
    "vcs": register_vcs,
    "write": register_write,
    "execute": register_execute,
}

_INSTRUCTIONS = (
    "File, search and git tools over these folders: {roots}. Paths may be absolute or "
    "relative to the first folder. Tools: {categories}."
)


def resolve_roots(roots: tuple[str, ...], base_dir: Path | None = None) -> list[Path]:
    """Return the root folders: ``~`` expanded, relative ones from ``base_dir``.

    No roots means the working directory.

    Raises:
        ValueError: a root is not an existing folder (the message names it).
    """
    # No roots: the working directory, wherever the file that left them out lies.
    start = (base_dir or Path.cwd()) if roots else Path.cwd()
    chosen = roots or (".",)
    paths: list[Path] = []
    for root in chosen:
        path = start / os.path.expanduser(root)
        if not path.is_dir():
            raise ValueError(f"the root folder {root!r} ({path}) does not exist or is not a folder")
        paths.append(Path(os.path.realpath(path)))
    return paths


def build_server(
    settings: SkillsSettings, *, base_dir: Path | None = None, name: str = "trimcp-skills"
) -> MCPServer:
    """Return an ``MCPServer`` offering the categories ``settings.enable`` names.

    Roots come from ``settings.roots`` (relative to ``base_dir``, default the working
    directory). With the ``read`` category the files are also resources
    (``file://`` URIs, subscribable).

    Raises:
        ValueError: a root does not exist.
    """
    skills = Skills(settings, resolve_roots(settings.roots, base_dir))
    roots = ", ".join(str(root) for root in skills.jail.roots)
    server = MCPServer(
        name,
        title="trimcp file, search and git tools",
        instructions=_INSTRUCTIONS.format(roots=roots, categories=", ".join(settings.enable)),
    )
    for category, register in _REGISTER.items():
        if category in settings.enable:
            register(server, skills)
    if "read" in settings.enable:
        register_resources(server, skills)

    @server.on_roots_changed()
    async def roots_changed(session: SessionHandle, params: JsonObject) -> None:
        skills.forget(session)

    return server
