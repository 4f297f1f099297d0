"""The host's connector: a configured server opened as a ``ClientSession`` over its transport.

``connect_upstream(config, on_list_changed)`` expands the server's ``${VAR}`` references
against the environment, opens its transport — a launched process for ``stdio``
(``trimcp.client.process``), Streamable HTTP (``trimcp.transports.http_client``; the
2024-11-05 HTTP+SSE transport for servers that refuse Streamable HTTP's initialize with 400,
404 or 405, as MCP's backwards compatibility section provides; both authorized as the entry's
``auth`` says, ``trimcp.auth.client.auth_for``), or WebSocket — performs the MCP
handshake within ``startup_timeout``, and yields the session as the ``Upstream`` the
connection manager uses. A handshake that takes too long is reported in plain words with
what to check; every other failure keeps the transport's own plain-language error.
"""

from __future__ import annotations

import dataclasses
import math
import os
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, final

import trio

from trimcp.auth.client import auth_for
from trimcp.client.process import ProcessSpec, open_server_process
from trimcp.client.session import (
    ClientHandlers,
    ClientSession,
    ClientSessionOptions,
    open_client_session,
)
from trimcp.config.mcp_servers import expand_server
from trimcp.errors import ConnectFailed, ConnectionLost, HttpStatusError
from trimcp.transports import ReadyMarker, open_websocket_stream
from trimcp.transports.http_client import open_http_client_stream, open_legacy_sse_client_stream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from trimcp.client.session._core import ProgressCallback
    from trimcp.config.mcp_servers import ServerConfig
    from trimcp.protocol import JsonObject
    from trimcp.transports import MessageStream
    from trimcp.transports.http_client import HttpAuth

    from ._connection import CatalogKind

__all__ = ["SessionUpstream", "connect_upstream"]


@final
class SessionUpstream:
    """A ``ClientSession`` as the connection manager's ``Upstream``."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def list_all(self, kind: CatalogKind) -> list[JsonObject]:
        session = self.session
        if kind == "tools":
            return [item.raw for item in await session.list_tools()]
        if kind == "resources":
            return [item.raw for item in await session.list_resources()]
        if kind == "resourceTemplates":
            return [item.raw for item in await session.list_resource_templates()]
        return [item.raw for item in await session.list_prompts()]

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> JsonObject:
        result = await self.session.call_tool(name, arguments, on_progress=on_progress)
        return result.raw

    async def wait_closed(self) -> BaseException | None:
        return await self.session.wait_closed()


@asynccontextmanager
async def _open_stream(config: ServerConfig) -> AsyncIterator[MessageStream]:
    if config.transport == "stdio":
        async with open_server_process(ProcessSpec.from_config(config)) as process:
            yield process
        return
    async with open_websocket_stream(config.url or "", headers=dict(config.headers)) as stream:
        yield stream


def _handshake_too_slow(config: ServerConfig) -> ConnectFailed:
    target = config.url or " ".join([config.command or "", *config.args]).strip()
    return ConnectFailed(
        target,
        f"MCP server {config.name!r} did not finish opening the MCP session (server/discover, "
        f"or the initialize handshake) within {config.startup_timeout:g} s.\n"
        "  likely causes:\n"
        "    - it is still installing or starting (npx/uvx download packages on first use)\n"
        "    - it is not an MCP server, or it writes something else to stdout\n"
        "    - it waits for input or a login before serving\n"
        "  how to fix:\n"
        "    - run its command in a terminal and watch what it prints\n"
        f"    - raise startup_timeout for {config.name!r} in {config.source.describe()}",
    )


@asynccontextmanager
async def connect_upstream(
    config: ServerConfig,
    on_list_changed: Callable[[CatalogKind], None],
    *,
    environ: Mapping[str, str] | None = None,
    handlers: ClientHandlers | None = None,
) -> AsyncIterator[SessionUpstream]:
    """Open ``config``'s server and yield it as an ``Upstream`` (module docstring).

    ``handlers`` answer the server's requests (sampling, elicitation, roots); list-change
    callbacks are added to them so the host re-reads the catalog.
    """
    expanded = expand_server(config, os.environ if environ is None else environ)
    watched = dataclasses.replace(
        handlers or ClientHandlers(),
        on_tools_changed=lambda: on_list_changed("tools"),
        on_resources_changed=lambda: on_list_changed("resources"),
        on_prompts_changed=lambda: on_list_changed("prompts"),
    )
    options = ClientSessionOptions(
        request_timeout=expanded.request_timeout,
        reset_timeout_on_progress=expanded.reset_timeout_on_progress,
        max_request_timeout=expanded.max_request_timeout,
    )
    if expanded.transport == "http":
        # The entry's "auth" (OAuth, client credentials), for both HTTP transports: tokens
        # stored by a sign-in are used and refreshed; no browser is opened from here.
        auth = auth_for(expanded)
        fallback = False
        yielded = False
        async with _with_deadline(expanded) as starting:
            try:
                streamable = _streamable(expanded, auth)
                async with _session(expanded, streamable, watched, options) as upstream:
                    starting.deadline = math.inf
                    yielded = True
                    yield upstream
            except (HttpStatusError, ConnectionLost) as exc:
                # MCP's backwards compatibility: a server that refuses Streamable HTTP's
                # initialize POST with 400, 404 or 405 may speak the 2024-11-05 HTTP+SSE
                # transport at the same URL. Only before the connection was handed out.
                if yielded or _refused_status(exc) not in (400, 404, 405):
                    raise
                fallback = True
        if fallback:
            async with (
                _with_deadline(expanded) as starting,
                _session(expanded, _legacy(expanded, auth), watched, options) as upstream,
            ):
                starting.deadline = math.inf
                yield upstream
        return
    async with (
        _with_deadline(expanded) as starting,
        _session(expanded, _open_stream(expanded), watched, options) as upstream,
    ):
        starting.deadline = math.inf
        yield upstream


def _refused_status(error: BaseException) -> int | None:
    """The HTTP status that refused the handshake, if ``error`` (or its cause) is one."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, HttpStatusError):
            return current.status
        current = current.__cause__
    return None


@asynccontextmanager
async def _with_deadline(config: ServerConfig) -> AsyncIterator[trio.CancelScope]:
    """A scope whose deadline covers starting and the handshake; the caller lifts it.

    The scope stays around the whole connection, because the transports' nurseries open
    inside it; a handshake that runs out of time is reported in plain words.
    """
    with trio.CancelScope(deadline=trio.current_time() + config.startup_timeout) as starting:
        yield starting
    if starting.cancelled_caught:
        raise _handshake_too_slow(config)


@asynccontextmanager
async def _session(
    config: ServerConfig,
    opening: AbstractAsyncContextManager[MessageStream],
    handlers: ClientHandlers,
    options: ClientSessionOptions,
) -> AsyncIterator[SessionUpstream]:
    async with (
        opening as stream,
        open_client_session(stream, handlers=handlers, options=options) as session,
    ):
        if isinstance(stream, ReadyMarker):
            stream.mark_ready()
        yield SessionUpstream(session)


def _streamable(
    config: ServerConfig, auth: HttpAuth | None
) -> AbstractAsyncContextManager[MessageStream]:
    return open_http_client_stream(config.url or "", headers=dict(config.headers), auth=auth)


def _legacy(
    config: ServerConfig, auth: HttpAuth | None
) -> AbstractAsyncContextManager[MessageStream]:
    return open_legacy_sse_client_stream(config.url or "", headers=dict(config.headers), auth=auth)
