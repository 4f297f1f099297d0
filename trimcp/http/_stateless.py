"""Stateless mode (``HttpOptions.stateless``): every POST served on a session of its own.

A fresh session serves just one body and ends with it. It is initialized first, as the
client that sends no session id would have (its version from the ``MCP-Protocol-Version``
header, 2025-03-26 when absent), with no client capabilities, so sampling, elicitation and
roots are refused with an error that says the client did not declare them. Nothing outlives
the request: no session id, no GET stream (GET and DELETE are 405), no resumption (no event
store). A client's own ``initialize`` is answered by such a session too, and then forgotten.

The endpoint (``_app.py``) routes the POST here and, for any other body, serves it on the
initialized session the way it serves a POST on any session.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import orjson

from trimcp.http._asgi import send_json
from trimcp.http._checks import HttpRefusal, new_session_id
from trimcp.http._session_io import exchange, feed, start_session
from trimcp.http._stream import HttpSessionStream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from trimcp.http._asgi import Send
    from trimcp.http._body import PostBody
    from trimcp.sessions import SessionManager, SessionRecord

__all__ = ["answer_initialize", "initialize_quietly", "open_stateless_session"]


@contextlib.asynccontextmanager
async def open_stateless_session(
    manager: SessionManager,
) -> AsyncIterator[tuple[SessionRecord, HttpSessionStream]]:
    """Start a session for one request, and end it when the block exits.

    Yields the session's record and stream; bind the request's identity to it
    (``McpHttpApp``) before feeding it anything.

    Raises:
        HttpRefusal: 503, every session is busy.
    """
    session_id = new_session_id()
    stream = HttpSessionStream(session_id, None)
    record = await start_session(manager, session_id, stream)
    try:
        yield record, stream
    finally:
        await manager.end_session(session_id, "stateless request served")


async def answer_initialize(stream: HttpSessionStream, outline: PostBody, send: Send) -> None:
    """Answer a client's ``initialize`` in JSON, without a session id: none will follow."""
    answers = await exchange(stream, outline.request_ids, outline.raw)
    await send_json(send, answers[0] if answers else b"", [])


async def initialize_quietly(stream: HttpSessionStream, version: str) -> None:
    """Initialize the session as a client without capabilities speaking ``version`` would.

    Raises:
        HttpRefusal: 500, the server refused the ``initialize``.
    """
    request_id = f"stateless-{new_session_id()}"
    initialize = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "stateless-http-client", "version": "0"},
        },
    }
    answers = await exchange(stream, [request_id], orjson.dumps(initialize))
    result = orjson.loads(answers[0]) if answers else None
    if not isinstance(result, dict) or "result" not in result:
        raise HttpRefusal(500, "Internal error: the server refused to start a session")
    stream.protocol_version = version
    await feed(stream, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
