"""The pure parts of the flow: URLs, metadata documents, the redirect checks, token answers."""

from __future__ import annotations

import contextlib
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.auth.client._challenge import BearerChallenge
from trimcp.auth.client._errors import FlowError
from trimcp.auth.client._metadata import MetadataRejected, ResourceMetadata, ServerMetadata
from trimcp.auth.client._pkce import Pkce, new_state
from trimcp.auth.client._redirect import authorization_url, code_from_redirect
from trimcp.auth.client._registration import (
    ClientRegistration,
    choose,
    registration_from_response,
)
from trimcp.auth.client._scopes import select_scopes, union
from trimcp.auth.client._tokens import TokenResponseRejected, TokenSet, token_set_from_response
from trimcp.auth.client._urls import (
    UnsafeUrl,
    canonical_resource,
    check_endpoint,
    check_fetchable,
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)

AS = "https://auth.example.com"


def server(**fields: object) -> ServerMetadata:
    document = {
        "issuer": AS,
        "authorization_endpoint": f"{AS}/authorize",
        "token_endpoint": f"{AS}/token",
        "code_challenge_methods_supported": ["S256"],
        **fields,
    }
    return ServerMetadata.from_document(document, issuer=AS, url=f"{AS}/.well-known/x")


# --- URLs -------------------------------------------------------------------------------------


def test_protected_resource_metadata_urls_path_first_then_root() -> None:
    assert resource_metadata_urls("https://MCP.example.com/public/mcp") == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://mcp.example.com/") == [
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    ]


def test_authorization_server_metadata_urls_in_the_order_mcp_lists() -> None:
    assert server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://auth.example.com/") == server_metadata_urls(AS)


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTPS://MCP.Example.COM/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/", "https://mcp.example.com"),
        ("https://mcp.example.com:8443/mcp#frag", "https://mcp.example.com:8443/mcp"),
        ("https://user:pw@mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("http://[::1]:3000/mcp/", "http://[::1]:3000/mcp/"),
    ],
)
def test_canonical_resource(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


@pytest.mark.parametrize(
    ("resource", "server_url", "covers"),
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com/a", "https://mcp.example.com/a/mcp", True),
        ("https://mcp.example.com/a", "https://mcp.example.com/ab", False),
        ("https://mcp.example.com/mcp", "https://mcp.example.com/other", False),
        ("https://evil.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
    ],
)
def test_resource_covers(resource: str, server_url: str, covers: bool) -> None:
    assert resource_covers(resource, server_url) is covers


urls = st.builds(
    "{}://{}{}/{}".format,
    st.sampled_from(["http", "https", "HTTPS"]),
    st.sampled_from(["mcp.example.com", "MCP.example.COM", "127.0.0.1", "[::1]"]),
    st.sampled_from(["", ":8080"]),
    st.text(alphabet="abc/-_.~%", max_size=12),
)


@given(urls)
def test_canonical_resource_is_idempotent_and_covers_itself(url: str) -> None:
    canonical = canonical_resource(url)
    assert canonical_resource(canonical) == canonical
    assert resource_covers(canonical, url)
    assert "#" not in canonical


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://auth.example.com/token", True),
        ("http://127.0.0.1:9000/token", True),
        ("http://localhost:9000/token", True),
        ("http://auth.example.com/token", False),
        ("https://169.254.169.254/token", False),
        ("ftp://auth.example.com/token", False),
        (None, False),
    ],
)
def test_credentials_go_to_https_or_loopback_only(url: object, ok: bool) -> None:
    if ok:
        assert check_endpoint(url, what="token_endpoint") == url
    else:
        with pytest.raises(UnsafeUrl):
            check_endpoint(url, what="token_endpoint")


def test_metadata_may_be_fetched_from_the_server_itself_over_http() -> None:
    origin = "http://mcp.lan:8000"
    url = "http://mcp.lan:8000/.well-known/oauth-protected-resource/mcp"
    assert check_fetchable(url, server_origin=origin, what="x") == url
    with pytest.raises(UnsafeUrl, match="plain http"):
        check_fetchable("http://other.lan/x", server_origin=origin, what="x")
    with pytest.raises(UnsafeUrl, match="link-local"):
        check_fetchable("http://169.254.169.254/latest", server_origin=origin, what="x")


# --- metadata documents -----------------------------------------------------------------------


