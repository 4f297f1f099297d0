"""The ``auth`` field of a server entry: how trimcp gets tokens for an HTTP server.

Three ways to authorize requests to a server reached by ``url``:

* ``"auth": "oauth"``: sign the user in with OAuth (MCP 2025-11-25, Basic > Authorization);
  the object form adds a pre-registered ``client_id`` (and ``client_secret``), the
  ``scopes`` to ask for when the server names none, and ``client_metadata_url``, this
  client's Client ID Metadata Document::

      "auth": {"type": "oauth", "client_id": "trimcp", "scopes": ["files:read"]}

* ``"auth": {"type": "client_credentials", ...}``: a machine client, with ``client_id``
  and either ``client_secret`` or a private key (``private_key`` as PEM text, usually
  ``"${KEY}"``, or ``private_key_file``) and its ``signing_algorithm`` (``ES256`` by
  default) for ``private_key_jwt``;
* static ``headers`` (``"Authorization": "Bearer ${TOKEN}"``), which need no ``auth``.

Keys may be written in snake_case or camelCase. String values may hold ``${VAR}``
references, expanded at connect time like every other field. Secrets (``client_secret``,
``private_key``) are never shown: reprs and problems give only their kind. The settings are
plain values, read from an entry by ``_auth_parse``; ``trimcp.auth.client`` turns them into
the objects that do the work.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Final, TypeAlias, final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "SECRETS",
    "ClientCredentialsSettings",
    "OAuthSettings",
    "ServerAuth",
    "auth_strings",
    "expand_auth",
]

#: The settings whose values are secrets: shown as ``***``.
SECRETS: Final = frozenset({"client_secret", "private_key"})


def _shown(settings: object) -> dict[str, object]:
    values: dict[str, object] = {}
    for item in fields(settings):  # type: ignore[arg-type]  # a dataclass instance
        value = getattr(settings, item.name)
        if item.name in SECRETS and value is not None:
            value = "***"
        values[item.name] = list(value) if isinstance(value, tuple) else value
    return values


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class OAuthSettings:
    """``"auth": "oauth"``: the user signs in (module docstring).

    Attributes:
        client_id: a pre-registered client id (None: registered by metadata document or
            dynamically).
        client_secret: its secret, for a confidential client.
        scopes: scopes to ask for when the server's challenge names none.
        client_metadata_url: the https URL of this client's Client ID Metadata Document.
    """

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None

    def __repr__(self) -> str:
        return f"OAuthSettings({_shown(self)!r})"

    def to_json(self) -> dict[str, object]:
        """Return the settings as JSON-ready values, secrets included (for comparing)."""
        return {"type": "oauth", **{f.name: _plain(getattr(self, f.name)) for f in fields(self)}}

    def shown(self) -> dict[str, object]:
        """Return ``to_json()`` with the secret as ``***``."""
        return {"type": "oauth", **_shown(self)}


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ClientCredentialsSettings:
    """``"auth": {"type": "client_credentials", ...}``: a machine client (module docstring).

    Attributes:
        client_id: the client's id at the authorization server.
        client_secret: its secret (client_secret_basic or client_secret_post).
        private_key: PEM text of its private key, for private_key_jwt.
        private_key_file: a file holding that PEM text instead.
        signing_algorithm: the JWS algorithm of the key. Default ES256.
        scopes: scopes to ask for when the server's challenge names none.
    """

    client_id: str
    client_secret: str | None = None
    private_key: str | None = None
    private_key_file: str | None = None
    signing_algorithm: str = "ES256"
    scopes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"ClientCredentialsSettings({_shown(self)!r})"

    def to_json(self) -> dict[str, object]:
        """Return the settings as JSON-ready values, secrets included (for comparing)."""
        values = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}
        return {"type": "client_credentials", **values}

    def shown(self) -> dict[str, object]:
        """Return ``to_json()`` with the secrets as ``***``."""
        return {"type": "client_credentials", **_shown(self)}


ServerAuth: TypeAlias = OAuthSettings | ClientCredentialsSettings
"""What a server entry's ``auth`` says."""


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def expand_auth(auth: ServerAuth | None, one: Callable[[str, str], str]) -> ServerAuth | None:
    """Return ``auth`` with ``one(field, text)`` applied to each string (``${VAR}`` expansion)."""
    if auth is None:
        return None
    changes: dict[str, object] = {}
    for item in fields(auth):
        value = getattr(auth, item.name)
        if isinstance(value, str):
            changes[item.name] = one(f"auth.{item.name}", value)
        elif isinstance(value, tuple):
            changes[item.name] = tuple(
                one(f"auth.{item.name}[{i}]", text) for i, text in enumerate(value)
            )
    return type(auth)(**changes)  # type: ignore[arg-type]  # the same fields, expanded


def auth_strings(auth: ServerAuth | None) -> list[tuple[str, str]]:
    """Return ``(field, text)`` for each string of ``auth`` that is expanded."""
    if auth is None:
        return []
    found: list[tuple[str, str]] = []
    for item in fields(auth):
        value = getattr(auth, item.name)
        if isinstance(value, str):
            found.append((f"auth.{item.name}", value))
        elif isinstance(value, tuple):
            found.extend((f"auth.{item.name}[{i}]", text) for i, text in enumerate(value))
    return found
