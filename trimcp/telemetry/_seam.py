"""The seam the hot paths call: one module-level slot holding the installed observer.

A server session, a 2026-07-28 request and a ``ClientSession`` each read ``SLOT.observer``
once per request and skip everything when it is None, so telemetry that is off costs one
attribute read and one ``is None`` test: nothing is allocated and nothing is called.

What is installed is an ``Observer``: it is told a request started (and returns a
``RequestProbe`` that sees it through) and a session opened (and returns a
``SessionProbe``). Several observers may be on at once (Prometheus counters, OpenTelemetry,
the request log): ``install`` composes them, so the hot path still sees a single one.

This module knows only ``trimcp.protocol``'s types and ``trimcp.errors``: the sessions and the
client call it, never the other way round (tests/test_layering.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Protocol, Self, cast, final

from trimcp.errors import JsonRpcError

if TYPE_CHECKING:
    from contextvars import Context
    from types import TracebackType

    from trimcp.protocol import JsonObject, RequestId

__all__ = [
    "IGNORED",
    "SLOT",
    "ClientProbe",
    "Installable",
    "Observer",
    "ObserverSlot",
    "Outcome",
    "Peer",
    "RequestProbe",
    "ServerRequestsOnly",
    "SessionProbe",
    "Transport",
    "finish_raised",
    "install",
    "installed",
    "result_outcome",
    "uninstall",
]

#: How a request ended: answered with a result, with a JSON-RPC error, with a ``tools/call``
#: result whose ``isError`` is true, or not at all (cancelled by the client or a stop).
Outcome = Literal["ok", "error", "tool_error", "cancelled"]

#: The transports a peer is met over, as ``Peer.transport`` names them.
Transport = Literal["stdio", "http", "websocket"]


@final
@dataclass(frozen=True, slots=True)
class Peer:
    """Where requests come from or go to: made once per session, shared by its requests.

    Attributes:
        transport: ``"stdio"``, ``"http"`` or ``"websocket"``; None when unknown (an
            in-memory stream).
        session_id: the MCP session's id (a 2026-07-28 request has none).
    """

    transport: Transport | None = None
    session_id: str | None = None


class RequestProbe(Protocol):
    """Sees one request received through, from the moment it was read to its answer.

    ``finish`` runs once, after the answer was encoded, in the caller's context. It may not
    raise or wait.
    """

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        """Record how the request ended; ``error_code`` is the JSON-RPC code of an error."""
        ...


class ClientProbe(Protocol):
    """Sees one request this process sends through (the client side)."""

    def inject(self, params: JsonObject | None) -> JsonObject | None:
        """Return the params to send: a copy with trace context in ``_meta``, or as given.

        Never mutates ``params``: the caller may reuse its dict.
        """
        ...

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        """Record how the request ended (``cancelled``: no answer came)."""
        ...


class SessionProbe(Protocol):
    """Sees one session through, from its start to its end."""

    def end(self, protocol_version: str | None, error: str | None = None) -> None:
        """Record the session's end; ``error`` names what ended it badly (None: normally)."""
        ...


