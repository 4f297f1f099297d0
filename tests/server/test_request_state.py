"""Sealed MRTR requestState: round trips, bindings, expiry, replay, key rings, tampering."""

from __future__ import annotations

import base64
import logging
import os
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.errors import ConfigError, InvalidParams, RequestStateRejected
from trimcp.server import _request_state
from trimcp.server._request_state import (
    OpenedState,
    RequestStateKeys,
    RequestStateSealer,
    StateBinding,
    _key_id,
    generate_key,
    params_digest,
)

if TYPE_CHECKING:
    from pathlib import Path

    from trimcp.protocol import JsonObject

KEY = bytes(range(32))
OLD_KEY = bytes(range(100, 132))
T0 = 1_700_000_000.0
PARAMS: JsonObject = {"name": "book", "arguments": {"city": "Oslo", "nights": 2}}
BINDING = StateBinding("https://issuer|alice", "tools/call", params_digest("tools/call", PARAMS))


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_sealer(
    clock: FakeClock | None = None,
    keys: list[bytes] | None = None,
    *,
    ttl: float = 600.0,
    max_size: int = 65536,
    replay_limit: int = 100_000,
) -> RequestStateSealer:
    return RequestStateSealer(
        RequestStateKeys(keys or [KEY]),
        ttl=ttl,
        max_size=max_size,
        replay_limit=replay_limit,
        clock=clock or FakeClock(),
    )


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def forge(plaintext: bytes, key: bytes = KEY) -> str:
    """Seal arbitrary plaintext exactly as the module does, to reach its inner checks."""
    header = b"\x01" + _key_id(key)
    nonce = os.urandom(12)
    return b64(header + nonce + AESGCM(key).encrypt(nonce, plaintext, header))


def claims(**changes: object) -> bytes:
    body: dict[str, object] = {
        "v": 1,
        "id": "abc",
        "iat": T0,
        "exp": T0 + 600,
        "p": BINDING.principal,
        "m": BINDING.method,
        "d": BINDING.digest,
        "s": {"step": 1},
    }
    body.update(changes)
    return orjson.dumps({k: v for k, v in body.items() if v is not ...})


def rejected(sealer: RequestStateSealer, token: object, binding: StateBinding = BINDING) -> str:
    """Open ``token``, expect a refusal, return its reason."""
    with pytest.raises(RequestStateRejected) as info:
        sealer.open(token, binding)
    assert isinstance(info.value, InvalidParams)
    assert info.value.data == {"reason": info.value.reason}
    return info.value.reason


# --- round trip and format -------------------------------------------------------------------


def test_round_trip_returns_payload_id_and_expiry() -> None:
    sealer = make_sealer()
    payload: JsonObject = {"step": 2, "answers": ["yes", None, 1.5], "nested": {"a": [True]}}
    token = sealer.seal(payload, BINDING)
    opened = sealer.open(token, BINDING)
    assert opened.payload == payload
    assert opened.expires_at == T0 + 600
    again = sealer.open(sealer.seal(payload, BINDING), BINDING)
    assert again.state_id != opened.state_id
    assert isinstance(opened, OpenedState)


def test_token_is_unpadded_base64url_naming_its_key_and_hides_the_payload() -> None:
    sealer = make_sealer()
    token = sealer.seal({"secret": "hunter2-marker"}, BINDING)
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    data = unb64(token)
    assert data[0] == 1
    assert data[1:5] == _key_id(KEY)
    assert b"hunter2" not in data
    assert b"alice" not in data


def test_default_ring_and_generated_keys() -> None:
    key = generate_key()
    assert isinstance(key, bytes)
    assert len(key) == 32
    assert generate_key() != key
    sealer = RequestStateSealer()
    assert sealer.open(sealer.seal({}, BINDING), BINDING).payload == {}
    # Two default rings are two different random keys.
    assert rejected(RequestStateSealer(), sealer.seal({}, BINDING)) == "invalid"


def test_ring_repr_shows_ids_not_keys() -> None:
    ring = RequestStateKeys([KEY, OLD_KEY])
    text = repr(ring)
    assert _key_id(KEY).hex() in text
    assert KEY.hex() not in text
    assert base64.b64encode(KEY).decode() not in text


