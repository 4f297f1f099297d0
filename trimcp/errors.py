"""Every public trimcp exception, in one hierarchy.

This module imports nothing from trimcp, so any layer may raise these; a package re-exports
the ones its users catch (``trimcp.server.ToolError`` is this module's ``ToolError``, the same
class). The runtime errors (``ActorError``, ``SupervisorError``) know nothing of MCP;
``trimcp.protocol.error_object_for`` is the one mapping from these to JSON-RPC error objects.

Naming follows trio's split between *closed by you* and *broken by them*: ``MailboxClosed``
means this side closed the mailbox, ``ActorGone`` means the actor exited under the caller;
``TransportClosed`` and ``TransportBroken`` likewise. And h11's: ``LocalProtocolError`` when
this side would break the protocol (nothing is sent), ``RemoteProtocolError`` when the peer
did. There are two timeouts because there are two kinds of waiting: ``CallTimeout`` for an
actor's ``call`` (the runtime, no MCP), ``RequestTimeout`` for an MCP request to the peer,
in either direction.

The tree (``tests/test_exports.py`` checks that it names every class here, under its parent)::

    Exception
    ├── TrimcpError                          anything trimcp raises on purpose
    │   ├── ActorError                       the actor runtime (trimcp.actors)
    │   │   ├── ActorGone                    the actor exited under the caller
    │   │   ├── CallTimeout                  an actor's call got no reply in time
    │   │   ├── CallingSelf
    │   │   ├── MailboxFull
    │   │   ├── MailboxClosed                this side closed the mailbox
    │   │   ├── MessageRefused
    │   │   ├── InvalidTransition
    │   │   ├── AlreadyRegistered
    │   │   └── NotRegistered
    │   ├── SupervisorError                  trimcp.supervision
    │   │   ├── InvalidChildSpec
    │   │   ├── StartFailed
    │   │   ├── ChildNotFound
    │   │   ├── DuplicateChild
    │   │   └── RestartIntensityExceeded
    │   ├── ConfigError                      names the file, the key, given and expected
    │   ├── TransportClosed                  this side closed the transport
    │   ├── TransportBroken                  the peer or the network broke it
    │   │   ├── ConnectFailed
    │   │   │   ├── HandshakeRejected
    │   │   │   ├── SubprotocolRefused
    │   │   │   ├── HttpStatusError
    │   │   │   │   ├── HttpAuthRequired
    │   │   │   │   │   └── SignInRequired
    │   │   │   │   └── EndpointNotFound
    │   │   │   └── NotAnMcpEndpoint
    │   │   ├── SessionExpired
    │   │   ├── ServerProcessError           a server the client launched over stdio
    │   │   │   ├── LaunchFailed
    │   │   │   │   ├── CommandNotFound
    │   │   │   │   └── CommandNotExecutable
    │   │   │   └── ServerExited
    │   │   └── ConnectionLost
    │   ├── MessageTooLarge
    │   │   └── SSEEventTooLarge
    │   ├── ReplayError                      a Last-Event-ID that cannot be resumed from
    │   │   ├── UnknownEventId
    │   │   └── EventsLost
    │   ├── ProtocolError                    abstract
    │   │   ├── LocalProtocolError           this side would break MCP; nothing was sent
    │   │   │   └── ClientCapabilityMissing
    │   │   └── RemoteProtocolError          the peer broke MCP
    │   ├── JsonRpcError                     travels to the peer as a JSON-RPC error
    │   │   ├── ParseError                   -32700
    │   │   ├── InvalidRequest               -32600
    │   │   ├── MethodNotFound               -32601
    │   │   ├── InvalidParams                -32602
    │   │   │   └── RequestStateRejected     a 2026-07-28 requestState refused
    │   │   ├── InternalError                -32603
    │   │   ├── ResourceNotFound             -32002
    │   │   ├── UrlElicitationRequired       -32042
    │   │   ├── HeaderMismatch               -32020 (2026-07-28)
    │   │   ├── MissingClientCapability      -32021 (2026-07-28)
    │   │   └── UnsupportedProtocolVersion   -32022 (2026-07-28)
    │   ├── RequestTimeout                   an MCP request got no answer in time
    │   ├── SessionLimitReached              trimcp.sessions, trimcp.http
    │   ├── HttpRefusal                      an HTTP error answer of the MCP endpoint
    │   ├── AuthError                        trimcp.auth: a request's credentials refused
    │   │   ├── MalformedAuthorization       400 invalid_request
    │   │   ├── TokenRequired                401, no bearer token at all
    │   │   ├── InvalidToken                 401 invalid_token
    │   │   ├── InsufficientScope            403 insufficient_scope
    │   │   └── VerifierUnavailable          503: the keys or the introspection endpoint
    │   ├── SchemaError                      trimcp.server, when a function is registered
    │   │   └── UnsupportedDialect
    │   ├── ArgumentError                    carries ArgumentProblem records
    │   ├── OutputError
    │   ├── ToolError                        a tool's own isError answer
    │   │   └── PathRefused                  trimcp.skills: a path outside the jail, or blocked
    │   ├── InvalidCursor
    │   ├── TemplateError
    │   ├── ElicitationError
    │   ├── NotConnected                     trimcp.client, the host of many servers
    │   ├── UnknownServer
    │   ├── UnknownTool
    │   ├── ToolCallDenied
    │   └── ToolOutputInvalid
    └── ScriptedCrash                        trimcp.testing: stands in for a bug in user code
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import orjson

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "ActorError",
    "ActorGone",
    "AlreadyRegistered",
    "ArgumentError",
    "ArgumentProblem",
    "AuthError",
    "CallTimeout",
    "CallingSelf",
    "ChildNotFound",
    "ClientCapabilityMissing",
    "CommandNotExecutable",
    "CommandNotFound",
    "ConfigError",
    "ConnectFailed",
    "ConnectionLost",
    "DuplicateChild",
    "ElicitationError",
    "EndpointNotFound",
    "EventsLost",
    "HandshakeRejected",
    "HeaderMismatch",
    "HttpAuthRequired",
    "HttpRefusal",
    "HttpStatusError",
    "InsufficientScope",
    "InternalError",
    "InvalidChildSpec",
    "InvalidCursor",
    "InvalidParams",
    "InvalidRequest",
    "InvalidToken",
    "InvalidTransition",
    "JsonRpcError",
    "LaunchFailed",
    "LocalProtocolError",
    "MailboxClosed",
    "MailboxFull",
    "MalformedAuthorization",
    "MessageRefused",
    "MessageTooLarge",
    "MethodNotFound",
    "MissingClientCapability",
    "NotAnMcpEndpoint",
    "NotConnected",
    "NotRegistered",
    "OutputError",
    "ParseError",
    "PathRefused",
    "ProtocolError",
    "RemoteProtocolError",
    "ReplayError",
    "RequestStateRejected",
    "RequestTimeout",
    "ResourceNotFound",
    "RestartIntensityExceeded",
    "SSEEventTooLarge",
    "SchemaError",
    "ScriptedCrash",
    "ServerExited",
    "ServerProcessError",
    "SessionExpired",
    "SessionLimitReached",
    "SignInRequired",
    "StartFailed",
    "SubprotocolRefused",
    "SupervisorError",
    "TemplateError",
    "TokenRequired",
    "ToolCallDenied",
    "ToolError",
    "ToolOutputInvalid",
    "TransportBroken",
    "TransportClosed",
    "TrimcpError",
    "UnknownEventId",
    "UnknownServer",
    "UnknownTool",
    "UnsupportedDialect",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
    "VerifierUnavailable",
]


class TrimcpError(Exception):
    """Base class of every exception trimcp raises on purpose."""


# --- the actor runtime -----------------------------------------------------------------------


class ActorError(TrimcpError):
    """Something went wrong talking to, or running, an actor."""


class ActorGone(ActorError):
    """The actor exited before it could take or answer the message.

    ``reason`` is the actor's exit reason (an ``ExitReason``); it is typed as ``object`` here so
    that this module stays free of runtime imports.
    """

    def __init__(self, actor: str, reason: object) -> None:
        super().__init__(
            f"actor {actor!r} has exited ({reason}); start it again or look it up anew"
        )
        self.actor = actor
        self.reason = reason


class CallTimeout(ActorError):
    """No reply arrived within the call's timeout. A late reply is dropped."""

    def __init__(self, actor: str, message: object, timeout: float) -> None:
        super().__init__(
            f"call to actor {actor!r} got no reply within {timeout:g} s "
            f"(message {type(message).__name__}); the actor is busy, blocked or overloaded"
        )
        self.actor = actor
        self.message = message
        self.timeout = timeout


