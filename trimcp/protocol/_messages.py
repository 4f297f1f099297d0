"""The four JSON-RPC 2.0 message shapes, and the error object, as frozen dataclasses.

Each class knows its own envelope (``to_wire``); the envelope keys are all lower case, so no
camelCase leaks out of ``_codec``. Params and results stay JSON objects at this layer: the
method-specific shapes are the server and client APIs' business, except for the few the
lifecycle needs (``_types``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias, final

from ._json import ABSENT, Absent, JsonObject, JsonValue, RequestId


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorObject:
    """The ``error`` member of an error response.

    ``data`` is ``ABSENT`` when the member is missing, which differs from ``data: null``.
    """

    code: int
    message: str
    data: JsonValue | Absent = ABSENT

    def to_wire(self) -> JsonObject:
        """Return the JSON object for this error."""
        wire: JsonObject = {"code": int(self.code), "message": self.message}
        if self.data is not ABSENT:
            wire["data"] = self.data
        return wire


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """A request: it has an id and expects exactly one response.

    ``params`` is ``None`` when the member is absent (``"params": null`` is not valid).
    """

    id: RequestId
    method: str
    params: JsonObject | None = None

    def to_wire(self) -> JsonObject:
        """Return the JSON-RPC envelope."""
        wire: JsonObject = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            wire["params"] = self.params
        return wire


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Notification:
    """A notification: no id, and the receiver must never answer it."""

    method: str
    params: JsonObject | None = None

    def to_wire(self) -> JsonObject:
        """Return the JSON-RPC envelope."""
        wire: JsonObject = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            wire["params"] = self.params
        return wire


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """A successful response. ``result`` is always an object (``{}`` when empty)."""

    id: RequestId
    result: JsonObject

    def to_wire(self) -> JsonObject:
        """Return the JSON-RPC envelope."""
        return {"jsonrpc": "2.0", "id": self.id, "result": self.result}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorResponse:
    """A failed response.

    ``id`` is ``None`` only when the request's id could not be read (parse error, invalid
    request). Such responses are encoded *without* an ``id`` member, the form the 2025-11-25
    schema allows (``JSONRPCErrorResponse``); decoding accepts both a missing id and
    ``"id": null`` (plain JSON-RPC 2.0 and older MCP peers write the latter).
    """

    id: RequestId | None
    error: ErrorObject

    def to_wire(self) -> JsonObject:
        """Return the JSON-RPC envelope."""
        wire: JsonObject = {"jsonrpc": "2.0"}
        if self.id is not None:
            wire["id"] = self.id
        wire["error"] = self.error.to_wire()
        return wire


Response: TypeAlias = Result | ErrorResponse
Message: TypeAlias = Request | Notification | Result | ErrorResponse
