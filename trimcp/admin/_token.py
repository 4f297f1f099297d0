"""The admin bearer token: where it comes from, and the rules it must pass at start.

``POST /reload`` and ``POST /upstreams/<name>/restart`` change what the daemon runs, so they
need a token: ``[admin] token``, or better ``[admin] token_file``, read once when the admin
app starts. The rules, each a ``ConfigError`` naming the key and the fix:

* a token file must exist, hold a non-empty first line, and be readable by its owner only
  (mode 0600 or stricter: a token others can read is a token others have);
* an ``[admin] host`` that is not loopback needs a token (the read-only routes are then open
  to the network, the changing ones must not be).

The token is compared in constant time (``hmac.compare_digest``) and never logged: this
module keeps it in an object whose ``repr`` hides it.
"""

from __future__ import annotations

import hmac
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, final

from trimcp.auth import is_loopback
from trimcp.config import setting_error

if TYPE_CHECKING:
    from trimcp.config import SysConfig

__all__ = ["AdminToken", "load_admin_token"]

_MAKE_FILE = (
    'python3 -c "import secrets; print(secrets.token_urlsafe(32))" > admin.token;'
    ' chmod 600 admin.token; then  token_file = "admin.token"  in [admin]'
)


@final
class AdminToken:
    """The admin token (or its absence), compared in constant time, never shown."""

    __slots__ = ("_secret",)

    def __init__(self, secret: str | None) -> None:
        self._secret = secret.encode() if secret else None

    def __repr__(self) -> str:
        return "AdminToken(set)" if self._secret else "AdminToken(none)"

    @property
    def configured(self) -> bool:
        """Whether a token is set at all (without one, the POST routes are refused)."""
        return self._secret is not None

    def matches(self, offered: str) -> bool:
        """Whether ``offered`` is the token (constant time; False without a token)."""
        if self._secret is None:
            return False
        return hmac.compare_digest(offered.encode(), self._secret)


def load_admin_token(config: SysConfig) -> AdminToken:
    """Read the token as ``[admin]`` says, checking the rules of the module docstring.

    Raises:
        ConfigError: the token file is missing, empty, or readable by others; or
            ``[admin] host`` is not loopback and no token is set.
    """
    admin = config.admin
    secret: str | None = admin.token or None
    if admin.token_file:
        secret = _read_token_file(config)
    if secret is None and not is_loopback(admin.host):
        key = ("admin", "host")
        raise setting_error(
            config.file_of(key),
            key,
            given=admin.host,
            expected="a loopback address (127.0.0.1, ::1, localhost), or a token",
            fix=f'set an admin token: {_MAKE_FILE}; or bind host = "127.0.0.1"',
            detail=(
                "the admin app would serve the network without a token: anyone reaching it"
                " could read the daemon's state",
            ),
        )
    return AdminToken(secret)


def _read_token_file(config: SysConfig) -> str:
    key = ("admin", "token_file")
    file = config.file_of(key)
    base = Path(file).parent if config.sources else Path.cwd()
    path = base / config.admin.token_file
    given = config.admin.token_file

    def problem(detail: str, fix: str) -> Exception:
        return setting_error(
            file,
            key,
            given=given,
            expected="a file readable by its owner only (mode 0600) holding the token",
            fix=fix,
            detail=(detail,),
        )

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise problem(f"{path} cannot be read: {exc.strerror or exc}", _MAKE_FILE) from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise problem(
            f"{path} has mode {stat.S_IMODE(mode):04o}: others may read it",
            f"chmod 600 {path}",
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise problem(f"{path} cannot be read: {exc}", _MAKE_FILE) from exc
    lines = text.strip().splitlines()
    token = lines[0].strip() if lines else ""
    if not token:
        raise problem(f"{path} is empty", _MAKE_FILE)
    return token
