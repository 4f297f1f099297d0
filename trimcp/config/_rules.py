"""Rules between settings, which no single key's check can see, and errors about settings.

The validator checks each key on its own. A few settings only make sense together: two
listeners cannot share a port. (A listener with no ``[server] object`` is valid: it serves
the gateway over the built-in tools and the ``[upstreams]``/``mcpServers`` servers, which
this package does not read.)
These rules run on the built :class:`SysConfig`, after every key passed its own check.

:func:`setting_error` words a problem about a setting the way the validator does, for the
layers that can only check a value later (the daemon parses the Host/Origin patterns with
``trimcp.transports``, which this package may not import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._auth import auth_problems
from ._problem import Problem, config_error
from ._toml_text import describe, dotted

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from trimcp.errors import ConfigError

    from ._settings import SysConfig
    from ._toml_text import KeyPath

_LISTENERS = ("http", "websocket", "stdio")


def setting_error(  # noqa: PLR0913 - the fields of one problem
    file: str,
    key: KeyPath,
    *,
    given: object,
    expected: str,
    fix: str,
    detail: Sequence[str] = (),
) -> ConfigError:
    """Return a ConfigError about the setting at ``key``, worded like the validator's.

    Args:
        file: the file that set the key; ``SysConfig.file_of(key)`` knows it.
        key: the key path, e.g. ``("http", "allowed_hosts", 2)``.
        given: the value as it is now; shown with its TOML type.
        expected: what would be accepted.
        fix: one concrete thing to do about it.
        detail: lines shown before the labelled ones (a cause, a search path).
    """
    return config_error(
        Problem(
            file=file,
            key=dotted(key),
            given=describe(given),
            expected=expected,
            fix=fix,
            detail=tuple(detail),
        )
    )


def check_rules(config: SysConfig) -> None:
    """Check the rules between settings.

    Raises:
        ConfigError: reporting every rule broken, in a fixed order.
    """
    problems = list(_problems(config))
    if problems:
        raise config_error(*problems)


def _problems(config: SysConfig) -> Iterator[Problem]:
    yield from _websocket_path_clash(config)
    yield from _port_clash(config)
    yield from auth_problems(config.auth, config.file_of)


def _problem(config: SysConfig, key: KeyPath, given: object, expected: str, fix: str) -> Problem:
    return Problem(
        file=config.file_of(key), key=dotted(key), given=describe(given), expected=expected, fix=fix
    )


def _websocket_path_clash(config: SysConfig) -> Iterator[Problem]:
    http = config.http
    if http.websocket_path != http.path:
        return
    yield _problem(
        config,
        ("http", "websocket_path"),
        http.websocket_path,
        f'a path other than http.path ({http.path}), or "" for no WebSocket',
        'write e.g.  websocket_path = "/mcp/ws"  in the [http] table',
    )


def _port_clash(config: SysConfig) -> Iterator[Problem]:
    http, websocket = config.http, config.websocket
    if not (http.enabled and websocket.enabled):
        return
    # Port 0 picks a free port for each listener, so only a fixed port can clash.
    if websocket.port == 0 or websocket.port != http.port or websocket.host != http.host:
        return
    yield _problem(
        config,
        ("websocket", "port"),
        websocket.port,
        f"a port other than http.port ({http.port}) on {websocket.host}",
        f"write e.g.  port = {http.port + 1 if http.port < 65535 else 8001}  in the [websocket]"
        f" table; or turn [websocket] off: the HTTP listener serves WebSocket at"
        f" http.websocket_path ({http.websocket_path or 'now off'}) on its own port",
    )
