"""``--auth`` for the commands that serve over HTTP without a sys_config.toml (``run``, ``skills``).

::

    trimcp run server.py --http --auth-file sys_config.toml      its [auth] table
    trimcp run server.py --http --auth verifier=jwt \\
        --auth resource=http://127.0.0.1:8000/mcp \\
        --auth authorization_servers=https://auth.example.com \\
        --auth jwks_url=https://auth.example.com/.well-known/jwks.json \\
        --auth required_scopes=mcp

Each ``--auth KEY=VALUE`` sets one key of the ``[auth]`` table that ``trimcp serve`` reads
(the keys, their meaning and their checks are the same; ``sys_config.toml`` documents them),
on top of ``--auth-file``'s table if given. A VALUE is read as a TOML value when it is one
(``leeway=30``, ``algorithms=["RS256"]``) and as a string otherwise; for a key whose value is
an array, a plain VALUE is one more item, so ``--auth required_scopes=mcp --auth
required_scopes=files:read`` gives both. Bad keys and values are reported as ``trimcp config
check`` reports them, naming ``--auth``.

A listener on a non-loopback address without authorization is refused, as ``serve`` refuses
it, unless ``--allow-unauthenticated`` says that is meant.
"""

from __future__ import annotations

import dataclasses
import logging
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    import argparse

    from trimcp.auth import ResourceServer

__all__ = ["add_auth_options", "resource_server_from_args"]

logger = logging.getLogger("trimcp.auth")

_FROM_ARGS = "--auth"
# Imported by every command's parser: nothing heavier than argparse and the errors here.


def add_auth_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--auth KEY=VALUE``, ``--auth-file PATH`` and ``--allow-unauthenticated``."""
    group = parser.add_argument_group(
        "authorization (OAuth 2.1 bearer tokens on the HTTP listener)"
    )
    group.add_argument(
        "--auth",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one key of the [auth] table of sys_config.toml, e.g. verifier=jwt, "
        "jwks_url=URL, resource=URL, authorization_servers=URL, required_scopes=mcp; "
        "repeatable",
    )
    group.add_argument(
        "--auth-file",
        metavar="PATH",
        help="a TOML file whose [auth] table to use (e.g. the daemon's sys_config.toml); "
        "--auth keys are applied on top",
    )
    group.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="serve on a non-loopback --host without authorization (refused otherwise)",
    )


def resource_server_from_args(
    args: argparse.Namespace, host: str, *, http: bool = True
) -> ResourceServer | None:
    """The resource server ``args`` describe, or None without ``--auth``/``--auth-file``
    (or when not serving ``http``: over stdio the client launched the process).

    A listener on a non-loopback ``host`` allowed without authorization
    (``--allow-unauthenticated``) is logged as a warning.

    Raises:
        ConfigError: a key or value is wrong, the file is unreadable, ``--auth`` is given
            without ``http``, or ``host`` is not a loopback address and no authorization is
            set (without ``--allow-unauthenticated``); the message says which and how to
            fix it.
    """
    # Imported when used: the parsers of every command add these options.
    from trimcp.auth import is_loopback, resource_server_from_config
    from trimcp.config import validate_config

    if not http:
        if args.auth or args.auth_file:
            raise ConfigError(
                "--auth applies to --http only: over stdio the client launched this process "
                "and no token is involved"
            )
        return None

    table = _file_table(args.auth_file) if args.auth_file else {}
    for item in args.auth:
        key, value = _pair(item)
        table[key] = _merged(key, table.get(key), value)
    if not table:
        if not is_loopback(host) and not args.allow_unauthenticated:
            raise ConfigError(
                f"refusing to serve on {host} without authorization: anyone who can reach "
                "that address could call every tool. Set --auth (e.g. --auth verifier=jwt "
                "--auth jwks_url=...), or --host 127.0.0.1, or pass --allow-unauthenticated "
                "if that is really meant"
            )
        if not is_loopback(host):
            logger.warning(
                "listening on %s without authorization: anyone who can reach this address can"
                " call the tools (--allow-unauthenticated was given)",
                host,
            )
        return None
    source = args.auth_file or _FROM_ARGS
    config = validate_config({"auth": table}, file=source)
    return resource_server_from_config(config)


def _file_table(path: str) -> dict[str, object]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read --auth-file {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--auth-file {path} is not valid TOML: {exc}") from exc
    table = data.get("auth")
    if not isinstance(table, dict):
        raise ConfigError(
            f"--auth-file {path} has no [auth] table; write one as sys_config.toml documents "
            "it, or give the keys with --auth KEY=VALUE"
        )
    return dict(table)


def _pair(item: str) -> tuple[str, object]:
    key, equals, text = item.partition("=")
    key = key.strip()
    if not equals or not key:
        raise ConfigError(
            f"--auth {item!r} is not KEY=VALUE; e.g. --auth verifier=jwt (the keys of the "
            "[auth] table in sys_config.toml)"
        )
    try:
        value: object = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        value = text
    return key, value


def _merged(key: str, before: object, value: object) -> object:
    """A plain value given for an array key is one more item of it."""
    if key not in _array_keys() or isinstance(value, list):
        return value
    items = list(before) if isinstance(before, list) else []
    return [*items, value]


def _array_keys() -> frozenset[str]:
    from trimcp.config import AuthSettings

    defaults = AuthSettings()
    return frozenset(
        item.name
        for item in dataclasses.fields(AuthSettings)
        if isinstance(getattr(defaults, item.name), tuple)
    )