class CallingSelf(ActorError):
    """An actor called itself from its own task; that would wait forever, so it is refused."""

    def __init__(self, actor: str) -> None:
        super().__init__(
            f"actor {actor!r} called itself from its own task, which would deadlock; "
            "handle the message directly or use cast"
        )
        self.actor = actor


class MailboxFull(ActorError):
    """``cast_nowait`` found the actor's bounded mailbox full. Nothing was sent."""

    def __init__(self, actor: str, capacity: int) -> None:
        super().__init__(
            f"mailbox of actor {actor!r} is full ({capacity} messages); "
            "use cast() to wait for space, or raise the actor's mailbox_size"
        )
        self.actor = actor
        self.capacity = capacity


class MailboxClosed(ActorError):
    """This side closed the mailbox and then tried to use it."""


class MessageRefused(ActorError):
    """The actor's current phase does not accept this kind of message."""

    def __init__(self, actor: str, phase: str, message: object) -> None:
        super().__init__(
            f"actor {actor!r} is in phase {phase!r}, which does not accept "
            f"{type(message).__name__} messages"
        )
        self.actor = actor
        self.phase = phase
        self.message = message


class InvalidTransition(ActorError):
    """A phase table has no entry for this (phase, event) pair."""

    def __init__(self, phase: str, event: str) -> None:
        super().__init__(f"no transition from phase {phase!r} on event {event!r}")
        self.phase = phase
        self.event = event