def test_protected_resource_metadata_needs_a_resource_and_a_server() -> None:
    good = {"resource": "https://m/mcp", "authorization_servers": [AS], "scopes_supported": ["a"]}
    metadata = ResourceMetadata.from_document(good, url="u")
    assert metadata.authorization_servers == (AS,)
    assert metadata.scopes_supported == ("a",)
    for bad in ({}, {"resource": "r"}, {"resource": "r", "authorization_servers": []}, [1]):
        with pytest.raises(MetadataRejected):
            ResourceMetadata.from_document(bad, url="u")


def test_server_metadata_is_read_and_checked() -> None:
    metadata = server(
        registration_endpoint=f"{AS}/register",
        authorization_response_iss_parameter_supported=True,
        client_id_metadata_document_supported="yes",  # not true: treated as absent
        token_endpoint_auth_methods_supported="none",  # not a list: absent
    )
    assert metadata.registration_endpoint == f"{AS}/register"
    assert metadata.authorization_response_iss_parameter_supported
    assert not metadata.client_id_metadata_document_supported
    assert metadata.token_endpoint_auth_methods_supported is None
    metadata.require_pkce()


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"issuer": "https://other.example.com"}, "names the issuer"),
        ({"issuer": AS + "/"}, "names the issuer"),
        ({"token_endpoint": "http://auth.example.com/token"}, "not an https URL"),
        ({"token_endpoint": None}, "token_endpoint is missing"),
    ],
)
def test_server_metadata_refusals(fields: dict[str, object], words: str) -> None:
    with pytest.raises(MetadataRejected, match=words):
        server(**fields)


@pytest.mark.parametrize("methods", [None, [], ["plain"], "S256"])
def test_pkce_without_s256_is_refused(methods: object) -> None:
    with pytest.raises(MetadataRejected, match="S256"):
        server(code_challenge_methods_supported=methods).require_pkce()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
documents = st.dictionaries(
    st.sampled_from([
        "issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint",
        "code_challenge_methods_supported", "scopes_supported", "resource",
        "authorization_servers",
    ]),
    json_values | st.just(AS) | st.just(f"{AS}/token") | st.just([AS]),
)  # fmt: skip


@given(documents | json_values)
def test_any_document_is_read_or_refused_in_words(document: object) -> None:
    for read in (
        lambda: ServerMetadata.from_document(document, issuer=AS, url="u").require_pkce(),
        lambda: ResourceMetadata.from_document(document, url="u"),
    ):
        with contextlib.suppress(MetadataRejected):
            read()  # anything but MetadataRejected fails the test


# --- registration and scopes ------------------------------------------------------------------


def test_registration_order() -> None:
    configured = ClientRegistration(client_id="pre")
    stored = ClientRegistration(client_id="dyn", issuer=AS, kind="dynamic")
    elsewhere = ClientRegistration(client_id="dyn", issuer="https://other", kind="dynamic")
    url = "https://client.example/meta.json"
    full = server(client_id_metadata_document_supported=True, registration_endpoint=f"{AS}/r")
    assert (
        choose(full, configured=configured, stored=stored, metadata_document_url=url) is configured
    )
    assert choose(full, configured=None, stored=stored, metadata_document_url=url) is stored
    picked = choose(full, configured=None, stored=elsewhere, metadata_document_url=url)
    assert isinstance(picked, ClientRegistration)
    assert (picked.client_id, picked.kind, picked.auth_method) == (url, "metadata_document", "none")
    assert choose(full, configured=None, stored=None, metadata_document_url=None) == "register"
    plain = server(client_id_metadata_document_supported=True)
    assert choose(plain, configured=None, stored=None, metadata_document_url="https://c/") is None


def test_a_registration_answer_is_read() -> None:
    answer = {
        "client_id": "abc",
        "client_secret": "s3cr3t-value",
        "token_endpoint_auth_method": "client_secret_post",
    }
    got = registration_from_response(answer, issuer=AS, redirect_uri="r", requested_method="none")
    assert (got.client_id, got.auth_method) == ("abc", "client_secret_post")
    assert got.client_secret == "s3cr3t-value"
    assert "s3cr3t" not in repr(got)
    got = registration_from_response(
        {"client_id": "abc"}, issuer=AS, redirect_uri=None, requested_method="client_secret_basic"
    )
    assert got.auth_method == "none"
    with pytest.raises(FlowError, match="no client_id"):
        registration_from_response({}, issuer=AS, redirect_uri=None, requested_method="none")


