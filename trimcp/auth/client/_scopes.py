"""Which scopes to ask for (pure).

MCP 2025-11-25, Basic > Authorization > Scope Selection Strategy: the ``scope`` of the
challenge that started the flow, which is authoritative; else every scope the Protected
Resource Metadata lists in ``scopes_supported``; else no ``scope`` parameter at all. A
configured list stands between the two: the user's own choice, still below what the server
asked for. On a step-up (a 403 ``insufficient_scope``), the new request asks for the
scopes asked for before plus the challenged ones, so nothing granted earlier is lost
(Scope Challenge Handling).

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#scope-selection-strategy
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ._challenge import BearerChallenge
    from ._metadata import ResourceMetadata

__all__ = ["select_scopes", "union"]


def select_scopes(
    challenge: BearerChallenge | None,
    configured: Sequence[str],
    metadata: ResourceMetadata | None,
) -> tuple[str, ...]:
    """Return the scopes of a first authorization request (module docstring)."""
    if challenge is not None and challenge.scopes:
        return challenge.scopes
    if configured:
        return tuple(configured)
    if metadata is not None and metadata.scopes_supported:
        return metadata.scopes_supported
    return ()


def union(*groups: Iterable[str]) -> tuple[str, ...]:
    """Return every scope of ``groups``, once each, in first-seen order."""
    return tuple(dict.fromkeys(scope for group in groups for scope in group))