class AlreadyRegistered(ActorError):
    """Another live actor already holds this registry name."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"the name {name!r} is already registered to a live actor; "
            "pick another name or stop that actor first"
        )
        self.name = name


class NotRegistered(ActorError):
    """No live actor is registered under this name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no live actor is registered as {name!r}")
        self.name = name


# --- supervision -----------------------------------------------------------------------------


class SupervisorError(TrimcpError):
    """A supervisor could not do what it was asked."""


class InvalidChildSpec(SupervisorError):
    """A ChildSpec (or a supervisor's flags) break one of OTP's rules."""


class StartFailed(SupervisorError):
    """A child's start function raised before it reported itself started.

    The original exception is ``__cause__``.
    """

    def __init__(self, supervisor: str, child_id: str, error: BaseException) -> None:
        super().__init__(f"supervisor {supervisor!r} could not start child {child_id!r}: {error!r}")
        self.supervisor = supervisor
        self.child_id = child_id


class ChildNotFound(SupervisorError):
    """No child with this id exists under the supervisor."""

    def __init__(self, supervisor: str, child_id: str) -> None:
        super().__init__(f"supervisor {supervisor!r} has no child {child_id!r}")
        self.supervisor = supervisor
        self.child_id = child_id


class DuplicateChild(SupervisorError):
    """A child with this id already exists under the supervisor."""

    def __init__(self, supervisor: str, child_id: str) -> None:
        super().__init__(f"supervisor {supervisor!r} already has a child {child_id!r}")
        self.supervisor = supervisor
        self.child_id = child_id


class RestartIntensityExceeded(SupervisorError):
    """More restarts than the supervisor's intensity allows within its period.

    The supervisor has stopped all its children (in reverse start order) and exits with this
    error so that its own parent decides what happens next.
    """

    def __init__(
        self, supervisor: str, intensity: int, period: float, last_failures: Sequence[str]
    ) -> None:
        failures = ", ".join(last_failures) or "none recorded"
        super().__init__(
            f"supervisor {supervisor!r} gave up: more than {intensity} restart(s) within "
            f"{period:g} s (recent failures: {failures})"
        )
        self.supervisor = supervisor
        self.intensity = intensity
        self.period = period
        self.last_failures = tuple(last_failures)


# --- configuration ---------------------------------------------------------------------------


