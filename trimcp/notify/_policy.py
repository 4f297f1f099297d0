"""The slow-consumer policy, and the pure decision behind it: when does a subscriber give up?

A subscriber stream (SSE, WebSocket, stdio) that reads slower than notifications arrive must
cost neither the other subscribers' latency nor unbounded memory. The policy, stated once:

1. Each subscription queues at most ``queue_size`` messages (its mailbox bound).
2. An offer to a full queue drops the message at once and counts it; the publisher never waits.
3. Drops are counted in windows: a window opens at a drop when no window is open (or the open
   one has expired, ``drop_window`` seconds after it opened). When ``max_dropped`` drops fall
   in one window the subscription gives up: it closes with cause ``"slow_consumer"``, its
   owner's ``on_close`` callback is told so (to close the stream), and one warning is logged.

Fixed (tumbling) windows rather than a sliding one: two integers per subscription instead of a
list of timestamps. The price is that a burst straddling two windows may drop up to
``2 * max_dropped - 2`` messages without a disconnect; the queue stays bounded either way.
``drop_window=math.inf`` counts drops over the subscription's whole life.

Not here: the actors that apply it (``_subscription.py``) or anything about time sources:
callers pass ``trio.current_time()`` in, so the rule is tested without a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

if TYPE_CHECKING:
    from trimcp.actors import ExitReason

__all__ = [
    "DEFAULT_POLICY",
    "CloseCause",
    "DropWindow",
    "SlowConsumerPolicy",
    "close_cause",
    "record_drop",
]

#: Why a subscription closed, as its ``on_close`` callback and ``wait_closed`` report it.
#:
#: ``"closed"``: its owner closed it. ``"sink_failed"``: the sink raised (the stream went
#: away). ``"slow_consumer"``: it dropped ``max_dropped`` messages within ``drop_window``.
#: ``"topic_ended"``: a topic it was subscribed to stopped under it (crashed, or the hub is
#: shutting down), so it would miss messages. ``"shutdown"``: stopped from outside (its
#: supervisor). ``"crashed"``: a bug in the subscription itself (logged by its supervisor).
CloseCause = Literal["closed", "sink_failed", "slow_consumer", "topic_ended", "shutdown", "crashed"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SlowConsumerPolicy:
    """How much a subscription buffers and when it gives up on a slow consumer.

    Attributes:
        queue_size: messages queued for the sink at most (default 256). MCP notifications are
            small (a list_changed is ~70 bytes on the wire), so a full queue of them costs tens
            of KB only while the consumer is behind; an idle subscription allocates none of it.
        max_dropped: drops within one window after which the subscription closes with
            ``"slow_consumer"`` (default 256, one queue's worth: a client that missed that many
            notifications is better served by reconnecting and listing again than by a stream
            with holes in it).
        drop_window: seconds a drop window lasts from its first drop (default 60.0);
            ``math.inf`` counts drops over the whole life of the subscription.

    Raises:
        ValueError: a size or count below 1, or a window that is not a positive number.
    """

    queue_size: int = 256
    max_dropped: int = 256
    drop_window: float = 60.0

    def __post_init__(self) -> None:
        for field_name in ("queue_size", "max_dropped"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{field_name} must be an integer >= 1, got {value!r}")
        if not self.drop_window > 0:  # also refuses NaN
            raise ValueError(
                f"drop_window must be seconds > 0 (or math.inf), got {self.drop_window!r}"
            )


DEFAULT_POLICY = SlowConsumerPolicy()


@final
@dataclass(frozen=True, slots=True)
class DropWindow:
    """The drops counted in the current window: when it opened and how many so far.

    ``count == 0`` means no window is open. The shared ``DropWindow()`` value stands for every
    subscription that never dropped anything, so healthy ones allocate none.
    """

    opened_at: float = 0.0
    count: int = 0


def record_drop(
    window: DropWindow, now: float, policy: SlowConsumerPolicy
) -> tuple[DropWindow, bool]:
    """Count one drop at ``now``; return the new window and whether the consumer must go.

    A drop exactly ``drop_window`` seconds after the window opened starts a new window (the
    window is half-open, ``[opened_at, opened_at + drop_window)``).
    """
    if window.count == 0 or now >= window.opened_at + policy.drop_window:
        window = DropWindow(now, 1)
    else:
        window = DropWindow(window.opened_at, window.count + 1)
    return window, window.count >= policy.max_dropped


def close_cause(recorded: CloseCause | None, reason: ExitReason | None) -> CloseCause:
    """Return why a subscription closed, from the cause it recorded and its exit reason.

    A recorded cause wins (the subscription or its offerer knew why it stopped); otherwise a
    crash is ``"crashed"`` and any other exit was a stop from outside, ``"shutdown"``.
    """
    if recorded is not None:
        return recorded
    if reason is not None and reason.error is not None:
        return "crashed"
    return "shutdown"
