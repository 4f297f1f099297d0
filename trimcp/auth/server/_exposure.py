"""Whether the configured listeners may start as their ``[auth]`` table says (pure).

Two rules, checked by ``trimcp serve`` before it binds anything (and by ``trimcp config
check``):

* A listener on an address other than loopback serves whoever can reach the port. Without
  ``[auth]`` that is every tool, to anyone on the network; so it is refused unless
  ``allow_unauthenticated = true`` says something else guards it (a proxy that checks every
  request, a private network). MCP 2025-11-25, Transports > Streamable HTTP > Security
  Warning: local servers should bind to localhost only, and servers should authenticate.
* ``[websocket]`` (its own port) has no way to see the upgrade request's ``Authorization``
  header, so with ``[auth]`` on it would be an unguarded door beside a guarded one. The HTTP
  listener's WebSocket route (``http.websocket_path``) checks it.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from trimcp.config import setting_error

if TYPE_CHECKING:
    from trimcp.config import SysConfig

__all__ = ["check_exposure", "is_loopback"]


def is_loopback(host: str) -> bool:
    """Tell whether ``host`` (an address or a name) only ever means this machine.

    ``localhost`` and the loopback addresses (127.0.0.0/8, ::1) do; ``0.0.0.0`` and ``::``
    (every interface) and any other name do not.
    """
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(config: SysConfig) -> None:
    """Refuse listeners that would serve without authorization (see the module docstring).

    Raises:
        ConfigError: an enabled ``[http]`` or ``[websocket]`` listener binds a non-loopback
            address while ``[auth]`` is off and ``allow_unauthenticated`` is false; or
            ``[websocket]`` is enabled while ``[auth]`` is on.
    """
    auth = config.auth
    if auth.verifier != "none":
        if config.websocket.enabled:
            key = ("websocket", "enabled")
            raise setting_error(
                config.file_of(key),
                key,
                given=True,
                expected="false while [auth] is on: the [websocket] listener (its own port) "
                "cannot check bearer tokens",
                fix="set enabled = false in the [websocket] table and serve WebSocket on the "
                "HTTP listener at http.websocket_path, which checks the Authorization header "
                f"of the upgrade (now {config.http.websocket_path or 'off: set it'})",
            )
        return
    if auth.allow_unauthenticated:
        return
    for table in ("http", "websocket"):
        settings = getattr(config, table)
        if settings.enabled and not is_loopback(settings.host):
            key = (table, "host")
            raise setting_error(
                config.file_of(key),
                key,
                given=settings.host,
                expected="a loopback address (127.0.0.1, ::1 or localhost) while [auth] is off: "
                "on any other address every tool is open to whoever reaches the port",
                fix=f'turn on [auth] (verifier = "jwt" or "introspection"); or write  host = '
                f'"127.0.0.1"  in the [{table}] table; or, if something in front of trimcp '
                "checks every request, write  allow_unauthenticated = true  in the [auth] table",
            )
