"""What an idle subscription costs, measured with ``tracemalloc``, and that it is all returned.

The bound is loose on purpose (allocator details move between Python and trio versions); it is
there to catch a regression that makes subscriptions grow by kilobytes, e.g. a per-subscription
buffer allocated up front. The figure itself is reported in the package's notes.
"""

from __future__ import annotations

import gc
import tracemalloc

from trio.testing import wait_all_tasks_blocked

from ._support import Recorder, running_hub

COUNT = 200
#: Bytes per idle subscription under the hub (about 11 KB measured, mostly the actor runtime:
#: task, nursery and cancel scopes, the mailbox's two deques, the supervisor's child record).
IDLE_SUBSCRIPTION_BOUND = 16_000
#: Extra bytes per (subscription, topic) pair: the topic's entry and the two monitors.
TOPIC_ENTRY_BOUND = 2_000


def _allocated_since(snapshot: tracemalloc.Snapshot) -> int:
    gc.collect()
    now = tracemalloc.take_snapshot()
    return sum(stat.size_diff for stat in now.compare_to(snapshot, "filename"))


async def test_an_idle_subscription_costs_a_few_kilobytes_and_returns_them() -> None:
    sink = Recorder()
    async with running_hub() as hub:
        warm = await hub.start_subscription(sink)
        await hub.subscribe("t", warm)
        await wait_all_tasks_blocked()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            subs = [await hub.start_subscription(sink) for _ in range(COUNT)]
            await wait_all_tasks_blocked()
            idle = _allocated_since(before) / COUNT
            for sub in subs:
                await hub.subscribe("t", sub)
            await wait_all_tasks_blocked()
            subscribed = _allocated_since(before) / COUNT
            for sub in subs:
                await sub.close()
            await wait_all_tasks_blocked()
            del subs, sub
            left = _allocated_since(before) / COUNT
        finally:
            tracemalloc.stop()
        await warm.close()
    assert idle < IDLE_SUBSCRIPTION_BOUND
    assert subscribed - idle < TOPIC_ENTRY_BOUND
    # What remains are hash tables grown to hold COUNT entries (dicts and sets never shrink):
    # a few hundred bytes per former subscription, none of them a subscription's own.
    assert left < 1_000