def test_scope_selection() -> None:
    challenge = BearerChallenge(scopes=("a",))
    prm = ResourceMetadata(resource="r", authorization_servers=(AS,), scopes_supported=("x", "y"))
    assert select_scopes(challenge, ("c",), prm) == ("a",)
    assert select_scopes(BearerChallenge(), ("c",), prm) == ("c",)
    assert select_scopes(None, (), prm) == ("x", "y")
    assert select_scopes(None, (), None) == ()
    assert union(("a", "b"), ("b", "c")) == ("a", "b", "c")


# --- the redirect -----------------------------------------------------------------------------


def test_authorization_url_parameters() -> None:
    pkce = Pkce()
    url = authorization_url(
        f"{AS}/authorize?tenant=t&state=old",
        client_id="c",
        redirect_uri="http://127.0.0.1:5000/callback",
        pkce=pkce,
        state="s1",
        scopes=("a", "b"),
        resource="https://mcp.example.com/mcp",
    )
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert query == {
        "tenant": ["t"],
        "response_type": ["code"],
        "client_id": ["c"],
        "redirect_uri": ["http://127.0.0.1:5000/callback"],
        "code_challenge": [pkce.challenge],
        "code_challenge_method": ["S256"],
        "state": ["s1"],
        "scope": ["a b"],
        "resource": ["https://mcp.example.com/mcp"],
    }


def test_pkce_matches_rfc_7636_appendix_b() -> None:
    pkce = Pkce("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    assert pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert 43 <= len(Pkce().verifier) <= 128
    assert new_state() != new_state()
    assert "dBjft" not in repr(pkce)


@pytest.mark.parametrize(
    ("params", "iss_supported", "words"),
    [
        ({"code": "c", "state": "other", "iss": AS}, True, "another `state`"),
        ({"code": "c", "iss": AS}, True, "another `state`"),
        ({"code": "c", "state": "s", "iss": AS + "/"}, True, "names the issuer"),
        ({"code": "c", "state": "s", "iss": "https://x"}, False, "names the issuer"),
        ({"code": "c", "state": "s"}, True, "no `iss`"),
        ({"state": "s", "iss": AS}, True, "no code"),
        ({"error": "access_denied", "error_description": "no"}, True, "access_denied \\(no\\)"),
    ],
)
def test_redirect_refusals(params: dict[str, str], iss_supported: bool, words: str) -> None:
    metadata = server(authorization_response_iss_parameter_supported=iss_supported)
    with pytest.raises(FlowError, match=words):
        code_from_redirect(params, state="s", metadata=metadata)


def test_a_good_redirect_gives_its_code() -> None:
    assert (
        code_from_redirect(
            {"code": "c", "state": "s", "iss": AS},
            state="s",
            metadata=server(authorization_response_iss_parameter_supported=True),
        )
        == "c"
    )
    assert code_from_redirect({"code": "c", "state": "s"}, state="s", metadata=server()) == "c"


# --- token answers ----------------------------------------------------------------------------


def test_token_answers() -> None:
    tokens = token_set_from_response(
        {"access_token": "A", "token_type": "bearer", "expires_in": 60, "refresh_token": "R"},
        now=1000.0,
        requested=("a", "b"),
        issuer=AS,
        resource="r",
    )
    assert (tokens.expires_at, tokens.scopes, tokens.token_type) == (1060.0, ("a", "b"), "Bearer")
    secret = token_set_from_response(
        {"access_token": "sekrit-1", "token_type": "Bearer", "refresh_token": "sekrit-2"},
        now=0, requested=(), issuer=None, resource=None,
    )  # fmt: skip
    assert "sekrit" not in repr(secret)
    assert TokenSet.from_json(tokens.to_json()) == tokens
    assert tokens.expires_within(61, now=1000.0)
    assert not tokens.expires_within(59, now=1000.0)
    narrowed = token_set_from_response(
        {"access_token": "A", "token_type": "Bearer", "scope": "a"},
        now=0, requested=("a", "b"), issuer=None, resource=None,
    )  # fmt: skip
    assert narrowed.scopes == ("a",)
    assert narrowed.expires_at is None
    assert narrowed.with_refresh_token("old").refresh_token == "old"


@pytest.mark.parametrize(
    "answer",
    [
        [],
        {},
        {"access_token": ""},
        {"access_token": "A"},
        {"access_token": "A", "token_type": "DPoP"},
    ],
)
def test_unusable_token_answers(answer: object) -> None:
    with pytest.raises(TokenResponseRejected):
        token_set_from_response(answer, now=0, requested=(), issuer=None, resource=None)
