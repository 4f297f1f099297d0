"""The sans-IO MCP protocol core: JSON-RPC 2.0 messages, codec, versions, lifecycle.

This package turns one inbound message into events and one outbound action into bytes, and
tracks everything the wire implies: the lifecycle phase, the negotiated version, both sides'
capabilities, the request ids in flight in each direction, progress tokens and cancellations.
It is *not* a transport (framing, sockets, HTTP and SSE live in ``trimcp.transports``), it has
no clock (the caller measures timeouts and reports them) and it never dispatches methods to
handlers (that is ``trimcp.server``). It imports neither trio nor asyncio, only the standard
library, orjson and ``trimcp.errors`` (STYLE §2, modelled on h11).

Using it, server side (a transport or session actor is a loop around this)::

    conn = ServerConnection(Implementation(name="demo", version="1.0"),
                            ServerCapabilities(tools=True))
    for event in conn.receive(line):                  # one stdio line / HTTP body / WS frame
        match event:
            case ReplyToSend(data=data):              # ping, or an error the core answered
                write(data)
            case InitializeReceived():
                write(conn.respond_to_initialize())   # negotiates the version
            case RequestReceived(request=req):        # in flight until answered once
                write(conn.send_result(req.id, {"tools": []}))   # b"" if cancelled meanwhile
            case CancelReceived(request_id=rid):      # stop the handler; its answer is dropped
                ...
            case ResponseReceived() | ProgressReceived():  # answers to our send_request
                ...
    request_id, data = conn.send_request("roots/list")     # refused unless the client
                                                            # declared roots (LocalProtocolError)

Events (``_events``): ``RequestReceived``, ``InitializeReceived`` (server), ``Initialized``
(server), ``InitializeCompleted`` (client), ``NotificationReceived``, ``CancelReceived``,
``ProgressReceived``, ``ResponseReceived``, ``UnexpectedResponse``, ``ReplyToSend``,
``ProtocolViolation`` (client).

Errors follow h11's rule: misusing a connection (sending what the phase or the declared
capabilities forbid, answering a request twice, progress that does not increase) raises
``LocalProtocolError`` and nothing is sent; anything the *peer* gets wrong comes back from
``receive`` as an event: a ``ReplyToSend`` with the JSON-RPC error already encoded, or
silence where the spec says so (notifications are never answered). ``error_object_for`` is
the one mapping from exceptions to JSON-RPC error objects (STYLE §6).

What the core decides and what it leaves to the layer above:

* core: parse/invalid-request errors, the lifecycle (before ``initialize`` only
  ``initialize`` and ``ping`` are answered; a second ``initialize`` is refused), ``ping``,
  capability gating in both directions (-32601 for requests to undeclared server features),
  duplicate in-flight ids, cancellation bookkeeping, progress monotonicity, batches (2025-03-26
  only), version negotiation and the per-version feature matrix (``features(version)``).
* above: unknown methods (-32601 via ``MethodNotFound``), params validation, running
  handlers, timeouts (report ``initialization_timed_out()``), logging.

Modules: ``_json`` (``JsonValue``), ``_messages`` (the four shapes), ``_codec`` (the envelope
and orjson) and ``_codec_payloads`` (camelCase payloads), ``_capabilities``, ``_types``,
``_errors``, ``_versions``, ``_lifecycle`` (transition tables), ``_events``, ``_exchange``
(in-flight ids, shared by both sides), ``_intake`` (bytes to messages),
``_server_connection``, ``_client_connection``; ``_fields`` (``Fields``, the strict reader of
a peer's wire objects, which raises ``RemoteProtocolError`` saying where).

The payloads both sides speak are defined here, once, each with its ``to_wire`` and
``from_wire``, so that a spec revision is one edit: ``_tools`` (``ToolAnnotations``),
``_resources`` (``ResourceContents``), ``_prompts`` (``PromptMessage``), ``_completion``
(``Completion``), ``_pagination`` (``Page``), ``_roots`` (``Root``), ``_elicitation``
(``ElicitResult``). ``trimcp.client`` and ``trimcp.server`` re-export the same classes.
"""

