"""What each MCP host reads: the file that holds its server entries, and the entry's shape.

::

    host            user scope                                  project scope          table
    claude-desktop  <app config>/Claude/claude_desktop_config.json  (none)              mcpServers
    claude-code     ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json)  .mcp.json        mcpServers
    cursor          ~/.cursor/mcp.json                          .cursor/mcp.json       mcpServers
    vscode          <app config>/Code/User/mcp.json             .vscode/mcp.json       servers
    gemini-cli      ~/.gemini/settings.json                     .gemini/settings.json  mcpServers
    mcp-json        (none)                                      .mcp.json              mcpServers

``<app config>`` is ``~/Library/Application Support`` on macOS, ``%APPDATA%`` on Windows and
``$XDG_CONFIG_HOME`` (default ``~/.config``) elsewhere. The sources, as each host documents it:

* Claude Desktop: https://modelcontextprotocol.io/quickstart/user (the file and its
  places); it launches local servers only: "Claude Desktop will not connect to remote servers
  that are configured directly via claude_desktop_config.json" (Anthropic help centre,
  "Building Custom Connectors via Remote MCP Servers"); remote ones are added under
  Settings > Connectors.
* Claude Code: https://code.claude.com/docs/en/mcp ("MCP installation scopes": user scope in
  ``~/.claude.json``, project scope in ``.mcp.json``; ``"type": "stdio" | "http"``).
* Cursor: https://cursor.com/docs/mcp (``command`` or ``url``).
* VS Code: https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (top-level
  ``servers``, ``"type": "stdio" | "http"``; its schema documents ``cwd``).
* Gemini CLI: https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md
  (``command``/``args``/``env``/``cwd``; ``httpUrl`` for Streamable HTTP).
* mcp-json: the ``mcpServers`` file trimcp itself reads (``trimcp.config.mcp_servers``), which
  is also Claude Code's project file.

Only VS Code, Gemini CLI and trimcp honour ``cwd``: Claude Code ignores it
(anthropics/claude-code#17565) and Claude Desktop starts servers in ``/`` on macOS, so for
the other hosts the entry must work from any folder (see ``trimcp.cli._install``).

This module is pure: it computes paths and entries, it reads and writes nothing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, final

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.config.mcp_servers import ServerConfig

__all__ = ["HOSTS", "Host", "HostName", "Scope", "config_file", "host_entry"]

HostName = Literal["claude-desktop", "claude-code", "cursor", "vscode", "gemini-cli", "mcp-json"]
Scope = Literal["user", "project"]


@final
@dataclass(frozen=True, slots=True)
class Host:
    """One MCP host and how it keeps its servers.

    Attributes:
        name: the name on the command line.
        label: the product's name, for messages.
        table: the top-level key whose object maps server names to entries.
        scopes: the scopes it has; the first is the default.
        honours_cwd: it starts a server in the entry's ``cwd``.
        typed: stdio entries carry ``"type": "stdio"`` (as the host writes them itself).
        next_step: what the user does for the host to see a new entry.
    """

    name: HostName
    label: str
    table: str
    scopes: tuple[Scope, ...]
    honours_cwd: bool
    typed: bool
    next_step: str


HOSTS: dict[HostName, Host] = {
    host.name: host
    for host in (
        Host(
            "claude-desktop",
            "Claude Desktop",
            "mcpServers",
            ("user",),
            honours_cwd=False,
            typed=False,
            next_step="Quit Claude Desktop completely and open it again to load it.",
        ),
        Host(
            "claude-code",
            "Claude Code",
            "mcpServers",
            ("user", "project"),
            honours_cwd=False,
            typed=True,
            next_step="Start a new Claude Code session to load it (/mcp shows its state).",
        ),
        Host(
            "cursor",
            "Cursor",
            "mcpServers",
            ("user", "project"),
            honours_cwd=False,
            typed=False,
            next_step="Restart Cursor, or switch the server on under Settings > MCP, to load it.",
        ),
        Host(
            "vscode",
            "VS Code",
            "servers",
            ("project", "user"),
            honours_cwd=True,
            typed=True,
            next_step="VS Code notices the change: start the server from mcp.json or with "
            "'MCP: List Servers'.",
        ),
        Host(
            "gemini-cli",
            "Gemini CLI",
            "mcpServers",
            ("user", "project"),
            honours_cwd=True,
            typed=False,
            next_step="Restart Gemini CLI to load it (/mcp shows its state).",
        ),
        Host(
            "mcp-json",
            "an mcpServers file",
            "mcpServers",
            ("project",),
            honours_cwd=True,
            typed=False,
            next_step="Hosts that read this file load it when they next start.",
        ),
    )
}


def config_file(
    host: Host,
    scope: Scope | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    cwd: Path | None = None,
) -> Path:
    """Return the file that holds ``host``'s server entries for ``scope`` (default: its first).

    ``environ`` (default ``os.environ``) supplies ``HOME``, ``XDG_CONFIG_HOME``, ``APPDATA``
    and ``CLAUDE_CONFIG_DIR``; ``platform`` (default ``sys.platform``) picks the application
    folder; project files are in ``cwd`` (default: the current folder).

    Raises:
        ConfigError: the host has no such scope, or on Windows ``APPDATA`` is unset.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    chosen = scope or host.scopes[0]
    if chosen not in host.scopes:
        only = " or ".join(host.scopes)
        raise ConfigError(
            f"{host.label} has no {chosen} configuration file: use --scope {only}, "
            "or name the file with --file"
        )
    if chosen == "project":
        return (cwd or Path.cwd()) / _PROJECT_FILES[host.name]
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    if host.name == "claude-desktop":
        return _app_config(environ, platform, home) / "Claude" / "claude_desktop_config.json"
    if host.name == "vscode":
        return _app_config(environ, platform, home) / "Code" / "User" / "mcp.json"
    if host.name == "claude-code" and environ.get("CLAUDE_CONFIG_DIR"):
        return Path(environ["CLAUDE_CONFIG_DIR"]).expanduser() / ".claude.json"
    return home / _USER_FILES[host.name]


