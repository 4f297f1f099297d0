"""The upstream definition a TARGET stands for, for ``install`` and ``inspect``.

A file, module, URL or command implies its own definition (``Target.server_config``); a plain
name is looked up in the MCP servers files the host commands read, with their checks and
messages (``_oneshot.configured``: the user and project files, or ``--config``; a name found
nowhere is explained with the names that are configured and the closest one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.cli._oneshot import configured

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.cli._target import Target
    from trimcp.config.mcp_servers import ServerConfig

__all__ = ["server_for"]


def server_for(target: Target, config_paths: Sequence[str] | None = None) -> ServerConfig:
    """Return the definition that reaches ``target``.

    Raises:
        ConfigError: the MCP servers files are invalid, or no server of a configured
            target's name is defined in them.
    """
    if target.kind != "configured":
        return target.server_config()
    return configured(config_paths, target.text).servers[target.text]
