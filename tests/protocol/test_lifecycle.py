"""The lifecycle transition tables (h2 ``test_state_machines`` style)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.errors import LocalProtocolError
from trimcp.protocol import LifecycleEvent, Phase
from trimcp.protocol._lifecycle import (
    CLIENT_RULES,
    CLIENT_TRANSITIONS,
    SERVER_RULES,
    SERVER_TRANSITIONS,
    next_phase,
)

E, P = LifecycleEvent, Phase
TABLES = [SERVER_TRANSITIONS, CLIENT_TRANSITIONS]


def _run(table: object, events: list[LifecycleEvent]) -> Phase:
    phase = P.AWAITING_INITIALIZE
    for event in events:
        phase = next_phase(table, phase, event)  # type: ignore[arg-type]
    return phase


def test_server_happy_path() -> None:
    events = [E.RECV_INITIALIZE, E.INITIALIZE_RESULT, E.RECV_INITIALIZED, E.INIT_TIMEOUT, E.CLOSE]
    assert _run(SERVER_TRANSITIONS, events[:3]) is P.OPERATING
    assert _run(SERVER_TRANSITIONS, events[:4]) is P.OPERATING  # a late timer is harmless
    assert _run(SERVER_TRANSITIONS, events) is P.CLOSED


def test_client_happy_path() -> None:
    events = [E.SEND_INITIALIZE, E.INITIALIZE_RESULT, E.SEND_INITIALIZED]
    assert _run(CLIENT_TRANSITIONS, events) is P.OPERATING


def test_rejected_initialize_allows_another_attempt() -> None:
    events = [E.RECV_INITIALIZE, E.INITIALIZE_ERROR, E.RECV_INITIALIZE]
    assert _run(SERVER_TRANSITIONS, events) is P.NEGOTIATING


@pytest.mark.parametrize("phase", [P.AWAITING_INITIALIZE, P.NEGOTIATING, P.INITIALIZING])
def test_init_timeout_closes_before_operating(phase: Phase) -> None:
    assert next_phase(SERVER_TRANSITIONS, phase, E.INIT_TIMEOUT) is P.CLOSED


def test_second_initialize_is_refused() -> None:
    with pytest.raises(
        LocalProtocolError, match="recv_initialize is not allowed in phase operating"
    ):
        next_phase(SERVER_TRANSITIONS, P.OPERATING, E.RECV_INITIALIZE)


def test_closed_is_terminal() -> None:
    for event in E:
        if event is E.CLOSE:
            assert next_phase(SERVER_TRANSITIONS, P.CLOSED, event) is P.CLOSED
        else:
            with pytest.raises(LocalProtocolError):
                next_phase(SERVER_TRANSITIONS, P.CLOSED, event)


def test_sides_do_not_share_their_own_events() -> None:
    assert (P.AWAITING_INITIALIZE, E.SEND_INITIALIZE) not in SERVER_TRANSITIONS
    assert (P.AWAITING_INITIALIZE, E.RECV_INITIALIZE) not in CLIENT_TRANSITIONS


def test_phase_rules() -> None:
    awaiting = SERVER_RULES[P.AWAITING_INITIALIZE]
    assert "initialize" in awaiting.receive_requests
    assert "ping" in awaiting.receive_requests
    assert "tools/list" not in awaiting.receive_requests
    initializing = SERVER_RULES[P.INITIALIZING]
    assert "ping" in initializing.send_requests
    assert "sampling/createMessage" not in initializing.send_requests
    assert "notifications/message" in initializing.send_notifications
    assert "notifications/tools/list_changed" not in initializing.send_notifications
    operating = SERVER_RULES[P.OPERATING]
    assert "initialize" not in operating.receive_requests
    assert "tools/call" in operating.receive_requests
    assert "notifications/initialized" not in operating.send_notifications
    assert set(SERVER_RULES) == set(CLIENT_RULES) == set(Phase)


@given(
    table=st.sampled_from(TABLES),
    phase=st.sampled_from(list(Phase)),
    event=st.sampled_from(list(LifecycleEvent)),
)
def test_every_pair_ends_in_a_phase_or_a_typed_error(
    table: object, phase: Phase, event: LifecycleEvent
) -> None:
    try:
        result = next_phase(table, phase, event)  # type: ignore[arg-type]
    except LocalProtocolError:
        return
    assert result in Phase


@given(table=st.sampled_from(TABLES), events=st.lists(st.sampled_from(list(LifecycleEvent))))
def test_random_event_sequences_never_leave_the_table(
    table: object, events: list[LifecycleEvent]
) -> None:
    phase = P.AWAITING_INITIALIZE
    for event in events:
        try:
            phase = next_phase(table, phase, event)  # type: ignore[arg-type]
        except LocalProtocolError:
            continue
        if phase is P.CLOSED:
            assert event in (E.CLOSE, E.INIT_TIMEOUT)
