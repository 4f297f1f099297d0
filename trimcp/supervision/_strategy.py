"""Pure decisions: which children a failure affects, and whether an exit means a restart.

Kept free of trio and of the supervisor's state so they can be tested exhaustively.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._child_spec import Restart

Strategy = Literal["one_for_one", "one_for_all", "rest_for_one", "simple_one_for_one"]
AutoShutdown = Literal["never", "any_significant", "all_significant"]

STRATEGIES: tuple[Strategy, ...] = (
    "one_for_one",
    "one_for_all",
    "rest_for_one",
    "simple_one_for_one",
)
AUTO_SHUTDOWNS: tuple[AutoShutdown, ...] = ("never", "any_significant", "all_significant")


class SupervisorFlags(TypedDict, total=False):
    """A supervisor's flags (OTP's ``sup_flags``), passed as keyword arguments.

    strategy: ``"one_for_one"`` (default), ``"one_for_all"``, ``"rest_for_one"`` or
        ``"simple_one_for_one"``.
    intensity: restarts allowed within ``period`` (default 1).
    period: seconds over which restarts are counted (default 5.0).
    auto_shutdown: ``"never"`` (default), ``"any_significant"`` or ``"all_significant"``.
    """

    strategy: Strategy
    intensity: int
    period: float
    auto_shutdown: AutoShutdown


def should_restart(restart: Restart, abnormal: bool) -> bool:
    """Return whether a child with this restart type is restarted after such an exit."""
    if restart == "permanent":
        return True
    if restart == "transient":
        return abnormal
    return False


def affected_children(strategy: Strategy, start_order: Sequence[str], failed: str) -> list[str]:
    """Return the children (in start order) that restart when ``failed`` must restart.

    ``one_for_one`` and ``simple_one_for_one``: only the failed child. ``one_for_all``: every
    child. ``rest_for_one``: the failed child and every child started after it.
    """
    if strategy == "one_for_all":
        return list(start_order)
    if strategy == "rest_for_one":
        return list(start_order[start_order.index(failed) :])
    return [failed]