# --- bindings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "other",
    [
        StateBinding("https://issuer|mallory", BINDING.method, BINDING.digest),
        StateBinding(None, BINDING.method, BINDING.digest),
    ],
)
def test_another_principal_is_refused_without_naming_the_request(other: StateBinding) -> None:
    sealer = make_sealer()
    token = sealer.seal({}, BINDING)
    with pytest.raises(RequestStateRejected, match="another principal") as info:
        sealer.open(token, other)
    assert info.value.reason == "mismatch"
    assert "tools/call" not in str(info.value)
    assert "alice" not in str(info.value)


def test_a_state_issued_without_auth_is_refused_to_a_principal() -> None:
    sealer = make_sealer()
    anonymous = StateBinding(None, BINDING.method, BINDING.digest)
    token = sealer.seal({}, anonymous)
    assert sealer.open(token, anonymous).payload == {}
    assert rejected(sealer, token, BINDING) == "mismatch"


def test_another_method_is_refused() -> None:
    sealer = make_sealer()
    token = sealer.seal({}, BINDING)
    other = StateBinding(BINDING.principal, "prompts/get", BINDING.digest)
    with pytest.raises(RequestStateRejected, match="issued for another request") as info:
        sealer.open(token, other)
    assert info.value.reason == "mismatch"
    assert "tools/call" in str(info.value)
    assert "prompts/get" in str(info.value)


def test_other_params_are_refused() -> None:
    sealer = make_sealer()
    token = sealer.seal({}, BINDING)
    changed = {"name": "book", "arguments": {"city": "Bergen", "nights": 2}}
    other = StateBinding(BINDING.principal, "tools/call", params_digest("tools/call", changed))
    with pytest.raises(RequestStateRejected, match="name and arguments differ") as info:
        sealer.open(token, other)
    assert info.value.reason == "mismatch"
    assert "without requestState and inputResponses" in str(info.value)


# --- time ------------------------------------------------------------------------------------


def test_expiry_has_no_leeway() -> None:
    clock = FakeClock()
    sealer = make_sealer(clock, ttl=600)
    token = sealer.seal({}, BINDING)
    clock.now = T0 + 599.999
    assert sealer.open(token, BINDING).payload == {}
    clock.now = T0 + 600
    with pytest.raises(RequestStateRejected) as info:
        sealer.open(token, BINDING)
    assert info.value.reason == "expired"
    assert str(info.value) == (
        "requestState has expired (it is valid for 600 s); send the request again without "
        "requestState and inputResponses to start over"
    )


def test_expiry_is_checked_even_though_the_key_still_opens_it() -> None:
    clock = FakeClock()
    sealer = make_sealer(clock, ttl=30)
    token = sealer.seal({}, BINDING)
    clock.now += 10_000
    assert rejected(sealer, token) == "expired"


def test_iat_more_than_a_minute_ahead_is_refused() -> None:
    ahead = FakeClock(T0 + 61)
    token = make_sealer(ahead).seal({}, BINDING)
    assert rejected(make_sealer(FakeClock(T0)), token) == "invalid"
    slightly_ahead = make_sealer(FakeClock(T0 + 59)).seal({}, BINDING)
    assert make_sealer(FakeClock(T0)).open(slightly_ahead, BINDING).payload == {}


# --- single use ------------------------------------------------------------------------------


def test_second_consume_is_refused_as_replayed() -> None:
    sealer = make_sealer()
    token = sealer.seal({}, BINDING)
    sealer.consume(sealer.open(token, BINDING))
    opened_again = sealer.open(token, BINDING)  # open alone does not consume
    with pytest.raises(RequestStateRejected, match="already used") as info:
        sealer.consume(opened_again)
    assert info.value.reason == "replayed"
    assert "latest InputRequiredResult" in str(info.value)


