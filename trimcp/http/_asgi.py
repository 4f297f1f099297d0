"""The ASGI messages of the endpoint: a request body in, an answer known in full out.

Every route reads its body with ``read_body`` and answers a refusal, a JSON body or an empty
202 with ``send_fixed`` and its wrappers; a streamed answer goes out in ``chunk`` messages
(``_sse_writer.py`` for Streamable HTTP, ``_legacy.py`` for the 2024-11-05 transport). Nothing
here knows MCP: the routes (``_app.py``) decide what to send.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from trimcp.http._checks import HttpRefusal

if TYPE_CHECKING:
    from trimcp.http._checks import Headers

__all__ = [
    "Message",
    "Receive",
    "Scope",
    "Send",
    "chunk",
    "read_body",
    "refuse",
    "send_fixed",
    "send_json",
    "send_plain",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON = [(b"content-type", b"application/json")]


def chunk(body: bytes) -> Message:
    """Return the message that sends ``body`` as one part of a streamed answer."""
    return {"type": "http.response.body", "body": body, "more_body": True}


async def read_body(headers: Headers, receive: Receive, limit: int) -> bytes:
    """Return the request body once it has all arrived.

    A declared ``Content-Length`` over ``limit`` is refused before reading anything.

    Raises:
        HttpRefusal: 413, the body is over ``limit`` bytes; 400, the client went away
            while sending it.
    """
    declared = headers.get("content-length")
    too_large = HttpRefusal(
        413,
        f"Payload Too Large: the body is over the {limit}-byte limit (http.max_body_size)",
    )
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise HttpRefusal(400, "Bad Request: the client went away while sending the body")
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise too_large
        chunks.append(part)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def send_json(send: Send, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    """Answer 200 with a JSON body, and the ``extra`` headers."""
    await send_fixed(send, 200, body, [*_JSON, *extra])


async def send_fixed(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    """Answer with a body known in full: with Content-Length, so it leaves unchunked."""
    length = (b"content-length", str(len(body)).encode("ascii"))
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})


async def refuse(send: Send, refusal: HttpRefusal) -> None:
    """Answer with the refusal's status, headers and JSON-RPC error body."""
    await send_fixed(send, refusal.status, refusal.body(), [*_JSON, *refusal.headers])


async def send_plain(send: Send, status: int, text: bytes) -> None:
    """Answer with a plain-text body (a request that is not for the MCP endpoint)."""
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
