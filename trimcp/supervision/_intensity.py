"""Pure restart-intensity bookkeeping, exactly as OTP's ``supervisor:add_restart/1``.

A supervisor may restart at most ``intensity`` times within any ``period`` seconds. The
caller passes the time (``trio.current_time()``), so the rule is testable without a clock.
"""

from __future__ import annotations


def add_restart(
    history: tuple[float, ...], now: float, intensity: int, period: float
) -> tuple[tuple[float, ...], bool]:
    """Record a restart at ``now``; return the new history and whether the limit is exceeded.

    ``history`` holds earlier restart times, newest last. Restarts older than
    ``now - period`` are forgotten (a restart exactly ``period`` ago still counts, as in OTP);
    the limit is exceeded when more than ``intensity`` remain.
    """
    threshold = now - period
    kept = (*(t for t in history if t >= threshold), now)
    return kept, len(kept) > intensity
