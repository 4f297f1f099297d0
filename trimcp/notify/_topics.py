"""The names of the topics an MCP server publishes on, in one place.

A topic is just a string to ``NotificationHub``; these are the ones the server layer uses, so
that publishers and subscribers cannot disagree on spelling. One topic per resource URI keeps
``notifications/resources/updated`` going only to the streams of sessions that subscribed to
that URI (MCP 2025-11-25, Resources, "Subscriptions").
"""

from __future__ import annotations

__all__ = [
    "LOG_MESSAGES",
    "PROMPTS_LIST_CHANGED",
    "RESOURCES_LIST_CHANGED",
    "RESOURCE_UPDATED_PREFIX",
    "TOOLS_LIST_CHANGED",
    "resource_topic",
]

TOOLS_LIST_CHANGED = "tools/list_changed"
RESOURCES_LIST_CHANGED = "resources/list_changed"
PROMPTS_LIST_CHANGED = "prompts/list_changed"
#: ``notifications/message``: log records sent to clients.
LOG_MESSAGES = "log"
RESOURCE_UPDATED_PREFIX = "resources/updated:"


def resource_topic(uri: str) -> str:
    """Return the topic of ``notifications/resources/updated`` for one resource URI."""
    return RESOURCE_UPDATED_PREFIX + uri
