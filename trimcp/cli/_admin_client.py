"""Reaching the daemon's admin app from the command line: where it is, the token, one request.

``trimcp status``, ``reload`` and ``restart`` (``_admin_commands.py``) talk to the admin app
``trimcp serve`` runs when ``[admin] enabled = true`` (``trimcp.admin``), over plain HTTP on
its own port. This module finds it the way the daemon placed it: the same sys_config.toml
search as ``trimcp serve`` (``--config``, ``$TRIMCP_CONFIG``, ``./sys_config.toml``) gives
``[admin] host`` and ``port``, unless ``--url`` names it. The bearer token of the POST routes
comes from, in this order: ``--token-file``, ``$TRIMCP_ADMIN_TOKEN``, the file's
``[admin] token_file`` (relative to that file's folder), its ``[admin] token``. A token file
must be readable by its owner only, as the daemon requires of its own; the token is never
printed, not even in an error.

Every failure becomes a sentence for a person with the fix in it: ``ConfigError`` for what
the configuration or the command line got wrong, ``ConnectFailed`` (its ``problem`` the whole
sentence) when no admin app answered as it should. What an answer *means* (401, 404, ...) is
for the commands to say; this module only returns it.
"""

from __future__ import annotations

import os
import stat
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, final

from trimcp.config import find_config_file, load_config
from trimcp.errors import ConfigError, ConnectFailed

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from trimcp.config import SysConfig

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_TOKEN_FILE_BYTES",
    "REQUEST_TIMEOUT",
    "TOKEN_ENV_VAR",
    "AdminAnswer",
    "AdminTarget",
    "AdminToken",
    "ask",
    "locate",
    "plain_http_warning",
    "resolve_token",
]

#: The environment variable that may hold the admin token (after ``--token-file``).
TOKEN_ENV_VAR = "TRIMCP_ADMIN_TOKEN"
#: Seconds a request may take in all. The admin app answers from memory; a daemon that needs
#: longer is stuck, and saying so beats a terminal that hangs.
REQUEST_TIMEOUT = 5.0
#: The largest answer read. ``/status`` lists at most ``[admin] max_listed_sessions`` sessions
#: per listener (200 by default, about 300 bytes each): a few hundred KiB at worst.
MAX_ANSWER_BYTES = 8 * 1024 * 1024
#: A token file larger than this is not a token file (a key, a log) and is refused unread.
MAX_TOKEN_FILE_BYTES = 4096
#: Where a daemon binding every address is reached from this machine.
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


@final
@dataclass(frozen=True, slots=True)
class AdminTarget:
    """Where the admin app is, and the configuration that says so.

    Attributes:
        url: the app's base URL, without a trailing ``/`` (``http://127.0.0.1:8002``).
        config_file: the sys_config.toml read, for messages; "" when none was found.
        config: that configuration, None when ``--url`` made reading it unnecessary and
            it was not read.
    """

    url: str
    config_file: str = ""
    config: SysConfig | None = None

    def file_words(self) -> str:
        """The config file as messages name it."""
        return (
            self.config_file or "its sys_config.toml (none was found here; name it with --config)"
        )

    def unreachable(self) -> str:
        """The sentence for no admin app answering at ``url``."""
        return (
            f"no admin app answers at {self.url} — is `trimcp serve` running with "
            f"`[admin] enabled = true` in {self.file_words()}?"
        )


@final
@dataclass(frozen=True, slots=True)
class AdminToken:
    """A bearer token and where it came from (``source`` is shown; ``value`` never is)."""

    value: str
    source: str

    def __repr__(self) -> str:
        return f"AdminToken(source={self.source!r})"


@final
@dataclass(frozen=True, slots=True)
class AdminAnswer:
    """What the admin app answered.

    Attributes:
        status: the HTTP status.
        document: the JSON object of the body; empty when the body is not one.
        text: the start of the body when it is not a JSON object (for messages), else "".
    """

    status: int
    document: Mapping[str, object]
    text: str = ""

    def error(self) -> str:
        """The app's own explanation: ``{"error": ...}``, else the start of the body."""
        message = self.document.get("error")
        return str(message) if message else self.text


