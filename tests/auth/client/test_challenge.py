"""Reading ``WWW-Authenticate``: examples from the RFCs and MCP, and Hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.auth.client._challenge import (
    BearerChallenge,
    Challenge,
    bearer_challenge,
    parse_challenges,
)


def test_the_mcp_step_up_challenge() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="Additional file write permission required"'
    )
    assert bearer_challenge([header]) == BearerChallenge(
        error="insufficient_scope",
        error_description="Additional file write permission required",
        scopes=("files:read", "files:write"),
        resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",
    )


def test_several_challenges_in_one_header_and_several_headers() -> None:
    header = 'Basic realm="x", Bearer realm="mcp",error=invalid_token ,  DPoP algs="ES256"'
    assert parse_challenges(header) == [
        Challenge("basic", {"realm": "x"}),
        Challenge("bearer", {"realm": "mcp", "error": "invalid_token"}),
        Challenge("dpop", {"algs": "ES256"}),
    ]
    found = bearer_challenge(['Basic realm="x"', 'BEARER scope="a"'])
    assert found is not None
    assert found.scopes == ("a",)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Bearer", [Challenge("bearer")]),
        ("Negotiate abc==", [Challenge("negotiate", token68="abc==")]),
        ("Negotiate abc=, Bearer", [Challenge("negotiate", token68="abc="), Challenge("bearer")]),
        ('Bearer a="q\\"uo\\\\te"', [Challenge("bearer", {"a": 'q"uo\\te'})]),
        ('Bearer a = "spaced" , b=c', [Challenge("bearer", {"a": "spaced", "b": "c"})]),
        ('Bearer A="1", a="2"', [Challenge("bearer", {"a": "1"})]),
        (", , Bearer", [Challenge("bearer")]),
        ('Bearer a="unterminated', [Challenge("bearer")]),
        ("", []),
        ('"', []),
    ],
)
def test_edge_cases(header: str, expected: list[Challenge]) -> None:
    assert parse_challenges(header) == expected


def test_no_bearer_challenge() -> None:
    assert bearer_challenge(['Basic realm="x"']) is None
    assert bearer_challenge([]) is None


TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
tokens = st.text(alphabet=TCHARS, min_size=1, max_size=12)
values = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
params = st.dictionaries(tokens.map(str.lower), values, max_size=4)
challenges = st.lists(st.tuples(tokens, params), min_size=1, max_size=3)


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(scheme: str, fields: dict[str, str]) -> str:
    written = ", ".join(f"{name}={quote(value)}" for name, value in fields.items())
    return f"{scheme} {written}" if written else scheme


@given(challenges)
def test_rendered_challenges_parse_back(items: list[tuple[str, dict[str, str]]]) -> None:
    header = ", ".join(render(scheme, fields) for scheme, fields in items)
    parsed = parse_challenges(header)
    assert [(c.scheme, c.params) for c in parsed] == [
        (scheme.lower(), fields) for scheme, fields in items
    ]


@given(st.text(max_size=200))
def test_any_text_parses_without_an_exception(header: str) -> None:
    for challenge in parse_challenges(header):
        assert challenge.scheme
    bearer_challenge([header])
