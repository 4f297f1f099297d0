"""Where a session's input stands, as one transition table (the habit of ``actors/_phase.py``).

A session gets its input in one of two ways. A stream that is read (stdio, WebSocket) has
exactly one reader task until the input ends: when that task adopts a request, a new one
takes over the reading. A stream that pushes its input (``PushedInput``: Streamable HTTP)
hands each message to ``Session.push_input``, and a reader task runs only while there is
input to act on, so an idle session has no task parked on it. Either way, once the input
has ended the session finishes the requests in flight and stops.

States (``InputState``)::

    PULLED    a reader task reads the stream
    IDLE      pushed input: nothing to act on, no reader task
    READING   pushed input: a reader task acts on what was pushed
    ENDING    pushed input ended; a reader task still acts on what came before
    DRAINING  the input is over: the requests in flight finish, then the session stops

Events (``InputEvent``)::

    PUSHED       ``push_input`` got a message
    READER_DONE  a pushed session's reader task found nothing left to act on
    ENDED        no more input: the stream said so (pushed), or the reader met its end

Each transition also names the one thing the session does about it (``InputStep``). A pair
missing from the table is a bug in the session or its stream (a pulled stream that pushes,
say) and raises ``InvalidTransition``. Pure: no trio, no session.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Final

from trimcp.errors import InvalidTransition

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["INPUT_OVER", "INPUT_TABLE", "InputEvent", "InputState", "InputStep", "next_input"]


class InputState(enum.Enum):
    """Where a session's input stands (see the module docstring)."""

    PULLED = "pulled"
    IDLE = "idle"
    READING = "reading"
    ENDING = "ending"
    DRAINING = "draining"


class InputEvent(enum.Enum):
    """What moves a session's input between states."""

    PUSHED = "pushed"
    READER_DONE = "reader_done"
    ENDED = "ended"


class InputStep(enum.Enum):
    """What the session does on a transition."""

    NOTHING = "nothing"
    #: Start a reader task for the pushed input.
    START_READER = "start_reader"
    #: Finish the requests in flight, then stop (``Session._drain``).
    DRAIN = "drain"
    #: Refuse the pushed message: ``push_input`` raises ``TransportClosed``.
    REFUSE = "refuse"


S, E, Step = InputState, InputEvent, InputStep

INPUT_TABLE: Final[Mapping[tuple[InputState, InputEvent], tuple[InputState, InputStep]]] = {
    # A read stream: the reader's end of input is the end.
    (S.PULLED, E.ENDED): (S.DRAINING, Step.DRAIN),
    # A pushed stream: a reader task only while there is something to act on.
    (S.IDLE, E.PUSHED): (S.READING, Step.START_READER),
    (S.IDLE, E.ENDED): (S.DRAINING, Step.DRAIN),
    (S.READING, E.PUSHED): (S.READING, Step.NOTHING),
    (S.READING, E.READER_DONE): (S.IDLE, Step.NOTHING),
    # The reader first acts on everything pushed before the end, then the session drains.
    (S.READING, E.ENDED): (S.ENDING, Step.NOTHING),
    (S.ENDING, E.READER_DONE): (S.DRAINING, Step.DRAIN),
    # After the end: more input is refused, and the end said again changes nothing.
    (S.ENDING, E.PUSHED): (S.ENDING, Step.REFUSE),
    (S.ENDING, E.ENDED): (S.ENDING, Step.NOTHING),
    (S.DRAINING, E.PUSHED): (S.DRAINING, Step.REFUSE),
    (S.DRAINING, E.ENDED): (S.DRAINING, Step.NOTHING),
}

#: States in which no more input is taken.
INPUT_OVER: Final = frozenset({S.ENDING, S.DRAINING})


def next_input(state: InputState, event: InputEvent) -> tuple[InputState, InputStep]:
    """Return the state ``event`` leads to from ``state``, and what to do about it.

    Raises:
        InvalidTransition: the table has no entry for the pair.
    """
    try:
        return INPUT_TABLE[state, event]
    except KeyError:
        raise InvalidTransition(state.value, event.value) from None
