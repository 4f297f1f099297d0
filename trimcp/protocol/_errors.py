"""JSON-RPC error codes, and the one function that turns an exception into an error object.

STYLE §6: every place that answers a request with an error goes through ``error_object_for``,
so the mapping below is the whole policy:

==============================  =============================================================
raised                          error object
==============================  =============================================================
``JsonRpcError`` (any subclass) its own code, message and ``data`` (``data`` dropped if it is
                                not JSON)
``RemoteProtocolError``         its ``code`` hint (-32600 by default) and its message
``LocalProtocolError``          -32603 "Internal error": our own bug, never the peer's
anything else                   -32603 "Internal error"; the text of the exception is never
                                sent (log the traceback where you catch it)
==============================  =============================================================

A tool that ran and failed is not an error at all at this layer: it is a ``tools/call``
result with ``isError: true`` (MCP 2025-11-25, Server Features > Tools > Error Handling).
"""

from __future__ import annotations

import enum

from trimcp.errors import JsonRpcError, LocalProtocolError, RemoteProtocolError

from ._json import is_json_value
from ._messages import ErrorObject


class ErrorCode(enum.IntEnum):
    """Error codes MCP uses (MCP 2025-11-25 schema; JSON-RPC 2.0 §5.1)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    #: ``resources/read`` of an unknown URI (MCP 2025-11-25, Resources > Error Handling).
    RESOURCE_NOT_FOUND = -32002
    #: ``URLElicitationRequiredError`` (new in MCP 2025-11-25, Elicitation > URL mode).
    URL_ELICITATION_REQUIRED = -32042


#: The message sent for every error we do not mean to explain to the peer.
INTERNAL_ERROR_MESSAGE = "Internal error"


def error_object_for(exc: BaseException) -> ErrorObject:
    """Return the error object that answers a request which failed with ``exc``.

    Never raises. See the module docstring for the table.
    """
    if isinstance(exc, JsonRpcError):
        data = exc.data
        if data is None or not is_json_value(data):
            return ErrorObject(code=exc.code, message=exc.message)
        return ErrorObject(code=exc.code, message=exc.message, data=data)
    if isinstance(exc, RemoteProtocolError):
        return ErrorObject(code=exc.code, message=str(exc))
    if isinstance(exc, LocalProtocolError):
        return ErrorObject(code=ErrorCode.INTERNAL_ERROR, message=INTERNAL_ERROR_MESSAGE)
    return ErrorObject(code=ErrorCode.INTERNAL_ERROR, message=INTERNAL_ERROR_MESSAGE)
