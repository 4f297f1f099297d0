"""Reading an entry's ``auth`` into ``OAuthSettings`` or ``ClientCredentialsSettings``.

The forms are ``_auth``'s module docstring's. Every problem is recorded on the entry's
``FieldChecker`` with the key path (``auth.client_id``), and a secret is described by its
kind only, never quoted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from ._auth import SECRETS, ClientCredentialsSettings, OAuthSettings
from ._errors import kind_of
from ._fields import Rejected

if TYPE_CHECKING:
    from ._auth import ServerAuth
    from ._fields import FieldChecker

__all__ = ["SIGNING_ALGORITHMS", "parse_auth"]

#: The JWS algorithms a client assertion may be signed with (RFC 7518, RFC 8037).
SIGNING_ALGORITHMS: Final = (
    "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
)  # fmt: skip

_KEYS: Final = {
    "type": "type",
    "client_id": "client_id",
    "clientId": "client_id",
    "client_secret": "client_secret",
    "clientSecret": "client_secret",
    "scopes": "scopes",
    "scope": "scopes",
    "client_metadata_url": "client_metadata_url",
    "clientMetadataUrl": "client_metadata_url",
    "private_key": "private_key",
    "privateKey": "private_key",
    "private_key_file": "private_key_file",
    "privateKeyFile": "private_key_file",
    "signing_algorithm": "signing_algorithm",
    "signingAlgorithm": "signing_algorithm",
}

_OAUTH_KEYS: Final = frozenset(
    {"type", "client_id", "client_secret", "scopes", "client_metadata_url"}
)

_TYPES: Final = {
    "oauth": "oauth",
    "client_credentials": "client_credentials",
    "client-credentials": "client_credentials",
    "clientcredentials": "client_credentials",
}

_EXAMPLE: Final = '"auth": "oauth", or "auth": {"type": "client_credentials", "client_id": ...}'


def parse_auth(checker: FieldChecker, key: str, value: object) -> ServerAuth:
    """Return the settings ``value`` gives (module docstring).

    Raises:
        Rejected: after recording each problem on ``checker``.
    """
    if isinstance(value, str):
        kind = _TYPES.get(value.strip().lower())
        if kind == "oauth":
            return OAuthSettings()
        fix = (
            "client credentials need their client_id and secret or key: write "
            '{"type": "client_credentials", "client_id": "...", "client_secret": "${SECRET}"}'
            if kind is not None
            else 'write "oauth" to sign in with OAuth'
        )
        raise checker.reject(key, value, _EXAMPLE, fix)
    if not isinstance(value, dict):
        raise checker.reject(key, value, _EXAMPLE, 'write "auth": "oauth"')
    return _from_object(checker, key, value)


def _from_object(checker: FieldChecker, key: str, table: dict[object, object]) -> ServerAuth:
    values: dict[str, object] = {}
    failed = False
    for raw, item in table.items():
        name = _KEYS.get(str(raw))
        if name is None:
            checker.report(
                f"{key}.{raw}",
                given=None,
                expected="one of " + ", ".join(sorted(set(_KEYS.values()))),
                fix="remove it or correct its spelling",
            )
            failed = True
            continue
        checked = _field(checker, f"{key}.{raw}", name, item)
        if checked is None:
            failed = True
        else:
            values[name] = checked
    kind = _TYPES.get(str(values.get("type", "")).lower())
    if kind is None and not failed:
        checker.report(
            f"{key}.type",
            given=checker.describe(values.get("type")) if "type" in values else None,
            expected='"oauth" or "client_credentials"',
            fix='add "type": "oauth" (a user signs in) or "type": "client_credentials"',
        )
        failed = True
    if failed:
        raise Rejected(key)
    values.pop("type")
    if kind == "oauth":
        return _oauth(checker, key, values)
    return _machine(checker, key, values)


def _field(checker: FieldChecker, where: str, name: str, value: object) -> object | None:
    """Check one field's type; None (problem recorded) when it is wrong."""
    if name == "scopes":
        if isinstance(value, str):
            return tuple(value.split())
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        expected = 'an array of scope names, e.g. ["files:read", "files:write"]'
    elif isinstance(value, str) and value.strip():
        return value
    else:
        expected = "a string"
    given = kind_of(value, toml=checker.toml) if name in SECRETS else checker.describe(value)
    checker.report(where, given=given, expected=expected, fix=f"write {expected}")
    return None


def _oauth(checker: FieldChecker, key: str, values: dict[str, object]) -> OAuthSettings:
    wrong = sorted(set(values) - _OAUTH_KEYS)
    url = values.get("client_metadata_url")
    problems = [
        (f"{key}.{name}", "a field of client credentials", 'remove it, or set "type" to it')
        for name in wrong
    ]
    if "client_secret" in values and "client_id" not in values:
        problems.append(
            (f"{key}.client_id", "the client id the secret belongs to", 'add "client_id"')
        )
    if isinstance(url, str) and "${" not in url and not _metadata_url_ok(url):
        problems.append(
            (
                f"{key}.client_metadata_url",
                "an https URL with a path, where this client's metadata document is served",
                "correct the URL, e.g. https://example.com/trimcp/client.json",
            )
        )
    _report_all(checker, problems)
    return OAuthSettings(**values)  # type: ignore[arg-type]  # each field checked above


def _machine(
    checker: FieldChecker, key: str, values: dict[str, object]
) -> ClientCredentialsSettings:
    problems: list[tuple[str, str, str]] = []
    if "client_metadata_url" in values:
        where = f"{key}.client_metadata_url"
        problems.append((where, "no metadata document for client credentials", "remove it"))
    if "client_id" not in values:
        problems.append((f"{key}.client_id", "the client's id", 'add "client_id"'))
    proofs = [
        name for name in ("client_secret", "private_key", "private_key_file") if name in values
    ]
    if len(proofs) != 1:
        problems.append(
            (
                key,
                "exactly one of client_secret, private_key, private_key_file",
                "keep the secret or the key the authorization server knows this client by",
            )
        )
    algorithm = values.get("signing_algorithm", "ES256")
    if algorithm not in SIGNING_ALGORITHMS:
        expected = "one of " + ", ".join(SIGNING_ALGORITHMS)
        problems.append((f"{key}.signing_algorithm", expected, "write e.g. ES256"))
    _report_all(checker, problems)
    return ClientCredentialsSettings(**values)  # type: ignore[arg-type]  # checked above


def _report_all(checker: FieldChecker, problems: list[tuple[str, str, str]]) -> None:
    for where, expected, fix in problems:
        checker.report(where, given=None, expected=expected, fix=fix)
    if problems:
        raise Rejected(problems[0][0])


def _metadata_url_ok(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname) and parts.path not in ("", "/")
