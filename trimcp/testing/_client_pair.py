"""``open_client_pair``: a real ``ClientSession`` connected to a server in the same process.

The server runs in a real ``Session`` actor over ``memory_stream_pair()``; the client is
``trimcp.client``'s own session, so a test exercises both sides exactly as they run over
stdio or HTTP, without a subprocess or a socket::

    async with open_client_pair(server) as session:
        result = await session.call_tool("add", {"a": 2, "b": 3})
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from trimcp.actors import spawn
from trimcp.client import ClientHandlers, ClientSession, ClientSessionOptions, open_client_session
from trimcp.sessions import Session, SessionOptions
from trimcp.transports import memory_stream_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.sessions import RequestHandler

__all__ = ["open_client_pair"]


@asynccontextmanager
async def open_client_pair(
    server: RequestHandler,
    *,
    handlers: ClientHandlers | None = None,
    options: ClientSessionOptions | None = None,
    session_options: SessionOptions | None = None,
) -> AsyncIterator[ClientSession]:
    """Run ``server`` in a session and yield a client session connected to it.

    ``session_options`` default to the server's own (an ``MCPServer``'s); on exit the client
    closes and the server's session is stopped.
    """
    chosen = session_options or getattr(server, "session_options", None) or SessionOptions()
    server_end, client_end = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(server_end, server, chosen))
        try:
            async with open_client_session(client_end, handlers=handlers, options=options) as s:
                yield s
        finally:
            ref.request_stop()
