"""The few JSON-RPC facts the HTTP client transport needs, picked out of message bytes.

Streamable HTTP ties transport decisions to message contents: a POSTed request's answer
stream is done once its response arrived, the session id comes with the ``initialize``
answer, and later requests carry the negotiated protocol version. These pure functions read
just that much; the session above still decodes every message itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeGuard, final

import orjson

from trimcp.protocol import META_PROTOCOL_VERSION

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject

__all__ = [
    "Outline",
    "RequestId",
    "error_response",
    "initialize_version",
    "outline",
    "response_ids",
    "server_error",
    "split_body",
]

RequestId: TypeAlias = str | int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Outline:
    """What one outgoing message is, as far as the transport cares.

    Attributes:
        request_ids: ids of the requests in it (answers to them are expected back).
        initialize: it is an ``initialize`` request.
        initialized: it is the ``notifications/initialized`` notification.
        cancelled: the request a ``notifications/cancelled`` in it cancels (None: none).
        modern_version: for one request of the per-request era (MCP 2026-07-28), the
            version its ``_meta`` declares (it goes in ``MCP-Protocol-Version``); None for
            anything else, which belongs to the ``initialize`` session.
        method: the method of a single message (None for a batch or a response).
        params: the params of a single request, for the headers that mirror them.
    """

    request_ids: tuple[RequestId, ...] = ()
    initialize: bool = False
    initialized: bool = False
    cancelled: RequestId | None = None
    modern_version: str | None = None
    method: str | None = None
    params: JsonObject | None = None


def outline(data: bytes) -> Outline:
    """Outline an outgoing message (one object or a batch). Unparseable: an empty outline."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return Outline()
    if isinstance(parsed, dict):
        single = _single(parsed)
        if single is not None:
            return single
    items = parsed if isinstance(parsed, list) else [parsed]
    ids: list[RequestId] = []
    initialize = initialized = False
    cancelled: RequestId | None = None
    for item in items:
        if not isinstance(item, dict):
            continue
        method = item.get("method")
        request_id = item.get("id")
        if isinstance(method, str) and _is_id(request_id):
            ids.append(request_id)
            initialize = initialize or method == "initialize"
        initialized = initialized or method == "notifications/initialized"
        if method == "notifications/cancelled":
            cancelled = _cancelled_id(item.get("params"))
    return Outline(
        request_ids=tuple(ids),
        initialize=initialize,
        initialized=initialized,
        cancelled=cancelled,
    )


def _single(item: dict[str, object]) -> Outline | None:
    """Outline one request of the per-request era; None for anything else."""
    method, request_id, params = item.get("method"), item.get("id"), item.get("params")
    if not isinstance(method, str) or not _is_id(request_id) or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        return None
    return Outline(
        request_ids=(request_id,),
        initialize=method == "initialize",
        modern_version=version,
        method=method,
        params=params,
    )


def _cancelled_id(params: object) -> RequestId | None:
    target = params.get("requestId") if isinstance(params, dict) else None
    return target if _is_id(target) else None


def _is_id(value: object) -> TypeGuard[RequestId]:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def response_ids(data: bytes) -> list[RequestId]:
    """Return the ids of the responses (results or errors) in an incoming message.

    Cheap for the common case of a notification: a message with a ``"method"`` member and
    neither ``"result"`` nor ``"error"`` anywhere is not parsed at all.
    """
    if b'"method"' in data and b'"result"' not in data and b'"error"' not in data:
        return []
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return []
    items = parsed if isinstance(parsed, list) else [parsed]
    return [
        item["id"]
        for item in items
        if isinstance(item, dict)
        and "method" not in item
        and ("result" in item or "error" in item)
        and _is_id(item.get("id"))
    ]


def initialize_version(data: bytes, request_id: RequestId) -> str | None:
    """Return ``protocolVersion`` if ``data`` is the result answering ``request_id``."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    items = parsed if isinstance(parsed, list) else [parsed]
    for item in items:
        if not isinstance(item, dict) or item.get("id") != request_id:
            continue
        result = item.get("result")
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            return str(result["protocolVersion"])
    return None


def split_body(body: bytes) -> list[bytes]:
    """Split an ``application/json`` answer into messages: one object, or a batch's items.

    Raises:
        ValueError: the body is not JSON, or not an object or an array of objects.
    """
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc})") from exc
    if isinstance(parsed, dict):
        return [body]
    if isinstance(parsed, list) and all(isinstance(item, dict) for item in parsed):
        return [orjson.dumps(item) for item in parsed]
    raise ValueError("JSON, but neither a JSON-RPC message nor a batch of them")


def error_response(
    request_id: RequestId, message: str, *, code: int = -32603, status: int | None = None
) -> bytes:
    """Return a JSON-RPC error response to ``request_id``, made up by this side.

    The transport answers a request itself when the server's answer can no longer come
    (the connection broke and could not be resumed, the server refused the POST), so the
    caller gets the reason at once instead of waiting for its timeout. ``status`` is the
    HTTP status that refused it, if one did: it goes in ``data.httpStatus`` (a session
    probing the server's era tells a legacy server's 400 from a failing server's 500).
    """
    error: dict[str, object] = {"code": code, "message": message}
    if status is not None:
        error["data"] = {"httpStatus": status}
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})


def server_error(body: bytes, request_id: RequestId) -> bytes | None:
    """Return the JSON-RPC error response in an error status's ``body``, for ``request_id``.

    A 2026-07-28 server answers a refused request with an HTTP error status and a JSON-RPC
    error body (400 with -32022, 404 with -32601, ...; Streamable HTTP > Status Codes); that
    error is the request's answer. Its ``id`` is set to ``request_id`` (a server that could
    not read the body answers with ``null``). None when ``body`` is not such an error.
    """
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(parsed, dict) or parsed.get("id") not in (None, request_id):
        return None
    error = parsed.get("error")
    if not isinstance(error, dict):
        return None
    code, message = error.get("code"), error.get("message")
    if isinstance(code, bool) or not isinstance(code, int) or not isinstance(message, str):
        return None
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
