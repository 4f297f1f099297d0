"""The MCP session lifecycle as transition tables, one per side (h11 ``_state.py`` habit).

MCP 2025-11-25, Basic > Lifecycle: initialization (``initialize`` request and response, then
``notifications/initialized``), operation, shutdown. The phases::

    AWAITING_INITIALIZE --recv/send initialize--> NEGOTIATING
    NEGOTIATING --initialize result--> INITIALIZING      (the server answered; the client has
    NEGOTIATING --initialize error---> AWAITING_INITIALIZE        to send ``initialized``)
    INITIALIZING --initialized------> OPERATING
    any phase --CLOSE--> CLOSED;  any phase before OPERATING --INIT_TIMEOUT--> CLOSED

``OPERATING --INIT_TIMEOUT--> OPERATING`` makes a timer that fires just after the handshake
finished harmless. A (phase, event) pair missing from a table raises ``LocalProtocolError``;
the connection turns that into an error response when the peer caused it.

The second half of this module says, per phase, which *methods* each side may send and
receive: the rules of Lifecycle > Initialization that the tables' phases imply.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import LocalProtocolError

if TYPE_CHECKING:
    from collections.abc import Mapping


class Phase(enum.Enum):
    """Where one session is in its lifecycle."""

    AWAITING_INITIALIZE = "awaiting_initialize"
    NEGOTIATING = "negotiating"
    INITIALIZING = "initializing"
    OPERATING = "operating"
    CLOSED = "closed"


class LifecycleEvent(enum.Enum):
    """What moves a session between phases. ``INIT_TIMEOUT`` is measured by the caller."""

    RECV_INITIALIZE = "recv_initialize"
    SEND_INITIALIZE = "send_initialize"
    INITIALIZE_RESULT = "initialize_result"
    INITIALIZE_ERROR = "initialize_error"
    RECV_INITIALIZED = "recv_initialized"
    SEND_INITIALIZED = "send_initialized"
    INIT_TIMEOUT = "init_timeout"
    CLOSE = "close"


P, E = Phase, LifecycleEvent

_COMMON: Final[dict[tuple[Phase, LifecycleEvent], Phase]] = {
    (P.NEGOTIATING, E.INITIALIZE_RESULT): P.INITIALIZING,
    (P.NEGOTIATING, E.INITIALIZE_ERROR): P.AWAITING_INITIALIZE,
    **{(phase, E.CLOSE): P.CLOSED for phase in Phase},
    **{
        (phase, E.INIT_TIMEOUT): P.CLOSED
        for phase in (P.AWAITING_INITIALIZE, P.NEGOTIATING, P.INITIALIZING)
    },
    (P.OPERATING, E.INIT_TIMEOUT): P.OPERATING,
}

#: The server receives ``initialize`` and ``initialized``.
SERVER_TRANSITIONS: Final[Mapping[tuple[Phase, LifecycleEvent], Phase]] = {
    **_COMMON,
    (P.AWAITING_INITIALIZE, E.RECV_INITIALIZE): P.NEGOTIATING,
    (P.INITIALIZING, E.RECV_INITIALIZED): P.OPERATING,
}

#: The client sends them.
CLIENT_TRANSITIONS: Final[Mapping[tuple[Phase, LifecycleEvent], Phase]] = {
    **_COMMON,
    (P.AWAITING_INITIALIZE, E.SEND_INITIALIZE): P.NEGOTIATING,
    (P.INITIALIZING, E.SEND_INITIALIZED): P.OPERATING,
}


def next_phase(
    table: Mapping[tuple[Phase, LifecycleEvent], Phase], phase: Phase, event: LifecycleEvent
) -> Phase:
    """Return the phase ``event`` leads to from ``phase``.

    Raises:
        LocalProtocolError: the table has no entry for the pair.
    """
    try:
        return table[phase, event]
    except KeyError:
        raise LocalProtocolError(f"{event.value} is not allowed in phase {phase.value}") from None


@final
@dataclass(frozen=True, slots=True)
class Methods:
    """A set of method names; ``everything`` adds every name except those in ``names``."""

    names: frozenset[str] = frozenset()
    everything: bool = False

    def __contains__(self, method: object) -> bool:
        return (method in self.names) != self.everything


_NONE: Final = Methods()
_ALL_BUT_INITIALIZE: Final = Methods(frozenset({"initialize"}), everything=True)
_PING: Final = Methods(frozenset({"ping"}))


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseRules:
    """What one side may do in one phase, by method name."""

    receive_requests: Methods
    send_requests: Methods
    send_notifications: Methods


#: The server's rules. Before ``initialize`` only ``initialize`` and ``ping`` are answered
#: (anything else gets -32600; MCP 2025-11-25, Lifecycle > Initialization,
#: https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization).
#: Until ``initialized`` arrives the server SHOULD NOT send requests other than ``ping``, and
#: its only notifications are logging and progress for requests it is already handling.
#: Requests the client sends after it got the ``initialize`` result are served in
#: INITIALIZING: the client may legitimately send them before its ``initialized``
#: notification arrives (HTTP reorders).
SERVER_RULES: Final[Mapping[Phase, PhaseRules]] = {
    P.AWAITING_INITIALIZE: PhaseRules(
        receive_requests=Methods(frozenset({"initialize", "ping"})),
        send_requests=_PING,
        send_notifications=_NONE,
    ),
    P.NEGOTIATING: PhaseRules(
        receive_requests=_PING, send_requests=_PING, send_notifications=_NONE
    ),
    P.INITIALIZING: PhaseRules(
        receive_requests=_ALL_BUT_INITIALIZE,
        send_requests=_PING,
        send_notifications=Methods(frozenset({"notifications/message", "notifications/progress"})),
    ),
    P.OPERATING: PhaseRules(
        receive_requests=_ALL_BUT_INITIALIZE,
        send_requests=_ALL_BUT_INITIALIZE,
        send_notifications=Methods(frozenset({"notifications/initialized"}), everything=True),
    ),
    P.CLOSED: PhaseRules(receive_requests=_NONE, send_requests=_NONE, send_notifications=_NONE),
}

#: The client's rules. It SHOULD NOT send requests other than ``ping`` before the
#: ``initialize`` result arrives (Lifecycle > Initialization); ``initialize`` and
#: ``initialized`` are sent through their own methods, never as plain messages.
CLIENT_RULES: Final[Mapping[Phase, PhaseRules]] = {
    P.AWAITING_INITIALIZE: PhaseRules(
        receive_requests=_PING, send_requests=_PING, send_notifications=_NONE
    ),
    P.NEGOTIATING: PhaseRules(
        receive_requests=_PING, send_requests=_PING, send_notifications=_NONE
    ),
    P.INITIALIZING: PhaseRules(
        receive_requests=_ALL_BUT_INITIALIZE,
        send_requests=_ALL_BUT_INITIALIZE,
        send_notifications=Methods(frozenset({"notifications/cancelled"})),
    ),
    P.OPERATING: PhaseRules(
        receive_requests=_ALL_BUT_INITIALIZE,
        send_requests=_ALL_BUT_INITIALIZE,
        send_notifications=Methods(frozenset({"notifications/initialized"}), everything=True),
    ),
    P.CLOSED: PhaseRules(receive_requests=_NONE, send_requests=_NONE, send_notifications=_NONE),
}
