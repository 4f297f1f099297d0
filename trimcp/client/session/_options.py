"""``ClientSessionOptions``: how a ``ClientSession`` behaves, every default stated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE

if TYPE_CHECKING:
    from ._eracache import EraCache

__all__ = ["ClientSessionOptions"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSessionOptions:
    """How a ``ClientSession`` behaves. Every default is stated.

    Attributes:
        request_timeout: seconds a request may wait for its answer (default 60); a method's
            ``timeout=None`` means this, ``math.inf`` means no limit. On expiry
            ``notifications/cancelled`` is sent and ``RequestTimeout`` raised.
        reset_timeout_on_progress: each progress notification for a request restarts its
            timeout (default True; Lifecycle > Timeouts: MAY).
        max_request_timeout: an absolute limit that progress cannot extend (default None,
            none; the spec says SHOULD have one, so hosts should set it).
        protocol_version: which era and version to speak. None (the default): dual-era,
            2026-07-28 first (``server/discover``, then per-request ``_meta``), falling back
            to ``initialize`` with 2025-11-25 when the server answers as a legacy server
            would. A per-request version (``"2026-07-28"``): that era only; a legacy server
            is an error. A handshake version (``"2025-11-25"``, ``"2025-06-18"``, ...):
            ``initialize`` asking for it, no probe, as before 2026-07-28.
        discover_timeout: seconds the ``server/discover`` probe waits before the server is
            taken for a legacy one that ignores unknown requests before ``initialize``
            (default 5; MCP 2026-07-28, stdio > Backward Compatibility: "a reasonable
            timeout"). A probe answered later is ignored. Over Streamable HTTP, where a
            legacy server answers the POST with an error status, ``request_timeout``
            applies instead.
        max_input_rounds: how many ``InputRequiredResult`` rounds one ``tools/call``,
            ``resources/read`` or ``prompts/get`` may take before it fails (default 16).
        listen: keep a ``subscriptions/listen`` stream open to a 2026-07-28 server, so that
            list changes and resource updates reach ``ClientHandlers`` (default True).
        era_cache: where the era of each server is remembered (None: the process-wide
            ``DEFAULT_ERA_CACHE``).
        max_message_size: the largest message accepted from the server (default 4 MiB).
        validate_structured_content: check ``structuredContent`` against the tool's
            ``outputSchema`` when it is known from ``list_tools`` (default True).
        close_timeout: seconds leaving the session waits for queued messages (such as a
            last ``notifications/cancelled``) to be written (default 1).
    """

    request_timeout: float = 60.0
    reset_timeout_on_progress: bool = True
    max_request_timeout: float | None = None
    protocol_version: str | None = None
    discover_timeout: float = 5.0
    max_input_rounds: int = 16
    listen: bool = True
    era_cache: EraCache | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    validate_structured_content: bool = True
    close_timeout: float = 1.0