class ConfigError(TrimcpError):
    """A configuration file is missing, malformed, or holds a key or value trimcp cannot use.

    The message names the file, the key path, what was given and what was expected, so that it
    can be printed to a person as is.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        given: str | None = None,
        expected: str | None = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.key = key
        self.given = given
        self.expected = expected


# --- transports ------------------------------------------------------------------------------


class TransportClosed(TrimcpError):
    """This side closed the transport and then tried to use it."""


class TransportBroken(TrimcpError):
    """The peer or the network broke the transport."""


class MessageTooLarge(TrimcpError):
    """One framed message (a stdio line, an HTTP body, a WebSocket frame) exceeded the limit.

    The transport has discarded it and stays usable; the receiver answers with a JSON-RPC
    error that has no id (the id could not be read).
    """

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"message of at least {size} bytes exceeds the limit of {limit} bytes; "
            "send smaller messages or raise the limit in the transport's configuration"
        )
        self.size = size
        self.limit = limit


class SSEEventTooLarge(MessageTooLarge):
    """One Server-Sent Event's data, or one of its lines, was over the decoder's limit.

    The decoder has dropped the event (its ``id`` still counts) and carries on after it.
    ``size`` is the length of the event's lines without line endings.
    """


class ReplayError(TrimcpError):
    """A ``Last-Event-ID`` cannot be resumed from. Raise a subclass.

    ``last_event_id`` is what the client sent, verbatim; messages quote at most 64 characters
    of it, since a client may send anything.
    """

    def __init__(self, message: str, last_event_id: str) -> None:
        super().__init__(message)
        self.last_event_id = last_event_id


class UnknownEventId(ReplayError):
    """The event id is malformed, or this session never issued it."""

    def __init__(self, last_event_id: str) -> None:
        super().__init__(
            f"event id {last_event_id[:64]!r} was not issued in this session; "
            "open a new stream instead of resuming",
            last_event_id,
        )


class EventsLost(ReplayError):
    """The session issued this event id, but events after it on its stream are gone.

    They fell out of the event store's window (its per-stream bound or its time to live), or
    the stream was forgotten; replaying what is left would skip messages silently.
    """

    def __init__(self, last_event_id: str, stream_id: str) -> None:
        super().__init__(
            f"events after {last_event_id[:64]!r} on stream {stream_id!r} are no longer "
            "stored; the stream cannot be resumed",
            last_event_id,
        )
        self.stream_id = stream_id


class ConnectFailed(TransportBroken):
    """Opening a connection to a server failed: unreachable, too slow, or refused.

    ``target`` is what was dialled (a URL); ``problem`` says what went wrong, in words that
    can be shown to a person as is. The subclasses say when the server itself refused.
    """

    def __init__(self, target: str, problem: str) -> None:
        super().__init__(f"could not connect to {target}: {problem}")
        self.target = target
        self.problem = problem


class HandshakeRejected(ConnectFailed):
    """The server answered the opening handshake with an HTTP error status.

    ``body`` is the start of the server's explanation (decoded leniently, maybe empty).
    """

    def __init__(self, target: str, status: int, body: str) -> None:
        detail = f": {body}" if body else ""
        super().__init__(target, f"the server refused the handshake with HTTP {status}{detail}")
        self.status = status
        self.body = body


class SubprotocolRefused(ConnectFailed):
    """The server accepted the connection but not the subprotocol this side requires."""

    def __init__(self, target: str, required: str, selected: str | None) -> None:
        chosen = "none" if selected is None else repr(selected)
        super().__init__(
            target,
            f"the server selected subprotocol {chosen}, not {required!r}; "
            "it does not speak MCP over this endpoint",
        )
        self.required = required
        self.selected = selected


# --- the MCP protocol ------------------------------------------------------------------------
#
# h11's rule (``h11/_util.py``): code inside the sans-IO core raises ``LocalProtocolError``
# when *this side* would break the protocol; the one receive entry point turns problems the
# *peer* caused into ``RemoteProtocolError`` (or, where JSON-RPC lets us answer, into an error
# response). ``JsonRpcError`` is the other family: an error that has a JSON-RPC error object,
# raised by handlers or by the core and mapped to the wire by ``trimcp.protocol``'s one
# mapping function. The numeric codes are plain ``int`` here so that this module stays free
# of trimcp imports; ``trimcp.protocol.ErrorCode`` is an ``IntEnum`` over the same values.


class ProtocolError(TrimcpError):
    """Someone broke the MCP / JSON-RPC protocol. Abstract: raise a subclass.

    ``code`` is a hint for the JSON-RPC error code an answer would carry (``-32600`` Invalid
    Request unless the raiser knows better).
    """

    def __init__(self, message: str, *, code: int = -32600) -> None:
        if type(self) is ProtocolError:
            raise TypeError("ProtocolError is abstract; raise LocalProtocolError or its twin")
        super().__init__(message)
        self.code = code


class LocalProtocolError(ProtocolError):
    """This side tried to do something the protocol forbids. Nothing was sent."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol forbids."""


class JsonRpcError(TrimcpError):
    """An error that travels to the peer as a JSON-RPC error object.

    ``data`` must be JSON-serialisable (``None`` means "no ``data`` member"); it is typed as
    ``object`` so that this module needs no JSON type.
    """

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ParseError(JsonRpcError):
    """The bytes were not valid JSON (-32700)."""

    CODE = -32700

    def __init__(self, message: str = "Parse error", data: object = None) -> None:
        super().__init__(self.CODE, message, data)


class InvalidRequest(JsonRpcError):
    """Valid JSON, but not an acceptable JSON-RPC message here (-32600)."""

    CODE = -32600

    def __init__(self, message: str = "Invalid Request", data: object = None) -> None:
        super().__init__(self.CODE, message, data)


class MethodNotFound(JsonRpcError):
    """Unknown method, or a capability the receiver did not declare (-32601).

    ``data`` is ``{"method": method}`` so the peer can tell which call failed.
    """

    CODE = -32601

    def __init__(self, method: str, message: str | None = None) -> None:
        super().__init__(self.CODE, message or f"Method not found: {method}", {"method": method})
        self.method = method