def test_expired_ids_are_forgotten_before_the_limit_bites(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    sealer = make_sealer(clock, ttl=10, replay_limit=3)
    for _ in range(3):
        sealer.consume(sealer.open(sealer.seal({}, BINDING), BINDING))
    clock.now += 10
    for _ in range(3):
        sealer.consume(sealer.open(sealer.seal({}, BINDING), BINDING))
    assert len(sealer._used) == 3
    assert len(sealer._expiries) == 3
    assert not caplog.records


def test_expired_ids_are_forgotten_in_expiry_order_not_use_order() -> None:
    clock = FakeClock()
    sealer = make_sealer(clock, ttl=100)
    early = sealer.open(sealer.seal({}, BINDING), BINDING)
    clock.now += 50
    late = sealer.open(sealer.seal({}, BINDING), BINDING)
    sealer.consume(late)
    sealer.consume(early)
    clock.now = early.expires_at
    sealer.consume(sealer.open(sealer.seal({}, BINDING), BINDING))
    assert early.state_id not in sealer._used
    assert late.state_id in sealer._used


def test_full_replay_memory_drops_the_soonest_expiry_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    sealer = make_sealer(clock, ttl=600, replay_limit=3)
    opened = []
    for _ in range(6):
        opened.append(sealer.open(sealer.seal({}, BINDING), BINDING))
        clock.now += 1
    with caplog.at_level(logging.WARNING, logger=_request_state.__name__):
        for state in opened:
            sealer.consume(state)
    assert len(sealer._used) == 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "replay_limit" in warnings[0].getMessage()
    # The oldest were forgotten (they may be replayed now); the newest are still refused.
    sealer.consume(opened[0])
    with pytest.raises(RequestStateRejected):
        sealer.consume(opened[5])
    assert len(sealer._used) == 3
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


@settings(max_examples=50, deadline=None)
@given(
    limit=st.integers(1, 8),
    steps=st.lists(st.tuples(st.floats(0, 30), st.booleans()), min_size=1, max_size=60),
)
def test_replay_memory_never_exceeds_its_limit(limit: int, steps: list[tuple[float, bool]]) -> None:
    clock = FakeClock()
    sealer = make_sealer(clock, ttl=20, replay_limit=limit)
    logging.getLogger(_request_state.__name__).disabled = True
    try:
        for advance, reuse in steps:
            clock.now += advance
            state = sealer.open(sealer.seal({}, BINDING), BINDING)
            sealer.consume(state)
            if reuse:
                with pytest.raises(RequestStateRejected):
                    sealer.consume(state)
            assert len(sealer._used) == len(sealer._expiries) <= limit
    finally:
        logging.getLogger(_request_state.__name__).disabled = False


# --- key rings -------------------------------------------------------------------------------


def test_rotation_old_states_open_while_the_old_key_is_kept() -> None:
    clock = FakeClock()
    old = make_sealer(clock, keys=[OLD_KEY])
    token = old.seal({"n": 1}, BINDING)
    rotated = make_sealer(clock, keys=[KEY, OLD_KEY])
    assert rotated.open(token, BINDING).payload == {"n": 1}
    new_token = rotated.seal({"n": 2}, BINDING)
    assert unb64(new_token)[1:5] == _key_id(KEY)
    with pytest.raises(RequestStateRejected, match="key this server does not hold") as info:
        make_sealer(clock, keys=[KEY]).open(token, BINDING)
    assert info.value.reason == "invalid"
    assert rejected(old, new_token) == "invalid"


def test_ring_validation() -> None:
    with pytest.raises(ValueError, match="at least one key"):
        RequestStateKeys([])
    with pytest.raises(ValueError, match=r"key 1 .* 16 bytes"):
        RequestStateKeys([KEY, b"x" * 16])
    ring = RequestStateKeys([bytearray(KEY), KEY])  # type: ignore[list-item]
    assert len(ring._by_id) == 1


def test_keys_sharing_an_id_are_both_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_request_state, "_key_id", lambda key: b"same")
    token = make_sealer(keys=[OLD_KEY]).seal({}, BINDING)
    assert make_sealer(keys=[KEY, OLD_KEY]).open(token, BINDING).payload == {}


