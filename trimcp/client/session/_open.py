"""``open_client_session``: a ``ClientSession`` over a stream, opened in the server's era.

Opening starts the session core's tasks, finds out the server's era (``_era``: the
``server/discover`` probe and, for a legacy server, ``initialize``), and, towards a
2026-07-28 server, starts the ``subscriptions/listen`` stream (``_listen``) and tells the
Streamable HTTP transport about tools' header parameters (``_tools``). Leaving the block
closes the session: pending requests fail, queued messages get ``close_timeout`` to leave,
and the tasks stop.
"""

from __future__ import annotations

import dataclasses
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from trimcp.protocol import LATEST_VERSION, Implementation
from trimcp.transports.http_client import LegacySseClientStream, ServerIdentity, ToolHeaderSink

from ._era import Opening, open_era
from ._handlers import ClientHandlers
from ._listen import Listener
from ._options import ClientSessionOptions
from ._session import ClientSession

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.transports import MessageStream

__all__ = ["DEFAULT_CLIENT_INFO", "open_client_session"]

#: Who we are, unless the application says otherwise.
DEFAULT_CLIENT_INFO = Implementation(name="trimcp", version="0.1")


async def _open(session: ClientSession, stream: MessageStream, nursery: trio.Nursery) -> None:
    """Open ``session`` in the server's era; start what a 2026-07-28 session runs."""
    identity = stream if isinstance(stream, ServerIdentity) else None
    options = session.options
    if isinstance(stream, LegacySseClientStream) and options.protocol_version is None:
        # The 2024-11-05 HTTP+SSE transport never carries the per-request era.
        options = dataclasses.replace(options, protocol_version=LATEST_VERSION)
    # Over Streamable HTTP every POST gets an answer (a legacy server's is an error
    # status): only the request timeout applies. Elsewhere a legacy server may ignore the
    # probe, and ``discover_timeout`` says how long that takes to conclude.
    http = isinstance(stream, ToolHeaderSink)
    opening = Opening(
        connect=session.connect,
        options=options,
        key=None if identity is None else identity.server_key,
        context=None if identity is None else identity.authorization_context,
        probe_timeout=options.request_timeout if http else options.discover_timeout,
    )
    core = session._core  # this module is the session's own opening
    await open_era(core, opening)
    if not core.connection.modern:
        return
    if isinstance(stream, ToolHeaderSink):
        session._tools.headers = stream
    if session.options.listen:
        session.listener = Listener(core, session.server_capabilities, session.forget_lists)
        nursery.start_soon(session.listener.run)


@asynccontextmanager
async def open_client_session(
    stream: MessageStream,
    *,
    client_info: Implementation | None = None,
    handlers: ClientHandlers | None = None,
    options: ClientSessionOptions | None = None,
) -> AsyncIterator[ClientSession]:
    """Open an MCP session over ``stream`` and yield it; stop its tasks on the way out.

    Dual-era unless ``options.protocol_version`` says otherwise: 2026-07-28 when the server
    speaks it, else the ``initialize`` handshake (``ClientSessionOptions``). Only the
    capabilities ``handlers`` provide are declared. The stream stays the caller's: it is
    not closed here. Leaving the block fails requests still pending (``TransportClosed``)
    and gives queued messages ``close_timeout`` to be written.

    Raises:
        RequestTimeout: the server did not answer ``initialize`` in ``request_timeout``.
        JsonRpcError / RemoteProtocolError: it refused, or spoke a version we do not (or
            only the handshake era, when ``protocol_version`` forces 2026-07-28).
        TransportBroken / TransportClosed / ServerExited: the transport ended first.
    """
    session = ClientSession(
        stream,
        client_info or DEFAULT_CLIENT_INFO,
        handlers or ClientHandlers(),
        options or ClientSessionOptions(),
    )
    core = session._core
    try:
        async with trio.open_nursery() as nursery:
            core.start(nursery)
            try:
                await _open(session, stream, nursery)
                yield session
            finally:
                with trio.CancelScope(shield=True):
                    await core.close()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The nursery wraps the block's own exception: hand it back unwrapped.
        if len(group.exceptions) == 1:
            error = group.exceptions[0]
            raise error from error.__cause__
        raise
