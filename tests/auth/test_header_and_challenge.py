"""The Authorization header read (RFC 6750 section 2.1) and the challenge written (section 3)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.auth import bearer_token, render_challenge
from trimcp.errors import AuthError, MalformedAuthorization, TokenRequired

B64TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"
b64tokens = st.builds(
    lambda body, pad: body + "=" * pad,
    st.text(alphabet=B64TOKEN_CHARS, min_size=1, max_size=200),
    st.integers(0, 2),
)


@given(token=b64tokens, scheme=st.sampled_from(["Bearer", "bearer", "BEARER", "bEaReR"]))
def test_a_bearer_token_is_read_whatever_the_scheme_case(token: str, scheme: str) -> None:
    assert bearer_token([f"{scheme} {token}".encode()]) == token
    assert bearer_token([f"  {scheme}   {token}  ".encode()]) == token


@given(values=st.lists(st.binary(max_size=80), max_size=3), query=st.binary(max_size=40))
def test_any_header_is_read_or_refused_with_a_typed_error(
    values: list[bytes], query: bytes
) -> None:
    refusal: AuthError | None = None
    try:
        token = bearer_token(values, query)
    except (TokenRequired, MalformedAuthorization) as caught:
        refusal = caught
    if refusal is None:
        assert re.fullmatch(r"[A-Za-z0-9\-._~+/]+=*", token)
    else:
        assert "Authorization: Bearer <token>" in refusal.message or "query" in refusal.message


@pytest.mark.parametrize(
    ("values", "query", "error", "words"),
    [
        ([], b"", TokenRequired, "requires authorization"),
        ([b"Basic dXNlcjpwYXNz"], b"", TokenRequired, "'Basic' scheme"),
        ([b"Bearer"], b"", MalformedAuthorization, "no token after Bearer"),
        ([b"Bearer    "], b"", MalformedAuthorization, "no token after Bearer"),
        ([b"Bearer a b"], b"", MalformedAuthorization, "characters a token cannot have"),
        ([b'Bearer a"b'], b"", MalformedAuthorization, "characters a token cannot have"),
        ([b"Bearer a=b"], b"", MalformedAuthorization, "characters a token cannot have"),
        ([b"Bearer a", b"Bearer b"], b"", MalformedAuthorization, "2 Authorization headers"),
        ([b"Bearer " + b"a" * (16 * 1024 + 1)], b"", MalformedAuthorization, "over the 16384"),
        ([], b"x=1&access_token=abc", MalformedAuthorization, "in the URL query"),
        ([b"Bearer abc"], b"access_token=abc", MalformedAuthorization, "in the URL query"),
    ],
)
def test_refusals_say_what_was_wrong(
    values: list[bytes], query: bytes, error: type[AuthError], words: str
) -> None:
    with pytest.raises(error) as caught:
        bearer_token(values, query)
    assert words in str(caught.value)
    assert "abc" not in str(caught.value)  # the token is never quoted back
    assert caught.value.status == (401 if error is TokenRequired else 400)


def test_a_query_that_only_looks_like_a_token_parameter_is_fine() -> None:
    assert bearer_token([b"Bearer abc"], b"no_access_token_here=1") == "abc"


# --- WWW-Authenticate -------------------------------------------------------------------------

METADATA = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


def test_the_challenge_of_a_request_without_a_token_has_no_error_code() -> None:
    header = render_challenge(scopes=["files:read"], resource_metadata=METADATA)
    assert header == f'Bearer scope="files:read", resource_metadata="{METADATA}"'


def test_the_insufficient_scope_challenge_names_everything_the_spec_lists() -> None:
    header = render_challenge(
        error="insufficient_scope",
        description="File write permission required for this operation",
        scopes=["mcp", "files:write", "mcp"],
        resource_metadata=METADATA,
    )
    assert header == (
        'Bearer error="insufficient_scope", scope="mcp files:write", '
        f'resource_metadata="{METADATA}", '
        'error_description="File write permission required for this operation"'
    )


def test_a_challenge_with_nothing_to_say_is_the_bare_scheme() -> None:
    assert render_challenge() == "Bearer"


def test_values_a_quoted_string_cannot_hold_are_cleaned_not_escaped() -> None:
    header = render_challenge(
        error="invalid_token",
        description='bad "quote" and \\ backslash, é\r\n',
        scopes=["ok", "not ok", 'q"uote', "back\\slash", ""],
        resource_metadata='https://h/x?"y"\\',
    )
    assert header == (
        'Bearer error="invalid_token", scope="ok", resource_metadata="https://h/x?%22y%22%5C", '
        'error_description="bad  quote  and   backslash,    "'
    )


# RFC 7235 section 2.1 with RFC 6750's value grammar: name="value", no escapes needed.
_PARAM = r'[a-z_]+="[\x20\x21\x23-\x5b\x5d-\x7e]*"'
_CHALLENGE = re.compile(rf"Bearer( {_PARAM}(, {_PARAM})*)?")


def _params(header: str) -> dict[str, str]:
    return dict(re.findall(r'([a-z_]+)="([^"]*)"', header))


@given(
    error=st.none() | st.sampled_from(["invalid_request", "invalid_token", "insufficient_scope"]),
    description=st.none() | st.text(max_size=600),
    scopes=st.lists(st.text(max_size=12), max_size=5),
    metadata=st.none() | st.text(max_size=60),
)
def test_every_challenge_parses_and_keeps_what_it_can(
    error: str | None, description: str | None, scopes: list[str], metadata: str | None
) -> None:
    header = render_challenge(
        error=error, description=description, scopes=scopes, resource_metadata=metadata
    )
    assert _CHALLENGE.fullmatch(header), header
    params = _params(header)
    if error:
        assert params["error"] == error
    valid = [s for s in dict.fromkeys(scopes) if re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", s)]
    assert params.get("scope", "").split() == valid
    if description:
        assert len(params["error_description"]) == min(len(description), 400)