def write_keys(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_key_file_with_comments_blanks_and_both_alphabets(tmp_path: Path) -> None:
    urlsafe = base64.urlsafe_b64encode(b"\xfb" * 32).decode().rstrip("=")
    path = write_keys(
        tmp_path / "keys",
        "# requestState keys, newest first\n"
        "\n"
        f"  {base64.b64encode(KEY).decode()}  # current\n"
        "   \n"
        f"{base64.b64encode(OLD_KEY).decode()}\n"
        f"{urlsafe}\n",
    )
    ring = RequestStateKeys.from_file(path)
    assert set(ring._by_id) == {_key_id(KEY), _key_id(OLD_KEY), _key_id(b"\xfb" * 32)}
    token = RequestStateSealer(ring, clock=FakeClock()).seal({}, BINDING)
    assert unb64(token)[1:5] == _key_id(KEY)
    assert make_sealer(keys=[KEY]).open(token, BINDING).payload == {}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not base64 at all!", "not base64"),
        (base64.b64encode(b"k" * 31).decode(), "decodes to 31 bytes"),
        (base64.b64encode(b"k" * 48).decode(), "decodes to 48 bytes"),
    ],
)
def test_key_file_bad_line_names_file_and_line_not_key(
    tmp_path: Path, line: str, problem: str
) -> None:
    path = write_keys(tmp_path / "keys", f"# comment\n{base64.b64encode(KEY).decode()}\n{line}\n")
    with pytest.raises(ConfigError, match=problem) as info:
        RequestStateKeys.from_file(path)
    error = info.value
    assert str(path) in str(error)
    assert "line 3" in str(error)
    assert error.file == str(path)
    assert error.key == "line 3"
    assert error.expected is not None
    assert "32" in error.expected
    assert line not in str(error)
    assert line not in (error.given or "")


@pytest.mark.parametrize("text", ["", "# only a comment\n\n", "\n\n"])
def test_key_file_without_keys(tmp_path: Path, text: str) -> None:
    path = write_keys(tmp_path / "keys", text)
    with pytest.raises(ConfigError, match="holds no key") as info:
        RequestStateKeys.from_file(path)
    assert info.value.file == str(path)


def test_key_file_missing_or_not_text(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read") as info:
        RequestStateKeys.from_file(tmp_path / "absent")
    assert info.value.file == str(tmp_path / "absent")
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00")
    binary.chmod(0o600)
    with pytest.raises(ConfigError, match="not UTF-8"):
        RequestStateKeys.from_file(binary)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_key_file_readable_by_others_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = f"{base64.b64encode(KEY).decode()}\n"
    private = write_keys(tmp_path / "private", text, 0o600)
    shared = write_keys(tmp_path / "shared", text, 0o644)
    with caplog.at_level(logging.WARNING, logger=_request_state.__name__):
        RequestStateKeys.from_file(private)
        assert not caplog.records
        RequestStateKeys.from_file(shared)
    [record] = caplog.records
    message = record.getMessage()
    assert str(shared) in message
    assert "chmod 600" in message
    assert base64.b64encode(KEY).decode() not in message


# --- untrusted input -------------------------------------------------------------------------

FIXED_SEALER = make_sealer(FakeClock())
FIXED_TOKEN = FIXED_SEALER.seal({"step": 1, "answers": {"a": "b"}}, BINDING)


@settings(max_examples=400, deadline=None)
@given(bit=st.integers(0, len(unb64(FIXED_TOKEN)) * 8 - 1))
def test_any_single_bit_flip_is_refused(bit: int) -> None:
    data = bytearray(unb64(FIXED_TOKEN))
    data[bit // 8] ^= 1 << (bit % 8)
    assert rejected(FIXED_SEALER, b64(bytes(data))) == "invalid"


def test_every_bit_flip_in_the_header_and_tag_is_refused() -> None:
    data = unb64(FIXED_TOKEN)
    positions = [*range(17 * 8), *range((len(data) - 16) * 8, len(data) * 8)]
    for bit in positions:
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        assert rejected(FIXED_SEALER, b64(bytes(flipped))) == "invalid"


def test_truncated_and_extended_tokens_are_refused() -> None:
    data = unb64(FIXED_TOKEN)
    for cut in (0, 1, 5, 17, 33, len(data) - 1):
        assert rejected(FIXED_SEALER, b64(data[:cut])) == "invalid"
    assert rejected(FIXED_SEALER, b64(data + b"\x00")) == "invalid"


def test_other_spellings_of_the_same_bytes_are_refused() -> None:
    padded = FIXED_TOKEN + "=" * (-len(FIXED_TOKEN) % 4)
    standard = base64.b64encode(unb64(FIXED_TOKEN)).decode()
    for spelling in {padded, standard, f" {FIXED_TOKEN}", f"{FIXED_TOKEN}\n"} - {FIXED_TOKEN}:
        assert rejected(FIXED_SEALER, spelling) == "invalid"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=10,
)
base64url_text = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", max_size=300
)
right_header = st.binary(max_size=200).map(lambda body: b64(b"\x01" + _key_id(KEY) + body))


