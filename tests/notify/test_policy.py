"""The slow-consumer policy: its defaults, its validation, and the pure drop-window rule."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.actors import KILLED, NORMAL, SHUTDOWN, crashed
from trimcp.notify import (
    DEFAULT_POLICY,
    DropWindow,
    SlowConsumerPolicy,
    close_cause,
    record_drop,
)


def test_defaults_are_the_documented_ones() -> None:
    documented = SlowConsumerPolicy(queue_size=256, max_dropped=256, drop_window=60.0)
    assert documented == DEFAULT_POLICY


@pytest.mark.parametrize(
    "settings",
    [
        {"queue_size": 0},
        {"queue_size": True},
        {"queue_size": 2.5},
        {"max_dropped": 0},
        {"max_dropped": -3},
        {"drop_window": 0},
        {"drop_window": -1.0},
        {"drop_window": math.nan},
    ],
)
def test_bad_settings_are_refused_naming_the_field(settings: dict[str, object]) -> None:
    (field,) = settings
    with pytest.raises(ValueError, match=field):
        SlowConsumerPolicy(**settings)  # type: ignore[arg-type]  # deliberately wrong types


def test_an_infinite_window_counts_drops_over_the_whole_life() -> None:
    policy = SlowConsumerPolicy(max_dropped=3, drop_window=math.inf)
    window = DropWindow()
    verdicts = []
    for now in (0.0, 1e6, 1e9):
        window, exceeded = record_drop(window, now, policy)
        verdicts.append(exceeded)
    assert verdicts == [False, False, True]
    assert window == DropWindow(0.0, 3)


def test_a_window_opens_at_its_first_drop_and_is_half_open() -> None:
    policy = SlowConsumerPolicy(max_dropped=3, drop_window=10.0)
    window, exceeded = record_drop(DropWindow(), 7.0, policy)
    assert (window, exceeded) == (DropWindow(7.0, 1), False)
    window, exceeded = record_drop(window, 16.9, policy)
    assert (window, exceeded) == (DropWindow(7.0, 2), False)
    # Exactly drop_window after the opening drop: a new window, the old count forgotten.
    window, exceeded = record_drop(window, 17.0, policy)
    assert (window, exceeded) == (DropWindow(17.0, 1), False)


def test_max_dropped_one_gives_up_at_the_first_drop() -> None:
    policy = SlowConsumerPolicy(max_dropped=1)
    assert record_drop(DropWindow(), 0.0, policy) == (DropWindow(0.0, 1), True)


@given(
    gaps=st.lists(st.floats(min_value=0, max_value=20, allow_nan=False), max_size=40),
    max_dropped=st.integers(1, 6),
    drop_window=st.floats(min_value=0.5, max_value=30, allow_nan=False),
)
def test_record_drop_matches_a_model_of_tumbling_windows(
    gaps: list[float], max_dropped: int, drop_window: float
) -> None:
    policy = SlowConsumerPolicy(max_dropped=max_dropped, drop_window=drop_window)
    window = DropWindow()
    opened: float | None = None
    count = 0
    now = 0.0
    for gap in gaps:
        now += gap
        if opened is None or now >= opened + drop_window:
            opened, count = now, 0
        count += 1
        window, exceeded = record_drop(window, now, policy)
        assert window.count == count
        assert exceeded == (count >= max_dropped)


@pytest.mark.parametrize(
    ("recorded", "reason", "expected"),
    [
        ("slow_consumer", SHUTDOWN, "slow_consumer"),
        ("sink_failed", NORMAL, "sink_failed"),
        ("closed", crashed(ValueError("x")), "closed"),
        (None, crashed(ValueError("x")), "crashed"),
        (None, SHUTDOWN, "shutdown"),
        (None, KILLED, "shutdown"),
        (None, None, "shutdown"),
    ],
)
def test_close_cause_prefers_the_recorded_cause(
    recorded: object, reason: object, expected: str
) -> None:
    assert close_cause(recorded, reason) == expected  # type: ignore[arg-type]  # table of cases
