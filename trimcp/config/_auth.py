"""The ``[auth]`` table: OAuth 2.1 bearer tokens on the HTTP listener (``trimcp.auth``).

Off by default (``verifier = "none"``). With ``"jwt"`` the listener checks signed JWT access
tokens against the authorization server's JWKS (``jwks_url``), a PEM public key
(``public_key_file``) or a shared HMAC secret (``shared_secret_env``, for HS256 only); with
``"introspection"`` it asks the authorization server's RFC 7662 endpoint. Secrets never sit
in the file: ``shared_secret_env`` and ``client_secret_env`` name environment variables.

The validator reads flat tables, so the per-name scopes are flat too: ``tool_scopes`` holds
``"pattern=scope1 scope2"`` strings, the pattern a glob of tool names (``resource_scopes``:
of resource URIs, ``prompt_scopes``: of prompt names). :func:`auth_problems` holds the rules
between these keys; the daemon checks what needs the world (the key file, the environment,
the listeners' addresses) when it starts, and ``trimcp config check`` runs both.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ._problem import Problem
from ._schema import Check, above, at_least, between, spec
from ._toml_text import describe, dotted

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ._toml_text import KeyPath

    #: Which file set a key (``SysConfig.file_of``).
    FileOf = Callable[[KeyPath], str]

AuthVerifier = Literal["none", "jwt", "introspection"]
JwtAlgorithm = Literal[
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
    "HS256",
    "HS384",
    "HS512",
]
ClientAuth = Literal["client_secret_basic", "client_secret_post"]

# RFC 6749 section 3.3: visible ASCII but space, " and \.
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_JWT_KEYS = ("jwks_url", "public_key_file", "shared_secret_env")
_INTROSPECTION_KEYS = ("introspection_url", "client_id", "client_secret_env")


def _url_ok(value: str) -> bool:
    if not value:
        return True
    parts = urllib.parse.urlsplit(value)
    if parts.scheme == "https" and parts.hostname:
        return True
    return parts.scheme == "http" and parts.hostname in _LOOPBACK


def _urls_ok(values: tuple[str, ...]) -> bool:
    return all(value and _url_ok(value) for value in values)


def _scopes_ok(values: tuple[str, ...]) -> bool:
    return all(_SCOPE.fullmatch(value) for value in values)


def _rules_ok(values: tuple[str, ...]) -> bool:
    for value in values:
        pattern, equals, scopes = value.rpartition("=")
        if not (equals and pattern.strip() and scopes.split()):
            return False
        if not all(_SCOPE.fullmatch(scope) for scope in scopes.split()):
            return False
    return True


def _env_ok(value: str) -> bool:
    return not value or _ENV_NAME.fullmatch(value) is not None


_URL = Check(test=_url_ok, rule='that is an https:// URL (http:// on localhost only), or ""')
_SCOPES = Check(test=_scopes_ok, rule="of scopes (no spaces, quotes or backslashes)")
_RULES = Check(test=_rules_ok, rule='of "pattern=scope1 scope2" strings')
_ENV = Check(test=_env_ok, rule='that names an environment variable, or ""')


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthSettings:
    """The ``[auth]`` table.

    Attributes:
        verifier: ``"none"`` (no authorization), ``"jwt"`` or ``"introspection"``.
        resource: this server's canonical URL as clients reach it (RFC 8707), e.g.
            ``https://mcp.example.com/mcp``; tokens must be issued for it.
        authorization_servers: issuer URLs of the authorization servers clients get
            tokens from (published in the Protected Resource Metadata).
        issuer: the ``iss`` tokens must carry; ``""``: any of ``authorization_servers``.
        audiences: more ``aud`` values accepted besides ``resource``.
        required_scopes: scopes every request needs.
        scopes_supported: scopes published in the metadata; empty: every scope named here.
        tool_scopes / resource_scopes / prompt_scopes: ``"pattern=scopes"`` rules: calls of
            matching tools, reads of matching resource URIs, gets of matching prompts need
            those scopes too.
        resource_name / resource_documentation: published in the metadata, for people.
        jwks_url: the JWKS of the authorization server (``verifier = "jwt"``).
        public_key_file: a PEM public key instead, relative to this file's folder.
        shared_secret_env: the environment variable holding an HS256 shared secret instead.
        algorithms: JWT algorithms accepted; empty: RS256 and ES256 (HS256 with a secret).
        introspection_url: the RFC 7662 endpoint (``verifier = "introspection"``).
        client_id / client_secret_env: this server's client credentials for it (the
            secret read from the named environment variable).
        client_auth: how those credentials are sent.
        leeway: seconds of clock difference forgiven on exp, nbf and iat.
        jwks_max_age / jwks_refresh_interval / jwks_max_keys: how long fetched keys are
            kept, how soon an unknown key id may fetch them again, how many are kept.
        introspection_cache_ttl / introspection_cache_size: how long and how many
            introspection answers are kept.
        fetch_timeout: seconds a JWKS or introspection request may take.
        allow_unauthenticated: serve HTTP or WebSocket on a non-loopback address without
            authorization (refused otherwise).
    """

    verifier: AuthVerifier = field(
        default="none", metadata=spec(meaning='how tokens are checked; "none": no auth')
    )
    resource: str = field(
        default="",
        metadata=spec(
            meaning="this server's canonical URL, which tokens must be issued for",
            check=_URL,
            example="https://mcp.example.com/mcp",
        ),
    )
    authorization_servers: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="issuer URLs of the authorization servers",
            check=Check(test=_urls_ok, rule="of https:// URLs (http:// on localhost only)"),
            example=("https://auth.example.com",),
        ),
    )
    issuer: str = field(
        default="",
        metadata=spec(meaning='the iss tokens carry; "": any authorization server'),
    )
    audiences: tuple[str, ...] = field(
        default=(),
        metadata=spec(meaning="more aud values accepted besides resource", example=("api://mcp",)),
    )
    required_scopes: tuple[str, ...] = field(
        default=(),
        metadata=spec(meaning="scopes every request needs", check=_SCOPES, example=("mcp",)),
    )
    scopes_supported: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="scopes published in the metadata (empty: those named here)",
            check=_SCOPES,
            example=("mcp", "files:write"),
        ),
    )
    tool_scopes: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="scopes per tool name pattern",
            check=_RULES,
            example=("delete_*=files:write",),
        ),
    )
    resource_scopes: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="scopes per resource URI pattern",
            check=_RULES,
            example=("file:///secret/*=secrets:read",),
        ),
    )
    prompt_scopes: tuple[str, ...] = field(
        default=(),
        metadata=spec(
            meaning="scopes per prompt name pattern", check=_RULES, example=("admin_*=admin",)
        ),
    )
    resource_name: str = field(
        default="", metadata=spec(meaning="a name for people in the metadata")
    )
    resource_documentation: str = field(
        default="",
        metadata=spec(
            meaning="a documentation URL in the metadata",
            check=_URL,
            example="https://docs.example.com/mcp",
        ),
    )
    jwks_url: str = field(
        default="",
        metadata=spec(
            meaning="the authorization server's JWKS",
            check=_URL,
            example="https://auth.example.com/.well-known/jwks.json",
        ),
    )
    public_key_file: str = field(
        default="",
        metadata=spec(meaning="a PEM public key that signs tokens", example="keys/issuer.pem"),
    )
    shared_secret_env: str = field(
        default="",
        metadata=spec(
            meaning="the environment variable holding an HS256 secret",
            check=_ENV,
            example="TRIMCP_JWT_SECRET",
        ),
    )
    algorithms: tuple[JwtAlgorithm, ...] = field(
        default=(), metadata=spec(meaning="JWT algorithms accepted", example=("RS256",))
    )
    introspection_url: str = field(
        default="",
        metadata=spec(
            meaning="the RFC 7662 introspection endpoint",
            check=_URL,
            example="https://auth.example.com/introspect",
        ),
    )
    client_id: str = field(
        default="",
        metadata=spec(meaning="this server's client id at the introspection endpoint"),
    )
    client_secret_env: str = field(
        default="",
        metadata=spec(
            meaning="the environment variable holding the client secret",
            check=_ENV,
            example="TRIMCP_CLIENT_SECRET",
        ),
    )
    client_auth: ClientAuth = field(
        default="client_secret_basic",
        metadata=spec(meaning="how the client credentials are sent"),
    )
    leeway: float = field(
        default=30.0,
        metadata=spec(meaning="seconds of clock difference forgiven", check=between(0, 300)),
    )
    jwks_max_age: float = field(
        default=300.0, metadata=spec(meaning="seconds fetched keys are kept", check=above(0))
    )
    jwks_refresh_interval: float = field(
        default=30.0,
        metadata=spec(
            meaning="seconds before an unknown key id may fetch the keys again", check=above(0)
        ),
    )
    jwks_max_keys: int = field(
        default=32, metadata=spec(meaning="keys kept from the JWKS", check=at_least(1))
    )
    introspection_cache_ttl: float = field(
        default=60.0,
        metadata=spec(meaning="seconds an introspection answer is kept", check=at_least(0)),
    )
    introspection_cache_size: int = field(
        default=10_000,
        metadata=spec(meaning="introspection answers kept", check=at_least(1)),
    )
    fetch_timeout: float = field(
        default=5.0,
        metadata=spec(meaning="seconds a JWKS or introspection request may take", check=above(0)),
    )
    allow_unauthenticated: bool = field(
        default=False,
        metadata=spec(meaning="serve a non-loopback address without authorization"),
    )


def auth_problems(auth: AuthSettings, file_of: FileOf) -> Iterator[Problem]:
    """Yield what is wrong between the ``[auth]`` keys (each key passed its own check).

    ``file_of`` names the file that set a key (``SysConfig.file_of``).
    """
    config = _Table(auth, file_of)
    if auth.verifier == "none":
        yield from _unused(config, (*_JWT_KEYS, *_INTROSPECTION_KEYS), 'verifier = "none"')
        return
    if not auth.resource:
        yield _missing(
            config,
            "resource",
            "this server's canonical URL, which tokens are issued for",
            'write e.g.  resource = "https://mcp.example.com/mcp"  (the URL clients use)',
        )
    if not auth.authorization_servers:
        yield _missing(
            config,
            "authorization_servers",
            "at least one authorization server (MCP requires one in the metadata)",
            'write e.g.  authorization_servers = ["https://auth.example.com"]',
        )
    if auth.jwks_refresh_interval > auth.jwks_max_age:
        yield _problem(
            config,
            "jwks_refresh_interval",
            auth.jwks_refresh_interval,
            f"at most jwks_max_age ({auth.jwks_max_age:g})",
            f"write e.g.  jwks_refresh_interval = {min(30.0, auth.jwks_max_age):g}",
        )
    if auth.verifier == "jwt":
        yield from _unused(config, _INTROSPECTION_KEYS, 'verifier = "jwt"')
        yield from _jwt_problems(config)
    else:
        yield from _unused(config, _JWT_KEYS, 'verifier = "introspection"')
        for key in _INTROSPECTION_KEYS:
            if not getattr(auth, key):
                yield _missing(
                    config,
                    key,
                    f"a value: introspection needs {', '.join(_INTROSPECTION_KEYS)}",
                    f"write e.g.  {key} = {_example(key)}",
                )


def _jwt_problems(config: _Table) -> Iterator[Problem]:
    auth = config.auth
    given = [key for key in _JWT_KEYS if getattr(auth, key)]
    if len(given) != 1:
        yield _problem(
            config,
            given[1] if len(given) > 1 else "jwks_url",
            getattr(auth, given[1]) if len(given) > 1 else "",
            f'exactly one key source for verifier = "jwt": {", ".join(_JWT_KEYS)}'
            + (f" (both {given[0]} and {given[1]} are set)" if len(given) > 1 else ""),
            'write e.g.  jwks_url = "https://auth.example.com/.well-known/jwks.json"'
            if not given
            else f"keep one of {', '.join(given)} and remove the others",
        )
        return
    hmac = [alg for alg in auth.algorithms if alg.startswith("HS")]
    if given[0] == "shared_secret_env":
        other = [alg for alg in auth.algorithms if not alg.startswith("HS")]
        if other:
            yield _problem(
                config,
                "algorithms",
                list(auth.algorithms),
                "HS256, HS384 or HS512 only with a shared secret",
                'write e.g.  algorithms = ["HS256"]',
            )
    elif hmac:
        yield _problem(
            config,
            "algorithms",
            list(auth.algorithms),
            f"no HS* algorithm with {given[0]}: a public key used as an HMAC secret would let "
            "anyone sign tokens",
            'write e.g.  algorithms = ["RS256", "ES256"]',
        )


def _unused(config: _Table, keys: tuple[str, ...], verifier: str) -> Iterator[Problem]:
    for key in keys:
        value = getattr(config.auth, key)
        if value:
            yield _problem(
                config,
                key,
                value,
                f"no {key} with {verifier}, where it has no effect",
                "set verifier to the kind that uses it, or remove the key",
            )


@dataclass(frozen=True, slots=True)
class _Table:
    """The ``[auth]`` table and where its keys were written."""

    auth: AuthSettings
    file_of: FileOf


def _example(key: str) -> str:
    return {
        "introspection_url": '"https://auth.example.com/introspect"',
        "client_id": '"mcp-server"',
        "client_secret_env": '"TRIMCP_CLIENT_SECRET"',
    }[key]


def _missing(config: _Table, key: str, expected: str, fix: str) -> Problem:
    return _problem(config, key, getattr(config.auth, key), expected, fix + "  in the [auth] table")


def _problem(config: _Table, key: str, given: object, expected: str, fix: str) -> Problem:
    path: KeyPath = ("auth", key)
    return Problem(
        file=config.file_of(path),
        key=dotted(path),
        given=describe(given),
        expected=expected,
        fix=fix,
    )
