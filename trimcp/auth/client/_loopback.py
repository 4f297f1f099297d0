"""A one-shot HTTP listener on the loopback interface that receives the OAuth redirect.

RFC 8252 section 7.3 (OAuth for native apps): the client listens on ``127.0.0.1`` on a port
of its choosing and uses ``http://127.0.0.1:<port>/callback`` as its redirect URI; the
authorization server must accept any port there. The browser is redirected to it with
``code`` and ``state`` (or ``error``) in the query. The listener answers that one request
with a short page saying the tab can be closed, and keeps its query parameters; other paths
get 404. It listens on 127.0.0.1 only (the IP literal, not ``localhost``, which may resolve
elsewhere: RFC 8252 section 8.3).

Requests are parsed with h11. Each connection has ``_CONNECTION_DEADLINE`` seconds to send
its request head, which is bounded by h11's limit on an incomplete event (16 KiB).
"""

from __future__ import annotations

import contextlib
import html
import logging
import urllib.parse
from typing import TYPE_CHECKING, Final, final

import h11
import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["RedirectReceiver", "open_redirect_receiver"]

logger = logging.getLogger(__name__)

# Seconds one connection may take to send its request.
_CONNECTION_DEADLINE: Final = 10.0

_PAGE: Final = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{text}</p></body></html>
"""


@final
class RedirectReceiver:
    """Waits for the redirect at ``redirect_uri`` (module docstring)."""

    def __init__(self, redirect_uri: str, path: str) -> None:
        self.redirect_uri = redirect_uri
        self._path = path
        self._params: dict[str, str] | None = None
        self._arrived = trio.Event()

    async def wait(self) -> dict[str, str]:
        """Return the redirect's query parameters once it came (first value of each name)."""
        await self._arrived.wait()
        assert self._params is not None  # set before the event
        return self._params

    async def handle(self, stream: trio.SocketStream) -> None:
        """Answer one connection (one request); never raises for what the peer sends."""
        async with stream:
            with trio.move_on_after(_CONNECTION_DEADLINE):
                try:
                    await self._serve(stream)
                except (h11.ProtocolError, trio.BrokenResourceError) as exc:
                    logger.debug("the redirect listener dropped a connection: %r", exc)

    async def _serve(self, stream: trio.SocketStream) -> None:
        connection = h11.Connection(h11.SERVER)
        request = await _read_request(connection, stream)
        if request is None:
            return
        target = request.target.decode("ascii", "replace")
        path, _, query = target.partition("?")
        if request.method != b"GET" or path != self._path:
            await _send(connection, stream, 404, "Not found", "Nothing is served here.")
            return
        if self._params is None:
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
            params: dict[str, str] = {}
            for name, value in pairs:
                params.setdefault(name, value)
            self._params = params
            self._arrived.set()
        if "error" in self._params:
            reason = html.escape(self._params["error"])
            await _send(connection, stream, 200, "Sign-in failed", f"The server said: {reason}.")
        else:
            await _send(connection, stream, 200, "Signed in", "You can close this tab.")


async def _read_request(
    connection: h11.Connection, stream: trio.SocketStream
) -> h11.Request | None:
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            data = await stream.receive_some(4096)
            connection.receive_data(data)
            if not data and connection.their_state is h11.IDLE:
                return None
            continue
        if isinstance(event, h11.Request):
            return event
        return None


async def _send(
    connection: h11.Connection, stream: trio.SocketStream, status: int, title: str, text: str
) -> None:
    body = _PAGE.format(title=title, text=text).encode("utf-8")
    headers = [
        ("content-type", "text/html; charset=utf-8"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        ("referrer-policy", "no-referrer"),
        ("connection", "close"),
    ]
    for event in (h11.Response(status_code=status, headers=headers), h11.Data(data=body)):
        await stream.send_all(connection.send(event) or b"")
    await stream.send_all(connection.send(h11.EndOfMessage()) or b"")


@contextlib.asynccontextmanager
async def open_redirect_receiver(
    *, host: str = "127.0.0.1", port: int = 0, path: str = "/callback"
) -> AsyncIterator[RedirectReceiver]:
    """Listen on ``host:port`` (0: a free port) for the block; yield the receiver.

    Raises:
        OSError: the port could not be bound.
    """
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound = listeners[0].socket.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    receiver = RedirectReceiver(f"http://{shown}:{bound}{path}", path)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, receiver.handle, listeners)
        try:
            yield receiver
        finally:
            nursery.cancel_scope.cancel()
