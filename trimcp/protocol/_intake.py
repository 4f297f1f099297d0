"""The first step of every ``receive``: bytes to messages, or to the error that answers them.

Shared by both connection sides. Nothing here raises: each message that cannot be used
becomes a ``ReplyToSend`` carrying the JSON-RPC error the peer gets back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from trimcp.errors import InvalidRequest, JsonRpcError, LocalProtocolError, RemoteProtocolError

from ._codec import dump, load, parse_message, readable_id
from ._errors import error_object_for
from ._events import ReplyToSend
from ._messages import ErrorResponse, Result

if TYPE_CHECKING:
    from ._json import JsonObject, JsonValue, RequestId
    from ._messages import Message

#: The default limit on one inbound message. The TypeScript SDK caps HTTP message bodies at
#: 4 MB (``MAXIMUM_MESSAGE_SIZE = "4mb"``); base64 images in sampling results fit well under it.
DEFAULT_MAX_MESSAGE_SIZE: Final = 4 * 1024 * 1024


def as_remote(exc: JsonRpcError | LocalProtocolError) -> JsonRpcError | RemoteProtocolError:
    """Apply h11's rule: a ``LocalProtocolError`` met while receiving is the peer's fault."""
    if isinstance(exc, LocalProtocolError):
        remote = RemoteProtocolError(str(exc), code=exc.code)
        remote.__cause__ = exc
        return remote
    return exc


def error_reply(request_id: RequestId | None, exc: BaseException) -> ReplyToSend:
    """Build the event that answers a refused message with its error response."""
    error = error_object_for(exc)
    data = dump(ErrorResponse(id=request_id, error=error))
    return ReplyToSend(request_id=request_id, data=data, error=error)


def result_reply(request_id: RequestId, result: JsonObject) -> ReplyToSend:
    """Build the event that answers a request the core handles itself (``ping``)."""
    return ReplyToSend(request_id=request_id, data=dump(Result(id=request_id, result=result)))


def read(data: bytes | str, *, max_size: int, batching: bool) -> list[Message | ReplyToSend]:
    """Decode one framed message (or, if ``batching``, one batch) into messages.

    Batches exist only in protocol version 2025-03-26
    (https://modelcontextprotocol.io/specification/2025-03-26/basic#batching): otherwise a
    top-level array is -32600, as is an empty batch or one holding ``initialize`` (which MUST NOT be
    batched). The answers to a batch's requests go back one by one: the 2025-03-26 spec says
    they MAY be batched, so the transport may still group them.
    """
    try:
        value = load(data, max_size=max_size)
    except JsonRpcError as exc:
        return [error_reply(None, exc)]
    if not isinstance(value, list):
        return [_classify(value)]
    if not batching:
        message = "Batches are only allowed in protocol version 2025-03-26"
        return [error_reply(None, InvalidRequest(message))]
    if not value:
        return [error_reply(None, InvalidRequest("A batch must not be empty"))]
    if any(isinstance(item, dict) and item.get("method") == "initialize" for item in value):
        return [error_reply(None, InvalidRequest("initialize must not be part of a batch"))]
    return [_classify(item) for item in value]


def _classify(value: JsonValue) -> Message | ReplyToSend:
    try:
        return parse_message(value)
    except InvalidRequest as exc:
        return error_reply(readable_id(value), exc)
