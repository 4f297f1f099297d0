"""OriginPolicy: Host and Origin allowlists (DNS-rebinding protection), a pure module."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.transports._origin import LOCALHOST, OriginPolicy, check_headers

DEFAULT = OriginPolicy()

# Header values as a client may send them: any text, plus near-misses of valid ones.
header_text = st.one_of(
    st.text(),
    st.text(alphabet="[]:/.*0123456789abcdefABCDEF-_%@ \t\x00é"),
    st.builds(
        lambda scheme, host, port: f"{scheme}{host}{port}",
        st.sampled_from(["", "http://", "https://", "ws://", "HTTP://", "file://", "://"]),
        st.sampled_from(["localhost", "LOCALHOST", "127.0.0.1", "[::1]", "[::1", "::1", "a b"]),
        st.sampled_from(["", ":", ":0", ":8080", ":65535", ":65536", ":*", ":x", ":\uff11\uff12"]),
    ),
)


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:3000",
        "LocalHost:3000",
        "127.0.0.1",
        "127.0.0.1:65535",
        "[::1]",
        "[::1]:8080",
        "[0:0:0:0:0:0:0:1]:8080",
        " localhost:1 ",
    ],
)
def test_default_allows_loopback_hosts_on_any_port(host: str) -> None:
    assert DEFAULT.check_host(host) is None


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:3000", "localhost.evil.example", "127.0.0.2:80"]
)
def test_default_refuses_other_hosts_with_421(host: str) -> None:
    problem = DEFAULT.check_host(host)
    assert problem is not None
    assert (problem.status, problem.header, problem.value) == (421, "Host", host)
    assert "allowed_hosts" in problem.message
    assert repr(host) in problem.message


@pytest.mark.parametrize("host", ["", "[::1", "[nope]:1", "local host", "localhost:http", "a:1:2"])
def test_malformed_host_is_400(host: str) -> None:
    problem = DEFAULT.check_host(host)
    assert problem is not None
    assert problem.status == 400


def test_missing_host_is_400() -> None:
    problem = DEFAULT.check_host(None)
    assert problem is not None
    assert (problem.status, problem.value) == (400, None)


def test_missing_origin_is_allowed() -> None:
    assert DEFAULT.check_origin(None) is None


@pytest.mark.parametrize(
    "origin",
    ["http://localhost:5173", "https://localhost", "HTTP://LOCALHOST:1", "http://[::1]:80"],
)
def test_default_allows_loopback_web_origins(origin: str) -> None:
    assert DEFAULT.check_origin(origin) is None


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://evil.example:443",
        "null",
        "chrome-extension://localhost",
        "file://localhost",
        "http://localhost/",
        "http://user@localhost",
        "",
    ],
)
def test_other_or_malformed_origins_are_403(origin: str) -> None:
    problem = DEFAULT.check_origin(origin)
    assert problem is not None
    assert (problem.status, problem.header) == (403, "Origin")


def test_refused_origin_message_names_the_value_and_the_setting() -> None:
    policy = OriginPolicy(origins_setting="transports.http.allowed_origins")
    problem = policy.check_origin("https://evil.example")
    assert problem is not None
    assert "'https://evil.example'" in problem.message
    assert "transports.http.allowed_origins" in problem.message


def test_explicit_ports_schemes_null_and_star() -> None:
    policy = OriginPolicy(
        allowed_hosts=("mcp.example:8443",),
        allowed_origins=("https://app.example", "app.example:3000", "null"),
    )
    assert policy.check_host("MCP.example:8443") is None
    assert policy.check_host("mcp.example") is not None
    assert policy.check_host("mcp.example:8444") is not None
    assert policy.check_origin("https://app.example") is None
    assert policy.check_origin("http://app.example") is not None  # scheme pinned
    assert policy.check_origin("http://app.example:3000") is None  # no scheme: http(s)
    assert policy.check_origin("ws://app.example:3000") is not None
    assert policy.check_origin("null") is None
    anything = OriginPolicy(allowed_hosts=("*",), allowed_origins=("*",))
    assert anything.check_host("whatever.example:1") is None
    assert anything.check_origin("null") is None
    assert anything.check_origin("moz-extension://abc") is None


def test_empty_lists_allow_nothing() -> None:
    policy = OriginPolicy(allowed_hosts=(), allowed_origins=())
    problem = policy.check_host("localhost")
    assert problem is not None
    assert "nothing is allowed" in problem.message
    assert policy.check_origin("http://localhost") is not None


@pytest.mark.parametrize("pattern", ["", "local host", "[::1", "host:*:*", "host:99999", "x/y"])
def test_malformed_patterns_are_refused_at_construction(pattern: str) -> None:
    with pytest.raises(ValueError, match="malformed host pattern"):
        OriginPolicy(allowed_hosts=(pattern,))
    with pytest.raises(ValueError, match="malformed origin pattern"):
        OriginPolicy(allowed_origins=(pattern,))


def test_check_headers_reads_raw_headers_case_insensitively() -> None:
    assert check_headers(DEFAULT, [(b"HOST", b"localhost:1"), (b"x", b"y")]) is None
    problem = check_headers(DEFAULT, [(b"Host", b"localhost"), (b"Origin", b"http://evil.example")])
    assert problem is not None
    assert problem.status == 403


@pytest.mark.parametrize("name", [b"host", b"origin"])
def test_check_headers_refuses_duplicates(name: bytes) -> None:
    headers = [(b"host", b"localhost"), (name, b"http://localhost"), (name, b"localhost")]
    problem = check_headers(DEFAULT, headers)
    assert problem is not None
    assert problem.status == 400
    assert "headers; send exactly one" in problem.message


def test_check_headers_without_host_is_400() -> None:
    problem = check_headers(DEFAULT, [])
    assert problem is not None
    assert (problem.status, problem.header) == (400, "Host")


@given(value=header_text)
def test_any_host_header_gets_an_answer_not_an_exception(value: str) -> None:
    problem = DEFAULT.check_host(value)
    assert problem is None or problem.status in (400, 421)


@given(value=header_text)
def test_any_origin_header_gets_an_answer_not_an_exception(value: str) -> None:
    problem = DEFAULT.check_origin(value)
    assert problem is None or problem.status == 403


@given(headers=st.lists(st.tuples(st.binary(max_size=20), st.binary(max_size=40)), max_size=6))
def test_any_raw_headers_get_an_answer_not_an_exception(headers: list[tuple[bytes, bytes]]) -> None:
    problem = check_headers(DEFAULT, headers)
    assert problem is None or problem.status in (400, 403, 421)


@given(pattern=header_text)
def test_any_pattern_either_builds_a_policy_or_is_a_value_error(pattern: str) -> None:
    try:
        policy = OriginPolicy(allowed_hosts=(pattern,), allowed_origins=(pattern,))
    except ValueError:
        return
    policy.check_host(pattern)
    policy.check_origin(pattern)


@given(
    name=st.sampled_from(["localhost", "127.0.0.1", "[::1]"]),
    port=st.none() | st.integers(0, 65535),
    upper=st.booleans(),
)
def test_loopback_on_every_port_is_allowed(name: str, port: int | None, upper: bool) -> None:
    host = name.upper() if upper else name
    value = host if port is None else f"{host}:{port}"
    assert DEFAULT.check_host(value) is None
    assert DEFAULT.check_origin(f"http://{value}") is None
    assert DEFAULT.check_origin(f"https://{value}") is None


@given(
    label=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
    port=st.integers(0, 65535),
)
def test_other_names_are_refused(label: str, port: int) -> None:
    host = f"{label}.example"
    assert DEFAULT.check_host(f"{host}:{port}") is not None
    assert DEFAULT.check_origin(f"http://{host}:{port}") is not None


def test_localhost_constant_is_the_default() -> None:
    assert OriginPolicy().allowed_hosts == OriginPolicy().allowed_origins == LOCALHOST


@given(
    host=st.sampled_from(["localhost:8000", "evil.example:80", "127.0.0.1", "[::1]:9", "x"]),
    origin=st.sampled_from([None, "http://localhost:3000", "https://evil.example", "null"]),
)
def test_remembered_answers_are_the_same_answers(host: str, origin: str | None) -> None:
    policy = OriginPolicy()
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    first = check_headers(policy, headers)
    assert check_headers(policy, headers) == first
    assert check_headers(OriginPolicy(), headers) == first
    # Only accepted pairs are remembered, and only so many.
    assert all(
        check_headers(OriginPolicy(), [(b"host", h)] + ([(b"origin", o)] if o else [])) is None
        for h, o in policy._accepted
    )
    assert len(policy._accepted) <= 256
