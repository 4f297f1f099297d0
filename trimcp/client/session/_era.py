"""Which era a server speaks, found out once and remembered: the opening of a session.

MCP 2026-07-28 has no ``initialize``; a dual-era client sends a modern request first and
falls back to the handshake when the answer is not one a modern server gives (Basic >
Versioning > Backward Compatibility,
https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). The modern
request here is ``server/discover``, which every modern server implements and whose answer
the session needs anyway (the server's capabilities):

* a ``DiscoverResult``: modern. A version both speak is chosen from ``supportedVersions``;
* ``UnsupportedProtocolVersionError`` (-32022): modern, but another version: one retry with
  a version from ``data.supported`` (a handshake version there means ``initialize``);
* -32020 or -32021: modern, and it refused us: the error is raised;
* any other error, a result that is not a ``DiscoverResult``, or no answer within
  ``discover_timeout``: legacy, so ``initialize`` (stdio > Backward Compatibility: "MUST
  NOT be keyed to one specific error code"). On HTTP the transport turns a 400, 404 or 405
  whose body is no JSON-RPC error into an error response of its own, which lands here too;
  one it made for a 5xx status (``data.httpStatus``) is raised instead: the server failed.

The verdict is cached per server (``EraCache``, keyed by the stream's ``server_key``: the
URL's origin and path on HTTP, the process on stdio), so a reconnect goes straight to
``initialize`` for a legacy server, and reuses a modern server's ``DiscoverResult`` while its
``ttlMs`` lasts (a ``"private"`` one only with the same credentials). A cached assumption
that fails is dropped and the server probed again ("re-probing if the cached assumption
later fails"), as is a fallback after a timeout whose ``initialize`` is refused (a slow
modern server). ``judge_probe`` is the pure decision; ``open_era`` the task that acts on it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, final

import trio

from trimcp.errors import (
    JsonRpcError,
    RemoteProtocolError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from trimcp.protocol import ABSENT, LATEST_VERSION, MODERN_VERSION, ErrorObject, is_modern

from ._discovery import choose_version, discover_result_from_wire, is_modern_error
from ._eracache import DEFAULT_ERA_CACHE, EraCache, EraMemo
from ._errors import error_from

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.protocol import ClientConnection, Result

    from ._core import SessionCore
    from ._discovery import DiscoverResult
    from ._options import ClientSessionOptions

__all__ = [
    "Failed",
    "Legacy",
    "Modern",
    "Opening",
    "Retry",
    "judge_probe",
    "open_era",
]

logger = logging.getLogger(__name__)

# --- the verdicts on one probe -------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True)
class Modern:
    """The server answered ``server/discover``."""

    discover: DiscoverResult


@final
@dataclass(frozen=True, slots=True)
class Retry:
    """A modern server that does not speak our version; ``version`` is one we both do."""

    version: str


@final
@dataclass(frozen=True, slots=True)
class Legacy:
    """The server did not answer as a modern one; ``reason`` says how, for the log."""

    reason: str
    timed_out: bool = False


@final
@dataclass(frozen=True, slots=True)
class Failed:
    """Neither era can go on: a modern refusal, or a server failure."""

    error: Exception


Verdict: TypeAlias = Modern | Retry | Legacy | Failed


def judge_probe(answer: Result | ErrorObject | None, timeout: float) -> Verdict:
    """Decide what one ``server/discover`` answer says about the server (module docstring).

    ``answer`` is None when none came within ``timeout`` seconds.
    """
    if answer is None:
        return Legacy(f"no answer to server/discover within {timeout:g} s", timed_out=True)
    if isinstance(answer, ErrorObject):
        return _judge_error(answer)
    try:
        return Modern(discover_result_from_wire(answer.result))
    except RemoteProtocolError as exc:
        return Legacy(f"its answer to server/discover is no DiscoverResult ({exc})")


def _judge_error(error: ErrorObject) -> Verdict:
    data = None if error.data is ABSENT else error.data
    if error.code == UnsupportedProtocolVersion.CODE:
        supported = data.get("supported") if isinstance(data, dict) else None
        version = choose_version(supported if isinstance(supported, list) else [])
        return Failed(error_from(error, "server/discover")) if version is None else Retry(version)
    status = data.get("httpStatus") if isinstance(data, dict) else None
    if is_modern_error(error.code) or (isinstance(status, int) and status >= 500):
        return Failed(error_from(error, "server/discover"))
    return Legacy(f"it answered server/discover with error {error.code}: {error.message}")


# --- the opening ------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Opening:
    """What ``open_era`` needs besides the core: how to build a core for a version, the
    options, and who the server is (``key`` None: not cached; ``context`` the credentials'
    digest)."""

    connect: Callable[[str], ClientConnection]
    options: ClientSessionOptions
    key: str | None
    context: str | None
    #: How long the probe waits for its answer before the server counts as legacy.
    probe_timeout: float


async def open_era(core: SessionCore, opening: Opening) -> None:
    """Open the session in the era the server speaks (module docstring); then it is ready.

    Raises:
        RemoteProtocolError: ``protocol_version`` forces 2026-07-28 and the server is legacy,
            or the server answered a handshake with a version we do not speak.
        JsonRpcError: the server refused ``server/discover`` as a modern server (-32020,
            -32021, -32022 with no version in common) or refused ``initialize``.
        RequestTimeout: no answer to ``initialize``.
        ConnectionLost / TransportBroken: the transport ended first.
    """
    requested = opening.options.protocol_version
    if requested is not None and not is_modern(requested):
        await _handshake(core, opening, requested)  # the handshake era, forced: no probe
        return
    cache = opening.options.era_cache
    if cache is None:
        cache = DEFAULT_ERA_CACHE
    memo = None if opening.key is None else cache.get(opening.key)
    if memo is not None and not memo.modern and requested is None:
        try:
            await _handshake(core, opening, memo.version)
        except JsonRpcError as exc:
            logger.info("the server refused initialize (%s); probing its era again", exc)
            _forget(cache, opening)
        else:
            return
    if memo is not None and memo.modern:
        discover = memo.fresh_discover(opening.context)
        if discover is not None:
            _switch(core, opening, memo.version)
            _accept(core, discover)
            return
    await _probe_and_open(core, opening, cache, requested or MODERN_VERSION)


async def _probe_and_open(
    core: SessionCore, opening: Opening, cache: EraCache, version: str
) -> None:
    """Probe, retry once with a version from -32022, fall back to ``initialize``.

    A fallback that followed a timed-out probe and whose ``initialize`` is refused probes
    once more: a modern server that was slow to start misses the first deadline.
    """
    retried = reprobed = False
    while True:
        verdict = await _probe(core, opening, version)
        if isinstance(verdict, Retry) and is_modern(verdict.version):
            if retried:
                raise RemoteProtocolError(
                    f"the server refused protocol version {version}, which it had named"
                )
            retried, version = True, verdict.version
            continue
        if isinstance(verdict, Modern):
            _accept(core, verdict.discover)
            _remember_modern(cache, opening, version, verdict.discover)
            return
        if isinstance(verdict, Failed):
            raise verdict.error
        _refuse_legacy(opening, verdict)
        legacy_version = verdict.version if isinstance(verdict, Retry) else LATEST_VERSION
        try:
            await _handshake(core, opening, legacy_version)
        except JsonRpcError:
            if reprobed or not (isinstance(verdict, Legacy) and verdict.timed_out):
                raise
            reprobed = True
            continue
        if opening.key is not None:
            cache.put(opening.key, EraMemo(modern=False, version=legacy_version))
        return


def _refuse_legacy(opening: Opening, verdict: Legacy | Retry) -> None:
    """Log the fallback, or raise when ``protocol_version`` forces the modern era."""
    reason = verdict.reason if isinstance(verdict, Legacy) else "it named only older versions"
    forced = opening.options.protocol_version
    if forced is not None:
        raise RemoteProtocolError(
            "the server speaks only the initialize handshake (MCP 2025-11-25 or older): "
            f"{reason}; protocol_version={forced!r} rules that out"
        )
    logger.info("falling back to initialize: %s", reason)


def _switch(core: SessionCore, opening: Opening, version: str) -> None:
    core.switch_version(version, lambda: opening.connect(version))


async def _probe(core: SessionCore, opening: Opening, version: str) -> Verdict:
    _switch(core, opening, version)
    timeout = opening.probe_timeout
    try:
        answer = await core.probe("server/discover", None, timeout=timeout)
    except RequestTimeout:
        return judge_probe(None, timeout)
    return judge_probe(answer, timeout)


async def _handshake(core: SessionCore, opening: Opening, version: str) -> None:
    _switch(core, opening, version)
    await core.handshake()


def _accept(core: SessionCore, discover: DiscoverResult) -> None:
    core.connection.accept_discover(discover.raw)
    core.mark_ready()


def _remember_modern(
    cache: EraCache, opening: Opening, version: str, discover: DiscoverResult
) -> None:
    if opening.key is None:
        return
    hint = discover.cache
    cacheable = hint is not None and hint.ttl > 0
    cache.put(
        opening.key,
        EraMemo(
            modern=True,
            version=version,
            discover=discover if cacheable else None,
            expires=trio.current_time() + (hint.ttl if hint is not None else 0.0),
            run=trio.lowlevel.current_trio_token(),
            context=opening.context,
        ),
    )


def _forget(cache: EraCache, opening: Opening) -> None:
    if opening.key is not None:
        cache.forget(opening.key)
