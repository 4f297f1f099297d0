"""JSON text <-> message objects. The only module that calls orjson or spells camelCase.

Decoding policy (documented here because JSON leaves it open):

* Size: a message longer than the connection's limit is refused *before* parsing with -32600
  (``data: {"size", "limit"}``), not -32700: the bytes may well be valid JSON.
* Text: UTF-8 only (MCP 2025-11-25, Basic: messages are UTF-8). Invalid UTF-8, lone
  surrogates, a byte-order mark, ``NaN``/``Infinity``, numbers that overflow a double and
  nesting deeper than 1024 levels are all -32700 Parse error; ``data.offset`` is orjson's
  character position. Surrounding whitespace is fine; a transport strips its framing.
* Duplicate object keys: the last one wins (orjson's behaviour; RFC 8259 §4 leaves it open).
* Integers beyond 64 bits decode as floats, so such an ``id`` is refused like any float id.
* Members JSON-RPC does not define are ignored; MCP peers may add keys anywhere.

Encoding goes through each message's ``to_wire()`` dict, so an absent member stays absent.
orjson writes compact JSON without raw newlines, as stdio framing needs (MCP 2025-11-25,
Transports > stdio). It writes non-finite floats as ``null``; values that are not JSON at all
raise ``LocalProtocolError`` and nothing is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from trimcp.errors import InvalidRequest, LocalProtocolError, ParseError

from ._json import JsonObject, JsonValue, RequestId, is_request_id
from ._messages import ErrorObject, ErrorResponse, Notification, Request, Result

if TYPE_CHECKING:
    from ._messages import Message


def load(data: bytes | str, *, max_size: int) -> JsonValue:
    """Parse one framed message into JSON values.

    Raises:
        InvalidRequest: ``data`` is longer than ``max_size`` bytes.
        ParseError: ``data`` is not valid UTF-8 JSON (see the module docstring).
    """
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ParseError(data={"offset": exc.start}) from exc
    if len(data) > max_size:
        raise InvalidRequest(
            f"Message of {len(data)} bytes exceeds the limit of {max_size} bytes",
            data={"size": len(data), "limit": max_size},
        )
    try:
        value: JsonValue = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ParseError(data={"offset": exc.pos}) from exc
    return value


def dump(message: Message) -> bytes:
    """Encode one message as compact JSON.

    Raises:
        LocalProtocolError: something inside is not JSON (a set, a non-``str`` key, an
            integer beyond 64 bits, ...).
    """
    return dump_value(message.to_wire())


def dump_value(value: JsonValue) -> bytes:
    """Encode any JSON value (a batch of ``to_wire()`` dicts, for instance).

    Raises:
        LocalProtocolError: something inside is not JSON.
    """
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError as exc:
        raise LocalProtocolError(f"cannot encode message as JSON: {exc}") from exc


def readable_id(value: JsonValue) -> RequestId | None:
    """Return the id of a request-shaped object, or ``None`` if none can be read.

    An error answering an invalid message carries the id only when the message looked like a
    request (it has a ``method``): echoing the id of a broken *response* would make the peer
    match our error to its own request of that id.
    """
    if isinstance(value, dict) and "method" in value:
        candidate = value.get("id")
        if is_request_id(candidate):
            return candidate
    return None


def parse_message(value: JsonValue) -> Message:
    """Classify one decoded JSON value as one of the four JSON-RPC shapes.

    Raises:
        InvalidRequest: valid JSON that is not a JSON-RPC 2.0 message; the message says why.
    """
    if not isinstance(value, dict):
        raise InvalidRequest("A JSON-RPC message must be a JSON object")
    if value.get("jsonrpc") != "2.0":
        raise InvalidRequest('The "jsonrpc" member must be "2.0"')
    if "method" in value:
        return _parse_call(value)
    if "result" in value or "error" in value:
        return _parse_response(value)
    raise InvalidRequest("The message is neither a request, a notification nor a response")


def _parse_call(value: JsonObject) -> Request | Notification:
    method = value["method"]
    if not isinstance(method, str):
        raise InvalidRequest('The "method" member must be a string')
    if "result" in value or "error" in value:
        raise InvalidRequest("A request must not carry a result or an error")
    raw_params = value.get("params")
    if "params" in value and not isinstance(raw_params, dict):
        # JSON-RPC 2.0 allows arrays; MCP 2025-11-25 (Basic > Requests) says object.
        raise InvalidRequest('The "params" member must be an object')
    params = raw_params if isinstance(raw_params, dict) else None
    if "id" not in value:
        return Notification(method=method, params=params)
    request_id = value["id"]
    if not is_request_id(request_id):
        raise InvalidRequest("A request id must be a string or an integer")
    return Request(id=request_id, method=method, params=params)


def _parse_response(value: JsonObject) -> Result | ErrorResponse:
    if "result" in value and "error" in value:
        raise InvalidRequest("A response must not carry both a result and an error")
    request_id = value.get("id")
    if "result" in value:
        result = value["result"]
        if not is_request_id(request_id):
            raise InvalidRequest("A result response needs a string or integer id")
        if not isinstance(result, dict):
            raise InvalidRequest('The "result" member must be an object')
        return Result(id=request_id, result=result)
    # An unreadable id may come back absent (2025-11-25) or null (JSON-RPC 2.0, older MCP).
    if request_id is not None and not is_request_id(request_id):
        raise InvalidRequest("An error response id must be a string, an integer or absent")
    return ErrorResponse(id=request_id, error=_parse_error_object(value["error"]))


def _parse_error_object(error: JsonValue) -> ErrorObject:
    if not isinstance(error, dict):
        raise InvalidRequest('The "error" member must be an object')
    code = error.get("code")
    message = error.get("message")
    if not isinstance(code, int) or isinstance(code, bool):
        raise InvalidRequest("An error code must be an integer")
    if not isinstance(message, str):
        raise InvalidRequest("An error message must be a string")
    if "data" in error:
        return ErrorObject(code=code, message=message, data=error["data"])
    return ErrorObject(code=code, message=message)
