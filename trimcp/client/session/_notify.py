"""Routing a server's notifications to the application's callbacks (``ClientHandlers``).

Called by the session's notification task, one notification at a time, in arrival order.
Unknown methods are ignored (JSON-RPC notifications get no answer; https://modelcontextprotocol.io/specification/2025-11-25/basic#notifications);
malformed params are logged and dropped, never answered (notifications get no reply).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from trimcp.errors import RemoteProtocolError
from trimcp.protocol import Fields

from ._handlers import call_back
from ._results import LogMessage, Task

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.protocol import Notification

    from ._handlers import ClientHandlers

logger = logging.getLogger(__name__)


def _nothing(_: Fields) -> tuple[object, ...]:
    return ()


#: notification method -> (the ``ClientHandlers`` attribute, the callback's arguments)
_ROUTES: Final[dict[str, tuple[str, Callable[[Fields], tuple[object, ...]]]]] = {
    "notifications/message": ("on_log", lambda p: (LogMessage.from_wire(p),)),
    "notifications/resources/updated": ("on_resource_updated", lambda p: (p.string("uri"),)),
    "notifications/tools/list_changed": ("on_tools_changed", _nothing),
    "notifications/resources/list_changed": ("on_resources_changed", _nothing),
    "notifications/prompts/list_changed": ("on_prompts_changed", _nothing),
    "notifications/tasks/status": ("on_task_status", lambda p: (Task.from_wire(p),)),
    "notifications/elicitation/complete": (
        "on_elicitation_complete",
        lambda p: (p.string("elicitationId"),),
    ),
}


async def dispatch_notification(handlers: ClientHandlers, notification: Notification) -> None:
    """Call the callback that ``notification`` is for, if one is configured."""
    route = _ROUTES.get(notification.method)
    if route is None:
        logger.debug("ignored notification %s", notification.method)
        return
    attribute, arguments = route
    callback = getattr(handlers, attribute)
    if callback is None:
        return
    try:
        args = arguments(Fields(notification.params or {}, notification.method))
    except RemoteProtocolError as exc:
        logger.warning("ignored a malformed notification: %s", exc)
        return
    await call_back(callback, *args)