_PROJECT_FILES: dict[HostName, str] = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "gemini-cli": ".gemini/settings.json",
    "mcp-json": ".mcp.json",
}
_USER_FILES: dict[HostName, str] = {
    "claude-code": ".claude.json",
    "cursor": ".cursor/mcp.json",
    "gemini-cli": ".gemini/settings.json",
}


def _app_config(environ: Mapping[str, str], platform: str, home: Path) -> Path:
    """The per-user application settings folder of an Electron app on this platform."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        appdata = environ.get("APPDATA")
        if not appdata:
            raise ConfigError(
                "APPDATA is not set, so the application settings folder is unknown: "
                "name the file with --file"
            )
        return Path(appdata)
    # The XDG Base Directory spec: a relative path in the variable is invalid and ignored.
    xdg = environ.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".config"


def host_entry(host: Host, server: ServerConfig) -> dict[str, object]:
    """Return the entry ``host`` reads for ``server``, keys in the order hosts write them.

    ``cwd`` is written only for hosts that honour it; ``env`` and ``headers`` only when set.

    Raises:
        ConfigError: the host cannot reach the server this way (a URL for Claude Desktop,
            a WebSocket URL for any host but an mcpServers file); the message says what to
            do instead.
    """
    if server.transport == "stdio":
        entry: dict[str, object] = {"type": "stdio"} if host.typed else {}
        entry["command"] = server.command or ""
        entry["args"] = list(server.args)
        if server.env:
            entry["env"] = dict(server.env)
        if host.honours_cwd and server.cwd:
            entry["cwd"] = server.cwd
        return entry
    url = server.url or ""
    if host.name == "claude-desktop":
        raise ConfigError(
            f"Claude Desktop does not read remote servers from its configuration file: add "
            f"{url} under Settings > Connectors > Add custom connector instead (Anthropic's "
            "cloud connects to it, so it must be reachable from the internet). For a server "
            "on this machine, install its file, module or command instead of its URL."
        )
    if server.transport == "websocket" and host.name != "mcp-json":
        raise ConfigError(
            f"{host.label} does not connect to WebSocket servers ({url}): give the server's "
            "Streamable HTTP URL (http:// or https://), or install its file, module or command"
        )
    entry = _url_entry(host, url, websocket=server.transport == "websocket")
    if server.headers:
        entry["headers"] = dict(server.headers)
    return entry


def _url_entry(host: Host, url: str, *, websocket: bool) -> dict[str, object]:
    if host.name == "gemini-cli":
        return {"httpUrl": url}  # Gemini CLI's "url" means the older HTTP+SSE transport
    if host.name == "cursor" or websocket:
        return {"url": url}  # Cursor tells the transport itself; trimcp reads ws:// as WebSocket
    return {"type": "http", "url": url}
