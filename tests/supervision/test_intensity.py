"""``add_restart`` against a brute-force reading of OTP's rule.

The rule: a restart at ``now`` exceeds the intensity iff more than ``intensity`` restarts
(this one included) happened in ``[now - period, now]``. Times and periods are whole quarter
seconds, so the float arithmetic under test is exact and the boundary case (a restart exactly
``period`` ago) is hit often.
"""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from trimcp.supervision import add_restart

QUARTER = 0.25

gaps = st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=30)
intensities = st.integers(min_value=0, max_value=6)
periods = st.integers(min_value=1, max_value=40)


def exceeded_by_brute_force(times: list[int], intensity: int, period: int) -> bool:
    now = times[-1]
    return sum(1 for t in times if now - period <= t <= now) > intensity


@given(gaps=gaps, intensity=intensities, period=periods)
def test_add_restart_matches_brute_force(gaps: list[int], intensity: int, period: int) -> None:
    times = list(itertools.accumulate(gaps))
    history: tuple[float, ...] = ()
    for k, now in enumerate(times):
        history, exceeded = add_restart(history, now * QUARTER, intensity, period * QUARTER)
        assert exceeded == exceeded_by_brute_force(times[: k + 1], intensity, period)
        # What is kept is exactly the restarts inside the window, newest last.
        inside = [t * QUARTER for t in times[: k + 1] if now - period <= t]
        assert list(history) == inside


@given(intensity=intensities, period=periods)
def test_a_restart_exactly_period_ago_still_counts(intensity: int, period: int) -> None:
    history = tuple(0.0 for _ in range(intensity))
    _, exceeded = add_restart(history, period * QUARTER, intensity, period * QUARTER)
    assert exceeded
    _, exceeded = add_restart(history, period * QUARTER + QUARTER, intensity, period * QUARTER)
    assert not exceeded or intensity == 0


def test_default_flags_allow_one_restart_in_five_seconds() -> None:
    history, exceeded = add_restart((), 1.0, 1, 5.0)
    assert (history, exceeded) == ((1.0,), False)
    assert add_restart(history, 6.0, 1, 5.0) == ((1.0, 6.0), True)
    assert add_restart(history, 6.5, 1, 5.0) == ((6.5,), False)


def test_intensity_zero_gives_up_on_the_first_restart() -> None:
    assert add_restart((), 0.0, 0, 5.0) == ((0.0,), True)