def locate(
    config_path: str | None, url: str | None, *, environ: Mapping[str, str] | None = None
) -> AdminTarget:
    """Find the admin app: ``url`` if given, else ``[admin] host:port`` of the config file.

    The configuration is read only when needed: with ``url`` given, a file that exists is
    still read (for the token and the messages), and a broken one is then ignored.

    Raises:
        ConfigError: ``url`` is not an http(s) URL; the file cannot be read or is invalid
            (only without ``url``); ``[admin] port`` is 0 and no ``url`` was given.
    """
    env = os.environ if environ is None else environ
    found = find_config_file(config_path, environ=env)
    if url is not None:
        base = _checked_url(url)
        config: SysConfig | None = None
        if found is not None:
            try:
                config = load_config(found, environ=env)
            except ConfigError:
                config = None  # --url says where; the file was only for the token
        return AdminTarget(base, str(found) if found is not None else "", config)
    config = load_config(found, environ=env)
    file = config.sources[0] if config.sources else ""
    admin = config.admin
    if admin.port == 0:
        raise ConfigError(
            f"[admin] port = 0 in {file or 'the configuration'}: trimcp serve picks a free port"
            " at each start and logs it (admin app listening at http://HOST:PORT/); pass that"
            " URL with --url"
        )
    host = _WILDCARDS.get(admin.host, admin.host)
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return AdminTarget(f"http://{shown}:{admin.port}", file, config)


def _checked_url(url: str) -> str:
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ConfigError(
            f"--url {url!r} is not the admin app's address: write http://HOST:PORT, as trimcp"
            " serve logs it (admin app listening at http://127.0.0.1:8002/)"
        )
    if parsed.query or parsed.fragment:
        raise ConfigError(f"--url {url!r}: give the admin app's base URL, without ?query or #")
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path.rstrip("/"), "", ""))


def plain_http_warning(url: str) -> str:
    """A warning when ``url`` is plain http to an address off this machine; else ""."""
    from trimcp.auth import is_loopback

    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme != "http" or is_loopback(parsed.hostname or ""):
        return ""
    return (
        f"warning: {url} is plain http to another machine: the admin token and the daemon's"
        " status cross the network unencrypted; put the admin app behind https, or reach it"
        " through an SSH tunnel (ssh -L 8002:127.0.0.1:8002 HOST) and use --url"
        " http://127.0.0.1:8002"
    )


def resolve_token(
    token_file: str | None, target: AdminTarget, *, environ: Mapping[str, str] | None = None
) -> AdminToken:
    """The admin token: ``--token-file``, ``$TRIMCP_ADMIN_TOKEN``, ``[admin] token_file``,
    then ``[admin] token`` (the first that is set wins).

    Raises:
        ConfigError: a token file is readable by its group or others (chmod 600), cannot be
            read, is too large or empty; no token is found anywhere (the message lists
            where it was looked for).
    """
    env = os.environ if environ is None else environ
    if token_file:
        return _read_token_file(Path(token_file).expanduser(), f"--token-file {token_file}")
    from_env = env.get(TOKEN_ENV_VAR, "").strip()
    if from_env:
        return AdminToken(from_env, f"${TOKEN_ENV_VAR}")
    config = target.config
    if config is not None and config.admin.token_file:
        written_in = config.file_of(("admin", "token_file"))
        base = Path(written_in).parent if config.sources else Path.cwd()
        path = base / Path(config.admin.token_file).expanduser()
        return _read_token_file(path, f"[admin] token_file in {written_in}")
    if config is not None and config.admin.token:
        # As the admin app reads it (trimcp.admin): the value as written.
        return AdminToken(config.admin.token, f"[admin] token in {target.file_words()}")
    raise ConfigError(
        "no admin token: POST /reload and /upstreams/NAME/restart need the daemon's admin"
        f" token. Pass --token-file PATH (a file only you can read), set ${TOKEN_ENV_VAR},"
        f" or set [admin] token_file in {target.file_words()}"
    )


