"""The verifiers without sockets: JWT with static keys, JWKS and introspection in-process.

The JWKS and introspection endpoints here are ``httpx.MockTransport`` handlers (httpx's own
in-process transport), so trio's ``MockClock`` can drive cache lifetimes and refresh limits
in virtual time. ``test_endpoint.py`` does the same over real sockets.
"""

from __future__ import annotations

import base64
import urllib.parse
from typing import TYPE_CHECKING

import httpx
import orjson
import pytest
import trio
from joserfc.jwk import OctKey, RSAKey

from tests.auth._issuer import Issuer, ec_key, forge, rsa_key
from trimcp.auth import (
    ClaimsPolicy,
    IntrospectionVerifier,
    JwksKeys,
    JwtVerifier,
    StaticKey,
)
from trimcp.errors import InvalidToken, VerifierUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    from trio.testing import MockClock

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
JWKS_URL = f"{ISSUER}/jwks"
INTROSPECT_URL = f"{ISSUER}/introspect"
EPOCH = 1_800_000_000.0


def wall_clock() -> float:
    """Seconds since the epoch in virtual time: token times move with trio's MockClock."""
    return EPOCH + trio.current_time()


def issuer(keys: list[object] | None = None) -> Issuer:
    return Issuer(url=ISSUER, resource=RESOURCE, keys=keys or [rsa_key()], now=wall_clock)  # type: ignore[arg-type]


POLICY = ClaimsPolicy(issuers=(ISSUER,), audiences=(RESOURCE,), leeway=0)


def pem_verifier(algorithms: tuple[str, ...] | None = None) -> JwtVerifier:
    keys = StaticKey.from_pem(rsa_key().as_pem(private=False))
    return JwtVerifier(keys, POLICY, algorithms=algorithms, clock=wall_clock)


# --- JWT with a static key ----------------------------------------------------------------------


async def test_a_valid_token_gives_its_identity() -> None:
    identity = await pem_verifier().verify(issuer().token(scope="mcp files:read"))
    assert (identity.subject, identity.client_id, identity.issuer) == ("alice", "app-1", ISSUER)
    assert identity.scopes == {"mcp", "files:read"}


async def test_the_private_half_of_a_pem_key_is_not_kept() -> None:
    keys = StaticKey.from_pem(rsa_key().as_pem(private=True))
    verifier = JwtVerifier(keys, POLICY, clock=wall_clock)
    assert (await verifier.verify(issuer().token())).subject == "alice"
    assert not (await keys.key_for(None)).is_private


async def test_es256_is_accepted_by_default_with_an_ec_key() -> None:
    keys = StaticKey.from_pem(ec_key().as_pem(private=False))
    verifier = JwtVerifier(keys, POLICY, clock=wall_clock)
    token = issuer([ec_key()]).token(alg="ES256")
    assert (await verifier.verify(token)).subject == "alice"


def _public_pem() -> bytes:
    return rsa_key().as_pem(private=False)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda i: "not-a-jwt", "not a signed JWT"),
        (lambda i: "a.b.c", "not a signed JWT"),
        (lambda i: "é.b.c", "not a signed JWT"),
        (lambda i: "e30.e30.e30.e30.e30", "not a signed JWT"),  # a JWE has five parts
        (lambda i: forge({"alg": "none"}, i.claims(), None), "algorithm 'none'"),
        (lambda i: forge({"alg": "NONE", "kid": "rsa-1"}, i.claims(), None), "algorithm 'NONE'"),
        # The algorithm-confusion attack: HS256 "signed" with the public key as the secret.
        (lambda i: forge({"alg": "HS256", "kid": "rsa-1"}, i.claims(), _public_pem()), "'HS256'"),
        (lambda i: i.token()[:-4] + "AAAA", "signature does not verify"),
        (lambda i: i.token(key=RSAKey.generate_key(2048, parameters={"kid": "x"})), "signature"),
        (lambda i: i.token(exp=int(wall_clock()) - 1), "expired"),
        (lambda i: i.token(nbf=int(wall_clock()) + 60), "not valid yet"),
        (lambda i: i.token(iss="https://other.example.com"), "accepts tokens from"),
        (lambda i: i.token(aud="https://other.example.com/mcp"), "not for this server"),
        (lambda i: i.token(alg="PS256"), "algorithm 'PS256'"),
    ],
)
async def test_bad_tokens_are_refused_with_the_reason(
    make: Callable[[Issuer], str], words: str
) -> None:
    token = make(issuer())
    with pytest.raises(InvalidToken, match=words) as caught:
        await pem_verifier().verify(token)
    assert token not in caught.value.message


