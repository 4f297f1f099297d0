"""Where tokens and dynamic registrations are kept between runs.

``TokenStore`` is the seam: ``load`` / ``save`` / ``delete`` of one ``StoredAuth`` per
server, under a key (a configured server's name, or the server's URL). Two stores come
with it:

* ``FileTokenStore``: one JSON file per server in the user's config folder,
  ``$XDG_CONFIG_HOME/trimcp/tokens/<key>.json`` (``~/.config`` when the variable is unset,
  empty or relative, as for trimcp's own config files). The folder is 0700 and each file
  0600, written to a temporary file first and renamed over the old one, so a crash never
  leaves half a file and no other user can read it (MCP 2025-11-25, Basic > Authorization >
  Token Theft: clients MUST store tokens securely).
* ``MemoryTokenStore``: a dict, for tests and for hosts that keep secrets their own way.

Tokens never appear in logs: problems are logged with the file's path only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Protocol, final, runtime_checkable

import trio

from ._registration import ClientRegistration
from ._tokens import TokenSet

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "FileTokenStore",
    "MemoryTokenStore",
    "StoredAuth",
    "TokenStore",
    "default_token_directory",
    "store_file_name",
]

logger = logging.getLogger(__name__)

_SAFE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_FORMAT: Final = 1


def _no_clients() -> Mapping[str, ClientRegistration]:
    return MappingProxyType({})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StoredAuth:
    """What is kept for one server.

    Attributes:
        tokens: the last tokens granted (None: none, or signed out).
        clients: dynamic registrations by issuer; a client id is good at its issuer only.
    """

    tokens: TokenSet | None = None
    clients: Mapping[str, ClientRegistration] = field(default_factory=_no_clients)

    def __post_init__(self) -> None:
        object.__setattr__(self, "clients", MappingProxyType(dict(self.clients)))

    def to_json(self) -> dict[str, object]:
        """Return the record as JSON-ready values."""
        return {
            "format": _FORMAT,
            "tokens": None if self.tokens is None else self.tokens.to_json(),
            "clients": {issuer: client.to_json() for issuer, client in self.clients.items()},
        }

    @classmethod
    def from_json(cls, data: object) -> StoredAuth:
        """Read ``to_json``'s output; what cannot be read is left out."""
        if not isinstance(data, dict):
            return cls()
        clients = data.get("clients")
        found: dict[str, ClientRegistration] = {}
        if isinstance(clients, dict):
            for issuer, item in clients.items():
                client = ClientRegistration.from_json(item)
                if isinstance(issuer, str) and client is not None:
                    found[issuer] = client
        return cls(tokens=TokenSet.from_json(data.get("tokens")), clients=found)


@runtime_checkable
class TokenStore(Protocol):
    """Keeps one ``StoredAuth`` per key.

    Implementations must keep what ``save`` was given until the next ``save`` or ``delete``
    of the same key, and must not let anyone else read it (tokens and client secrets are in
    it). ``load`` returns None for an unknown key; a record that cannot be read counts as
    none (the user signs in again) rather than an error.
    """

    async def load(self, key: str) -> StoredAuth | None:
        """Return what was saved under ``key``, or None."""
        ...

    async def save(self, key: str, record: StoredAuth) -> None:
        """Keep ``record`` under ``key``, replacing what was there."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key``; no error if it is unknown."""
        ...


@final
class MemoryTokenStore:
    """A ``TokenStore`` in a dict: gone when the process ends."""

    def __init__(self) -> None:
        self.records: dict[str, StoredAuth] = {}

    async def load(self, key: str) -> StoredAuth | None:
        """Return what was saved under ``key``, or None."""
        return self.records.get(key)

    async def save(self, key: str, record: StoredAuth) -> None:
        """Keep ``record`` under ``key``."""
        self.records[key] = record

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        self.records.pop(key, None)


def default_token_directory(environ: Mapping[str, str] | None = None) -> Path:
    """Return ``$XDG_CONFIG_HOME/trimcp/tokens`` (``~/.config`` when unset or relative)."""
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CONFIG_HOME", "")
    config_home = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return config_home / "trimcp" / "tokens"


def store_file_name(key: str) -> str:
    """Return the file name for ``key``: the key itself when it is a plain name.

    Anything else (a URL) becomes a readable slug plus 12 hex digits of its SHA-256, so two
    keys never share a file and no key can climb out of the folder.
    """
    if _SAFE.fullmatch(key):
        return f"{key}.json"
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-")[:48] or "server"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"{slug}-{digest}.json"


@final
class FileTokenStore:
    """A ``TokenStore`` of one 0600 JSON file per key (module docstring)."""

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_token_directory()

    def path_for(self, key: str) -> Path:
        """Return the file that holds ``key``."""
        return self.directory / store_file_name(key)

    async def load(self, key: str) -> StoredAuth | None:
        """Return what the key's file holds, or None if there is no readable file."""
        return await trio.to_thread.run_sync(self._load, self.path_for(key))

    async def save(self, key: str, record: StoredAuth) -> None:
        """Write the key's file atomically, readable by this user only.

        Raises:
            OSError: the folder or the file could not be written.
        """
        data = json.dumps(record.to_json(), indent=2, sort_keys=True).encode("utf-8")
        await trio.to_thread.run_sync(self._write, self.path_for(key), data)

    async def delete(self, key: str) -> None:
        """Remove the key's file, if any."""
        path = self.path_for(key)
        await trio.to_thread.run_sync(lambda: path.unlink(missing_ok=True))

    @staticmethod
    def _load(path: Path) -> StoredAuth | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("cannot read the token file %s: %s", path, exc.strerror or exc)
            return None
        try:
            return StoredAuth.from_json(json.loads(text))
        except ValueError:
            logger.warning("the token file %s is not valid JSON; ignoring it", path)
            return None

    def _write(self, path: Path, data: bytes) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{path.stem}-", suffix=".tmp", dir=self.directory
        )
        replaced = False
        try:
            with os.fdopen(descriptor, "wb") as file:
                # mkstemp creates the file 0600 already; say so for any umask or platform.
                os.fchmod(file.fileno(), 0o600)
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
            replaced = True
        finally:
            if not replaced:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