def _read_token_file(path: Path, source: str) -> AdminToken:
    try:
        with path.open("rb") as stream:
            mode = os.fstat(stream.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise ConfigError(f"{path} ({source}) is not a regular file holding a token")
            if mode & 0o077:
                raise ConfigError(
                    f"{path} ({source}) can be read by other users (mode"
                    f" {stat.S_IMODE(mode):04o}): an admin token must be readable by its owner"
                    f" only; run  chmod 600 {path}"
                )
            data = stream.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(
            f"cannot read the admin token file {path} ({source}): {exc.strerror or exc}"
        ) from None
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise ConfigError(
            f"{path} ({source}) is larger than {MAX_TOKEN_FILE_BYTES} bytes: that is not a token"
            " file; name the file holding the admin token (one line)"
        )
    try:
        lines = data.decode("utf-8").strip().splitlines()
    except UnicodeDecodeError:
        raise ConfigError(f"{path} ({source}) is not text: write the token as one line") from None
    # The first line, trailing newline and spaces cut, as the admin app reads its own file.
    token = lines[0].strip() if lines else ""
    if not token:
        raise ConfigError(
            f"{path} ({source}) is empty; write the admin token in it, e.g. with"
            f'  python3 -c "import secrets; print(secrets.token_urlsafe(32))" > {path}'
        )
    return AdminToken(token, source)


async def ask(
    target: AdminTarget,
    request: str,
    *,
    token: AdminToken | None = None,
    timeout: float = REQUEST_TIMEOUT,
    max_bytes: int = MAX_ANSWER_BYTES,
) -> AdminAnswer:
    """Send ``request`` (``"GET /status"``) to the admin app; return its answer, whatever
    the status.

    Waits at most ``timeout`` seconds in all (trio's clock). Cancelling abandons the request.

    Raises:
        ConnectFailed: nothing answers at ``target.url`` (``problem`` is
            ``target.unreachable()``), the app did not answer in time, the answer is larger
            than ``max_bytes``, or it is not HTTP.
    """
    import httpx
    import trio

    method, _, path = request.partition(" ")
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token.value}"
    url = target.url + path
    try:
        # httpx's timeout bounds each step; the deadline bounds them all (a trickling answer).
        with trio.fail_after(timeout):
            async with (
                httpx.AsyncClient(timeout=timeout, trust_env=False) as client,
                client.stream(method, url, headers=headers) as response,
            ):
                body = await _read_bounded(response, max_bytes, target)
    except httpx.ConnectError:
        raise ConnectFailed(target.url, target.unreachable()) from None
    except (httpx.TimeoutException, trio.TooSlowError):
        raise ConnectFailed(
            target.url,
            f"the admin app at {target.url} did not answer {request} within {timeout:g} s;"
            " the daemon may be overloaded or stuck (its log may say why)",
        ) from None
    except httpx.HTTPError as exc:
        raise ConnectFailed(
            target.url, f"{target.url} did not answer as the admin app would: {exc}"
        ) from None
    return _answer(response.status_code, body)


async def _read_bounded(response: httpx.Response, max_bytes: int, target: AdminTarget) -> bytes:
    body = bytearray()
    # Read to the end, keeping at most max_bytes + 1 bytes: leaving httpx's chain of async
    # generators half-way would leave them to the garbage collector (``trimcp.auth.client``
    # reads the same way). The caller's deadline bounds the time.
    async for chunk in response.aiter_bytes():
        if len(body) <= max_bytes:
            body.extend(chunk[: max_bytes + 1 - len(body)])
    if len(body) > max_bytes:
        raise ConnectFailed(
            target.url,
            f"the answer of {target.url} is larger than {max_bytes} bytes, more than the admin"
            " app sends; is that address really trimcp's admin app?",
        )
    return bytes(body)


def _answer(status: int, body: bytes) -> AdminAnswer:
    import json

    text = body.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        return AdminAnswer(status, document)
    return AdminAnswer(status, {}, text.strip()[:500])
