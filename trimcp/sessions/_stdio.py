"""``serve_stdio`` / ``serve_session``: one MCP session over stdio (or any stream), supervised."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.supervision import ChildSpec, open_supervisor
from trimcp.transports import open_stdio_stream

from ._options import SessionOptions
from ._session import Session

if TYPE_CHECKING:
    from trimcp.transports import MessageStream

    from ._handler import RequestHandler


async def serve_stdio(
    handler: RequestHandler,
    *,
    options: SessionOptions | None = None,
    stream: MessageStream | None = None,
) -> None:
    """Serve one session until stdin ends, the session closes, or this is cancelled.

    The session runs under its own supervisor as a temporary, significant child: when it
    ends (normally or not) the supervisor shuts down and this returns; a crash is logged by
    the supervisor, not raised. Only protocol messages are written to stdout; configure
    logging to go to stderr. ``stream`` replaces stdin/stdout (tests).
    """
    options = options or SessionOptions()
    if stream is None:
        stream = open_stdio_stream(max_message_size=options.max_message_size)
    chosen = stream

    def build() -> Session:
        return Session(chosen, handler, options)

    spec = ChildSpec.for_actor("stdio-session", build, restart="temporary", significant=True)
    async with open_supervisor([spec], auto_shutdown="any_significant") as supervisor:
        await supervisor.wait_exited()


async def serve_session(
    handler: RequestHandler,
    stream: MessageStream,
    *,
    options: SessionOptions | None = None,
) -> None:
    """Serve one session on ``stream`` (any transport) until it ends; see ``serve_stdio``."""
    await serve_stdio(handler, options=options, stream=stream)
