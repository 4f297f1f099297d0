"""Local backends: an in-process server reached through an in-memory client session.

The gateway treats the built-in tools and the ``[server] object`` exactly like an upstream:
each runs in a real ``trimcp.sessions.Session`` over ``memory_stream_pair()``, and the gateway
talks to it with a real ``ClientSession``, under the same supervised ``Connection`` as a
launched process. So listing, routing, progress, cancellation and ``list_changed`` take one
path for every backend, and a local server that crashes is restarted like any other.

A local backend needs a ``ServerConfig`` for the connection manager; ``local_config`` makes
one whose ``command`` says it runs in-process (shown by ``trimcp servers``), and
``open_local`` is what the gateway's connector opens for it. The client session speaks the
newest era the server does (a trimcp server: MCP 2026-07-28) unless its options force one.
"""

from __future__ import annotations

import dataclasses
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from trimcp.actors import spawn
from trimcp.client import ServerConfig, SessionUpstream, open_client_session
from trimcp.sessions import Session, SessionOptions
from trimcp.transports import memory_stream_pair

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.client import ClientHandlers, ClientSessionOptions
    from trimcp.sessions import RequestHandler

__all__ = ["IN_PROCESS", "local_config", "open_local"]

#: The ``command`` of a local backend's ``ServerConfig``: it is never launched.
IN_PROCESS = "(in-process)"


def local_config(name: str) -> ServerConfig:
    """The connection manager's entry for the local backend ``name``."""
    return ServerConfig(name=name, transport="stdio", command=IN_PROCESS)


@asynccontextmanager
async def open_local(
    server: RequestHandler, handlers: ClientHandlers, options: ClientSessionOptions | None = None
) -> AsyncIterator[SessionUpstream]:
    """Run ``server`` in a session and yield a client of it (``options``) as an ``Upstream``."""
    chosen = getattr(server, "session_options", None)
    serving = chosen if isinstance(chosen, SessionOptions) else SessionOptions()
    # Part of the gateway: telemetry sees each call where the gateway serves and forwards
    # it (its SERVER and CLIENT spans, its request counters), not a second time here.
    serving = dataclasses.replace(serving, observed=False)
    server_end, client_end = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        ref = await spawn(nursery, Session(server_end, server, serving))
        try:
            async with open_client_session(
                client_end, handlers=handlers, options=options
            ) as session:
                yield SessionUpstream(session)
        finally:
            ref.request_stop()
