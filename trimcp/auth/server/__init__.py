"""The resource-server side of MCP authorization: checking the bearer tokens of requests.

``ResourceServer`` is what ``trimcp.http.HttpOptions.auth`` holds: a ``TokenVerifier``
(``JwtVerifier`` with ``JwksKeys`` or a ``StaticKey``, or ``IntrospectionVerifier``), the
``ResourceMetadata`` document (RFC 9728) and the ``ScopeRules`` (scopes every request needs,
and per tool, resource or prompt). ``resource_server_from_config`` builds one from the
``[auth]`` table. A verified token becomes an ``Identity``, which tools read as
``ctx.identity``.

Not here: HTTP (``trimcp.http`` answers with the status and challenge these name), and the
client side (``trimcp.auth.client``). Modules: ``_header`` (the Authorization header),
``_challenge`` (WWW-Authenticate), ``_scopes``, ``_claims`` (exp, iss, aud), ``_keys``
(JWKS and static keys), ``_jwt``, ``_introspect``, ``_cache`` (bounded TTL cache),
``_fetch`` (httpx), ``_metadata``, ``_resource_server``, ``_from_config``, ``_exposure``
(which listeners may start without authorization).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from trimcp.errors import AuthError as AuthError
from trimcp.errors import InsufficientScope as InsufficientScope
from trimcp.errors import InvalidToken as InvalidToken
from trimcp.errors import MalformedAuthorization as MalformedAuthorization
from trimcp.errors import TokenRequired as TokenRequired
from trimcp.errors import VerifierUnavailable as VerifierUnavailable

from ._cache import CacheStatistics as CacheStatistics
from ._challenge import render_challenge as render_challenge
from ._claims import ClaimsPolicy as ClaimsPolicy
from ._claims import canonical_uri as canonical_uri
from ._exposure import check_exposure as check_exposure
from ._exposure import is_loopback as is_loopback
from ._from_config import resource_server_from_config as resource_server_from_config
from ._header import bearer_token as bearer_token
from ._identity import Identity as Identity
from ._identity import Principal as Principal
from ._introspect import ClientAuthMethod as ClientAuthMethod
from ._introspect import IntrospectionVerifier as IntrospectionVerifier
from ._jwt import ASYMMETRIC_ALGORITHMS as ASYMMETRIC_ALGORITHMS
from ._jwt import HMAC_ALGORITHMS as HMAC_ALGORITHMS
from ._jwt import JwtVerifier as JwtVerifier
from ._keys import JwksKeys as JwksKeys
from ._keys import JwksStatistics as JwksStatistics
from ._keys import KeySource as KeySource
from ._keys import StaticKey as StaticKey
from ._metadata import WELL_KNOWN as WELL_KNOWN
from ._metadata import ResourceMetadata as ResourceMetadata
from ._resource_server import ResourceServer as ResourceServer
from ._scopes import Operation as Operation
from ._scopes import OperationKind as OperationKind
from ._scopes import ScopeRule as ScopeRule
from ._scopes import ScopeRules as ScopeRules
from ._scopes import parse_scope_rule as parse_scope_rule
from ._scopes import split_scopes as split_scopes
from ._verify import TokenVerifier as TokenVerifier

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "HMAC_ALGORITHMS",
    "WELL_KNOWN",
    "AuthError",
    "CacheStatistics",
    "ClaimsPolicy",
    "ClientAuthMethod",
    "Identity",
    "InsufficientScope",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwksKeys",
    "JwksStatistics",
    "JwtVerifier",
    "KeySource",
    "MalformedAuthorization",
    "Operation",
    "OperationKind",
    "Principal",
    "ResourceMetadata",
    "ResourceServer",
    "ScopeRule",
    "ScopeRules",
    "StaticKey",
    "TokenRequired",
    "TokenVerifier",
    "VerifierUnavailable",
    "bearer_token",
    "canonical_uri",
    "check_exposure",
    "is_loopback",
    "parse_scope_rule",
    "render_challenge",
    "resource_server_from_config",
    "split_scopes",
]
