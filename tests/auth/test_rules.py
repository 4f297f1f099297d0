"""The pure rules: scopes, claims (exp/nbf/iat, issuer, audience), metadata, the bounded cache."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.auth import (
    ClaimsPolicy,
    Identity,
    ResourceMetadata,
    ScopeRule,
    ScopeRules,
    canonical_uri,
    parse_scope_rule,
    split_scopes,
)
from trimcp.auth.server._cache import TtlCache
from trimcp.auth.server._scopes import granted_scopes
from trimcp.errors import InvalidToken

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
NOW = 1_800_000_000.0
POLICY = ClaimsPolicy(issuers=(ISSUER,), audiences=(RESOURCE, "api://mcp"), leeway=30)


# --- scopes -------------------------------------------------------------------------------------

scope_tokens = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters='"\\'),
    min_size=1,
    max_size=10,
)


@given(st.lists(scope_tokens, max_size=8), st.integers(1, 3))
def test_a_scope_string_splits_back_into_its_tokens(scopes: list[str], spaces: int) -> None:
    assert split_scopes((" " * spaces).join(scopes)) == tuple(dict.fromkeys(scopes))


def test_granted_scopes_read_scope_or_scp() -> None:
    assert granted_scopes({"scope": "a  b a"}) == {"a", "b"}
    assert granted_scopes({"scp": ["a", 3, "", "b"]}) == {"a", "b"}
    assert granted_scopes({"scp": "a b"}) == {"a", "b"}
    assert granted_scopes({"scope": "a", "scp": ["b"]}) == {"a"}
    assert granted_scopes({}) == frozenset()
    assert granted_scopes("not claims") == frozenset()


def test_every_matching_rule_applies_the_server_scopes_first() -> None:
    rules = ScopeRules(
        required=("mcp",),
        rules=(
            parse_scope_rule("tool", "delete_*=files:write"),
            parse_scope_rule("tool", "*_all=admin files:write"),
            parse_scope_rule("resource", "file:///secret/*=secrets:read"),
            parse_scope_rule("prompt", "admin=admin"),
        ),
    )
    assert rules.for_operation("tool", "echo") == ("mcp",)
    assert rules.for_operation("tool", "delete_all") == ("mcp", "files:write", "admin")
    assert rules.for_operation("prompt", "delete_x") == ("mcp",)  # rules are per kind
    assert rules.for_operation("resource", "file:///secret/key") == ("mcp", "secrets:read")
    assert rules.for_operations([("tool", "delete_x"), ("prompt", "admin")]) == (
        "mcp",
        "files:write",
        "admin",
    )
    assert rules.mentioned() == ("mcp", "files:write", "admin", "secrets:read")


def test_a_rule_pattern_may_hold_an_equals_sign() -> None:
    rule = parse_scope_rule("resource", "db://x?id=*=db:read db:list")
    assert rule == ScopeRule("resource", "db://x?id=*", ("db:read", "db:list"))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("delete_*", "not of the form"),
        ("=files:write", "needs a name pattern"),
        ("delete_*=", "names no scope"),
        ('delete_*=a"b', "invalid scopes"),
    ],
)
def test_a_bad_rule_is_refused_with_words(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_scope_rule("tool", text)


# --- claims -------------------------------------------------------------------------------------


def claims(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "client_id": "app-1",
        "scope": "mcp files:read",
        "iat": NOW - 10,
        "exp": NOW + 300,
        "email": "alice@example.com",
    }
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


def test_valid_claims_become_an_identity() -> None:
    identity = POLICY.identity(claims(), NOW)
    assert identity == Identity(
        subject="alice",
        client_id="app-1",
        scopes=frozenset({"mcp", "files:read"}),
        expires_at=NOW + 300,
        issuer=ISSUER,
        audiences=(RESOURCE,),
        claims=identity.claims,
    )
    assert identity.claims["email"] == "alice@example.com"
    assert identity.principal == (ISSUER, "alice", "app-1")
    assert "alice@example.com" not in repr(identity)
    with pytest.raises(TypeError):
        identity.claims["email"] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("changes", "now", "words"),
    [
        ({"exp": NOW - 30}, NOW, "expired 30 s ago"),
        ({"exp": NOW - 3 * 3600}, NOW, "expired 3 h ago"),
        ({"exp": None}, NOW, "no expiry"),
        ({"exp": "soon"}, NOW, "exp claim is not a number"),
        ({"exp": True}, NOW, "exp claim is not a number"),
        ({"nbf": NOW + 31}, NOW, "not valid yet"),
        ({"iat": NOW + 600}, NOW, "issued in the future"),
        ({"iss": "https://evil.example.com"}, NOW, "this server accepts tokens from"),
        ({"iss": None}, NOW, "issuer (iss) is missing"),
        ({"aud": "https://other.example.com/mcp"}, NOW, "not for this server"),
        ({"aud": ["https://other.example.com", "x"]}, NOW, "request the token with resource="),
        ({"aud": None}, NOW, "audience (aud) is missing"),
        ({"aud": [1, 2]}, NOW, "not for this server"),
    ],
)
def test_claims_refused_say_why(changes: dict[str, object], now: float, words: str) -> None:
    with pytest.raises(InvalidToken, match=words.replace("(", r"\(").replace(")", r"\)")):
        POLICY.identity(claims(**changes), now)


def test_the_leeway_forgives_small_clock_differences_and_no_more() -> None:
    POLICY.identity(claims(exp=NOW - 29), NOW)
    POLICY.identity(claims(nbf=NOW + 30, iat=NOW + 30), NOW)
    with pytest.raises(InvalidToken):
        POLICY.identity(claims(exp=NOW - 30), NOW)


@pytest.mark.parametrize(
    "audience",
    [
        RESOURCE,
        "HTTPS://MCP.EXAMPLE.COM/mcp",
        "https://mcp.example.com/mcp/",
        ["https://other.example.com", "api://mcp"],
    ],
)
def test_the_audience_is_compared_in_canonical_form(audience: object) -> None:
    assert POLICY.identity(claims(aud=audience), NOW).subject == "alice"


def test_the_path_of_the_audience_is_case_sensitive() -> None:
    with pytest.raises(InvalidToken):
        POLICY.identity(claims(aud="https://mcp.example.com/MCP"), NOW)


def test_introspected_claims_may_leave_out_exp_and_iss() -> None:
    identity = POLICY.identity(claims(exp=None, iss=None), NOW, introspected=True)
    assert identity.expires_at is None
    assert identity.issuer is None
    with pytest.raises(InvalidToken, match="issuer"):
        POLICY.identity(claims(exp=None, iss="https://x.example"), NOW, introspected=True)


def test_client_id_falls_back_to_azp() -> None:
    assert POLICY.identity(claims(client_id=None, azp="spa"), NOW).client_id == "spa"


def test_a_policy_needs_an_issuer_an_audience_and_a_sane_leeway() -> None:
    with pytest.raises(ValueError, match="issuer"):
        ClaimsPolicy(issuers=(), audiences=(RESOURCE,))
    with pytest.raises(ValueError, match="audience"):
        ClaimsPolicy(issuers=(ISSUER,), audiences=())
    with pytest.raises(ValueError, match="leeway"):
        ClaimsPolicy(issuers=(ISSUER,), audiences=(RESOURCE,), leeway=3600)


def test_canonical_uri() -> None:
    assert canonical_uri("HTTPS://Mcp.Example.com/Mcp/#frag") == "https://mcp.example.com/Mcp"
    assert canonical_uri("api://MCP") == "api://MCP"


# --- metadata -----------------------------------------------------------------------------------


def test_metadata_document_and_where_it_is_served() -> None:
    metadata = ResourceMetadata(
        resource=RESOURCE,
        authorization_servers=(ISSUER,),
        scopes_supported=("mcp", "files:write"),
        resource_name="Files",
    )
    assert metadata.url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    assert metadata.paths == (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    )
    assert orjson.loads(metadata.to_json()) == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp", "files:write"],
        "resource_name": "Files",
    }
    root = ResourceMetadata(resource="https://mcp.example.com", authorization_servers=(ISSUER,))
    assert root.paths == ("/.well-known/oauth-protected-resource",)
    assert "scopes_supported" not in orjson.loads(root.to_json())


@pytest.mark.parametrize(
    ("resource", "servers", "words"),
    [
        ("http://mcp.example.com/mcp", (ISSUER,), "https://"),
        ("https://MCP.example.com/mcp", (ISSUER,), "canonical form"),
        ("https://mcp.example.com/mcp/", (ISSUER,), "canonical form"),
        ("https://mcp.example.com/mcp#x", (ISSUER,), "fragment"),
        (RESOURCE, (), "at least one authorization server"),
        (RESOURCE, ("http://auth.example.com",), "https://"),
    ],
)
def test_metadata_refuses_what_clients_could_not_use(
    resource: str, servers: tuple[str, ...], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        ResourceMetadata(resource=resource, authorization_servers=servers)


def test_loopback_http_is_allowed_for_local_use() -> None:
    ResourceMetadata(
        resource="http://127.0.0.1:8000/mcp", authorization_servers=("http://localhost:9000",)
    )


# --- the bounded cache --------------------------------------------------------------------------


def test_the_cache_expires_entries_and_stays_within_its_bound() -> None:
    cache: TtlCache[str, int] = TtlCache(max_size=3)
    for number in range(5):
        cache.put(f"k{number}", number, expires_at=100.0, now=0.0)
    assert len(cache) == 3
    assert cache.get("k0", 1.0) is None  # pushed out, least recently used first
    assert cache.get("k1", 1.0) is None
    assert cache.get("k2", 1.0) == 2
    cache.put("k5", 5, expires_at=100.0, now=1.0)  # k3 is now the least recently used
    assert cache.get("k3", 1.0) is None
    assert cache.get("k2", 1.0) == 2
    assert cache.get("k5", 100.0) is None  # expired at its time
    stats = cache.statistics()
    assert (stats.size, stats.max_size, stats.hits, stats.evictions) == (2, 3, 2, 3)
    assert stats.misses == 4


def test_an_entry_already_expired_is_not_stored() -> None:
    cache: TtlCache[str, int] = TtlCache(max_size=2)
    cache.put("k", 1, expires_at=5.0, now=5.0)
    assert len(cache) == 0
    with pytest.raises(ValueError, match="at least 1"):
        TtlCache(max_size=0)


@given(st.lists(st.tuples(st.integers(0, 20), st.floats(0, 50)), max_size=200), st.integers(1, 8))
def test_the_cache_never_holds_more_than_its_bound(
    puts: list[tuple[int, float]], bound: int
) -> None:
    cache: TtlCache[int, int] = TtlCache(max_size=bound)
    for now, (key, life) in enumerate(puts):
        cache.put(key, key, expires_at=now + life, now=float(now))
        assert len(cache) <= bound
