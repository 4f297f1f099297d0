"""Turning what went wrong with a request into the exception its caller sees.

The inverse of ``trimcp.protocol.error_object_for``: a server's JSON-RPC error object becomes
the matching ``JsonRpcError`` subclass, so callers can ``except MethodNotFound`` or
``except ResourceNotFound``; a transport that ended becomes ``ConnectionLost`` naming the
request, with the transport's error as ``__cause__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trimcp.errors import (
    ConnectionLost,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    MissingClientCapability,
    ParseError,
    ResourceNotFound,
    TransportClosed,
    UnsupportedProtocolVersion,
    UrlElicitationRequired,
)
from trimcp.protocol import ABSENT

if TYPE_CHECKING:
    from trimcp.protocol import ErrorObject


def error_from(error: ErrorObject, method: str) -> JsonRpcError:
    """Return the exception for a server's error answer to ``method``."""
    data = None if error.data is ABSENT else error.data
    message = error.message
    exc: JsonRpcError
    if error.code == MethodNotFound.CODE:
        exc = MethodNotFound(method, message)
    elif error.code == InvalidParams.CODE:
        exc = InvalidParams(message, data)
    elif error.code == InvalidRequest.CODE:
        exc = InvalidRequest(message, data)
    elif error.code == InternalError.CODE:
        exc = InternalError(message, data)
    elif error.code == ParseError.CODE:
        exc = ParseError(message, data)
    elif error.code == ResourceNotFound.CODE:
        uri = data.get("uri") if isinstance(data, dict) else None
        exc = ResourceNotFound(uri if isinstance(uri, str) else "", message)
    elif error.code == UrlElicitationRequired.CODE:
        items = data.get("elicitations") if isinstance(data, dict) else None
        exc = UrlElicitationRequired(items if isinstance(items, list) else [], message)
    else:
        exc = _modern_error(error.code, message, data)
    exc.data = data
    return exc


def _modern_error(code: int, message: str, data: object) -> JsonRpcError:
    """The errors of 2026-07-28 (-32020, -32021, -32022), or a plain ``JsonRpcError``."""
    info = data if isinstance(data, dict) else {}
    if code == HeaderMismatch.CODE:
        header = info.get("header")
        return HeaderMismatch(message, header if isinstance(header, str) else None)
    if code == MissingClientCapability.CODE:
        required = info.get("requiredCapabilities")
        return MissingClientCapability(required if isinstance(required, dict) else {}, message)
    if code == UnsupportedProtocolVersion.CODE:
        supported = info.get("supported")
        listed = supported if isinstance(supported, list) else []
        versions = [version for version in listed if isinstance(version, str)]
        return UnsupportedProtocolVersion(info.get("requested"), versions, message)
    return JsonRpcError(code, message, data)


def connection_lost(method: str, cause: BaseException) -> ConnectionLost | TransportClosed:
    """Return the error for a request that the end of the connection cut short."""
    if isinstance(cause, TransportClosed) and str(cause) == CLOSED_BY_CLIENT:
        return TransportClosed(f"{method} was not answered: {CLOSED_BY_CLIENT}")
    detail = str(cause) or type(cause).__name__
    separator = "\n" if "\n" in detail else " "
    return ConnectionLost(
        f"{method} failed: the connection to the server ended.{separator}{detail}",
        method=method,
    )


#: Why requests fail after the application left ``open_client_session``.
CLOSED_BY_CLIENT = "the client session is closed"


def require(declared: bool, method: str) -> None:
    """Refuse ``method`` before sending it if the server did not declare its capability.

    Raises:
        MethodNotFound: as the server itself would have answered.
    """
    if not declared:
        raise MethodNotFound(
            method, f"Method not found: {method} (the server did not declare the capability)"
        )


def resource_not_found(error: InvalidParams, uri: str) -> InvalidParams | ResourceNotFound:
    """Return ``ResourceNotFound`` for a -32602 answer to ``resources/read`` of ``uri``.

    MCP 2026-07-28, Resources > Error Handling: a server "MUST return -32602" with
    ``data.uri`` for a resource that does not exist, where earlier revisions used -32002;
    callers catch one exception either way (its ``code`` is the one sent). Any other
    -32602 is returned as it is.
    """
    data = error.data
    if not isinstance(data, dict) or data.get("uri") != uri:
        return error
    missing = ResourceNotFound(uri, error.message)
    missing.code = error.code
    return missing