class Observer(Protocol):
    """What the hot paths tell about requests and sessions.

    Implementers must return at once and never raise: these run inline in request handling.
    """

    def server_request(  # noqa: PLR0913, PLR0917  # one request's facts, positional: hot path
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
        context: Context | None,
    ) -> RequestProbe:
        """A request was received and its handler is about to run in ``context``.

        ``context`` is the handler's own (a copy the request owns; None when no handler
        runs, e.g. ``initialize``): what the observer sets in it with ``context.run`` (the
        current span, the log fields) is seen by the handler and by the requests it sends,
        and by nothing after the request.
        """
        ...

    def client_request(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> ClientProbe:
        """A request is about to be sent to a server."""
        ...

    def server_session(self, peer: Peer) -> SessionProbe:
        """A server session started."""
        ...

    def client_session(self, peer: Peer) -> SessionProbe:
        """A client session started."""
        ...


@final
class ObserverSlot:
    """The one place the hot paths look: ``observer`` is None while nothing is installed."""

    __slots__ = ("_installed", "observer")

    def __init__(self) -> None:
        self.observer: Observer | None = None
        self._installed: tuple[Observer, ...] = ()

    def _set(self, installed: tuple[Observer, ...]) -> None:
        self._installed = installed
        if not installed:
            self.observer = None
        elif len(installed) == 1:
            self.observer = installed[0]
        else:
            self.observer = _Composite(installed)


#: The process's slot. Read ``SLOT.observer`` on a hot path; change it only with ``install``.
SLOT: Final = ObserverSlot()


def install(observer: Observer) -> None:
    """Start telling ``observer`` about requests and sessions, besides those installed.

    Installing one observer twice installs it once.
    """
    if observer not in SLOT._installed:
        SLOT._set((*SLOT._installed, observer))


def uninstall(observer: Observer) -> None:
    """Stop telling ``observer``; with nothing left installed the slot is None again.

    Requests already started still finish with the probes they got.
    """
    SLOT._set(tuple(o for o in SLOT._installed if o is not observer))


def installed() -> tuple[Observer, ...]:
    """Return the observers installed, in the order they were."""
    return SLOT._installed


class Installable:
    """``install``/``uninstall`` and the ``with`` block, for an observer of the slot."""

    __slots__ = ()

    def install(self) -> None:
        """Start observing (``trimcp.telemetry.install``)."""
        install(cast("Observer", self))

    def uninstall(self) -> None:
        """Stop observing; requests already started still finish with their probes."""
        uninstall(cast("Observer", self))

    def __enter__(self) -> Self:
        """Install for the ``with`` block."""
        self.install()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Uninstall."""
        self.uninstall()


class ServerRequestsOnly:
    """The hooks an observer of the requests served leaves alone: requests sent, sessions."""

    __slots__ = ()

    def client_request(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> ClientProbe:
        """Requests sent are not watched."""
        return IGNORED

    def server_session(self, peer: Peer) -> SessionProbe:
        """Sessions are not watched."""
        return IGNORED

    def client_session(self, peer: Peer) -> SessionProbe:
        """Sessions are not watched."""
        return IGNORED


@final
class _Composite:
    """Several observers seen as one: each probe is a tuple of theirs."""

    __slots__ = ("_observers",)

    def __init__(self, observers: tuple[Observer, ...]) -> None:
        self._observers = observers

    def server_request(  # noqa: PLR0913, PLR0917  # one request's facts, positional: hot path
        self,
        method: str,
        request_id: RequestId,
        params: JsonObject | None,
        peer: Peer,
        protocol_version: str | None,
        context: Context | None,
    ) -> RequestProbe:
        return _Probes(
            tuple(
                o.server_request(method, request_id, params, peer, protocol_version, context)
                for o in self._observers
            )
        )

    def client_request(
        self, method: str, params: JsonObject | None, peer: Peer, protocol_version: str | None
    ) -> ClientProbe:
        return _ClientProbes(
            tuple(o.client_request(method, params, peer, protocol_version) for o in self._observers)
        )

    def server_session(self, peer: Peer) -> SessionProbe:
        return _SessionProbes(tuple(o.server_session(peer) for o in self._observers))

    def client_session(self, peer: Peer) -> SessionProbe:
        return _SessionProbes(tuple(o.client_session(peer) for o in self._observers))


@final
class _Probes:
    __slots__ = ("_probes",)

    def __init__(self, probes: tuple[RequestProbe, ...]) -> None:
        self._probes = probes

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        for probe in self._probes:
            probe.finish(outcome, error_code)


@final
class _ClientProbes:
    __slots__ = ("_probes",)

    def __init__(self, probes: tuple[ClientProbe, ...]) -> None:
        self._probes = probes

    def inject(self, params: JsonObject | None) -> JsonObject | None:
        for probe in self._probes:
            params = probe.inject(params)
        return params

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        for probe in self._probes:
            probe.finish(outcome, error_code)


@final
class _SessionProbes:
    __slots__ = ("_probes",)

    def __init__(self, probes: tuple[SessionProbe, ...]) -> None:
        self._probes = probes

    def end(self, protocol_version: str | None, error: str | None = None) -> None:
        for probe in self._probes:
            probe.end(protocol_version, error)


def result_outcome(method: str, result: JsonObject) -> Outcome:
    """Return ``tool_error`` for a ``tools/call`` result whose ``isError`` is true, else ``ok``.

    A tool that ran and failed answers with a result, not an error (MCP 2025-11-25, Server >
    Tools > Error Handling); the OpenTelemetry MCP conventions call that ``tool_error``.
    """
    if method == "tools/call" and result.get("isError") is True:
        return "tool_error"
    return "ok"


def finish_raised(probe: RequestProbe | ClientProbe, raised: BaseException) -> None:
    """Finish ``probe`` for a request that ended by raising ``raised``: a JSON-RPC error with
    its code, any other exception as an error without one, and anything else (trio's
    ``Cancelled``, ``KeyboardInterrupt``) as ``cancelled``."""
    if isinstance(raised, JsonRpcError):
        probe.finish("error", raised.code)
    elif isinstance(raised, Exception):
        probe.finish("error")
    else:
        probe.finish("cancelled")


@final
class _Ignored:
    """A probe of every kind that records nothing, for observers that skip a kind."""

    __slots__ = ()

    def inject(self, params: JsonObject | None) -> JsonObject | None:
        return params

    def finish(self, outcome: Outcome, error_code: int | None = None) -> None:
        pass

    def end(self, protocol_version: str | None, error: str | None = None) -> None:
        pass


#: The probe an observer returns for what it does not watch (shared; it holds nothing).
IGNORED: Final = _Ignored()