@settings(max_examples=500, deadline=None)
@given(
    token=st.text(max_size=300)
    | st.binary(max_size=300).map(lambda b: b.decode("latin-1"))
    | base64url_text
    | right_header
    | json_values.filter(lambda value: not isinstance(value, str))
)
def test_junk_is_refused_with_request_state_rejected_only(token: object) -> None:
    assert rejected(FIXED_SEALER, token) == "invalid"


@pytest.mark.parametrize(
    ("token", "named"),
    [(None, "null"), (5, "number"), (True, "boolean"), ([], "array"), ({}, "object")],
)
def test_non_strings_are_refused_naming_their_type(token: object, named: str) -> None:
    with pytest.raises(RequestStateRejected, match=f"not a JSON {named}"):
        FIXED_SEALER.open(token, BINDING)


@settings(max_examples=50, deadline=None)
@given(extra=st.integers(1, 5000), filler=st.sampled_from(["A", "é", "\x00", FIXED_TOKEN]))
def test_too_long_is_refused_before_decoding(extra: int, filler: str) -> None:
    sealer = make_sealer(max_size=len(FIXED_TOKEN))
    token = (FIXED_TOKEN + filler * extra)[: len(FIXED_TOKEN) + extra]
    original = _request_state._b64decode

    def must_not_decode(text: str) -> bytes | None:
        raise AssertionError("decoded a token longer than max_size")

    _request_state._b64decode = must_not_decode
    try:
        with pytest.raises(RequestStateRejected, match="longer than any") as info:
            sealer.open(token, BINDING)
    finally:
        _request_state._b64decode = original
    assert info.value.reason == "invalid"


def test_a_token_exactly_max_size_long_is_read() -> None:
    sealer = make_sealer(max_size=len(FIXED_TOKEN))
    assert sealer.open(FIXED_TOKEN, BINDING).payload == {"step": 1, "answers": {"a": "b"}}


def test_another_format_version_is_refused() -> None:
    data = bytearray(unb64(FIXED_TOKEN))
    data[0] = 2
    with pytest.raises(RequestStateRejected, match="format this server does not read"):
        FIXED_SEALER.open(b64(bytes(data)), BINDING)


@pytest.mark.parametrize(
    "plaintext",
    [
        b"not json",
        b"[1, 2]",
        b'"a string"',
        claims(v=2),
        claims(v=True),
        claims(v=1.0),
        claims(v=...),
        claims(id=7),
        claims(id=...),
        claims(iat="now"),
        claims(iat=True),
        claims(iat=None),
        claims(exp=...),
        claims(exp=T0 - 1),
        claims(p=5),
        claims(m=None),
        claims(d=["x"]),
        claims(s=[1]),
        claims(s="payload"),
        claims(s=...),
    ],
)
def test_authentic_but_malformed_inner_shape_is_refused(plaintext: bytes) -> None:
    assert rejected(make_sealer(), forge(plaintext)) == "invalid"


def test_forged_helper_reaches_the_inner_checks() -> None:
    opened = make_sealer().open(forge(claims()), BINDING)
    assert opened == OpenedState("abc", {"step": 1}, T0 + 600)