from ._capabilities import ClientCapabilities as ClientCapabilities
from ._capabilities import ServerCapabilities as ServerCapabilities
from ._client_connection import ClientConnection as ClientConnection
from ._client_connection import ClientOptions as ClientOptions
from ._codec import dump as encode_message
from ._codec import load as decode_json
from ._codec import parse_message as parse_message
from ._codec_payloads import implementation_to_wire as implementation_to_wire
from ._codec_payloads import server_capabilities_to_wire as server_capabilities_to_wire
from ._completion import Completion as Completion
from ._discover import HANDSHAKE_ONLY_METHODS as HANDSHAKE_ONLY_METHODS
from ._discover import discover_result as discover_result
from ._elicitation import ElicitAction as ElicitAction
from ._elicitation import ElicitResult as ElicitResult
from ._errors import ErrorCode as ErrorCode
from ._errors import error_object_for as error_object_for
from ._events import CancelReceived as CancelReceived
from ._events import Event as Event
from ._events import InitializeCompleted as InitializeCompleted
from ._events import Initialized as Initialized
from ._events import InitializeReceived as InitializeReceived
from ._events import NotificationReceived as NotificationReceived
from ._events import ProgressReceived as ProgressReceived
from ._events import ProtocolViolation as ProtocolViolation
from ._events import ReplyToSend as ReplyToSend
from ._events import RequestReceived as RequestReceived
from ._events import ResponseReceived as ResponseReceived
from ._events import UnexpectedResponse as UnexpectedResponse
from ._exchange import KeptProgress as KeptProgress
from ._fields import Fields as Fields
from ._header_annotations import HeaderParams as HeaderParams
from ._header_annotations import header_annotation_problems as header_annotation_problems
from ._header_annotations import header_parameters as header_parameters
from ._header_values import decode_header_value as decode_header_value
from ._header_values import encode_header_value as encode_header_value
from ._http_headers import check_request_headers as check_request_headers
from ._http_headers import request_headers as request_headers
from ._intake import DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE
from ._json import ABSENT as ABSENT
from ._json import Absent as Absent
from ._json import JsonObject as JsonObject
from ._json import JsonValue as JsonValue
from ._json import ProgressToken as ProgressToken
from ._json import RequestId as RequestId
from ._lifecycle import LifecycleEvent as LifecycleEvent
from ._lifecycle import Phase as Phase
from ._messages import ErrorObject as ErrorObject
from ._messages import ErrorResponse as ErrorResponse
from ._messages import Message as Message
from ._messages import Notification as Notification
from ._messages import Request as Request
from ._messages import Response as Response
from ._messages import Result as Result
from ._pagination import Page as Page
from ._prompts import PromptMessage as PromptMessage
from ._request_meta import META_CLIENT_CAPABILITIES as META_CLIENT_CAPABILITIES
from ._request_meta import META_CLIENT_INFO as META_CLIENT_INFO
from ._request_meta import META_LOG_LEVEL as META_LOG_LEVEL
from ._request_meta import META_PROTOCOL_VERSION as META_PROTOCOL_VERSION
from ._request_meta import META_SERVER_INFO as META_SERVER_INFO
from ._request_meta import META_SUBSCRIPTION_ID as META_SUBSCRIPTION_ID
from ._request_meta import TRACE_KEYS as TRACE_KEYS
from ._request_meta import Era as Era
from ._request_meta import RequestMeta as RequestMeta
from ._request_meta import choose_era as choose_era
from ._request_meta import offered_versions as offered_versions
from ._request_meta import read_request_meta as read_request_meta
from ._resources import ResourceContents as ResourceContents
from ._roots import Root as Root
from ._server_connection import LEGACY_ALIASES as LEGACY_ALIASES
from ._server_connection import ConnectionStatistics as ConnectionStatistics
from ._server_connection import ServerConnection as ServerConnection
from ._server_connection import ServerConnectionOptions as ServerConnectionOptions
from ._tools import ToolAnnotations as ToolAnnotations
from ._types import CancelledParams as CancelledParams
from ._types import Implementation as Implementation
from ._types import InitializeParams as InitializeParams
from ._types import InitializeResult as InitializeResult
from ._types import ProgressParams as ProgressParams
from ._versions import LATEST_VERSION as LATEST_VERSION
from ._versions import MODERN_VERSION as MODERN_VERSION
from ._versions import MODERN_VERSIONS as MODERN_VERSIONS
from ._versions import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS
from ._versions import VersionFeatures as VersionFeatures
from ._versions import features as features
from ._versions import is_handshake_version as is_handshake_version
from ._versions import is_modern as is_modern
from ._versions import is_supported as is_supported
from ._versions import negotiate as negotiate

__all__ = [
    "ABSENT",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HANDSHAKE_ONLY_METHODS",
    "LATEST_VERSION",
    "LEGACY_ALIASES",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "MODERN_VERSION",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "TRACE_KEYS",
    "Absent",
    "CancelReceived",
    "CancelledParams",
    "ClientCapabilities",
    "ClientConnection",
    "ClientOptions",
    "Completion",
    "ConnectionStatistics",
    "ElicitAction",
    "ElicitResult",
    "Era",
    "ErrorCode",
    "ErrorObject",
    "ErrorResponse",
    "Event",
    "Fields",
    "HeaderParams",
    "Implementation",
    "InitializeCompleted",
    "InitializeParams",
    "InitializeReceived",
    "InitializeResult",
    "Initialized",
    "JsonObject",
    "JsonValue",
    "KeptProgress",
    "LifecycleEvent",
    "Message",
    "Notification",
    "NotificationReceived",
    "Page",
    "Phase",
    "ProgressParams",
    "ProgressReceived",
    "ProgressToken",
    "PromptMessage",
    "ProtocolViolation",
    "ReplyToSend",
    "Request",
    "RequestId",
    "RequestMeta",
    "RequestReceived",
    "ResourceContents",
    "Response",
    "ResponseReceived",
    "Result",
    "Root",
    "ServerCapabilities",
    "ServerConnection",
    "ServerConnectionOptions",
    "ToolAnnotations",
    "UnexpectedResponse",
    "VersionFeatures",
    "check_request_headers",
    "choose_era",
    "decode_header_value",
    "decode_json",
    "discover_result",
    "encode_header_value",
    "encode_message",
    "error_object_for",
    "features",
    "header_annotation_problems",
    "header_parameters",
    "implementation_to_wire",
    "is_handshake_version",
    "is_modern",
    "is_supported",
    "negotiate",
    "offered_versions",
    "parse_message",
    "read_request_meta",
    "request_headers",
    "server_capabilities_to_wire",
]
