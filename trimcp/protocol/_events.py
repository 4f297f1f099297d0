"""What ``receive`` reports: one frozen record per thing that happened.

Events are plain data; the connection has already updated its own state when it returns them.
Only ``ReplyToSend`` asks the caller to do something right away: write its ``data``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, final

if TYPE_CHECKING:
    from trimcp.errors import RemoteProtocolError

    from ._json import ProgressToken, RequestId
    from ._messages import ErrorObject, Notification, Request, Response
    from ._types import InitializeParams, InitializeResult, ProgressParams


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestReceived:
    """The peer sent a request that passed the lifecycle and capability checks.

    It is now in flight: answer it exactly once with ``send_result`` or ``send_error``.
    ``request.method`` is canonical (a legacy alias has been rewritten). ``progress_token``
    is set when the request asked for progress (``params._meta.progressToken``).
    """

    request: Request
    progress_token: ProgressToken | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InitializeReceived:
    """(server) The client sent ``initialize``; answer with ``respond_to_initialize``."""

    request_id: RequestId
    params: InitializeParams


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InitializeCompleted:
    """(client) The server answered ``initialize`` with a version we speak.

    Send ``notifications/initialized`` next (``ClientConnection.send_initialized``).
    """

    result: InitializeResult


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Initialized:
    """(server) ``notifications/initialized`` arrived: the session is operating."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationReceived:
    """The peer sent a notification the core does not handle itself. Never answer it."""

    notification: Notification


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CancelReceived:
    """The peer cancelled one of its in-flight requests (``notifications/cancelled``).

    Not called ``Cancelled``, so that it never shadows ``trio.Cancelled`` in code that
    handles both. Stop the work. Any later ``send_result``/``send_error``/``send_progress``
    for this id returns ``b""`` (MCP 2025-11-25, Utilities > Cancellation: send no response).
    """

    request_id: RequestId
    reason: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressReceived:
    """Progress for one of *our* pending requests (matched by its progress token)."""

    request_id: RequestId
    params: ProgressParams


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseReceived:
    """The answer to one of our requests; ``method`` is what we asked."""

    response: Response
    method: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class UnexpectedResponse:
    """A response whose id matches none of our pending requests (late after a cancel,
    answered twice, or an error without an id). Log it; nothing else is owed."""

    response: Response


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyToSend:
    """The core answered by itself; write ``data`` to the peer.

    Either a ``ping`` result (``error is None``) or an error response for a message the core
    refused: unparsable, invalid, wrong phase, undeclared capability, duplicate id.
    ``request_id`` is ``None`` when the offending message's id could not be read.
    """

    request_id: RequestId | None
    data: bytes
    error: ErrorObject | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolViolation:
    """The peer broke the protocol in a way no reply can fix; the connection is now CLOSED.

    (client) Raised for an ``initialize`` result with a version we do not speak or a
    malformed one: the client MUST disconnect (Lifecycle > Version Negotiation).
    """

    error: RemoteProtocolError


Event: TypeAlias = (
    RequestReceived
    | InitializeReceived
    | InitializeCompleted
    | Initialized
    | NotificationReceived
    | CancelReceived
    | ProgressReceived
    | ResponseReceived
    | UnexpectedResponse
    | ReplyToSend
    | ProtocolViolation
)
