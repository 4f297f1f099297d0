"""OAuth 2.1 for MCP over HTTP: the resource-server side here, the client side in ``.client``.

MCP 2025-11-25, Basic > Authorization (link below): an MCP server over HTTP is an OAuth 2.1
resource server. It publishes RFC 9728 Protected Resource Metadata, checks the bearer token of
every request (signature or introspection, issuer, audience, expiry, scopes) and answers a
refusal with the status and ``WWW-Authenticate`` challenge of RFC 6750 section 3. An MCP client
is an OAuth client: ``trimcp.auth.client`` discovers the authorization server from a 401 and
obtains tokens.

This package is not an authorization server: it issues no tokens and keeps no users. Its
names are the server side's (``trimcp.auth.server``), re-exported; the client side's are
``trimcp.auth.client``'s own.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
"""

from __future__ import annotations

from trimcp.auth.server import ASYMMETRIC_ALGORITHMS as ASYMMETRIC_ALGORITHMS
from trimcp.auth.server import HMAC_ALGORITHMS as HMAC_ALGORITHMS
from trimcp.auth.server import WELL_KNOWN as WELL_KNOWN
from trimcp.auth.server import AuthError as AuthError
from trimcp.auth.server import CacheStatistics as CacheStatistics
from trimcp.auth.server import ClaimsPolicy as ClaimsPolicy
from trimcp.auth.server import ClientAuthMethod as ClientAuthMethod
from trimcp.auth.server import Identity as Identity
from trimcp.auth.server import InsufficientScope as InsufficientScope
from trimcp.auth.server import IntrospectionVerifier as IntrospectionVerifier
from trimcp.auth.server import InvalidToken as InvalidToken
from trimcp.auth.server import JwksKeys as JwksKeys
from trimcp.auth.server import JwksStatistics as JwksStatistics
from trimcp.auth.server import JwtVerifier as JwtVerifier
from trimcp.auth.server import KeySource as KeySource
from trimcp.auth.server import MalformedAuthorization as MalformedAuthorization
from trimcp.auth.server import Operation as Operation
from trimcp.auth.server import OperationKind as OperationKind
from trimcp.auth.server import Principal as Principal
from trimcp.auth.server import ResourceMetadata as ResourceMetadata
from trimcp.auth.server import ResourceServer as ResourceServer
from trimcp.auth.server import ScopeRule as ScopeRule
from trimcp.auth.server import ScopeRules as ScopeRules
from trimcp.auth.server import StaticKey as StaticKey
from trimcp.auth.server import TokenRequired as TokenRequired
from trimcp.auth.server import TokenVerifier as TokenVerifier
from trimcp.auth.server import VerifierUnavailable as VerifierUnavailable
from trimcp.auth.server import bearer_token as bearer_token
from trimcp.auth.server import canonical_uri as canonical_uri
from trimcp.auth.server import check_exposure as check_exposure
from trimcp.auth.server import is_loopback as is_loopback
from trimcp.auth.server import parse_scope_rule as parse_scope_rule
from trimcp.auth.server import render_challenge as render_challenge
from trimcp.auth.server import resource_server_from_config as resource_server_from_config
from trimcp.auth.server import split_scopes as split_scopes

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