async def test_a_kid_that_is_not_a_string_is_refused() -> None:
    token = forge({"alg": "RS256", "kid": 7}, issuer().claims(), None) + "x"
    with pytest.raises(InvalidToken, match="kid header is not a string"):
        await pem_verifier().verify(token)


def test_allowlists_that_could_be_abused_are_refused_when_built() -> None:
    pem = StaticKey.from_pem(_public_pem())
    secret = StaticKey.from_secret(b"k" * 32)
    with pytest.raises(ValueError, match='"none" is never accepted'):
        JwtVerifier(pem, POLICY, algorithms=("RS256", "none"))
    with pytest.raises(ValueError, match="'HS256' cannot be used with a JWKS or PEM public key"):
        JwtVerifier(pem, POLICY, algorithms=("HS256",))
    with pytest.raises(ValueError, match="'RS256' cannot be used with a shared secret"):
        JwtVerifier(secret, POLICY, algorithms=("RS256",))
    with pytest.raises(ValueError, match="empty"):
        JwtVerifier(pem, POLICY, algorithms=())
    with pytest.raises(ValueError, match="at least 32 bytes"):
        StaticKey.from_secret(b"short")
    with pytest.raises(ValueError, match="not a PEM"):
        StaticKey.from_pem(b"-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n")


async def test_a_shared_secret_verifies_hs256_only() -> None:
    secret = b"0123456789abcdef0123456789abcdef"
    verifier = JwtVerifier(StaticKey.from_secret(secret), POLICY, clock=wall_clock)
    hs = issuer([OctKey.import_key(secret, parameters={"kid": "s"})])
    assert (await verifier.verify(hs.token(alg="HS256"))).subject == "alice"
    with pytest.raises(InvalidToken, match="'RS256'"):
        await verifier.verify(issuer().token())


# --- JWKS: cached, refreshed on an unknown kid, rate-limited, bounded ---------------------------


class FakeJwks:
    """An in-process JWKS endpoint: serves ``keys``, counts fetches, fails on demand."""

    def __init__(self, keys: list[RSAKey]) -> None:
        self.keys = keys
        self.fetches = 0
        self.status = 200

    def handle(self, request: httpx.Request) -> httpx.Response:
        assert str(request.url) == JWKS_URL
        self.fetches += 1
        document = {"keys": [key.as_dict(private=False) for key in self.keys]}
        return httpx.Response(self.status, content=orjson.dumps(document))

    def source(self, **settings: object) -> JwksKeys:
        return JwksKeys(JWKS_URL, transport=httpx.MockTransport(self.handle), **settings)  # type: ignore[arg-type]


async def test_jwks_keys_are_kept_for_max_age(autojump_clock: MockClock) -> None:
    server = FakeJwks([rsa_key()])
    keys = server.source(max_age=300.0, refresh_interval=30.0)
    verifier = JwtVerifier(keys, POLICY, clock=wall_clock)
    for _ in range(5):
        await verifier.verify(issuer().token())
    assert server.fetches == 1
    await trio.sleep(299)
    await verifier.verify(issuer().token())
    assert server.fetches == 1
    await trio.sleep(1)
    await verifier.verify(issuer().token())
    assert server.fetches == 2
    assert keys.statistics() == (1, 2, 0)
    await verifier.aclose()


async def test_an_unknown_kid_refreshes_once_then_is_refused(autojump_clock: MockClock) -> None:
    server = FakeJwks([rsa_key()])
    verifier = JwtVerifier(server.source(refresh_interval=30.0), POLICY, clock=wall_clock)
    await verifier.verify(issuer().token())
    stranger = RSAKey.generate_key(2048, parameters={"kid": "unknown"})
    with pytest.raises(InvalidToken, match="kid 'unknown' is not in"):
        await verifier.verify(issuer([stranger]).token())
    assert server.fetches == 1  # the keys were fetched less than refresh_interval ago
    await trio.sleep(30)
    with pytest.raises(InvalidToken, match="kid 'unknown' is not in"):
        await verifier.verify(issuer([stranger]).token())
    assert server.fetches == 2  # fetched again once, at once
    for _ in range(10):  # made-up kids cannot make it hammer the JWKS URL
        with pytest.raises(InvalidToken):
            await verifier.verify(issuer([stranger]).token())
    assert server.fetches == 2
    # The server rotates its keys: after the interval, the new kid is fetched and accepted.
    server.keys = [rsa_key(), stranger]
    await trio.sleep(30)
    assert (await verifier.verify(issuer([stranger]).token())).subject == "alice"
    assert server.fetches == 3
    await verifier.aclose()


