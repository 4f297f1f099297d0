"""Request/response bookkeeping shared by both connection sides (composed, not inherited).

Ids are per direction (MCP 2025-11-25, Basic > Requests): *inbound* ids are the peer's, and
we track which of them still owe a response; *outbound* ids are ours, allocated here as
increasing integers and never reused within the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.errors import InvalidRequest, LocalProtocolError

from ._codec import dump
from ._codec_payloads import (
    cancelled_params_from_wire,
    cancelled_params_to_wire,
    progress_params_from_wire,
    progress_params_to_wire,
    progress_token_of,
)
from ._events import (
    CancelReceived,
    NotificationReceived,
    ProgressReceived,
    ResponseReceived,
    UnexpectedResponse,
)
from ._json import JsonObject, ProgressToken, RequestId, is_number
from ._messages import ErrorObject, ErrorResponse, Notification, Request, Response, Result
from ._types import CancelledParams, ProgressParams

if TYPE_CHECKING:
    from ._events import Event

_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_RELATED_TASK = "io.modelcontextprotocol/related-task"


@dataclass(slots=True)
class _Inbound:
    method: str
    progress_token: ProgressToken | None
    last_progress: float | None = None
    cancelled: bool = False


@final
@dataclass(slots=True)
class KeptProgress:
    """A progress token kept past its request's response (a task's, 2025-11-25).

    Tasks > Progress: the ``progressToken`` of a task-augmented request stays valid after the
    ``CreateTaskResult`` until the task is terminal, and progress keeps increasing strictly.
    ``ServerConnection.keep_progress`` makes one; ``send_kept_progress`` encodes with it;
    ``closed`` is set when the task ends so nothing more goes out for it.
    """

    token: ProgressToken
    last_progress: float | None = None
    closed: bool = False

    def encode(self, params: ProgressParams) -> bytes:
        """Encode the next progress notification (token filled in here).

        Raises:
            LocalProtocolError: closed, not finite, or not strictly increasing.
        """
        if self.closed:
            raise LocalProtocolError(f"progress token {self.token!r} is finished")
        return _encode_progress(self.token, self.last_progress, params, self)


def _encode_progress(
    token: ProgressToken,
    last: float | None,
    params: ProgressParams,
    holder: _Inbound | KeptProgress,
) -> bytes:
    if not is_number(params.progress) or (params.total is not None and not is_number(params.total)):
        raise LocalProtocolError("progress and total must be finite numbers")
    if last is not None and not params.progress > last:
        raise LocalProtocolError(
            f"progress must strictly increase: {params.progress!r} after {last!r}"
        )
    wire = progress_params_to_wire(
        ProgressParams(
            progress_token=token,
            progress=params.progress,
            total=params.total,
            message=params.message,
        )
    )
    data = dump(Notification(method="notifications/progress", params=wire))
    holder.last_progress = params.progress
    return data


@dataclass(frozen=True, slots=True)
class _Outbound:
    method: str
    progress_token: ProgressToken | None


@final
class Exchange:
    """The in-flight requests of one session, both directions.

    A cancelled inbound request stays tracked until the local side finishes it with
    ``result``/``error`` (which then produce ``b""``), so a late answer is dropped rather
    than sent and the peer cannot reuse the id meanwhile.
    """

    __slots__ = ("_inbound", "_next_id", "_outbound", "_task_tokens")

    def __init__(self) -> None:
        self._inbound: dict[RequestId, _Inbound] = {}
        self._outbound: dict[RequestId, _Outbound] = {}
        # Progress tokens of our task-augmented requests, valid past the CreateTaskResult
        # until the task is terminal (Tasks > Progress), mapped to the task id.
        self._task_tokens: dict[ProgressToken, str] = {}
        self._next_id = 1

    # --- inbound: the peer's requests ---------------------------------------------------

    @property
    def inbound_ids(self) -> frozenset[RequestId]:
        """Ids of the peer's requests that still owe a response (cancelled ones too)."""
        return frozenset(self._inbound)

    @property
    def outbound_ids(self) -> frozenset[RequestId]:
        """Ids of our requests still waiting for a response."""
        return frozenset(self._outbound)

    def start_inbound(self, request: Request, method: str) -> ProgressToken | None:
        """Track ``request`` and return its progress token.

        Raises:
            InvalidRequest: a request with the same id is still in flight.
        """
        if request.id in self._inbound:
            raise InvalidRequest(f"Request id {request.id!r} is already in use by a request")
        token = progress_token_of(request.params)
        self._inbound[request.id] = _Inbound(method, token)
        return token

    def _entry(self, request_id: RequestId) -> _Inbound:
        try:
            return self._inbound[request_id]
        except KeyError:
            raise LocalProtocolError(
                f"no request with id {request_id!r} is waiting for a response "
                "(already answered, or never received)"
            ) from None

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Tell whether the peer cancelled this in-flight request."""
        entry = self._inbound.get(request_id)
        return entry is not None and entry.cancelled

    def wants_progress(self, request_id: RequestId) -> bool:
        """Tell whether this in-flight, uncancelled request carries a progress token."""
        entry = self._inbound.get(request_id)
        return entry is not None and not entry.cancelled and entry.progress_token is not None

    def result(self, request_id: RequestId, result: JsonObject) -> bytes:
        """Encode the one result of an inbound request and stop tracking it.

        Raises:
            LocalProtocolError: not in flight, or ``result`` is not JSON.
        """
        return self._finish(request_id, Result(id=request_id, result=result))

    def error(self, request_id: RequestId, error: ErrorObject) -> bytes:
        """Encode the one error response of an inbound request and stop tracking it.

        Raises:
            LocalProtocolError: not in flight, or ``error.data`` is not JSON.
        """
        return self._finish(request_id, ErrorResponse(id=request_id, error=error))

    def _finish(self, request_id: RequestId, response: Response) -> bytes:
        if self._entry(request_id).cancelled:
            del self._inbound[request_id]
            return b""
        data = dump(response)
        del self._inbound[request_id]
        return data

    def progress(self, request_id: RequestId, params: ProgressParams) -> bytes:
        """Encode a progress notification for an inbound request (token filled in here).

        Raises:
            LocalProtocolError: the request is not in flight, did not ask for progress, or
                ``progress`` does not strictly increase (Utilities > Progress: MUST).
        """
        entry = self._entry(request_id)
        if entry.cancelled:
            return b""
        if entry.progress_token is None:
            raise LocalProtocolError(
                f"request {request_id!r} did not ask for progress (no _meta.progressToken)"
            )
        return _encode_progress(entry.progress_token, entry.last_progress, params, entry)

    def keep_progress(self, request_id: RequestId) -> KeptProgress | None:
        """Return the request's progress token, kept for use after its response.

        None when the request carries no token or was cancelled.

        Raises:
            LocalProtocolError: the request is not in flight.
        """
        entry = self._entry(request_id)
        if entry.cancelled or entry.progress_token is None:
            return None
        return KeptProgress(entry.progress_token, entry.last_progress)

    def on_cancelled(
        self, params: JsonObject | None, *, protected: RequestId | None
    ) -> list[Event]:
        """Handle the peer's ``notifications/cancelled``; unknown or malformed ones vanish.

        ``protected`` is an id that must not be cancelled (``initialize``).
        """
        parsed = cancelled_params_from_wire(params)
        if parsed is None or parsed.request_id is None or parsed.request_id == protected:
            return []
        entry = self._inbound.get(parsed.request_id)
        if entry is None or entry.cancelled:
            return []
        entry.cancelled = True
        return [CancelReceived(request_id=parsed.request_id, reason=parsed.reason)]

    # --- outbound: our requests ---------------------------------------------------------

    def request(self, method: str, params: JsonObject | None) -> tuple[RequestId, bytes]:
        """Allocate an id, encode the request and start waiting for its response.

        Raises:
            LocalProtocolError: the progress token is already used by a pending request
                (Utilities > Progress: MUST be unique), or ``params`` is not JSON.
        """
        token = progress_token_of(params)
        if token is not None and (
            token in self._task_tokens
            or any(o.progress_token == token for o in self._outbound.values())
        ):
            raise LocalProtocolError(f"progress token {token!r} is used by a pending request")
        request_id = self._next_id
        self._next_id += 1
        data = dump(Request(id=request_id, method=method, params=params))
        self._outbound[request_id] = _Outbound(method, token)
        return request_id, data

    def cancel(self, request_id: RequestId, reason: str | None) -> bytes:
        """Encode ``notifications/cancelled`` for our request and stop waiting for it.

        A response that still arrives becomes ``UnexpectedResponse``.

        Raises:
            LocalProtocolError: ``request_id`` is not pending.
        """
        if request_id not in self._outbound:
            raise LocalProtocolError(f"no request of ours with id {request_id!r} is pending")
        wire = cancelled_params_to_wire(CancelledParams(request_id=request_id, reason=reason))
        data = dump(Notification(method="notifications/cancelled", params=wire))
        del self._outbound[request_id]
        return data

    def on_response(self, response: Response) -> list[Event]:
        """Match a response to our pending request by id."""
        if response.id is not None:
            pending = self._outbound.pop(response.id, None)
            if pending is not None:
                if isinstance(response, Result):
                    self._track_task(pending, response.result)
                return [ResponseReceived(response=response, method=pending.method)]
        return [UnexpectedResponse(response=response)]

    def _track_task(self, pending: _Outbound, result: JsonObject) -> None:
        task = result.get("task")
        if pending.progress_token is not None and isinstance(task, dict):
            task_id = task.get("taskId")
            if isinstance(task_id, str) and task.get("status") not in _TERMINAL:
                self._task_tokens[pending.progress_token] = task_id
        meta = result.get("_meta")
        related = meta.get(_RELATED_TASK) if isinstance(meta, dict) else None
        if isinstance(related, dict):  # a tasks/result answer: that task is over
            self.task_ended(related.get("taskId"))

    def task_ended(self, task_id: object) -> None:
        """Forget the progress token of a task that reached a terminal status."""
        for token in [t for t, owner in self._task_tokens.items() if owner == task_id]:
            del self._task_tokens[token]

    def on_task_status(self, params: JsonObject | None) -> None:
        """Note ``notifications/tasks/status``: a terminal status ends the task's token."""
        if isinstance(params, dict) and params.get("status") in _TERMINAL:
            self.task_ended(params.get("taskId"))

    def on_progress(self, params: JsonObject | None) -> list[Event]:
        """Match the peer's progress to our pending request; unknown tokens are dropped."""
        parsed = progress_params_from_wire(params)
        if parsed is None:
            return []
        for request_id, pending in self._outbound.items():
            if pending.progress_token == parsed.progress_token:
                return [ProgressReceived(request_id=request_id, params=parsed)]
        if parsed.progress_token in self._task_tokens:
            # A task's progress: its request is answered, so it reaches the application as
            # a plain notification (``params._meta`` may name the task).
            notification = Notification(method="notifications/progress", params=params)
            return [NotificationReceived(notification=notification)]
        return []

    def close(self) -> None:
        """Forget everything in flight (the session is over)."""
        self._inbound.clear()
        self._outbound.clear()
        self._task_tokens.clear()
