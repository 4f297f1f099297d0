"""The upstream definition a TARGET stands for, for ``install`` and ``inspect``.

A file, module, URL or command implies its own definition (``Target.server_config``); a plain
name is looked up in the MCP servers files the host commands read (``load_host_config``:
the user and project files, or ``--config``), and a name found nowhere is explained with the
names that are configured and what to write for the other kinds of TARGET.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from trimcp.cli._host import load_host_config
from trimcp.errors import ConfigError

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
    config = load_host_config(config_paths)
    found = config.servers.get(target.text)
    if found is not None:
        return found
    read = ", ".join(source.describe() for source in config.sources) or "no MCP servers file"
    names = list(config.servers)
    close = difflib.get_close_matches(target.text, names, n=1)
    hint = f' Did you mean "{close[0]}"?' if close else ""
    listed = ", ".join(names) if names else "none"
    raise ConfigError(
        f'no MCP server named "{target.text}" is configured (read: {read}; servers: '
        f"{listed}).{hint} To use a server that is not configured, give its file "
        "(server.py), module (package.module:server), URL (http://...) or command "
        "(-- node server.js)."
    )
