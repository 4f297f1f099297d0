"""The read tools (placeholder until written)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trimcp.server import MCPServer
    from trimcp.skills._runtime import Skills

__all__ = ["register"]


def register(server: MCPServer, skills: Skills) -> None:
    """Register the read tools on ``server``."""