class InvalidParams(JsonRpcError):
    """The params do not fit the method: unknown tool or prompt, bad cursor, ... (-32602)."""

    CODE = -32602

    def __init__(self, message: str = "Invalid params", data: object = None) -> None:
        super().__init__(self.CODE, message, data)


class InternalError(JsonRpcError):
    """The receiver failed (-32603). Its message is sent as is, so keep internals out of it."""

    CODE = -32603

    def __init__(self, message: str = "Internal error", data: object = None) -> None:
        super().__init__(self.CODE, message, data)


class ResourceNotFound(JsonRpcError):
    """``resources/read`` named a URI the server does not have (-32002, data ``{"uri": ...}``)."""

    CODE = -32002

    def __init__(self, uri: str, message: str = "Resource not found") -> None:
        super().__init__(self.CODE, message, {"uri": uri})
        self.uri = uri


class UrlElicitationRequired(JsonRpcError):
    """The request needs URL-mode elicitation(s) finished first (-32042, MCP 2025-11-25).

    ``elicitations`` are URL-mode ``elicitation/create`` params (wire dicts, each with
    ``mode``, ``message``, ``elicitationId`` and ``url``); they become ``data.elicitations``.
    """

    CODE = -32042

    def __init__(
        self,
        elicitations: Sequence[object],
        message: str = "This request requires more information.",
    ) -> None:
        super().__init__(self.CODE, message, {"elicitations": list(elicitations)})
        self.elicitations = tuple(elicitations)


class RequestStateRejected(InvalidParams):
    """A 2026-07-28 retry's ``requestState`` was refused (-32602).

    Tampered, truncated, sealed by a key this server does not hold, expired, issued for
    another request or principal, or already used (MCP 2026-07-28, Basic > Patterns >
    Multi Round-Trip Requests: servers MUST treat it as attacker-controlled). ``reason`` is
    one of ``"invalid"``, ``"expired"``, ``"mismatch"``, ``"replayed"``;
    the message says what to do (usually: send the request again without ``requestState``).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, {"reason": reason})
        self.reason = reason


class HeaderMismatch(JsonRpcError):
    """An HTTP header disagrees with the body, is missing, or is malformed (-32020).

    MCP 2026-07-28, Transports > Streamable HTTP: ``MCP-Protocol-Version``, ``Mcp-Method``,
    ``Mcp-Name`` and ``Mcp-Param-*`` must mirror the body; HTTP status 400.
    """

    CODE = -32020

    def __init__(self, message: str, header: str | None = None) -> None:
        super().__init__(self.CODE, message, None if header is None else {"header": header})
        self.header = header


class MissingClientCapability(JsonRpcError):
    """The request needs a client capability its ``_meta`` did not declare (-32021).

    ``required`` is a ``ClientCapabilities``-shaped object naming what is missing, e.g.
    ``{"sampling": {}}``; it travels as ``data.requiredCapabilities`` (MCP 2026-07-28,
    ``MissingRequiredClientCapabilityError``; HTTP status 400).
    """

    CODE = -32021

    def __init__(self, required: dict[str, object], message: str) -> None:
        super().__init__(self.CODE, message, {"requiredCapabilities": required})
        self.required = required


class UnsupportedProtocolVersion(JsonRpcError):
    """The request's protocol version is not one this server speaks (-32022).

    ``data`` is ``{"supported": [...], "requested": version}`` (MCP 2026-07-28,
    ``UnsupportedProtocolVersionError``; HTTP status 400).
    """

    CODE = -32022

    def __init__(self, requested: object, supported: Sequence[str], message: str) -> None:
        super().__init__(self.CODE, message, {"supported": list(supported), "requested": requested})
        self.requested = requested
        self.supported = tuple(supported)


class RequestTimeout(TrimcpError):
    """A request to the peer got no answer in time; ``notifications/cancelled`` was sent.

    Either way round: a client's request to its server (``ClientSession``), or a server's
    request to its client (``Context.sample``, ``elicit``, ``list_roots``). ``initialize``
    is the one request never cancelled (Utilities > Cancellation forbids it). ``timeout``
    is the limit in seconds that passed without an answer (or without progress, when
    progress resets it); ``method`` the request's method. An actor's ``call`` that times
    out raises ``CallTimeout`` instead: that is the runtime, not MCP.
    """

    def __init__(self, message: str, *, method: str, timeout: float) -> None:
        super().__init__(message)
        self.method = method
        self.timeout = timeout


# --- sessions and the MCP endpoint over HTTP (trimcp.sessions, trimcp.http) ------------------


class SessionLimitReached(TrimcpError):
    """Every one of a listener's ``max_sessions`` sessions is busy; no new one can start now.

    Idle sessions are evicted to make room first, so this means real load: the HTTP endpoint
    answers ``initialize`` with 503 and this message.
    """


@final
class HttpRefusal(TrimcpError):
    """An HTTP error answer: status, JSON-RPC error body and extra headers.

    Raised by the endpoint's request checks and turned into the response by the endpoint;
    it never reaches the application. ``code`` is the JSON-RPC error code of the body
    (-32600 Invalid Request unless the raiser says otherwise), ``data`` its ``data`` member
    (JSON-serialisable; None: none). ``request_id`` is the id of
    the request the body carried, once the body was read and was one request
    (``answers``); the error then answers it. Otherwise the error's ``id`` is null, as
    JSON-RPC 2.0 (section 5) has it when the id could not be found.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int = -32600,
        headers: tuple[tuple[bytes, bytes], ...] = (),
        data: object = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers
        self.data = data
        self.request_id: str | int | None = None

    def answers(self, request_id: str | int | None) -> HttpRefusal:
        """Make the error answer ``request_id`` (unless it already answers one); return self."""
        if self.request_id is None:
            self.request_id = request_id
        return self

    def body(self) -> bytes:
        """Return the JSON-RPC error response that is the answer's body."""
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return orjson.dumps({"jsonrpc": "2.0", "id": self.request_id, "error": error})


