"""The standalone GET stream: messages the server starts, outside any request's answer.

Opened once the session is initialized (after ``notifications/initialized`` was accepted),
if the server offers it: 405 means it does not, which is fine and not retried. The sender of
``notifications/initialized`` waits for this first answer (``opened``, bounded), so the
stream is open before the first request leaves: a server answering with JSON sends a
request's progress and its own requests here, and must find the stream there; and a server
that hands a pending answer to any GET (the conformance suite's ``sse-retry`` server does)
must not find a request pending when the plain GET comes, or the answer lands here and the
request's own stream is never resumed. Kept open for the session's life; when it ends or
breaks it is resumed like any SSE stream (``_sse.keep_reading``). Giving up only costs
server-initiated messages, so it is logged, not fatal: a server that is really gone fails
the next POST.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ._sse import StreamState, keep_reading

if TYPE_CHECKING:
    import trio

    from ._link import HttpLink

__all__ = ["run_get_stream"]

logger = logging.getLogger(__name__)


async def run_get_stream(link: HttpLink, opened: trio.Event) -> None:
    """Open and keep the GET stream until the session ends or the stream closes.

    ``opened`` is set once the first GET was answered (or failed), and in any case when
    this task ends.
    """
    with link.in_session():
        state = StreamState(link, standalone=True, opened=opened)
        try:
            reason = await keep_reading(link, state, None)
        finally:
            opened.set()
        if reason:
            logger.info("no GET stream from %s: %s", link.url, reason)
