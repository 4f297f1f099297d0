"""Actor lifecycle phases as a transition table (h11's ``_state.py`` habit, not flags).

Every actor moves initialization -> operation -> shutdown. The table says which events move
it between phases and which message types each phase accepts. A subclass that needs more phases
(an MCP session waits for its handshake, for instance) builds a bigger table with
``PhaseTable.extend``; the runtime's checks stay the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.errors import InvalidTransition

if TYPE_CHECKING:
    from collections.abc import Mapping


@final
@dataclass(frozen=True, slots=True)
class Phase:
    """A named lifecycle phase. Compare phases by identity of meaning: their name."""

    name: str

    def __str__(self) -> str:
        return self.name


INITIALIZATION = Phase("initialization")
OPERATION = Phase("operation")
SHUTDOWN_PHASE = Phase("shutdown")

#: The event the runtime fires when ``init`` returned, and when the actor begins to stop.
STARTED = "started"
STOP = "stop"


@final
class PhaseTable:
    """Which events move an actor between phases, and which messages each phase accepts.

    ``transitions`` maps ``(phase, event)`` to the next phase; a missing pair is an
    ``InvalidTransition``. ``accepts`` maps a phase to the message types (checked with
    ``isinstance``) that calls and casts may carry in it; a phase absent from ``accepts`` takes
    none. Runtime notices (monitors' ``Down``, timers) are always delivered. Answers are cached
    per ``(phase, type)``, so the check costs one dict lookup on the hot path.

    When an actor exits the runtime fires ``STOP`` from whatever phase it is in; a phase with
    no ``(phase, STOP)`` entry moves to ``SHUTDOWN_PHASE``, so stopping never fails.
    """

    __slots__ = ("_accept_cache", "accepts", "initial", "transitions")

    def __init__(
        self,
        *,
        initial: Phase,
        transitions: Mapping[tuple[Phase, str], Phase],
        accepts: Mapping[Phase, tuple[type, ...]],
    ) -> None:
        self.initial = initial
        self.transitions = dict(transitions)
        self.accepts = dict(accepts)
        self._accept_cache: dict[tuple[str, type], bool] = {}

    @property
    def phases(self) -> frozenset[Phase]:
        """Every phase that appears in the table."""
        found = {self.initial, *self.accepts}
        for (start, _event), end in self.transitions.items():
            found.update((start, end))
        return frozenset(found)

    def next_phase(self, phase: Phase, event: str) -> Phase:
        """Return the phase ``event`` leads to from ``phase``.

        Raises:
            InvalidTransition: the table has no entry for the pair.
        """
        try:
            return self.transitions[(phase, event)]
        except KeyError:
            raise InvalidTransition(phase.name, event) from None

    def accepts_message(self, phase: Phase, message: object) -> bool:
        """Return whether a call or cast carrying ``message`` is allowed in ``phase``."""
        # Keyed by the name: a str hashes in C, a dataclass's __hash__ runs Python code.
        key = (phase.name, type(message))
        answer = self._accept_cache.get(key)
        if answer is None:
            answer = isinstance(message, self.accepts.get(phase, ()))
            self._accept_cache[key] = answer
        return answer

    def extend(
        self,
        *,
        initial: Phase | None = None,
        transitions: Mapping[tuple[Phase, str], Phase] | None = None,
        accepts: Mapping[Phase, tuple[type, ...]] | None = None,
    ) -> PhaseTable:
        """Return a new table with these entries added (or replacing same-keyed ones)."""
        return PhaseTable(
            initial=initial or self.initial,
            transitions={**self.transitions, **(transitions or {})},
            accepts={**self.accepts, **(accepts or {})},
        )


#: The table every actor starts from.
ACTOR_PHASES = PhaseTable(
    initial=INITIALIZATION,
    transitions={
        (INITIALIZATION, STARTED): OPERATION,
        (INITIALIZATION, STOP): SHUTDOWN_PHASE,
        (OPERATION, STOP): SHUTDOWN_PHASE,
    },
    # Messages sent while ``init`` runs (the name is registered before it) queue and are
    # served once it returns, as in OTP.
    accepts={INITIALIZATION: (object,), OPERATION: (object,)},
)