# --- authorization (trimcp.auth) ------------------------------------------------------------


class AuthError(TrimcpError):
    """A request's credentials were refused; the endpoint answers with a bearer challenge.

    MCP 2025-11-25, Basic > Authorization > Error Handling, and RFC 6750 section 3: each
    subclass fixes the HTTP ``status`` and the ``error`` code of the ``WWW-Authenticate:
    Bearer`` challenge (None: the challenge carries no error, as for a request without any
    token). The message is the challenge's ``error_description``: it says what was wrong and
    how to fix it, and never holds the token.
    """

    status: int = 401
    error_code: str | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MalformedAuthorization(AuthError):
    """The ``Authorization`` header cannot be read (RFC 6750 section 3.1 ``invalid_request``)."""

    status = 400
    error_code = "invalid_request"


class TokenRequired(AuthError):
    """The request carries no bearer token; the 401 challenge tells where to get one."""


class InvalidToken(AuthError):
    """The token is expired, not yet valid, badly signed, or for another issuer or resource.

    A verifier (``trimcp.auth.TokenVerifier``) raises it for any token it does not accept.
    """

    error_code = "invalid_token"


class InsufficientScope(AuthError):
    """The token is valid but lacks scopes the request needs (403 ``insufficient_scope``).

    ``scopes`` are every scope the request needs (not only the missing ones), as MCP
    2025-11-25 asks of a challenge: the client re-authorizes once with all of them.
    """

    status = 403
    error_code = "insufficient_scope"

    def __init__(self, message: str, scopes: Sequence[str]) -> None:
        super().__init__(message)
        self.scopes = tuple(scopes)


class VerifierUnavailable(AuthError):
    """Tokens cannot be checked now: the JWKS or introspection endpoint failed (503).

    Not the client's fault, so no ``invalid_token``: a client that re-authorized would get
    the same answer.
    """

    status = 503


# --- the server API (trimcp.server) ----------------------------------------------------------


class SchemaError(TrimcpError):
    """A function signature or type hint cannot be described as JSON Schema.

    Raised when a tool, resource or prompt is defined (decoration time), never while
    serving a request, so it points at a programming error.
    """


class UnsupportedDialect(SchemaError):
    """A schema's ``$schema`` names a dialect trimcp cannot validate.

    MCP 2025-11-25 (Basic > JSON Schema Usage > Schema Dialect): a schema without
    ``$schema`` is 2020-12 and may name another dialect; one trimcp cannot validate is
    refused with this error rather than checked by the wrong rules. ``supported`` are the
    dialect URIs that are validated, without their scheme.
    """

    def __init__(self, dialect: object, supported: Sequence[str]) -> None:
        listed = ", ".join(f"https://{uri}" for uri in supported)
        super().__init__(
            f"unsupported JSON Schema dialect {dialect!r}; supported dialects: {listed}"
        )
        self.dialect = dialect


