"""What a POST body holds: requests (and their ids), notifications, responses, a batch.

The HTTP layer must know before the session sees the body whether to answer 202 (only
notifications and responses), to open a response stream (requests), or to create a session
(``initialize``), so it reads the body's outline here. The session's protocol core parses
the same bytes again and does every other check; this module only refuses what cannot be
routed at all: MCP 2025-11-25, Transports > Streamable HTTP > Sending Messages to the
Server, answers input the server cannot accept with an HTTP error such as 400, whose body
may be a JSON-RPC error.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

import orjson

from trimcp.http._checks import HttpRefusal
from trimcp.protocol import ErrorCode

if typing.TYPE_CHECKING:
    from trimcp.auth import Operation, OperationKind
    from trimcp.protocol import RequestId

__all__ = ["PostBody", "read_post_body"]

# The requests whose target has scopes of its own under HttpOptions.auth (ScopeRules): the
# kind of target, and the params member that names it.
_TARGETS: typing.Final[dict[str, tuple[OperationKind, str]]] = {
    "tools/call": ("tool", "name"),
    "prompts/get": ("prompt", "name"),
    "resources/read": ("resource", "uri"),
    "resources/subscribe": ("resource", "uri"),
}


@typing.final
@dataclass(frozen=True, slots=True)
class PostBody:
    """The outline of one POST body.

    ``request_ids`` are the ids of the requests in it, in order (each gets one response
    on the POST's stream); ``initialize`` is True when it is an ``initialize`` request.
    ``operations`` are the tools called, prompts got and resources read, for their scopes.
    """

    raw: bytes
    request_ids: tuple[RequestId, ...]
    batch: bool
    initialize: bool
    operations: tuple[Operation, ...] = ()
    #: The parsed body (an object, or a list of them): a per-request (2026-07-28) POST is
    #: served from it without parsing again.
    message: object = None

    @property
    def request_id(self) -> RequestId | None:
        """The id of the one request the body is, or None (a batch, no request)."""
        if self.batch or not self.request_ids:
            return None
        return self.request_ids[0]


def _request_id(message: dict[str, object]) -> RequestId | None:
    if "method" not in message or "id" not in message:
        return None
    value = message["id"]
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def read_post_body(raw: bytes) -> PostBody:
    """Outline a POST body.

    Raises:
        HttpRefusal: 400 with -32700 for bytes that are not JSON, -32600 for JSON that is
            neither an object nor a non-empty array of objects, for ``initialize`` inside
            a batch, and for a request whose id is not a string or an integer.
    """
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise HttpRefusal(
            400, f"Parse error: the body is not valid JSON ({exc})", code=ErrorCode.PARSE_ERROR
        ) from None
    batch = isinstance(parsed, list)
    messages = parsed if batch else [parsed]
    if not messages or not all(isinstance(message, dict) for message in messages):
        raise HttpRefusal(
            400,
            "Invalid Request: the body must be one JSON-RPC message object "
            "(or, in protocol 2025-03-26, a non-empty array of them)",
        )
    ids: list[RequestId] = []
    operations: list[Operation] = []
    initialize = False
    for message in messages:
        target = _operation(message)
        if target is not None:
            operations.append(target)
        if message.get("method") == "initialize":
            if batch:
                raise HttpRefusal(400, "Invalid Request: initialize must not be part of a batch")
            initialize = True
        request_id = _request_id(message)
        if request_id is not None:
            ids.append(request_id)
        elif "method" in message and "id" in message:
            # Its error response could not be routed to this POST: refuse the body here.
            raise HttpRefusal(
                400, "Invalid Request: a request id must be a string or an integer (not null)"
            )
    return PostBody(
        raw=raw,
        request_ids=tuple(ids),
        batch=batch,
        initialize=initialize,
        operations=tuple(operations),
        message=parsed,
    )


def _operation(message: dict[str, object]) -> Operation | None:
    """Return what a request targets (``("tool", "echo")``), if it is one with a target.

    A request whose target is missing or not a string is left to the session, which answers
    it with invalid params: no scope can apply to a name that is not there.
    """
    method = message.get("method")
    found = _TARGETS.get(method) if isinstance(method, str) else None
    params = message.get("params")
    if found is None or not isinstance(params, dict):
        return None
    kind, member = found
    name = params.get(member)
    return (kind, name) if isinstance(name, str) else None
