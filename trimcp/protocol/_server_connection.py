"""``ServerConnection``: one MCP session seen from the server, without any I/O.

Feed it each framed message with ``receive``; it returns events. Call ``send_*`` to get the
bytes to write. It never reads a clock, never blocks and never writes anything itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import InvalidRequest, JsonRpcError, LocalProtocolError, MethodNotFound

from ._capabilities import (
    CLIENT_CAPABILITY_FOR_NOTIFICATION,
    CLIENT_CAPABILITY_FOR_REQUEST,
    SERVER_CAPABILITY_FOR_NOTIFICATION,
    SERVER_CAPABILITY_FOR_REQUEST,
    ClientCapabilities,
    ServerCapabilities,
    declared,
)
from ._codec import dump
from ._codec_payloads import (
    capability_path,
    client_flags_for_request,
    initialize_params_from_wire,
    initialize_result_to_wire,
)
from ._events import Initialized, InitializeReceived, NotificationReceived, RequestReceived
from ._exchange import Exchange, KeptProgress
from ._intake import DEFAULT_MAX_MESSAGE_SIZE, as_remote, error_reply, read, result_reply
from ._lifecycle import SERVER_RULES, SERVER_TRANSITIONS, LifecycleEvent, Phase, next_phase
from ._messages import ErrorObject, ErrorResponse, Notification, Request, Result
from ._types import InitializeResult, ProgressParams
from ._versions import SUPPORTED_VERSIONS, features, negotiate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._events import Event
    from ._json import JsonObject, RequestId
    from ._request_meta import RequestMeta
    from ._types import Implementation, InitializeParams
    from ._versions import VersionFeatures

#: Pre-standard method names some early clients sent; honoured only with ``legacy_aliases``.
LEGACY_ALIASES: Final = {"list_tools": "tools/list", "call_tool": "tools/call"}

#: Which version feature a client capability flag needs before the server may rely on it.
_FEATURE_FOR_FLAG: Final = {
    "elicitation": "elicitation",
    "elicitation_form": "elicitation",
    "elicitation_url": "url_elicitation",
    "sampling_tools": "sampling_tools",
    "tasks": "tasks",
    "tasks_list": "tasks",
    "tasks_cancel": "tasks",
    "tasks_sampling_create_message": "tasks",
    "tasks_elicitation_create": "tasks",
}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConnectionOptions:
    """How a ``ServerConnection`` behaves beyond what it declares.

    ``supported_versions`` lists the versions this server speaks, newest first (a subset of
    ``SUPPORTED_VERSIONS``). ``legacy_aliases`` accepts the method names in
    ``LEGACY_ALIASES``. ``max_message_size`` is in bytes, checked before parsing.
    """

    instructions: str | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    legacy_aliases: bool = False
    supported_versions: Sequence[str] = SUPPORTED_VERSIONS


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionStatistics:
    """A snapshot of one connection, for tests and introspection."""

    phase: Phase
    negotiated_version: str | None
    inbound_in_flight: frozenset[RequestId]
    outbound_pending: frozenset[RequestId]


@final
class ServerConnection:
    """The server side of one MCP session, as a sans-IO state machine.

    ``capabilities`` is what the server declares at ``initialize`` (trimmed to what the
    negotiated version knows); requests for undeclared capabilities are refused with -32601
    before they become events. Unknown methods are *not* refused here: that is the server
    API's decision. Errors the core answers itself come back as ``ReplyToSend`` events;
    ``receive`` raises only when the caller misuses it.
    """

    __slots__ = (
        "_capabilities",
        "_client_capabilities",
        "_client_info",
        "_exchange",
        "_features",
        "_initialize",
        "_options",
        "_phase",
        "_server_info",
    )

    def __init__(
        self,
        server_info: Implementation,
        capabilities: ServerCapabilities | None = None,
        options: ServerConnectionOptions | None = None,
    ) -> None:
        self._server_info = server_info
        self._capabilities = capabilities or ServerCapabilities()
        self._options = options or ServerConnectionOptions()
        self._phase = Phase.AWAITING_INITIALIZE
        self._exchange = Exchange()
        # The pending initialize request, from RECV_INITIALIZE until it is answered.
        self._initialize: tuple[RequestId, InitializeParams] | None = None
        self._features: VersionFeatures | None = None
        self._client_info: Implementation | None = None
        self._client_capabilities = ClientCapabilities()

    @classmethod
    def for_request(
        cls,
        server_info: Implementation,
        capabilities: ServerCapabilities,
        options: ServerConnectionOptions,
        meta: RequestMeta,
    ) -> ServerConnection:
        """Return a connection for one request of the per-request era (2026-07-28).

        Such a request carries its version and the client's capabilities in ``_meta``
        instead of an ``initialize`` (MCP 2026-07-28, Basic > ``_meta``), so the connection
        starts operating, as if that handshake had happened, and serves just this request:
        ids, progress and cancellation are tracked as in any session. Feed the request with
        ``accept``, not ``receive``.
        """
        connection = cls(server_info, capabilities, options)
        feats = features(meta.protocol_version)
        connection._phase = Phase.OPERATING
        connection._features = feats
        connection._capabilities = connection._capabilities.for_version(feats)
        connection._client_capabilities = meta.client_capabilities
        connection._client_info = meta.client_info
        return connection

    # --- introspection ------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        """Where the session is in its lifecycle."""
        return self._phase

    @property
    def negotiated_version(self) -> str | None:
        """The protocol version, once ``respond_to_initialize`` has run."""
        return None if self._features is None else self._features.version

    @property
    def features(self) -> VersionFeatures | None:
        """What the negotiated version allows, once negotiated."""
        return self._features

    @property
    def client_info(self) -> Implementation | None:
        """The client's ``clientInfo``, once ``initialize`` arrived."""
        return self._client_info

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client declared (nothing, before ``initialize``)."""
        return self._client_capabilities

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What this server declares (after negotiation: as trimmed for the version)."""
        return self._capabilities

    def statistics(self) -> ConnectionStatistics:
        """Return a snapshot of the phase and the ids in flight."""
        return ConnectionStatistics(
            phase=self._phase,
            negotiated_version=self.negotiated_version,
            inbound_in_flight=self._exchange.inbound_ids,
            outbound_pending=self._exchange.outbound_ids,
        )

    def is_cancelled(self, request_id: RequestId) -> bool:
        """Tell whether the client cancelled this in-flight request."""
        return self._exchange.is_cancelled(request_id)

    def wants_progress(self, request_id: RequestId) -> bool:
        """Tell whether ``send_progress`` would send something for this request."""
        return self._exchange.wants_progress(request_id)

    # --- receiving ----------------------------------------------------------------------

    def receive(self, data: bytes | str) -> list[Event]:
        """Take one framed message from the transport and return what it means.

        ``data`` is one stdio line, one HTTP body or one WebSocket text frame. A batch yields
        one group of events per element. Never raises for anything the peer sent.

        Raises:
            LocalProtocolError: the connection is closed (you closed it; stop reading).
        """
        self._require_open()
        batching = self._features is not None and self._features.batching
        events: list[Event] = []
        for item in read(data, max_size=self._options.max_message_size, batching=batching):
            if isinstance(item, Request):
                events.extend(self._on_request(item))
            elif isinstance(item, Notification):
                events.extend(self._on_notification(item))
            elif isinstance(item, Result | ErrorResponse):
                events.extend(self._exchange.on_response(item))
            else:
                events.append(item)
        return events

    def _on_request(self, request: Request) -> list[Event]:
        try:
            return self._accept(request)
        except (JsonRpcError, LocalProtocolError) as exc:
            return [error_reply(request.id, as_remote(exc))]

    def _accept(self, request: Request) -> list[Event]:
        method = request.method
        if self._options.legacy_aliases:
            method = LEGACY_ALIASES.get(method, method)
        if method not in SERVER_RULES[self._phase].receive_requests:
            raise InvalidRequest(self._phase_refusal(method))
        if method == "ping":
            return [result_reply(request.id, {})]
        if method == "initialize":
            return self._on_initialize(request)
        self._check_declared(method)
        token = self._exchange.start_inbound(request, method)
        if method != request.method:
            request = dataclasses.replace(request, method=method)
        return [RequestReceived(request=request, progress_token=token)]

    def accept(self, request: Request) -> RequestReceived:
        """Take a request already parsed and checked by the caller (``for_request``).

        Raises:
            MethodNotFound: it needs a server capability that was not declared (-32601).
            LocalProtocolError: the id is already in flight, or the connection is closed.
        """
        self._require_open()
        if not request.method.startswith("tasks/"):
            # 2026-07-28 moved tasks to an extension (SEP-2663), declared under
            # ``extensions``: the server decides about tasks/*, not the core's flags.
            self._check_declared(request.method)
        token = self._exchange.start_inbound(request, request.method)
        return RequestReceived(request=request, progress_token=token)

    def _phase_refusal(self, method: str) -> str:
        if method == "initialize":
            return "The session is already initialized; initialize may be sent only once"
        if self._phase is Phase.NEGOTIATING:
            return f"Received {method} before initialize was answered; wait for the result"
        return f"Received {method} before initialize; send initialize first"

    def _check_declared(self, method: str) -> None:
        flag = SERVER_CAPABILITY_FOR_REQUEST.get(method)
        if flag is None or declared(self._capabilities, flag):
            return
        if flag == "completions" and self._features and not self._features.completions_capability:
            return  # 2024-11-05 offered completion/complete without a capability.
        raise MethodNotFound(
            method,
            f"Method not found: {method} (the server did not declare {capability_path(flag)})",
        )

    def _on_initialize(self, request: Request) -> list[Event]:
        params = initialize_params_from_wire(request.params)
        self._phase = next_phase(SERVER_TRANSITIONS, self._phase, LifecycleEvent.RECV_INITIALIZE)
        self._initialize = (request.id, params)
        self._client_info = params.client_info
        self._client_capabilities = params.capabilities
        return [InitializeReceived(request_id=request.id, params=params)]

    def _on_notification(self, notification: Notification) -> list[Event]:
        # Before initialize, notifications are ignored (MCP Lifecycle > Initialization):
        # nothing to answer.
        if self._phase in (Phase.AWAITING_INITIALIZE, Phase.NEGOTIATING):
            return []
        method = notification.method
        if method == "notifications/initialized":
            if self._phase is not Phase.INITIALIZING:
                return []  # a repeated initialized changes nothing
            self._phase = next_phase(
                SERVER_TRANSITIONS, self._phase, LifecycleEvent.RECV_INITIALIZED
            )
            return [Initialized()]
        if method == "notifications/cancelled":
            return self._exchange.on_cancelled(notification.params, protected=None)
        if method == "notifications/progress":
            return self._exchange.on_progress(notification.params)
        return [NotificationReceived(notification=notification)]

    # --- the lifecycle ------------------------------------------------------------------

    def respond_to_initialize(
        self,
        *,
        capabilities: ServerCapabilities | None = None,
        instructions: str | None = None,
    ) -> bytes:
        """Negotiate the version and encode the ``initialize`` result.

        The version is the client's if we speak it, else our newest (Lifecycle > Version
        Negotiation). ``capabilities`` / ``instructions`` replace the configured ones for this
        session. To refuse the client instead, call ``send_error`` with the initialize id;
        the session then waits for another ``initialize``.

        Raises:
            LocalProtocolError: no ``initialize`` is waiting for an answer.
        """
        if self._phase is not Phase.NEGOTIATING or self._initialize is None:
            raise LocalProtocolError("no initialize request is waiting for an answer")
        request_id, params = self._initialize
        version = negotiate(params.protocol_version, self._options.supported_versions)
        feats = features(version)
        declared_caps = (capabilities or self._capabilities).for_version(feats)
        result = InitializeResult(
            protocol_version=version,
            capabilities=declared_caps,
            server_info=self._server_info.for_version(feats),
            instructions=instructions if instructions is not None else self._options.instructions,
        )
        data = dump(Result(id=request_id, result=initialize_result_to_wire(result)))
        self._phase = next_phase(SERVER_TRANSITIONS, self._phase, LifecycleEvent.INITIALIZE_RESULT)
        self._initialize = None
        self._features = feats
        self._capabilities = declared_caps
        return data

    def initialization_timed_out(self) -> None:
        """Record that the caller's initialization timer expired; closes unless operating."""
        self._move(LifecycleEvent.INIT_TIMEOUT)

    def close(self) -> None:
        """Close the session: nothing more is received or sent. Idempotent."""
        self._move(LifecycleEvent.CLOSE)

    def _move(self, event: LifecycleEvent) -> None:
        self._phase = next_phase(SERVER_TRANSITIONS, self._phase, event)
        if self._phase is Phase.CLOSED:
            self._exchange.close()
            self._initialize = None

    def _require_open(self) -> None:
        if self._phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")

    # --- sending ------------------------------------------------------------------------

    def send_result(self, request_id: RequestId, result: JsonObject) -> bytes:
        """Encode the result of an in-flight request; ``b""`` if the client cancelled it.

        Raises:
            LocalProtocolError: closed; the id is not in flight (never received, or already
                answered: a request gets one response); it is the ``initialize`` request
                (use ``respond_to_initialize``); or ``result`` is not JSON.
        """
        self._require_open()
        if self._initialize is not None and self._initialize[0] == request_id:
            raise LocalProtocolError("answer initialize with respond_to_initialize()")
        return self._exchange.result(request_id, result)

    def send_error(self, request_id: RequestId | None, error: ErrorObject) -> bytes:
        """Encode an error response; ``b""`` if the client cancelled the request.

        ``request_id=None`` sends an error without an id (for a message whose id could not be
        read) and tracks nothing. Answering the pending ``initialize`` with an error sends
        the session back to waiting for ``initialize``.

        Raises:
            LocalProtocolError: closed, or the id is not in flight.
        """
        self._require_open()
        if request_id is None:
            return dump(ErrorResponse(id=None, error=error))
        if self._initialize is not None and self._initialize[0] == request_id:
            data = dump(ErrorResponse(id=request_id, error=error))
            self._move(LifecycleEvent.INITIALIZE_ERROR)
            self._initialize = None
            return data
        return self._exchange.error(request_id, error)

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bytes:
        """Encode ``notifications/progress`` for an in-flight request that asked for it.

        ``b""`` if the client cancelled the request. ``message`` is dropped for 2024-11-05
        sessions, which did not have it.

        Raises:
            LocalProtocolError: closed or wrong phase; the request is not in flight or has
                no progress token; ``progress`` does not strictly increase.
        """
        self._check_notification_phase("notifications/progress")
        if self._features is not None and not self._features.progress_message:
            message = None
        params = ProgressParams(progress_token=0, progress=progress, total=total, message=message)
        return self._exchange.progress(request_id, params)

    def keep_progress(self, request_id: RequestId) -> KeptProgress | None:
        """Keep an in-flight request's progress token for after its response (tasks).

        Call before answering a task-augmented request with ``CreateTaskResult``; the task then
        reports with ``send_kept_progress`` until it is terminal. None if the request has no
        progress token (or was cancelled).

        Raises:
            LocalProtocolError: the request is not in flight.
        """
        return self._exchange.keep_progress(request_id)

    def send_kept_progress(
        self,
        kept: KeptProgress,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bytes:
        """Encode ``notifications/progress`` with a kept token (see ``keep_progress``).

        Raises:
            LocalProtocolError: closed or wrong phase; the token is finished; ``progress``
                does not strictly increase.
        """
        self._check_notification_phase("notifications/progress")
        if self._features is not None and not self._features.progress_message:
            message = None
        params = ProgressParams(progress_token=0, progress=progress, total=total, message=message)
        return kept.encode(params)

    def send_notification(self, method: str, params: JsonObject | None = None) -> bytes:
        """Encode a notification to the client.

        Raises:
            LocalProtocolError: closed; not allowed in this phase (before ``initialized``
                only ``notifications/message``); a capability it needs was not declared
                (``notifications/message`` needs our ``logging``,
                ``notifications/elicitation/complete`` the client's ``elicitation.url``, ...);
                ``method`` is progress or cancelled (use ``send_progress``/``send_cancel``).
        """
        if method in ("notifications/progress", "notifications/cancelled"):
            raise LocalProtocolError(f"send {method} with send_progress() or send_cancel()")
        self._check_notification_phase(method)
        own = SERVER_CAPABILITY_FOR_NOTIFICATION.get(method)
        if own is not None and not declared(self._capabilities, own):
            raise LocalProtocolError(f"{method} needs the server capability {capability_path(own)}")
        self._check_client_flag(method, CLIENT_CAPABILITY_FOR_NOTIFICATION.get(method))
        return dump(Notification(method=method, params=params))

    def _check_notification_phase(self, method: str) -> None:
        self._require_open()
        if method not in SERVER_RULES[self._phase].send_notifications:
            raise LocalProtocolError(f"cannot send {method} in phase {self._phase.value}")

    def send_request(
        self, method: str, params: JsonObject | None = None
    ) -> tuple[RequestId, bytes]:
        """Encode a request to the client; return the id its response will carry.

        Ids are allocated here and never reused. The response comes back from ``receive``
        as ``ResponseReceived``.

        Raises:
            LocalProtocolError: closed; not allowed in this phase (only ``ping`` before
                ``initialized``); the client did not declare what the request needs
                (``sampling``, ``sampling.tools`` for ``tools``, ``elicitation.url`` for URL
                mode, ``tasks.requests...`` for ``task``, ``roots``...) or the negotiated
                version lacks it; the progress token is already in use.
        """
        self._require_open()
        if method not in SERVER_RULES[self._phase].send_requests:
            raise LocalProtocolError(f"cannot send {method} in phase {self._phase.value}")
        self._check_client_flag(method, CLIENT_CAPABILITY_FOR_REQUEST.get(method))
        for flag in client_flags_for_request(method, params):
            self._check_client_flag(method, flag)
        return self._exchange.request(method, params)

    def _check_client_flag(self, method: str, flag: str | None) -> None:
        if flag is None:
            return
        feature = _FEATURE_FOR_FLAG.get(flag)
        if (
            feature is not None
            and self._features is not None
            and not getattr(self._features, feature)
        ):
            raise LocalProtocolError(
                f"{method} needs {capability_path(flag)}, which protocol version "
                f"{self._features.version} does not have"
            )
        if not declared(self._client_capabilities, flag):
            raise LocalProtocolError(
                f"{method} needs the client capability {capability_path(flag)}, "
                "which the client did not declare"
            )

    def send_cancel(self, request_id: RequestId, reason: str | None = None) -> bytes:
        """Encode ``notifications/cancelled`` for one of our pending requests.

        Raises:
            LocalProtocolError: closed, or ``request_id`` is not pending.
        """
        self._require_open()
        return self._exchange.cancel(request_id, reason)