def _format_path(path: tuple[str | int, ...], root: str) -> str:
    if not path:
        return root
    text = str(path[0])
    for part in path[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


@final
@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One thing wrong with a call's arguments: where, what was given, what was expected.

    It lives here, beside ``ArgumentError``, because it is what that error carries.
    """

    path: tuple[str | int, ...]
    given: str
    expected: str
    #: "mismatch", "missing" (a required member is absent) or "unexpected" (unknown member)
    kind: str = "mismatch"

    def __str__(self) -> str:
        return self.describe()

    def describe(self, *, root: str = "arguments") -> str:
        """Say the problem in one line, spelling the path ``point.tags[2]`` (empty: ``root``)."""
        where = _format_path(self.path, root)
        if self.kind == "missing":
            return f"{where}: missing (required)"
        if self.kind == "unexpected":
            return f"{where}: unexpected, got {self.given}; {self.expected}"
        return f"{where}: expected {self.expected}, got {self.given}"


class ArgumentError(TrimcpError):
    """The arguments of a call do not fit the function's input schema or parameter types.

    ``problems`` lists every problem found (at most ``MAX_PROBLEMS``), first by position.
    The server turns this into a tool result with ``isError: true`` (MCP 2025-11-25, Tools >
    Error Handling), not a JSON-RPC error.
    """

    MAX_PROBLEMS = 10

    def __init__(self, problems: Sequence[ArgumentProblem]) -> None:
        self.problems = tuple(problems[: self.MAX_PROBLEMS])
        lines = "; ".join(str(problem) for problem in self.problems)
        super().__init__(f"invalid arguments: {lines}")


class OutputError(TrimcpError):
    """A tool's return value cannot become ``structuredContent`` matching its outputSchema.

    A server fault, not the caller's: MCP 2025-11-25 (Tools > Output Schema) says a server
    declaring an outputSchema MUST return conforming structured results.
    """


class ToolError(TrimcpError):
    """Raise in a tool to fail the call with exactly this message (``isError: true``).

    Any other exception also becomes an ``isError`` result, prefixed with the tool's name
    and logged with its traceback; ``ToolError`` is for failures the tool expects and
    words itself, and it is not logged as a crash.
    """


class PathRefused(ToolError):
    """A ``trimcp.skills`` tool refused a path: outside the roots, blocked, or not a file.

    The message says what was asked and what is allowed, and never where a symlink that
    leaves the roots points to.
    """


class InvalidCursor(TrimcpError):
    """A cursor is malformed, tampered with, foreign, stale or from another list method.

    The server answers -32602 Invalid params (MCP 2025-11-25, Utilities > Pagination >
    Error Handling). ``reason`` is a short machine-readable word: ``malformed``,
    ``signature``, ``method``, ``stale`` or ``range``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"invalid cursor: {message}")
        self.reason = reason


class TemplateError(TrimcpError):
    """A malformed URI template, or a value a template cannot expand (RFC 6570 section 3)."""


class ClientCapabilityMissing(LocalProtocolError):
    """The client did not declare what this request needs (``sampling``, ``roots``, ...).

    Raised before anything is sent; a ``LocalProtocolError`` because sending it would break
    the capability negotiation (MCP 2025-11-25, Lifecycle > Capability Negotiation).
    """


class ElicitationError(TrimcpError):
    """The client accepted an elicitation but its ``content`` breaks the requested schema."""


# --- the client side -------------------------------------------------------------------------


class SessionExpired(TransportBroken):
    """The server no longer knows this client's session (HTTP 404 for its ``MCP-Session-Id``).

    The spec's answer is to start a new session: ``ClientSession`` catches this, performs
    ``initialize`` again and retries what failed, so callers only see it when that fails too.
    """


class NotConnected(TrimcpError):
    """A configured upstream server is not connected now; the message says why and what to do.

    ``server`` is its configured name; ``state`` its connection's state (``connecting``,
    ``reconnecting``, ``failed`` or ``stopped``).
    """

    def __init__(self, message: str, *, server: str, state: str) -> None:
        super().__init__(message)
        self.server = server
        self.state = state


class UnknownServer(TrimcpError):
    """No upstream server of this name is configured (the message lists the names that are)."""


class UnknownTool(TrimcpError):
    """No connected server offers a tool of this qualified name (``mcp__<server>__<tool>``)."""


class ToolCallDenied(TrimcpError):
    """The host's permission rules refused a tool call; the message names the rule."""


# --- launching MCP servers as processes (the client's stdio transport) -----------------------


class ServerProcessError(TransportBroken):
    """A server the client launches over stdio could not start, or stopped. Raise a subclass.

    The message is several lines of plain language meant to be shown to a person as is: the
    server's name, where it was configured, the command line, what happened, likely causes
    and how to fix it. The underlying exception (an ``OSError``, say), if any, is
    ``__cause__``. ``command`` is the command line as configured.
    """

    def __init__(self, message: str, *, server: str, command: Sequence[str]) -> None:
        super().__init__(message)
        self.server = server
        self.command = tuple(command)


class LaunchFailed(ServerProcessError):
    """The server's process could not be started (bad working directory, exec failure, ...)."""


