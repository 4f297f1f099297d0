"""Sealed ``requestState`` for MCP 2026-07-28 multi round-trip requests (MRTR).

A server answering ``tools/call``, ``resources/read`` or ``prompts/get`` may return an
``InputRequiredResult`` with a ``requestState``; the client retries the same method with a
new JSON-RPC id and echoes it back verbatim (Basic > Patterns > Multi Round-Trip Requests).
The string passes through the client, so the spec says the server MUST treat it as
attacker-controlled and MUST protect its integrity, SHOULD bind it to the principal, a short
TTL and the originating request, and MUST enforce single use where that matters.

This module does all of that and nothing else; it knows no trio and reads the time only
through an injected clock, so it is tested without sleeping.

* **Sealing** is AES-256-GCM (``cryptography``'s ``AESGCM``): it gives integrity *and*
  confidentiality, so a server may keep in the state what the client should not read. A
  token is ``base64url(version | key id | nonce | ciphertext+tag)`` without padding; the
  version byte and key id are authenticated as associated data, so neither can be swapped.
* **What a state is bound to** (``StateBinding``): the principal (the access token's issuer
  and subject, or None without auth), the method and ``params_digest`` of the request's
  salient params. Both sit inside the sealed plaintext with ``iat``/``exp``, and ``open``
  refuses a state presented by another principal, on another request, or after ``exp``.
* **Keys** come in a ring (``RequestStateKeys``): the first key seals, every key opens, and
  each token names its key by a short id, so rotation is "put the new key first, drop the
  old one once the states it sealed have expired". Several processes behind a load balancer
  must share the ring (``RequestStateKeys.from_file``); the default is one random key, which
  is right for one process.
* **Single use** is ``RequestStateSealer.consume``: a bounded memory of the ids already used,
  each kept until its state expires. It is per sealer, so per process: a fleet that needs
  strict single use across processes needs a shared store on top (the spec leaves that to
  servers that need it, such as one-time redemptions).

Every refusal is ``trimcp.errors.RequestStateRejected`` (-32602) with a ``reason`` of
``"invalid"``, ``"expired"``, ``"mismatch"`` or ``"replayed"`` and a message that says what
the client should do. Messages and logs never carry key material or the plaintext.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import logging
import math
import os
import stat
import time
import typing
from dataclasses import dataclass

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from trimcp.errors import ConfigError, RequestStateRejected

if typing.TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from trimcp.protocol import JsonObject

__all__ = [
    "OpenedState",
    "RequestStateKeys",
    "RequestStateSealer",
    "StateBinding",
    "generate_key",
    "params_digest",
]

logger = logging.getLogger(__name__)

_FORMAT_VERSION = 1
_VERSION_BYTE = bytes([_FORMAT_VERSION])
_KEY_BYTES = 32  # AES-256
_KEY_ID_BYTES = 4
_NONCE_BYTES = 12  # what AES-GCM is specified for; random nonces are safe for ~2**32 seals
_TAG_BYTES = 16
_HEADER_BYTES = 1 + _KEY_ID_BYTES
_MIN_TOKEN_BYTES = _HEADER_BYTES + _NONCE_BYTES + _TAG_BYTES + 1
_STATE_ID_BYTES = 16
# A state issued further ahead than this by our own clock was not issued by a sane clock.
_MAX_FUTURE_IAT = 60.0
# Separates key ids from any other use of SHA-256 over the same key.
_KEY_ID_CONTEXT = b"trimcp requestState key id\x00"

# The params of each MRTR method that identify "the same request" on a retry. The rest
# (_meta, inputResponses, requestState, task) legitimately changes between attempts.
_SALIENT_PARAMS: dict[str, tuple[str, ...]] = {
    "tools/call": ("name", "arguments"),
    "prompts/get": ("name", "arguments"),
    "resources/read": ("uri",),
}

_START_OVER = "send the request again without requestState and inputResponses to start over"
_NOT_OURS = (
    "requestState is not one this server issued (it is malformed, truncated or was modified; "
    "clients must echo it back exactly as received); " + _START_OVER
)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes | None:
    """Decode canonical unpadded base64url, or return None.

    Only the spelling ``_b64encode`` produces is accepted, so that one token has one form.
    """
    try:
        data = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):  # ValueError: text is not ASCII
        return None
    if _b64encode(data) != text:
        return None
    return data


def _key_id(key: bytes) -> bytes:
    """Name a key in tokens without giving anything about it away (a hash prefix)."""
    return hashlib.sha256(_KEY_ID_CONTEXT + key).digest()[:_KEY_ID_BYTES]


def generate_key() -> bytes:
    """Return a fresh random AES-256 key (32 bytes) for a ``RequestStateKeys`` ring."""
    return AESGCM.generate_key(bit_length=_KEY_BYTES * 8)


def params_digest(method: str, params: Mapping[str, object]) -> str:
    """Return a digest of the params that make ``params`` "the same request" for ``method``.

    ``tools/call`` and ``prompts/get``: ``name`` and ``arguments``; ``resources/read``:
    ``uri``. Everything else (``_meta``, ``inputResponses``, ``requestState``, ``task``, ...)
    is left out, because a retry legitimately changes it. An absent or null ``arguments``
    counts as ``{}``: both mean "no arguments", and a client library that spells the retry
    differently must not be refused for it. The result is the SHA-256 of orjson with sorted
    keys (so member order does not matter), in unpadded base64url.

    ``params`` are the request's params as decoded from the wire (JSON values only).

    Raises:
        ValueError: ``method`` is not one of the three MRTR methods (the spec forbids an
            ``InputRequiredResult`` on any other request).
    """
    salient = _SALIENT_PARAMS.get(method)
    if salient is None:
        raise ValueError(
            f"{method!r} cannot carry a requestState: only {', '.join(_SALIENT_PARAMS)} may "
            "be answered with an InputRequiredResult"
        )
    picked: dict[str, object] = {"method": method}
    for name in salient:
        value = params.get(name)
        if name == "arguments" and value is None:
            value = {}
        picked[name] = value
    encoded = orjson.dumps(picked, option=orjson.OPT_SORT_KEYS)
    return _b64encode(hashlib.sha256(encoded).digest())


@typing.final
@dataclass(frozen=True, slots=True)
class StateBinding:
    """What a requestState is bound to; ``open`` refuses it on any other binding.

    ``principal`` is whoever the request authenticated as (e.g. ``"issuer|subject"`` of the
    access token), or None without auth; ``method`` the request's method; ``digest`` is
    ``params_digest(method, params)`` of the request.
    """

    principal: str | None
    method: str
    digest: str


@typing.final
@dataclass(frozen=True, slots=True)
class OpenedState:
    """A requestState that passed every check: its id (for ``consume``), payload and expiry.

    ``expires_at`` is in the sealer's clock's seconds (``time.time()`` by default).
    """

    state_id: str
    payload: JsonObject
    expires_at: float


@typing.final
class RequestStateKeys:
    """A ring of AES-256 keys: the first seals, every one opens.

    Rotation: put a new key first and keep the old ones until the states they sealed have
    expired (the sealer's ``ttl``), then drop them. Without ``keys`` the ring holds one
    fresh random key, which is right for one process; processes behind a load balancer
    must share the same keys, or a retry that lands on another process is refused.

    Raises:
        ValueError: no keys, or a key that is not 32 bytes.
    """

    __slots__ = ("_by_id", "_sealing", "_sealing_id")

    def __init__(self, keys: Sequence[bytes] | None = None) -> None:
        if keys is None:
            keys = [generate_key()]
        if not keys:
            raise ValueError("a RequestStateKeys ring needs at least one key")
        # Two keys sharing an id is a 1 in 2**32 chance; open() then tries both.
        by_id: dict[bytes, list[AESGCM]] = {}
        seen: set[bytes] = set()
        for index, given in enumerate(keys):
            key = bytes(given)  # any bytes-like is accepted; the ring keeps immutable bytes
            if len(key) != _KEY_BYTES:
                raise ValueError(
                    f"key {index} of the requestState key ring is {len(key)} bytes; "
                    f"AES-256 needs {_KEY_BYTES} (make one with generate_key())"
                )
            if key in seen:
                continue
            seen.add(key)
            by_id.setdefault(_key_id(key), []).append(AESGCM(key))
        first = bytes(keys[0])
        self._sealing = AESGCM(first)
        self._sealing_id = _key_id(first)
        self._by_id = {key_id: tuple(aeads) for key_id, aeads in by_id.items()}

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> RequestStateKeys:
        """Read a ring from a file: one key per line, the base64 of 32 bytes; first seals.

        Standard and urlsafe base64 are both accepted, with or without padding. Blank lines
        and ``#`` comments are ignored. A file that group or others may access is read, with
        a warning, as ssh does for private keys: anyone who can read it can forge states.

        Raises:
            ConfigError: the file cannot be read, holds no key, or a line is not the base64
                of 32 bytes (the message names the file and the line, never the key).
        """
        name = os.fspath(path)
        try:
            with open(name, "rb") as file:
                mode = os.fstat(file.fileno()).st_mode
                raw = file.read()
        except OSError as exc:
            raise ConfigError(
                f"cannot read the requestState key file {name!r} ({exc.strerror or exc}); "
                "check the path and that this user may read it",
                file=name,
            ) from exc
        if os.name == "posix" and mode & 0o077:
            logger.warning(
                "requestState key file %s is accessible by group or others (mode %s); anyone "
                "who can read it can forge requestState: chmod 600 it",
                name,
                stat.filemode(mode),
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"requestState key file {name!r} is not UTF-8 text; expected one key per "
                "line, the base64 of 32 random bytes",
                file=name,
                expected="UTF-8 text, one base64 key per line",
            ) from exc
        keys = [
            _parse_key_line(line, file=name, number=number)
            for number, line in enumerate(text.splitlines(), start=1)
            if line.split("#", 1)[0].strip()
        ]
        if not keys:
            raise ConfigError(
                f"requestState key file {name!r} holds no key; expected one key per line, "
                "the base64 of 32 random bytes, the key that seals first",
                file=name,
                expected="at least one base64 key of 32 bytes",
            )
        return cls(keys)

    def __repr__(self) -> str:
        ids = ", ".join(key_id.hex() for key_id in self._by_id)
        return f"RequestStateKeys(key ids: {ids}; sealing: {self._sealing_id.hex()})"

    def _seal(self, plaintext: bytes) -> bytes:
        header = _VERSION_BYTE + self._sealing_id
        nonce = os.urandom(_NONCE_BYTES)
        return header + nonce + self._sealing.encrypt(nonce, plaintext, header)

    def _open(self, data: bytes) -> bytes | None:
        """Return the plaintext of a decoded token, or None if no key of ours opens it."""
        header = data[:_HEADER_BYTES]
        nonce = data[_HEADER_BYTES : _HEADER_BYTES + _NONCE_BYTES]
        sealed = data[_HEADER_BYTES + _NONCE_BYTES :]
        for aead in self._by_id.get(header[1:], ()):
            try:
                return aead.decrypt(nonce, sealed, header)
            except InvalidTag:
                continue
        return None

    def _knows(self, key_id: bytes) -> bool:
        return key_id in self._by_id


_KEY_FILE_EXPECTED = (
    "the base64 (standard or urlsafe) of 32 random bytes, e.g. from: python -c "
    "'import base64, os; print(base64.b64encode(os.urandom(32)).decode())'"
)


def _parse_key_line(line: str, *, file: str, number: int) -> bytes:
    """Decode one key line, or raise a ``ConfigError`` that names the line but not its text."""
    text = line.split("#", 1)[0].strip()
    where = f"requestState key file {file!r}, line {number}"
    normalised = text.replace("-", "+").replace("_", "/")
    normalised += "=" * (-len(normalised) % 4)
    try:
        key = base64.b64decode(normalised, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(
            f"{where}: not base64 ({len(text)} characters); expected {_KEY_FILE_EXPECTED}",
            file=file,
            key=f"line {number}",
            given=f"{len(text)} characters that are not base64",
            expected=_KEY_FILE_EXPECTED,
        ) from exc
    if len(key) != _KEY_BYTES:
        raise ConfigError(
            f"{where}: decodes to {len(key)} bytes; expected {_KEY_FILE_EXPECTED}",
            file=file,
            key=f"line {number}",
            given=f"base64 of {len(key)} bytes",
            expected=_KEY_FILE_EXPECTED,
        )
    return key


def _is_number(value: object) -> typing.TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@typing.final
class RequestStateSealer:
    """Seal payloads into requestState strings and open them again, checking everything.

    ``ttl`` is how long a state stays valid, in seconds (keep it short: it bounds how long
    a leaked state can be replayed by the same principal); ``max_size`` the longest token,
    in characters, that ``seal`` makes and ``open`` reads (longer input is refused before
    any decoding, so a huge string costs nothing); ``replay_limit`` how many used state ids
    ``consume`` remembers; ``clock`` returns the current time in seconds. It is wall-clock
    time (``time.time``) by default because states travel between processes.

    Not thread-safe: it is meant to be used from one trio run, where these calls never
    yield.

    Raises:
        ValueError: ``ttl`` not a positive finite number, ``max_size`` or ``replay_limit``
            below 1.
    """

    __slots__ = (
        "_clock",
        "_expiries",
        "_keys",
        "_max_size",
        "_replay_limit",
        "_ttl",
        "_used",
        "_warned_full",
    )

    def __init__(
        self,
        keys: RequestStateKeys | None = None,
        *,
        ttl: float = 600.0,
        max_size: int = 65536,
        replay_limit: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not (math.isfinite(ttl) and ttl > 0):
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        if max_size < 1:
            raise ValueError(f"max_size must be at least 1 character, not {max_size!r}")
        if replay_limit < 1:
            raise ValueError(f"replay_limit must be at least 1, not {replay_limit!r}")
        self._keys = keys if keys is not None else RequestStateKeys()
        self._ttl = float(ttl)
        self._max_size = max_size
        self._replay_limit = replay_limit
        self._clock = clock
        # consume(): state id -> expiry, plus a heap of (expiry, id) to forget them in
        # expiry order. Consumption order is not expiry order (a state sealed earlier may
        # be used later), so a heap rather than an insertion-ordered dict.
        self._used: dict[str, float] = {}
        self._expiries: list[tuple[float, str]] = []
        self._warned_full = False

    def seal(self, payload: JsonObject, binding: StateBinding) -> str:
        """Return a requestState carrying ``payload``, bound to ``binding``, valid for ``ttl``.

        Raises:
            ValueError: the token would be longer than ``max_size`` (a server bug: keep
                bulky data server-side and put a reference in the payload).
            TypeError: ``payload`` holds something that is not JSON.
        """
        issued = self._clock()
        plaintext = orjson.dumps(
            {
                "v": _FORMAT_VERSION,
                "id": _b64encode(os.urandom(_STATE_ID_BYTES)),
                "iat": issued,
                "exp": issued + self._ttl,
                "p": binding.principal,
                "m": binding.method,
                "d": binding.digest,
                "s": payload,
            }
        )
        token = _b64encode(self._keys._seal(plaintext))
        if len(token) > self._max_size:
            raise ValueError(
                f"the sealed requestState would be {len(token)} characters, over the "
                f"sealer's max_size of {self._max_size}; put less in the payload (keep bulky "
                "data server-side and seal a reference to it) or raise max_size"
            )
        return token

    def open(self, token: object, binding: StateBinding) -> OpenedState:
        """Check an untrusted requestState against ``binding`` and return what it carries.

        This does not mark it used: call ``consume`` where single use matters.

        Raises:
            RequestStateRejected: ``"invalid"`` (not a string, too long, not base64url,
                another format version, a key this server does not hold, tampered, or a
                bad inner shape), ``"expired"``, or ``"mismatch"`` (another principal, or
                another method or params).
        """
        claims = _claims(self._unseal(token))
        self._check_time(claims)
        _check_binding(claims, binding)
        return OpenedState(claims.state_id, claims.payload, claims.expires_at)

    def _unseal(self, token: object) -> bytes:
        """Return the plaintext of an untrusted token, cheapest checks first."""
        if not isinstance(token, str):
            raise RequestStateRejected(
                "invalid",
                f"requestState must be the string the server sent, not a JSON "
                f"{_json_type(token)}; {_START_OVER}",
            )
        if len(token) > self._max_size:  # before any decoding: a huge string costs nothing
            raise RequestStateRejected(
                "invalid",
                f"requestState is {len(token)} characters, longer than any this server "
                f"issues ({self._max_size}); {_START_OVER}",
            )
        data = _b64decode(token)
        if data is None or len(data) < _MIN_TOKEN_BYTES:
            raise RequestStateRejected("invalid", _NOT_OURS)
        if data[:1] != _VERSION_BYTE:
            raise RequestStateRejected(
                "invalid",
                "requestState is in a format this server does not read (another server, or "
                f"another version of it, issued it); {_START_OVER}",
            )
        if not self._keys._knows(data[1:_HEADER_BYTES]):
            raise RequestStateRejected(
                "invalid",
                "requestState was sealed with a key this server does not hold (another "
                f"server issued it, or the key has been retired); {_START_OVER}",
            )
        plaintext = self._keys._open(data)
        if plaintext is None:
            raise RequestStateRejected("invalid", _NOT_OURS)
        return plaintext

    def _check_time(self, claims: _Claims) -> None:
        """Refuse a state from the future or past its expiry (no leeway: ``exp`` is exclusive).

        A small future ``iat`` is allowed because several processes sharing the keys never
        have exactly the same clock; a large one means a broken clock, not a valid state.
        """
        now = self._clock()
        if claims.issued_at > now + _MAX_FUTURE_IAT:
            raise RequestStateRejected(
                "invalid",
                f"requestState claims to be issued {claims.issued_at - now:.0f} s in the "
                f"future (the clocks of the servers that share its keys disagree); {_START_OVER}",
            )
        if now >= claims.expires_at:
            lifetime = claims.expires_at - claims.issued_at
            raise RequestStateRejected(
                "expired",
                f"requestState has expired (it is valid for {lifetime:g} s); {_START_OVER}",
            )

    def consume(self, opened: OpenedState) -> None:
        """Mark ``opened`` used; refuse it if it was used before.

        Ids are remembered until their state expires (after that ``open`` refuses the state
        anyway), at most ``replay_limit`` of them. When full, the id expiring soonest is
        forgotten, which lets that one state be replayed until it expires; a warning says
        so, once.

        Raises:
            RequestStateRejected: ``"replayed"``, the state was consumed before.
        """
        self._forget_expired(self._clock())
        if opened.state_id in self._used:
            raise RequestStateRejected(
                "replayed",
                "requestState was already used; retry with the requestState of the latest "
                "InputRequiredResult, or start over without requestState and inputResponses",
            )
        while len(self._used) >= self._replay_limit:
            _, state_id = heapq.heappop(self._expiries)
            del self._used[state_id]
            if not self._warned_full:
                self._warned_full = True
                logger.warning(
                    "requestState replay memory is full (replay_limit=%d used states not yet "
                    "expired): forgetting the ones that expire soonest, which may then be "
                    "replayed until they expire; raise replay_limit or shorten ttl",
                    self._replay_limit,
                )
        self._used[opened.state_id] = opened.expires_at
        heapq.heappush(self._expiries, (opened.expires_at, opened.state_id))

    def _forget_expired(self, now: float) -> None:
        """Drop the used ids whose states have expired: amortised O(log n) per id."""
        while self._expiries and self._expiries[0][0] <= now:
            _, state_id = heapq.heappop(self._expiries)
            del self._used[state_id]


@typing.final
@dataclass(frozen=True, slots=True)
class _Claims:
    """The sealed plaintext once read and type-checked (``seal`` writes its short names)."""

    state_id: str
    issued_at: float
    expires_at: float
    principal: str | None
    method: str
    digest: str
    payload: JsonObject


def _claims(plaintext: bytes) -> _Claims:
    """Read the sealed plaintext, refusing any shape ``seal`` does not make.

    It authenticated, so it was made by a holder of our keys; still, one of them may run
    another version, and a shape error must be a refusal, never a crash.
    """
    try:
        body = orjson.loads(plaintext)
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        raise RequestStateRejected("invalid", _NOT_OURS)
    version = body.get("v")
    if type(version) is not int or version != _FORMAT_VERSION:  # not True, not 1.0
        raise RequestStateRejected("invalid", _NOT_OURS)
    state_id = body.get("id")
    issued_at = body.get("iat")
    expires_at = body.get("exp")
    principal = body.get("p")
    method = body.get("m")
    digest = body.get("d")
    payload = body.get("s")
    if not (
        isinstance(state_id, str)
        and _is_number(issued_at)
        and _is_number(expires_at)
        and (principal is None or isinstance(principal, str))
        and isinstance(method, str)
        and isinstance(digest, str)
        and isinstance(payload, dict)
        and expires_at >= issued_at
    ):
        raise RequestStateRejected("invalid", _NOT_OURS)
    return _Claims(
        state_id=state_id,
        issued_at=float(issued_at),
        expires_at=float(expires_at),
        principal=principal,
        method=method,
        digest=digest,
        payload=payload,
    )


def _check_binding(claims: _Claims, binding: StateBinding) -> None:
    """Refuse a state presented by another principal or on another request.

    The principal is checked first, so that a stranger learns nothing about the request a
    state was issued for.
    """
    if claims.principal != binding.principal:
        raise RequestStateRejected(
            "mismatch",
            "requestState was issued to another principal; a requestState is only valid "
            f"for whoever received it: {_START_OVER}",
        )
    if claims.method != binding.method:
        raise RequestStateRejected(
            "mismatch",
            f"requestState was issued for another request: a {claims.method} request, not "
            f"{binding.method}; echo it only on the retry of the request that received it, "
            f"or {_START_OVER}",
        )
    if claims.digest != binding.digest:
        salient = _SALIENT_PARAMS.get(binding.method, ("params",))
        names = " and ".join(salient)
        differ = "differs" if len(salient) == 1 else "differ"
        raise RequestStateRejected(
            "mismatch",
            f"requestState was issued for another request: this request's {names} {differ} "
            f"from that request's; retry with the same {names}, or {_START_OVER}",
        )


def _json_type(value: object) -> str:
    """Name the JSON type of a decoded value, for messages (never the value itself)."""
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case list() | tuple():
            return "array"
        case dict():
            return "object"
        case _:
            return type(value).__name__
