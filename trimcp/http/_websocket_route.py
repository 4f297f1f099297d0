"""The WebSocket route of the endpoint (``HttpOptions.websocket_path``): one session each.

``McpHttpApp`` hands it ``websocket`` scopes for its path. The handshake is checked (Host and
Origin, the ``mcp`` subprotocol: ``trimcp.transports.accept_asgi_websocket``), and with
``HttpOptions.auth`` the upgrade request's bearer token first (``_websocket_auth.py``). The
accepted connection then carries one session under the listener's session manager, which
ends with the connection.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

from trimcp.http._checks import HttpRefusal, new_session_id
from trimcp.http._session_io import start_session
from trimcp.http._websocket_auth import AuthorizedStream, refuse_upgrade
from trimcp.sessions import ConnectionBound
from trimcp.transports import CloseCode, OriginPolicy, accept_asgi_websocket, check_headers

if TYPE_CHECKING:
    from trimcp.auth import Identity
    from trimcp.http._asgi import Receive, Scope, Send
    from trimcp.http._auth import EndpointAuth
    from trimcp.sessions import SessionManager

__all__ = ["WebSocketRoute"]


@typing.final
class WebSocketRoute:
    """MCP over WebSocket at the endpoint's WebSocket path (see the module docstring)."""

    __slots__ = ("_auth", "_manager", "_max_message_size", "_policy")

    def __init__(
        self,
        manager: SessionManager,
        policy: OriginPolicy,
        auth: EndpointAuth | None,
        max_message_size: int,
    ) -> None:
        self._manager = manager
        self._policy = policy
        self._auth = auth
        self._max_message_size = max_message_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one connection until its session ends.

        With ``auth`` the upgrade request's token is checked after Host and Origin (a
        refused Host or Origin is left to ``accept_asgi_websocket``, which answers it).
        """
        auth = self._auth
        identity: Identity | None = None
        if auth is not None and check_headers(self._policy, scope["headers"]) is None:
            try:
                identity = await auth.authenticate(scope)
            except HttpRefusal as refusal:
                await refuse_upgrade(scope, receive, send, refusal)
                return
        stream = await accept_asgi_websocket(
            scope, receive, send, policy=self._policy, max_message_size=self._max_message_size
        )
        if stream is None:
            return
        authorized = None
        if auth is not None and identity is not None:
            authorized = AuthorizedStream(stream, auth, identity)
        try:
            record = await start_session(
                self._manager, new_session_id(), ConnectionBound(authorized or stream)
            )
        except HttpRefusal as refusal:
            # The same words as a refused POST; aclose cuts them to fit a close frame.
            await stream.aclose(code=CloseCode.TRY_AGAIN_LATER, reason=refusal.message)
            return
        if authorized is not None and auth is not None and identity is not None:
            # Bound before the session reads anything: the stream's input waits for this.
            authorized.owner = auth.bind(record.ref, identity)
            authorized.ready.set()
        await record.ref.wait_exited()
        await stream.aclose()
