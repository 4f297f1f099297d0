"""The session's input-state table (``sessions/_input.py``), checked as a pure table.

Every ``(state, event)`` pair either leads to a state with one step, or raises
``InvalidTransition``; never anything else. Then the paths a session actually takes.
"""

from __future__ import annotations

import itertools

import pytest

from trimcp.errors import InvalidTransition
from trimcp.sessions._input import (
    INPUT_OVER,
    INPUT_TABLE,
    InputEvent,
    InputState,
    InputStep,
    next_input,
)

S, E, Step = InputState, InputEvent, InputStep


@pytest.mark.parametrize(("state", "event"), list(itertools.product(InputState, InputEvent)))
def test_every_pair_has_an_entry_or_is_refused_as_a_bug(
    state: InputState, event: InputEvent
) -> None:
    if (state, event) in INPUT_TABLE:
        after, step = next_input(state, event)
        assert isinstance(after, InputState)
        assert isinstance(step, InputStep)
    else:
        with pytest.raises(InvalidTransition) as raised:
            next_input(state, event)
        assert (raised.value.phase, raised.value.event) == (state.value, event.value)


def _run(state: InputState, events: list[InputEvent]) -> list[tuple[InputState, InputStep]]:
    path = []
    for event in events:
        state, step = next_input(state, event)
        path.append((state, step))
    return path


def test_a_read_stream_drains_when_its_input_ends() -> None:
    assert _run(S.PULLED, [E.ENDED]) == [(S.DRAINING, Step.DRAIN)]


def test_a_pushed_stream_runs_a_reader_only_while_there_is_input() -> None:
    assert _run(S.IDLE, [E.PUSHED, E.PUSHED, E.READER_DONE, E.PUSHED]) == [
        (S.READING, Step.START_READER),
        (S.READING, Step.NOTHING),  # the running reader takes it
        (S.IDLE, Step.NOTHING),
        (S.READING, Step.START_READER),
    ]


def test_input_that_ends_while_read_is_acted_on_before_draining() -> None:
    assert _run(S.IDLE, [E.PUSHED, E.ENDED, E.PUSHED, E.READER_DONE, E.ENDED]) == [
        (S.READING, Step.START_READER),
        (S.ENDING, Step.NOTHING),
        (S.ENDING, Step.REFUSE),
        (S.DRAINING, Step.DRAIN),
        (S.DRAINING, Step.NOTHING),
    ]


def test_input_that_ends_while_idle_drains_at_once() -> None:
    assert _run(S.IDLE, [E.ENDED, E.PUSHED]) == [
        (S.DRAINING, Step.DRAIN),
        (S.DRAINING, Step.REFUSE),
    ]


def test_no_input_is_taken_once_it_is_over() -> None:
    for state in INPUT_OVER:
        assert next_input(state, E.PUSHED) == (state, Step.REFUSE)
    taking = {state for (state, event), (_, step) in INPUT_TABLE.items() if event is E.PUSHED}
    assert {state for state in taking if next_input(state, E.PUSHED)[1] is not Step.REFUSE} == {
        S.IDLE,
        S.READING,
    }


@pytest.mark.parametrize("event", [E.PUSHED, E.READER_DONE])
def test_a_read_stream_neither_pushes_nor_ends_a_reader(event: InputEvent) -> None:
    with pytest.raises(InvalidTransition):
        next_input(S.PULLED, event)
