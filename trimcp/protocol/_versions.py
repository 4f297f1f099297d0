"""Protocol revisions we speak, how we pick one, and what each one allows.

Later layers ask ``features(version).batching`` instead of comparing version strings; the
matrix below is what the revisions' changelogs say differs, in code
(https://modelcontextprotocol.io/specification/2025-11-25/changelog and the earlier ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    from collections.abc import Sequence

LATEST_VERSION: Final = "2025-11-25"

#: The per-request era: no ``initialize``, every request carries its version and the
#: client's capabilities in ``_meta`` (MCP 2026-07-28, Basic > Versioning,
#: https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). Never
#: negotiated by ``initialize``, so not in ``SUPPORTED_VERSIONS``.
MODERN_VERSION: Final = "2026-07-28"
MODERN_VERSIONS: Final[tuple[str, ...]] = (MODERN_VERSION,)

#: Newest first. Dates sort as strings, which keeps "newest" a plain comparison.
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = (
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class VersionFeatures:
    """What one protocol revision allows. Every flag is "available in this revision"."""

    version: str
    #: Receiving JSON-RPC batches (arrays): only 2025-03-26 (MUST there; removed 2025-06-18).
    batching: bool
    #: Error responses may omit ``id`` when it was unreadable (schema change in 2025-11-25).
    error_id_optional: bool
    #: Streamable HTTP with ``Mcp-Session-Id`` (2025-03-26+); before that HTTP+SSE.
    streamable_http: bool
    #: ``MCP-Protocol-Version`` header required on HTTP requests after init (2025-06-18+).
    protocol_version_header: bool
    audio_content: bool
    tool_annotations: bool
    #: The ``completions`` capability gates ``completion/complete`` (2025-03-26+; 2024-11-05
    #: offered the method without a capability).
    completions_capability: bool
    progress_message: bool
    resource_links: bool
    #: ``title`` fields, ``outputSchema``, ``structuredContent``, ``_meta`` on tools.
    structured_content: bool
    titles: bool
    elicitation: bool
    #: Lifecycle operation rules are MUSTs (2025-06-18+).
    strict_lifecycle: bool
    icons: bool
    url_elicitation: bool
    tasks: bool
    sampling_tools: bool
    #: ``notifications/cancelled`` may omit ``requestId`` (task-related, 2025-11-25).
    cancel_request_id_optional: bool


def _build(version: str) -> VersionFeatures:
    since_0326 = version >= "2025-03-26"
    since_0618 = version >= "2025-06-18"
    since_1125 = version >= "2025-11-25"
    return VersionFeatures(
        version=version,
        batching=version == "2025-03-26",
        error_id_optional=since_1125,
        streamable_http=since_0326,
        protocol_version_header=since_0618,
        audio_content=since_0326,
        tool_annotations=since_0326,
        completions_capability=since_0326,
        progress_message=since_0326,
        resource_links=since_0618,
        structured_content=since_0618,
        titles=since_0618,
        elicitation=since_0618,
        strict_lifecycle=since_0618,
        icons=since_1125,
        url_elicitation=since_1125,
        # 2026-07-28 moved tasks out of the core into an extension (SEP-2663).
        tasks=since_1125 and version < MODERN_VERSION,
        sampling_tools=since_1125,
        cancel_request_id_optional=since_1125,
    )


_FEATURES: Final = {version: _build(version) for version in (*MODERN_VERSIONS, *SUPPORTED_VERSIONS)}


def features(version: str) -> VersionFeatures:
    """Return what ``version`` allows.

    Raises:
        KeyError: ``version`` is not one we support (negotiation never yields such a one).
    """
    return _FEATURES[version]


def is_supported(version: str) -> bool:
    """Tell whether ``initialize`` can negotiate ``version`` (the handshake era)."""
    return version in SUPPORTED_VERSIONS


def is_modern(version: object) -> bool:
    """Tell whether ``version`` is a per-request (2026-07-28 and later) version we speak."""
    return version in MODERN_VERSIONS


def is_handshake_version(version: object) -> bool:
    """Tell whether ``version`` names a revision of the ``initialize`` era (ours or older).

    Any dated revision before 2026-07-28 is one, even one we do not speak (2024-10-07):
    such a client expects the handshake, and ``initialize`` negotiates it down.
    """
    return isinstance(version, str) and (
        version in SUPPORTED_VERSIONS or (_is_date(version) and version < MODERN_VERSION)
    )


def _is_date(text: str) -> bool:
    return (
        len(text) == 10
        and text[4] == "-"
        and text[7] == "-"
        and (text[:4] + text[5:7] + text[8:]).isdigit()
    )


def negotiate(requested: str, supported: Sequence[str] = SUPPORTED_VERSIONS) -> str:
    """Pick the version the server answers ``initialize`` with.

    MCP 2025-11-25, Lifecycle > Version Negotiation: if the server supports the requested
    version it MUST answer with the same one; otherwise it MUST answer with another version
    it supports, which SHOULD be its latest. So an unknown future date (``2026-01-01``) or
    garbage (``1.0.0``) gets ``supported[0]``; the client then decides whether to disconnect.

    ``supported`` lists the versions this server is willing to speak, newest first; it must
    be a non-empty subset of ``SUPPORTED_VERSIONS``.
    """
    if requested in supported:
        return requested
    return supported[0]
