"""What a 2026-07-28 server says about itself, read strictly: discovery, versions, caching.

A dual-era client learns a modern server's capabilities from ``server/discover``
(https://modelcontextprotocol.io/specification/2026-07-28/server/discover) and tells a
modern server from a legacy one by the errors only a modern server sends (Basic >
Versioning > Backward Compatibility,
https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). Pure functions
and frozen records: the ``DiscoverResult`` (``discover_result_from_wire``), the caching
hints every list result carries (``cache_hint_from_wire``), a result's ``resultType``
(``result_type``), which errors are modern (``is_modern_error``) and which version to speak
from a server's list (``choose_version``). The era decision (``_era``), the list cache
(``_listcache``) and the multi round-trip loop (``_mrtr``) use them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, final

from trimcp.errors import RemoteProtocolError
from trimcp.protocol import MODERN_VERSIONS, SUPPORTED_VERSIONS, Fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.protocol import JsonObject

__all__ = [
    "MODERN_ERROR_CODES",
    "CacheHint",
    "DiscoverResult",
    "cache_hint_from_wire",
    "choose_version",
    "discover_result_from_wire",
    "is_modern_error",
    "result_type",
]

#: The error codes the 2026-07-28 revision reserves and a legacy server never sends:
#: ``HeaderMismatch`` -32020, ``MissingRequiredClientCapabilityError`` -32021 and
#: ``UnsupportedProtocolVersionError`` -32022 (Basic > Error Codes,
#: https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes). One of these
#: in answer to a modern request "identifies a modern server" (Basic > Versioning); any other
#: error, even -32601, may come from a legacy server that refuses a request before
#: ``initialize``, so the fallback is never keyed to one code.
MODERN_ERROR_CODES: Final = frozenset({-32020, -32021, -32022})

#: The ``resultType`` values of 2026-07-28 (Basic > ResultType). Absent means complete (an
#: older server); any other value "MUST be considered invalid".
_RESULT_TYPES: Final = ("complete", "input_required")


def is_modern_error(code: object) -> bool:
    """Tell whether an error ``code`` is one only a modern server sends."""
    return isinstance(code, int) and code in MODERN_ERROR_CODES


def result_type(result: JsonObject, where: str) -> Literal["complete", "input_required"]:
    """Return a result's ``resultType``: absent counts as ``"complete"``.

    Raises:
        RemoteProtocolError: a value the client does not know, which "MUST be considered
            invalid" (2026-07-28, Basic > ResultType).
    """
    value = result.get("resultType", "complete")
    if value == "input_required":
        return "input_required"
    if value == "complete":
        return "complete"
    known = ", ".join(_RESULT_TYPES)
    raise RemoteProtocolError(f"{where}: unknown resultType {value!r} (known: {known})")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CacheHint:
    """How long a result may be reused, and by whom (``CacheableResult``).

    Attributes:
        ttl: seconds the result stays fresh after it arrived (``ttlMs`` / 1000); 0 means
            stale at once.
        private: ``cacheScope`` is ``"private"``: reuse it only within the same
            authorization context (a different access token needs a different cache).
    """

    ttl: float
    private: bool


def cache_hint_from_wire(result: JsonObject) -> CacheHint | None:
    """Read ``ttlMs`` and ``cacheScope``; None when either is missing or malformed.

    2026-07-28 schema, ``CacheableResult`` (SEP-2549): both are required on the results of
    the list methods, ``resources/read`` and ``server/discover``. A result without them (an
    older server) or with values outside the schema is not cached at all, which is always
    safe.
    """
    ttl_ms = result.get("ttlMs")
    scope = result.get("cacheScope")
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int | float):
        return None
    if not math.isfinite(ttl_ms) or ttl_ms < 0 or scope not in ("public", "private"):
        return None
    return CacheHint(ttl=ttl_ms / 1000.0, private=scope == "private")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoverResult:
    """The server's answer to ``server/discover``, as far as choosing the era needs it.

    Its capabilities, identity and instructions are read by ``ClientConnection.
    accept_discover`` from ``raw``, the result as received, once the session is modern.
    """

    supported_versions: tuple[str, ...]
    cache: CacheHint | None = None
    raw: JsonObject = field(default_factory=dict, repr=False, compare=False)


def discover_result_from_wire(result: JsonObject) -> DiscoverResult:
    """Read a ``DiscoverResult`` (2026-07-28 schema, ``DiscoverResult``).

    Raises:
        RemoteProtocolError: ``supportedVersions`` is not a list of strings, or
            ``capabilities`` is not an object, or ``resultType`` is unknown: this is not a
            discover result (a legacy server may answer an unknown method with ``{}``).
    """
    fields = Fields(result, "server/discover")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise fields.bad("supportedVersions", "a list of strings")
    if fields.opt_obj("capabilities") is None:
        raise fields.bad("capabilities", "an object")
    result_type(result, "server/discover")
    return DiscoverResult(
        supported_versions=tuple(str(v) for v in versions),
        cache=cache_hint_from_wire(result),
        raw=result,
    )


def choose_version(
    supported: Sequence[object], *, modern: Sequence[str] = MODERN_VERSIONS
) -> str | None:
    """Pick the version to speak from a server's ``supported`` list, newest first.

    A modern version both sides speak wins (from ``modern``, the client's own list); else
    the newest ``initialize``-era version we speak that the server lists (the caller falls
    back to the handshake); else None, and the caller surfaces the mismatch
    (2026-07-28, Basic > Versioning > Protocol Version Negotiation).
    """
    offered = {value for value in supported if isinstance(value, str)}
    for version in (*modern, *SUPPORTED_VERSIONS):
        if version in offered:
            return version
    return None