class CommandNotFound(LaunchFailed):
    """The program to launch does not exist; ``searched`` lists the directories tried."""

    def __init__(
        self, message: str, *, server: str, command: Sequence[str], searched: Sequence[str]
    ) -> None:
        super().__init__(message, server=server, command=command)
        self.searched = tuple(searched)


class CommandNotExecutable(LaunchFailed):
    """The program exists but may not be run (permission denied, or it is a directory)."""


class ServerExited(ServerProcessError):
    """The server's process ended on its own, while starting or while in use.

    ``returncode`` is its exit status (negative: killed by that signal on POSIX), or None when
    it closed its output but had not exited yet; ``signal`` is the signal's name, if any.
    ``stderr_tail`` holds the last lines it wrote to stderr; ``during`` is ``"start"`` before
    the initialize handshake finished, ``"operation"`` after.
    """

    def __init__(  # noqa: PLR0913  # the facts a person needs, each its own attribute
        self,
        message: str,
        *,
        server: str,
        command: Sequence[str],
        returncode: int | None,
        signal: str | None,
        stderr_tail: Sequence[str],
        during: str,
    ) -> None:
        super().__init__(message, server=server, command=command)
        self.returncode = returncode
        self.signal = signal
        self.stderr_tail = tuple(stderr_tail)
        self.during = during


class ConnectionLost(TransportBroken):
    """A request could not finish: the connection to the server ended while it was pending.

    Every request pending at that moment fails at once with its own ``ConnectionLost``; later
    requests fail the same way without being sent. ``method`` is the request's method;
    ``__cause__`` is the transport's error (a ``ServerExited`` explains in plain words, and its
    text is repeated in this message so it stays visible).
    """

    def __init__(self, message: str, *, method: str) -> None:
        super().__init__(message)
        self.method = method


class ToolOutputInvalid(TrimcpError):
    """A tool's ``structuredContent`` does not match the ``outputSchema`` it declared.

    MCP 2025-11-25, Tools > Output Schema: the server MUST conform, the client SHOULD validate.
    ``tool`` is the tool's name, ``problem`` what the validator found, ``result`` the whole
    ``CallToolResult`` as received (so a caller may still look at it).
    """

    def __init__(self, tool: str, problem: str, result: object) -> None:
        super().__init__(
            f"tool {tool!r} returned structuredContent that does not match its outputSchema: "
            f"{problem}"
        )
        self.tool = tool
        self.problem = problem
        self.result = result


# --- the client's HTTP transports ------------------------------------------------------------


class HttpStatusError(ConnectFailed):
    """An MCP server's HTTP endpoint answered with an error status.

    ``status`` is the HTTP status, ``detail`` the server's own explanation (the message of
    its JSON-RPC error, or the start of its body; maybe empty). The message says in plain
    words what the status usually means and what to try.
    """

    def __init__(self, target: str, status: int, problem: str, *, detail: str = "") -> None:
        super().__init__(target, problem)
        self.status = status
        self.detail = detail


class HttpAuthRequired(HttpStatusError):
    """HTTP 401 or 403: the server wants credentials that this client did not send."""


class SignInRequired(HttpAuthRequired):
    """The server wants a user's sign-in, and nobody is there to do it (no browser step).

    Retrying cannot help until the user signs in (``trimcp login NAME``): a host reports
    the server failed at once, and tries again on reconnect or reload.
    """


class EndpointNotFound(HttpStatusError):
    """HTTP 404 to a request without a session id: nothing serves MCP at that URL."""


class NotAnMcpEndpoint(ConnectFailed):
    """The server answered, but not with JSON or an event stream (an HTML page, say).

    ``content_type`` is what it sent instead.
    """

    def __init__(self, target: str, problem: str, *, content_type: str) -> None:
        super().__init__(target, problem)
        self.content_type = content_type


# --- test helpers (trimcp.testing) -----------------------------------------------------------


class ScriptedCrash(Exception):
    """The exception a ``ScriptedActor`` raises when its script says to crash.

    Deliberately not a ``TrimcpError``: it stands in for a bug in user code, which is what
    supervisors and callers must cope with.

    Attributes:
        trigger: the rule that fired (a ``trimcp.testing.CrashTrigger``: ``"init"``,
            ``"crash_on"``, ``"crash_after"`` or ``"crash_at"``).
        message: the message being handled when it fired, or None (``init``, ``crash_at``).
    """

    def __init__(self, trigger: str, message: object = None) -> None:
        detail = "" if message is None else f" on {message!r}"
        super().__init__(f"scripted crash ({trigger}){detail}")
        self.trigger = trigger
        self.message = message