async def test_concurrent_requests_share_one_fetch(autojump_clock: MockClock) -> None:
    server = FakeJwks([rsa_key()])
    verifier = JwtVerifier(server.source(), POLICY, clock=wall_clock)
    async with trio.open_nursery() as nursery:
        for _ in range(20):
            nursery.start_soon(verifier.verify, issuer().token())
    assert server.fetches == 1
    await verifier.aclose()


async def test_a_failing_jwks_keeps_the_keys_held(autojump_clock: MockClock) -> None:
    server = FakeJwks([rsa_key()])
    keys = server.source(max_age=60.0, refresh_interval=10.0)
    verifier = JwtVerifier(keys, POLICY, clock=wall_clock)
    await verifier.verify(issuer().token())
    server.status = 500
    await trio.sleep(60)
    await verifier.verify(issuer().token())  # stale keys still verify
    await verifier.verify(issuer().token())  # and the failure is not retried at once
    assert server.fetches == 2
    assert keys.statistics() == (1, 2, 1)
    await verifier.aclose()


async def test_without_any_keys_tokens_cannot_be_checked(autojump_clock: MockClock) -> None:
    server = FakeJwks([rsa_key()])
    server.status = 503
    verifier = JwtVerifier(server.source(), POLICY, clock=wall_clock)
    with pytest.raises(VerifierUnavailable, match="could not be fetched from"):
        await verifier.verify(issuer().token())
    await verifier.aclose()


async def test_a_jwks_past_max_keys_keeps_only_the_first(autojump_clock: MockClock) -> None:
    extra = [RSAKey.generate_key(2048, parameters={"kid": f"k{n}"}) for n in range(2)]
    server = FakeJwks([rsa_key(), *extra])
    keys = server.source(max_keys=2)
    verifier = JwtVerifier(keys, POLICY, clock=wall_clock)
    assert (await verifier.verify(issuer([extra[0]]).token())).subject == "alice"
    assert keys.statistics().keys == 2
    with pytest.raises(InvalidToken, match="kid 'k1'"):
        await verifier.verify(issuer([extra[1]]).token())
    await verifier.aclose()


async def test_symmetric_and_encryption_keys_in_a_jwks_are_skipped(
    autojump_clock: MockClock,
) -> None:
    oct_key = OctKey.import_key(b"x" * 32, parameters={"kid": "hmac"})
    enc_key = RSAKey.generate_key(2048, parameters={"kid": "enc", "use": "enc"})

    def handle(request: httpx.Request) -> httpx.Response:
        keys = [oct_key.as_dict(private=True), enc_key.as_dict(private=False), {"kty": "RSA"}]
        keys.append(rsa_key().as_dict(private=False))
        return httpx.Response(200, json={"keys": keys})

    keys = JwksKeys(JWKS_URL, transport=httpx.MockTransport(handle))
    verifier = JwtVerifier(keys, POLICY, clock=wall_clock)
    assert (await verifier.verify(issuer().token())).subject == "alice"
    assert keys.statistics().keys == 1
    await verifier.aclose()


# --- introspection (RFC 7662) -------------------------------------------------------------------


class FakeIntrospection:
    """An in-process introspection endpoint: ``active`` tokens, client credentials checked."""

    def __init__(self) -> None:
        self.active: dict[str, dict[str, object]] = {}
        self.calls = 0
        self.forms: list[dict[str, str]] = []
        self.authorization: list[str | None] = []
        self.gate: trio.Event | None = None

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        form = dict(urllib.parse.parse_qsl(request.content.decode()))
        self.forms.append(form)
        self.authorization.append(request.headers.get("authorization"))
        claims = self.active.get(form["token"])
        return httpx.Response(200, json={"active": True, **claims} if claims else {"active": False})

    def verifier(self, **settings: object) -> IntrospectionVerifier:
        return IntrospectionVerifier(
            INTROSPECT_URL,
            POLICY,
            client_id="rs one",
            client_secret="p@ss:word",
            transport=httpx.MockTransport(self.handle),
            clock=wall_clock,
            **settings,  # type: ignore[arg-type]
        )


