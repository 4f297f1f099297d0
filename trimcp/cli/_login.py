"""``trimcp login SERVER`` and ``trimcp logout SERVER``: OAuth sign-in for a configured server.

::

    trimcp login remote            sign in now, in the browser; the tokens are kept
    trimcp login remote --no-browser
                                   print the sign-in URL instead of opening a browser
    trimcp logout remote           forget the tokens (and registration) kept for it

SERVER is an entry of the mcpServers files (or ``[upstreams]``) with ``"auth": "oauth"``.
The sign-in is the authorization code flow with PKCE (``trimcp.auth.client``): the browser
opens the authorization server's page and comes back to a one-shot listener on 127.0.0.1;
the tokens go to a 0600 file under ``$XDG_CONFIG_HOME/trimcp/tokens``, where every later
command (and the daemon's gateway) finds them, refreshing them as they expire.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from trimcp.errors import ConfigError, TrimcpError

if TYPE_CHECKING:
    import argparse

    from trimcp.config.mcp_servers import ServerConfig

__all__ = ["add_commands"]

_FAILURE = 1
_INTERRUPTED = 130


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``login`` and ``logout`` to the ``trimcp`` parser's subcommands."""
    config_help = (
        "an MCP servers file (mcpServers JSON, TOML or YAML); repeatable, later wins "
        "(default: the user and project files)"
    )
    login = commands.add_parser(
        "login", help='sign in to an HTTP MCP server whose entry has "auth": "oauth"'
    )
    login.add_argument("server", metavar="SERVER", help="the configured server's name")
    login.add_argument("--config", action="append", metavar="PATH", help=config_help)
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="print the sign-in URL on stderr instead of opening the system browser",
    )
    login.set_defaults(command=_login)
    logout = commands.add_parser("logout", help="forget the tokens kept for a server")
    logout.add_argument("server", metavar="SERVER", help="the configured server's name")
    logout.add_argument("--config", action="append", metavar="PATH", help=config_help)
    logout.set_defaults(command=_logout)


def _server(args: argparse.Namespace) -> ServerConfig:
    import os

    from trimcp.cli._oneshot import configured
    from trimcp.config.mcp_servers import expand_server

    config = configured(args.config, args.server).servers[args.server]
    return expand_server(config, os.environ)


def _login(args: argparse.Namespace) -> int:
    import trio

    from trimcp.auth.client import LoopbackBrowser, login

    try:
        config = _server(args)
        browser = LoopbackBrowser(opener=_print_url) if args.no_browser else LoopbackBrowser()
        tokens = trio.run(lambda: login(config, browser=browser))
    except KeyboardInterrupt:
        sys.stderr.write("login cancelled\n")
        return _INTERRUPTED
    except (ConfigError, TrimcpError) as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    scopes = f" (scopes: {' '.join(tokens.scopes)})" if tokens.scopes else ""
    sys.stdout.write(f"signed in to {config.name}{scopes}; the tokens are kept for later runs\n")
    return 0


async def _print_url(url: str) -> None:
    sys.stderr.write(f"Open this URL in a browser on this machine to sign in:\n  {url}\n")
    sys.stderr.flush()


def _logout(args: argparse.Namespace) -> int:
    import trio

    from trimcp.auth.client import logout

    try:
        config = _server(args)
        if config.auth is None:
            raise ConfigError(
                f"MCP server {config.name!r} has no sign-in to forget: its entry has no "
                '"auth" (only entries with "auth": "oauth" keep tokens)'
            )
        trio.run(logout, config)
    except KeyboardInterrupt:
        return _INTERRUPTED
    except (ConfigError, TrimcpError) as exc:
        sys.stderr.write(f"{exc}\n")
        return _FAILURE
    sys.stdout.write(f"signed out of {config.name}: nothing is kept for it any more\n")
    return 0
