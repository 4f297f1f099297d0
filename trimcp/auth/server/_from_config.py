"""Build a ``ResourceServer`` from the ``[auth]`` table (``trimcp.config.AuthSettings``).

The config package checks each key and the rules between them; what needs the world is
checked here, when the daemon starts (and by ``trimcp config check``): the PEM file exists
and holds a key, the environment variables that hold secrets are set, the resource URL is
in canonical form. Each problem is a ``ConfigError`` naming the key, worded like every other
config error (``trimcp.config.setting_error``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.config import setting_error

from ._claims import ClaimsPolicy
from ._introspect import IntrospectionVerifier
from ._jwt import JwtVerifier, check_algorithms
from ._keys import JwksKeys, KeySource, StaticKey
from ._metadata import ResourceMetadata
from ._resource_server import ResourceServer
from ._scopes import ScopeRule, ScopeRules, parse_scope_rule

if TYPE_CHECKING:
    from collections.abc import Mapping

    from trimcp.config import AuthSettings, SysConfig
    from trimcp.errors import ConfigError

    from ._scopes import OperationKind
    from ._verify import TokenVerifier

__all__ = ["resource_server_from_config"]


def resource_server_from_config(
    config: SysConfig, *, environ: Mapping[str, str] | None = None
) -> ResourceServer | None:
    """Return the resource server ``[auth]`` describes, or None for ``verifier = "none"``.

    ``environ`` (default ``os.environ``) is where the secrets' variables are read.

    Raises:
        ConfigError: the resource or an authorization server URL is unusable, the key file
            is missing or holds no key, a secret's variable is unset or too short, or the
            algorithms do not fit the key.
    """
    auth = config.auth
    if auth.verifier == "none":
        return None
    env = os.environ if environ is None else environ
    metadata = _metadata(config)
    policy = ClaimsPolicy(
        issuers=(auth.issuer,) if auth.issuer else auth.authorization_servers,
        audiences=(metadata.resource, *auth.audiences),
        leeway=auth.leeway,
    )
    verifier: TokenVerifier
    if auth.verifier == "jwt":
        keys = _key_source(config, env)
        algorithms = auth.algorithms or None
        if algorithms is not None:
            try:
                check_algorithms(algorithms, symmetric=keys.symmetric)
            except ValueError as exc:
                raise _error(config, "algorithms", list(algorithms), str(exc)) from None
        verifier = JwtVerifier(keys, policy, algorithms=algorithms)
    else:
        verifier = IntrospectionVerifier(
            auth.introspection_url,
            policy,
            client_id=auth.client_id,
            client_secret=_secret(config, "client_secret_env", env),
            client_auth=auth.client_auth,
            cache_ttl=auth.introspection_cache_ttl,
            cache_size=auth.introspection_cache_size,
            timeout=auth.fetch_timeout,
        )
    return ResourceServer(verifier, metadata, scopes=_scope_rules(auth), leeway=auth.leeway)


def _metadata(config: SysConfig) -> ResourceMetadata:
    auth = config.auth
    rules = _scope_rules(auth)
    try:
        return ResourceMetadata(
            resource=auth.resource,
            authorization_servers=auth.authorization_servers,
            scopes_supported=auth.scopes_supported or rules.mentioned() or None,
            resource_name=auth.resource_name or None,
            resource_documentation=auth.resource_documentation or None,
        )
    except ValueError as exc:
        raise _error(config, "resource", auth.resource, str(exc)) from None


def _scope_rules(auth: AuthSettings) -> ScopeRules:
    # The config package checked the form of every rule already.
    kinds: tuple[tuple[OperationKind, tuple[str, ...]], ...] = (
        ("tool", auth.tool_scopes),
        ("resource", auth.resource_scopes),
        ("prompt", auth.prompt_scopes),
    )
    rules: list[ScopeRule] = [
        parse_scope_rule(kind, text) for kind, texts in kinds for text in texts
    ]
    return ScopeRules(required=auth.required_scopes, rules=tuple(rules))


def _key_source(config: SysConfig, env: Mapping[str, str]) -> KeySource:
    auth = config.auth
    if auth.jwks_url:
        return JwksKeys(
            auth.jwks_url,
            max_age=auth.jwks_max_age,
            refresh_interval=auth.jwks_refresh_interval,
            max_keys=auth.jwks_max_keys,
            timeout=auth.fetch_timeout,
        )
    if auth.public_key_file:
        return _pem_key(config)
    secret = _secret(config, "shared_secret_env", env)
    try:
        return StaticKey.from_secret(secret.encode("utf-8"))
    except ValueError as exc:
        raise _error(
            config,
            "shared_secret_env",
            auth.shared_secret_env,
            str(exc),
            fix=f"put a longer secret in {auth.shared_secret_env}, e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(48))'`",
        ) from None


def _pem_key(config: SysConfig) -> StaticKey:
    key = ("auth", "public_key_file")
    written_in = config.file_of(key)
    base = Path(written_in).parent if config.sources else Path.cwd()
    path = base / Path(config.auth.public_key_file).expanduser()
    try:
        pem = path.read_bytes()
    except OSError as exc:
        raise _error(
            config,
            "public_key_file",
            config.auth.public_key_file,
            "a readable PEM file",
            fix=f"put the authorization server's public key at {path}, or correct the path "
            f"(relative to {base})",
            detail=(f"cannot read {path}: {exc.strerror or exc}",),
        ) from None
    try:
        return StaticKey.from_pem(pem)
    except ValueError as exc:
        raise _error(
            config,
            "public_key_file",
            config.auth.public_key_file,
            "a PEM public key (-----BEGIN PUBLIC KEY-----): RSA, EC or Ed25519",
            fix="export the authorization server's signing public key as PEM into that file",
            detail=(f"{path}: {exc}",),
        ) from None


def _secret(config: SysConfig, key: str, env: Mapping[str, str]) -> str:
    name: str = getattr(config.auth, key)
    value = env.get(name, "")
    if not value:
        raise _error(
            config,
            key,
            name,
            f"the name of a set environment variable (the secret; {name} is not set)",
            fix=f"set {name} in the environment trimcp serve runs in, e.g.  export {name}=...",
        )
    return value


def _error(  # noqa: PLR0913 - the fields of one problem
    config: SysConfig,
    key: str,
    given: object,
    expected: str,
    *,
    fix: str | None = None,
    detail: tuple[str, ...] = (),
) -> ConfigError:
    path = ("auth", key)
    return setting_error(
        config.file_of(path),
        path,
        given=given,
        expected=expected,
        fix=fix or f"correct {key} in the [auth] table",
        detail=detail,
    )
