"""A counter actor under a supervisor, embedded in a plain trio program.

Try it:  python examples/supervised_counter.py

The counter crashes when asked to add a negative number. Its supervisor restarts it (fresh
state, same registered name), so the next lookup finds a working counter again; a second crash
within 5 s would exceed the restart intensity (1 in 5 s) and stop the application. Edit the
intensity below, or the sleep, and watch what changes. Logs go to stderr.
"""

from __future__ import annotations

import logging

import trio

from trimcp.actors import Actor, ReplyTo, whereis
from trimcp.config import SysConfig
from trimcp.errors import ActorGone
from trimcp.supervision import ChildSpec, open_application


class Counter(Actor):
    async def init(self) -> None:
        self.total = 0

    async def handle_cast(self, message: object) -> None:
        assert isinstance(message, int)
        if message < 0:
            raise ValueError(f"cannot add {message}")
        self.total += message

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        return self.total


async def main() -> None:
    children = [ChildSpec.for_actor("counter", Counter, name="counter")]
    async with open_application(SysConfig(), children=children):
        counter = whereis("counter")
        assert counter is not None
        await counter.cast(2)
        await counter.cast(3)
        print("total:", await counter.call("total"))
        await counter.cast(-1)  # crashes the counter; the supervisor restarts it
        try:
            await counter.call("total")
        except ActorGone as gone:
            print("old handle:", gone)
        restarted = whereis("counter")
        while restarted is None or restarted == counter:  # until the restart registers it
            await trio.sleep(0.01)
            restarted = whereis("counter")
        print("after restart:", await restarted.call("total"))
    print("application stopped")


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    trio.run(main)
