"""Method names as bounded label values: a known MCP method, or ``other``.

A metric label takes any value a client sends unless it is bounded, and an unbounded label
is a memory leak in every Prometheus server that scrapes it. So the ``method`` label is one
of the methods MCP defines (the requests of both eras, either direction, and the
notifications), and anything else is ``other``.
"""

from __future__ import annotations

from typing import Final

from trimcp.protocol import HANDSHAKE_ONLY_METHODS

__all__ = ["MCP_METHODS", "OTHER", "method_label"]

OTHER: Final = "other"

#: The methods MCP defines, from 2024-11-05 to 2026-07-28 (the schema's request and
#: notification unions: https://modelcontextprotocol.io/specification/2026-07-28/schema).
MCP_METHODS: Final = frozenset(
    {
        *HANDSHAKE_ONLY_METHODS,
        "initialize",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/message",
        "notifications/roots/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/elicitation/complete",
        "notifications/tasks/status",
    }
)


def method_label(method: str) -> str:
    """Return ``method`` if MCP defines it, else ``"other"``."""
    return method if method in MCP_METHODS else OTHER