def active_claims(**changes: object) -> dict[str, object]:
    return issuer().claims(**changes)


async def test_introspection_sends_the_token_and_authenticates(autojump_clock: MockClock) -> None:
    server = FakeIntrospection()
    server.active["opaque-1"] = active_claims(scope="mcp admin")
    verifier = server.verifier()
    identity = await verifier.verify("opaque-1")
    assert identity.scopes == {"mcp", "admin"}
    assert server.forms == [{"token": "opaque-1", "token_type_hint": "access_token"}]
    # RFC 6749 section 2.3.1: id and secret form-encoded, then Basic.
    expected = base64.b64encode(b"rs+one:p%40ss%3Aword").decode()
    assert server.authorization == [f"Basic {expected}"]
    await verifier.aclose()


async def test_client_secret_post_puts_the_credentials_in_the_form(
    autojump_clock: MockClock,
) -> None:
    server = FakeIntrospection()
    server.active["t"] = active_claims()
    verifier = server.verifier(client_auth="client_secret_post")
    await verifier.verify("t")
    assert server.forms[0]["client_id"] == "rs one"
    assert server.forms[0]["client_secret"] == "p@ss:word"
    assert server.authorization == [None]
    await verifier.aclose()


async def test_answers_are_cached_briefly_and_never_past_exp(autojump_clock: MockClock) -> None:
    server = FakeIntrospection()
    server.active["long"] = active_claims(exp=int(wall_clock()) + 3600)
    server.active["short"] = active_claims(exp=int(wall_clock()) + 20)
    verifier = server.verifier(cache_ttl=60.0)
    for _ in range(3):
        await verifier.verify("long")
        await verifier.verify("short")
    assert server.calls == 2
    await trio.sleep(20)
    with pytest.raises(InvalidToken):  # expired: asked again, and the answer checked
        await verifier.verify("short")
    assert server.calls == 3
    await trio.sleep(40)
    await verifier.verify("long")
    assert server.calls == 4
    await verifier.aclose()


async def test_inactive_tokens_are_refused_and_the_refusal_cached(
    autojump_clock: MockClock,
) -> None:
    server = FakeIntrospection()
    verifier = server.verifier(cache_ttl=30.0)
    for _ in range(3):
        with pytest.raises(InvalidToken, match="not active"):
            await verifier.verify("revoked")
    assert server.calls == 1
    server.active["wrong-aud"] = active_claims(aud="https://other.example.com")
    for _ in range(2):
        with pytest.raises(InvalidToken, match="not for this server"):
            await verifier.verify("wrong-aud")
    assert server.calls == 2
    await verifier.aclose()


async def test_the_cache_is_bounded(autojump_clock: MockClock) -> None:
    server = FakeIntrospection()
    for number in range(5):
        server.active[f"t{number}"] = active_claims()
    verifier = server.verifier(cache_size=3)
    for number in range(5):
        await verifier.verify(f"t{number}")
    stats = verifier.statistics()
    assert (stats.size, stats.evictions) == (3, 2)
    await verifier.verify("t0")  # pushed out: asked again
    await verifier.verify("t4")  # still held
    assert server.calls == 6
    await verifier.aclose()


async def test_concurrent_checks_of_one_token_share_one_call(autojump_clock: MockClock) -> None:
    server = FakeIntrospection()
    server.active["t"] = active_claims()
    server.gate = trio.Event()
    verifier = server.verifier()
    async with trio.open_nursery() as nursery:
        for _ in range(10):
            nursery.start_soon(verifier.verify, "t")
        await trio.testing.wait_all_tasks_blocked()
        server.gate.set()
    assert server.calls == 1
    await verifier.aclose()


@pytest.mark.parametrize("status", [401, 500])
async def test_an_introspection_failure_is_unavailable_not_invalid(
    autojump_clock: MockClock, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"error": "nope"})

    verifier = IntrospectionVerifier(
        INTROSPECT_URL,
        POLICY,
        client_id="rs",
        client_secret="x",
        transport=httpx.MockTransport(handle),
    )
    with pytest.raises(VerifierUnavailable, match="introspection endpoint failed"):
        await verifier.verify("tok")
    if status == 401:
        assert "check the client id and secret" in caplog.text
    await verifier.aclose()
