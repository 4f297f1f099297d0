"""``ClientConnection``: one MCP session seen from the client, without any I/O.

Deliberately smaller than ``ServerConnection``: it performs the handshake, gates requests on
the server's declared capabilities, answers ``ping``, refuses server requests for client
capabilities it did not declare, and shares all in-flight bookkeeping (``Exchange``).

Two eras, chosen by ``ClientOptions.protocol_version``. A handshake version (2025-11-25 and
older) runs the ``initialize`` lifecycle. A per-request version (2026-07-28) has no
handshake: the connection operates at once, every request carries ``_meta`` with the
version, the client's capabilities and identity (``_client_modern.request_meta``), the
server's capabilities come from ``server/discover`` (``accept_discover``), and the server
sends no requests (Basic > Versioning,
https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    LocalProtocolError,
    MethodNotFound,
    RemoteProtocolError,
)

from ._capabilities import (
    CLIENT_CAPABILITY_FOR_REQUEST,
    CLIENT_OWN_CAPABILITY_FOR_NOTIFICATION,
    SERVER_CAPABILITY_FOR_REQUEST,
    ClientCapabilities,
    ServerCapabilities,
    declared,
)
from ._client_modern import request_meta, with_meta
from ._codec import dump
from ._codec_payloads import (
    capability_path,
    client_flags_for_request,
    implementation_from_wire,
    initialize_params_to_wire,
    initialize_result_from_wire,
    server_capabilities_from_wire,
)
from ._events import (
    InitializeCompleted,
    NotificationReceived,
    ProtocolViolation,
    RequestReceived,
    ResponseReceived,
)
from ._exchange import Exchange
from ._intake import DEFAULT_MAX_MESSAGE_SIZE, as_remote, error_reply, read, result_reply
from ._lifecycle import CLIENT_RULES, CLIENT_TRANSITIONS, LifecycleEvent, Phase, next_phase
from ._messages import ErrorObject, ErrorResponse, Notification, Request, Result
from ._request_meta import META_LOG_LEVEL, META_SERVER_INFO
from ._types import Implementation, InitializeParams, InitializeResult, ProgressParams
from ._versions import LATEST_VERSION, SUPPORTED_VERSIONS, features, is_modern

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._events import Event
    from ._json import JsonObject, RequestId
    from ._versions import VersionFeatures


#: Who a server is that did not say (``serverInfo`` is a SHOULD in 2026-07-28).
_NO_INFO = Implementation(name="", version="")


def _server_info(value: object) -> Implementation | None:
    if not isinstance(value, dict):
        return None
    try:
        return implementation_from_wire(value, "serverInfo")
    except InvalidParams:
        return None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ClientOptions:
    """``protocol_version`` is what ``initialize`` asks for, or, when it is a per-request
    version (2026-07-28), what every request declares in ``_meta`` (no handshake then);
    ``supported_versions`` what the client accepts in an ``initialize`` answer (anything
    else closes the session)."""

    protocol_version: str = LATEST_VERSION
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    supported_versions: Sequence[str] = SUPPORTED_VERSIONS


@final
class ClientConnection:
    """The client side of one MCP session, as a sans-IO state machine."""

    __slots__ = (
        "_capabilities",
        "_client_info",
        "_exchange",
        "_initialize_id",
        "_meta",
        "_options",
        "_phase",
        "_server",
        "log_level",
    )

    def __init__(
        self,
        client_info: Implementation,
        capabilities: ClientCapabilities | None = None,
        options: ClientOptions | None = None,
    ) -> None:
        self._client_info = client_info
        self._capabilities = capabilities or ClientCapabilities()
        self._options = options or ClientOptions()
        self._exchange = Exchange()
        self._initialize_id: RequestId | None = None
        self._server: InitializeResult | None = None
        #: Per-request era only: the level of ``notifications/message`` every request asks
        #: for in ``_meta`` (None: none, so the server sends no log lines).
        self.log_level: str | None = None
        # The per-request era has no lifecycle: it operates from the start. ``_meta`` is
        # None in the handshake era.
        self._meta: JsonObject | None = None
        self._phase = Phase.AWAITING_INITIALIZE
        self.switch_version(self._options.protocol_version)

    @property
    def phase(self) -> Phase:
        """Where the session is in its lifecycle."""
        return self._phase

    @property
    def modern(self) -> bool:
        """Whether this connection speaks the per-request era (no ``initialize``)."""
        return self._meta is not None

    @property
    def initialize_result(self) -> InitializeResult | None:
        """What the server answered (version, capabilities, info, instructions).

        In the per-request era: what ``server/discover`` said, once ``accept_discover`` saw it.
        """
        return self._server

    def switch_version(self, version: str) -> None:
        """Speak ``version`` from now on, in its era, while the session is being opened.

        A dual-era client probes with a per-request ``server/discover`` and may fall back to
        ``initialize`` (or probe again after a refused ``initialize``) on the same
        connection: request ids go on counting, so a late answer to the abandoned probe
        can never be taken for the answer to a later request.

        Raises:
            LocalProtocolError: the server already answered (a handshake or a discovery),
                a handshake is under way, or the connection is closed.
        """
        if self._server is not None or self._phase not in (
            Phase.AWAITING_INITIALIZE,
            Phase.OPERATING,
        ):
            raise LocalProtocolError(f"cannot switch versions in phase {self._phase.value}")
        if self._meta is None and self._phase is Phase.OPERATING:
            raise LocalProtocolError("the handshake is done; the version is negotiated")
        self._options = dataclasses.replace(self._options, protocol_version=version)
        self._meta = None
        self._phase = Phase.AWAITING_INITIALIZE
        if is_modern(version):
            self._meta = request_meta(version, self._capabilities, self._client_info)
            self._phase = Phase.OPERATING

    def accept_discover(self, result: JsonObject) -> InitializeResult:
        """Take the server's capabilities and identity from its ``DiscoverResult``.

        Requests are then gated on those capabilities, as after a handshake; what the
        server said is returned in the handshake's shape (``initialize_result``), with this
        connection's version. ``serverInfo`` is read from ``_meta`` (where 2026-07-28 puts
        it), else from a top-level member some servers still send; without a usable one,
        name and version are empty. Unknown capability members are kept, as always.

        Raises:
            LocalProtocolError: this connection speaks the handshake era.
        """
        if self._meta is None:
            raise LocalProtocolError("server/discover belongs to the per-request era")
        meta = result.get("_meta")
        info = _server_info(meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None)
        instructions = result.get("instructions")
        self._server = InitializeResult(
            protocol_version=self._options.protocol_version,
            capabilities=server_capabilities_from_wire(result.get("capabilities")),
            server_info=info or _server_info(result.get("serverInfo")) or _NO_INFO,
            instructions=instructions if isinstance(instructions, str) else None,
        )
        return self._server

    @property
    def features(self) -> VersionFeatures | None:
        """What the negotiated version allows, once the server answered."""
        return None if self._server is None else features(self._server.protocol_version)

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server declared (nothing, before its answer)."""
        return ServerCapabilities() if self._server is None else self._server.capabilities

    def send_initialize(self) -> tuple[RequestId, bytes]:
        """Encode the ``initialize`` request; its answer arrives as ``InitializeCompleted``.

        Raises:
            LocalProtocolError: ``initialize`` was already sent.
        """
        if self._meta is not None:
            raise LocalProtocolError("the per-request era (2026-07-28) has no initialize")
        self._phase_after(LifecycleEvent.SEND_INITIALIZE)  # refuse before an id is spent
        params = InitializeParams(
            protocol_version=self._options.protocol_version,
            capabilities=self._capabilities,
            client_info=self._client_info,
        )
        request_id, data = self._exchange.request("initialize", initialize_params_to_wire(params))
        self._phase = self._phase_after(LifecycleEvent.SEND_INITIALIZE)
        self._initialize_id = request_id
        return request_id, data

    def send_initialized(self) -> bytes:
        """Encode ``notifications/initialized``; the session is then operating.

        Raises:
            LocalProtocolError: the server has not answered ``initialize`` yet, or it was sent.
        """
        data = dump(Notification(method="notifications/initialized"))
        self._phase = self._phase_after(LifecycleEvent.SEND_INITIALIZED)
        return data

    def close(self) -> None:
        """Close the session. Idempotent."""
        self._phase = self._phase_after(LifecycleEvent.CLOSE)
        self._exchange.close()

    def _phase_after(self, event: LifecycleEvent) -> Phase:
        return next_phase(CLIENT_TRANSITIONS, self._phase, event)

    def _require_open(self) -> None:
        if self._phase is Phase.CLOSED:
            raise LocalProtocolError("the connection is closed")

    # --- receiving ----------------------------------------------------------------------

    def receive(self, data: bytes | str) -> list[Event]:
        """Take one framed message from the transport and return what it means.

        Raises:
            LocalProtocolError: the connection is closed.
        """
        self._require_open()
        server_features = self.features
        batching = server_features is not None and server_features.batching
        events: list[Event] = []
        for item in read(data, max_size=self._options.max_message_size, batching=batching):
            if isinstance(item, Request):
                events.extend(self._on_request(item))
            elif isinstance(item, Notification):
                events.extend(self._on_notification(item))
            elif isinstance(item, Result | ErrorResponse):
                events.extend(self._on_response(item))
            else:
                events.append(item)
        return events

    def _on_request(self, request: Request) -> list[Event]:
        try:
            if self._meta is not None:
                # 2026-07-28, Transports: "The server MUST NOT write JSON-RPC requests";
                # what it needs from the client comes as an InputRequiredResult.
                raise InvalidRequest(
                    f"{request.method}: a 2026-07-28 server sends no requests; "
                    "ask with an InputRequiredResult"
                )
            if request.method not in CLIENT_RULES[self._phase].receive_requests:
                raise InvalidRequest(f"Received {request.method} before initialization finished")
            if request.method == "ping":
                return [result_reply(request.id, {})]
            self.check_declared(request.method, request.params)
            token = self._exchange.start_inbound(request, request.method)
        except (JsonRpcError, LocalProtocolError) as exc:
            return [error_reply(request.id, as_remote(exc))]
        return [RequestReceived(request=request, progress_token=token)]

    def check_declared(self, method: str, params: JsonObject | None) -> None:
        """Check that the client declared what a server's request for ``method`` needs.

        A server's request (2025-11-25) or an ``inputRequests`` entry (2026-07-28, which
        the server "MUST NOT" send for an undeclared capability) alike.

        Raises:
            MethodNotFound: the feature itself is undeclared (-32601).
            InvalidParams: an elicitation mode or sampling with tools is (-32602).
        """
        flag = CLIENT_CAPABILITY_FOR_REQUEST.get(method)
        if flag is not None and not declared(self._capabilities, flag):
            raise MethodNotFound(method)
        for extra in client_flags_for_request(method, params):
            if not declared(self._capabilities, extra):
                # Elicitation / Sampling (2025-11-25): an undeclared mode or tool use is -32602.
                raise InvalidParams(f"The client did not declare {capability_path(extra)}")

    def _on_notification(self, notification: Notification) -> list[Event]:
        if self._phase in (Phase.AWAITING_INITIALIZE, Phase.NEGOTIATING):
            return []
        if notification.method == "notifications/cancelled":
            if self._meta is not None:
                return self._on_server_cancel(notification.params)
            return self._exchange.on_cancelled(notification.params, protected=None)
        if notification.method == "notifications/progress":
            return self._exchange.on_progress(notification.params)
        if notification.method == "notifications/tasks/status":
            self._exchange.on_task_status(notification.params)
        return [NotificationReceived(notification=notification)]

    def _on_server_cancel(self, params: JsonObject | None) -> list[Event]:
        """A 2026-07-28 server ends a ``subscriptions/listen`` stream of ours (stdio).

        Its only use of ``notifications/cancelled`` (schema, ``CancelledNotification``):
        the pending request is answered here with an error saying so; an unknown id is
        ignored, as a late cancel always may be.
        """
        target = params.get("requestId") if isinstance(params, dict) else None
        if not isinstance(target, str | int) or target not in self._exchange.outbound_ids:
            return []
        reason = params.get("reason") if isinstance(params, dict) else None
        message = "the server ended it (notifications/cancelled)"
        if isinstance(reason, str) and reason:
            message = f"{message}: {reason}"
        error = ErrorObject(code=InternalError.CODE, message=message)
        return self._exchange.on_response(ErrorResponse(id=target, error=error))

    def _on_response(self, response: Result | ErrorResponse) -> list[Event]:
        events = self._exchange.on_response(response)
        if response.id is None or response.id != self._initialize_id:
            return events
        self._initialize_id = None
        if isinstance(response, ErrorResponse):
            self._phase = self._phase_after(LifecycleEvent.INITIALIZE_ERROR)
            return [ResponseReceived(response=response, method="initialize")]
        try:
            result = initialize_result_from_wire(response.result)
        except InvalidParams as exc:
            return self._violation(f"malformed initialize result: {exc.message}")
        if result.protocol_version not in self._options.supported_versions:
            # Lifecycle > Version Negotiation: the client SHOULD (schema: MUST) disconnect.
            return self._violation(f"server chose unsupported version {result.protocol_version}")
        self._server = result
        self._phase = self._phase_after(LifecycleEvent.INITIALIZE_RESULT)
        return [InitializeCompleted(result=result)]

    def _violation(self, message: str) -> list[Event]:
        self.close()
        return [ProtocolViolation(error=RemoteProtocolError(message))]

    # --- sending ------------------------------------------------------------------------

    def send_request(
        self, method: str, params: JsonObject | None = None
    ) -> tuple[RequestId, bytes]:
        """Encode a request to the server; its answer arrives as ``ResponseReceived``.

        Raises:
            LocalProtocolError: closed, wrong phase (only ``ping`` before the ``initialize``
                result), or the server did not declare the capability the method needs.
        """
        self._require_open()
        if method not in CLIENT_RULES[self._phase].send_requests:
            raise LocalProtocolError(f"cannot send {method} in phase {self._phase.value}")
        flag = SERVER_CAPABILITY_FOR_REQUEST.get(method)
        exempt = flag == "completions" and not (
            self.features and self.features.completions_capability
        )
        if flag is not None and not exempt and not declared(self.server_capabilities, flag):
            raise LocalProtocolError(
                f"{method} needs the server capability {capability_path(flag)}"
            )
        if self._meta is not None:
            meta = self._meta
            if self.log_level is not None:
                meta = {**meta, META_LOG_LEVEL: self.log_level}
            params = with_meta(params, meta)
        return self._exchange.request(method, params)

    def send_notification(self, method: str, params: JsonObject | None = None) -> bytes:
        """Encode a notification to the server.

        Raises:
            LocalProtocolError: closed, wrong phase, or an undeclared own capability
                (``notifications/roots/list_changed`` needs ``roots.listChanged``).
        """
        self._require_open()
        if method in ("notifications/progress", "notifications/cancelled"):
            raise LocalProtocolError(f"send {method} with send_progress() or send_cancel()")
        if method not in CLIENT_RULES[self._phase].send_notifications:
            raise LocalProtocolError(f"cannot send {method} in phase {self._phase.value}")
        if self._meta is not None:
            # 2026-07-28 defines no client notification but notifications/cancelled.
            raise LocalProtocolError(f"{method} does not exist in the per-request era")
        flag = CLIENT_OWN_CAPABILITY_FOR_NOTIFICATION.get(method)
        if flag is not None and not declared(self._capabilities, flag):
            raise LocalProtocolError(
                f"{method} needs the client capability {capability_path(flag)}"
            )
        return dump(Notification(method=method, params=params))

    def send_result(self, request_id: RequestId, result: JsonObject) -> bytes:
        """Encode the result of a server request; ``b""`` if the server cancelled it."""
        self._require_open()
        return self._exchange.result(request_id, result)

    def send_error(self, request_id: RequestId, error: ErrorObject) -> bytes:
        """Encode an error for a server request; ``b""`` if the server cancelled it."""
        self._require_open()
        return self._exchange.error(request_id, error)

    def send_progress(
        self, request_id: RequestId, progress: float, total: float | None = None
    ) -> bytes:
        """Encode progress for a server request that asked for it (see ``Exchange.progress``)."""
        self._require_open()
        params = ProgressParams(progress_token=0, progress=progress, total=total)
        return self._exchange.progress(request_id, params)

    def send_cancel(self, request_id: RequestId, reason: str | None = None) -> bytes:
        """Encode ``notifications/cancelled`` for our pending request.

        Raises:
            LocalProtocolError: closed, not pending, or it is ``initialize`` (which MUST NOT
                be cancelled, Utilities > Cancellation).
        """
        self._require_open()
        if request_id == self._initialize_id:
            raise LocalProtocolError("initialize must not be cancelled")
        return self._exchange.cancel(request_id, reason)
