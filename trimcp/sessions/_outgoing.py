"""The session's own requests to the client (sampling, elicitation, roots, ping): the waits.

``Session.request`` encodes a request, registers an ``Outgoing`` under its id and waits on
it; the session's reader completes it when the answer arrives (``ResponseReceived``) and
restarts its timeout on each progress notification for it (Lifecycle > Timeouts, MAY).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import trio

from trimcp.errors import JsonRpcError, TransportClosed
from trimcp.protocol import Result

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import ErrorObject, JsonObject, ProgressParams

__all__ = ["Outgoing", "first_of", "unwrap"]


@final
class Outgoing:
    """One of our requests to the client, waiting for its answer."""

    __slots__ = ("done", "on_progress", "response", "restart")

    def __init__(self, on_progress: Callable[[ProgressParams], Awaitable[None]] | None) -> None:
        self.done = trio.Event()
        self.response: Result | ErrorObject | None = None
        self.on_progress = on_progress
        # Set by progress: the wait restarts its timeout.
        self.restart = trio.Event()


async def first_of(done: trio.Event, restart: trio.Event) -> None:
    """Wait until either event is set."""
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        nursery.start_soon(wait, done)
        nursery.start_soon(wait, restart)


def unwrap(method: str, response: Result | ErrorObject | None) -> JsonObject:
    """Return the result of an answered request, or raise what the answer says.

    Raises:
        TransportClosed: the session ended before the answer came.
        JsonRpcError: the client answered with an error.
    """
    if response is None:
        raise TransportClosed(f"the session ended before the client answered {method}")
    if isinstance(response, Result):
        return response.result
    data = None if not isinstance(response.data, dict | list | str | int | float) else response.data
    raise JsonRpcError(response.code, response.message, data)
