"""``should_restart`` and ``affected_children``: the pure restart decisions, exhaustively."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.supervision import affected_children, should_restart
from trimcp.supervision._strategy import STRATEGIES

if TYPE_CHECKING:
    from trimcp.supervision._child_spec import Restart

RESTART_TABLE = {
    # OTP supervisor -moduledoc, "restart": permanent always, transient only after an
    # abnormal exit, temporary never.
    ("permanent", False): True,
    ("permanent", True): True,
    ("transient", False): False,
    ("transient", True): True,
    ("temporary", False): False,
    ("temporary", True): False,
}


@pytest.mark.parametrize(("restart", "abnormal"), sorted(RESTART_TABLE))
def test_should_restart_follows_otp_table(restart: str, abnormal: bool) -> None:
    assert should_restart(restart, abnormal) is RESTART_TABLE[(restart, abnormal)]  # type: ignore[arg-type]


def test_strategies_are_the_four_of_otp() -> None:
    assert set(STRATEGIES) == {"one_for_one", "one_for_all", "rest_for_one", "simple_one_for_one"}


@pytest.mark.parametrize("size", range(1, 6))
def test_affected_children_every_position(size: int) -> None:
    order = [f"c{i}" for i in range(size)]
    for index, failed in enumerate(order):
        assert affected_children("one_for_one", order, failed) == [failed]
        assert affected_children("simple_one_for_one", order, failed) == [failed]
        assert affected_children("one_for_all", order, failed) == order
        assert affected_children("rest_for_one", order, failed) == order[index:]


ids = st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=12, unique=True)


@given(order=ids, data=st.data(), strategy=st.sampled_from(STRATEGIES))
def test_affected_children_properties(order: list[str], data: st.DataObject, strategy: str) -> None:
    failed = data.draw(st.sampled_from(order))
    before = list(order)
    affected = affected_children(strategy, order, failed)  # type: ignore[arg-type]
    assert order == before, "the start order must not be mutated"
    assert failed in affected
    # A subsequence of the start order, so restarts happen in start order.
    assert affected == [c for c in order if c in affected]
    # Contiguous and ending at the newest child, unless only the failed child restarts.
    if affected != [failed]:
        assert affected == order[order.index(affected[0]) :]
    affected.append("extra")
    assert order == before, "the answer must be a fresh list"


@given(order=ids, data=st.data())
def test_rest_for_one_is_between_one_for_one_and_one_for_all(
    order: list[str], data: st.DataObject
) -> None:
    failed = data.draw(st.sampled_from(order))
    one = set(affected_children("one_for_one", order, failed))
    rest = set(affected_children("rest_for_one", order, failed))
    everyone = set(affected_children("one_for_all", order, failed))
    assert one <= rest <= everyone
    assert (rest == everyone) == (failed == order[0])
    assert (rest == one) == (failed == order[-1])


def test_every_pair_of_restart_and_exit_is_decided() -> None:
    restarts: tuple[Restart, ...] = ("permanent", "transient", "temporary")
    for restart, abnormal in itertools.product(restarts, (False, True)):
        assert isinstance(should_restart(restart, abnormal), bool)
