"""When to try a crashed upstream server again: exponential backoff, jitter, and a limit.

A server that dies is started again after ``initial`` seconds, then twice that, up to
``maximum``, each delay shortened by a random fraction up to ``jitter`` so that many hosts
restarting one shared server do not all knock at once. ``intensity`` restarts within
``period`` seconds is the limit (OTP's restart intensity): one more, and the connection gives
up and reports the server as failed, until someone reconnects it by hand or by ``reload``.
A connection that stayed up for ``period`` seconds starts from ``initial`` again.

Pure: the caller passes the time (trio's clock) and the random source, so tests are exact.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import final

__all__ = ["Backoff", "BackoffPolicy"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BackoffPolicy:
    """The numbers of the module docstring; the defaults suit servers on this machine."""

    initial: float = 0.5
    maximum: float = 30.0
    factor: float = 2.0
    jitter: float = 0.25
    intensity: int = 5
    period: float = 60.0

    def __post_init__(self) -> None:
        if not (0 < self.initial <= self.maximum):
            raise ValueError("backoff needs 0 < initial <= maximum")
        if self.factor < 1 or not (0 <= self.jitter < 1):
            raise ValueError("backoff needs factor >= 1 and 0 <= jitter < 1")
        if self.intensity < 0 or self.period <= 0:
            raise ValueError("backoff needs intensity >= 0 and period > 0")


@final
@dataclass(slots=True)
class Backoff:
    """One connection's restart history under a ``BackoffPolicy``."""

    policy: BackoffPolicy = field(default_factory=BackoffPolicy)
    rng: random.Random = field(default_factory=random.Random)
    _restarts: deque[float] = field(default_factory=deque)
    _attempt: int = 0

    @property
    def restarts(self) -> int:
        """Restarts within the current period."""
        return len(self._restarts)

    def next_delay(self, now: float) -> float | None:
        """Record a crash at ``now``; return the seconds to wait, or ``None`` to give up."""
        policy = self.policy
        while self._restarts and now - self._restarts[0] > policy.period:
            self._restarts.popleft()
        if len(self._restarts) >= policy.intensity:
            return None
        self._restarts.append(now)
        delay = min(policy.maximum, policy.initial * policy.factor**self._attempt)
        self._attempt += 1
        return delay * (1 - policy.jitter * self.rng.random())

    def stayed_up(self, since: float, now: float) -> None:
        """Forget the escalation if the connection has been up for a whole period."""
        if now - since >= self.policy.period:
            self._attempt = 0
            self._restarts.clear()

    def reset(self) -> None:
        """Start afresh (a reconnect by hand)."""
        self._attempt = 0
        self._restarts.clear()