def test_refusals_never_echo_the_token_or_key() -> None:
    secrets = [base64.b64encode(KEY).decode(), KEY.hex(), b64(KEY)]
    sealer = make_sealer()
    token = sealer.seal({"secret": "hunter2"}, BINDING)
    other = StateBinding("someone", "resources/read", params_digest("resources/read", {}))
    for candidate, binding in [
        (token + "A", BINDING),
        (token, other),
        (forge(claims(iat="x")), BINDING),
    ]:
        with pytest.raises(RequestStateRejected) as info:
            sealer.open(candidate, binding)
        message = str(info.value)
        assert token not in message
        assert "hunter2" not in message
        assert not any(secret in message for secret in secrets)
        assert "requestState" in message


# --- sizes and construction ------------------------------------------------------------------


def test_seal_refuses_a_token_over_max_size() -> None:
    sealer = make_sealer(max_size=300)
    sealer.seal({"small": 1}, BINDING)
    with pytest.raises(ValueError, match=r"would be \d+ characters.*max_size of 300"):
        sealer.seal({"big": "x" * 300}, BINDING)


def test_seal_refuses_non_json_payloads() -> None:
    with pytest.raises(TypeError):
        make_sealer().seal({"when": object()}, BINDING)  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"ttl": 0}, "ttl"),
        ({"ttl": -1}, "ttl"),
        ({"ttl": float("nan")}, "ttl"),
        ({"ttl": float("inf")}, "ttl"),
        ({"max_size": 0}, "max_size"),
        ({"replay_limit": 0}, "replay_limit"),
    ],
)
def test_sealer_validation(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        make_sealer(**options)


# --- params_digest ---------------------------------------------------------------------------


def test_digest_covers_only_the_salient_params() -> None:
    base = params_digest("tools/call", PARAMS)
    retry = {
        "arguments": {"nights": 2, "city": "Oslo"},
        "name": "book",
        "_meta": {"progressToken": 3},
        "inputResponses": {"confirm": {"action": "accept"}},
        "requestState": "abc",
        "task": {"ttl": 1000},
    }
    assert params_digest("tools/call", retry) == base
    assert params_digest("tools/call", {**PARAMS, "name": "cancel"}) != base
    assert params_digest("tools/call", {**PARAMS, "arguments": {"city": "Oslo"}}) != base
    assert params_digest("prompts/get", PARAMS) != base


def test_digest_of_resources_read_is_the_uri() -> None:
    digest = params_digest("resources/read", {"uri": "file:///a", "_meta": {"x": 1}})
    assert digest == params_digest("resources/read", {"uri": "file:///a"})
    assert digest != params_digest("resources/read", {"uri": "file:///b"})
    assert params_digest("resources/read", {"uri": "file:///a", "name": "x"}) == digest


def test_digest_absent_null_and_empty_arguments_are_the_same() -> None:
    digests = {
        params_digest("prompts/get", {"name": "p"}),
        params_digest("prompts/get", {"name": "p", "arguments": None}),
        params_digest("prompts/get", {"name": "p", "arguments": {}}),
    }
    assert len(digests) == 1


def test_digest_format_and_unknown_methods() -> None:
    digest = params_digest("tools/call", PARAMS)
    assert len(digest) == 43
    assert len(unb64(digest)) == 32
    assert "=" not in digest
    with pytest.raises(ValueError, match="tools/list"):
        params_digest("tools/list", {})


@settings(max_examples=100, deadline=None)
@given(
    arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=5),
    extra=st.dictionaries(
        st.text(max_size=8).filter(lambda key: key not in {"name", "arguments"}),
        json_values,
        max_size=4,
    ),
)
def test_digest_ignores_member_order_and_other_params(
    arguments: dict[str, object], extra: dict[str, object]
) -> None:
    params = {"name": "t", "arguments": arguments}
    reordered = {**extra, "arguments": dict(reversed(list(arguments.items()))), "name": "t"}
    assert params_digest("tools/call", reordered) == params_digest("tools/call", params)
