"""Scripted sinks and a running hub for the notify tests.

Sinks record what reached them and when (trio time), so tests assert delivery order and exact
virtual times instead of sleeping and hoping.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from trimcp.notify import NotificationHub
from trimcp.supervision import open_supervisor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import pytest

    from trimcp.notify import CloseCause

NOTIFY_LOGGER = "trimcp.notify"


@dataclass(eq=False)
class Recorder:
    """A sink that takes ``latency`` seconds per write and records ``(time, message)``."""

    latency: float = 0.0
    received: list[tuple[float, object]] = field(default_factory=list)
    closes: list[CloseCause] = field(default_factory=list)

    async def __call__(self, message: object) -> None:
        if self.latency:
            await trio.sleep(self.latency)
        self.received.append((trio.current_time(), message))

    @property
    def messages(self) -> list[object]:
        return [message for _, message in self.received]

    def on_close(self, cause: CloseCause) -> None:
        self.closes.append(cause)


@dataclass(eq=False)
class Stalled:
    """A sink whose writes block until ``resume`` (forever, if never resumed).

    ``writing`` is the message a write is stuck on; ``cancelled`` counts writes abandoned by
    cancellation (the subscription gave up or was closed).
    """

    gate: trio.Event = field(default_factory=trio.Event)
    received: list[object] = field(default_factory=list)
    writing: list[object] = field(default_factory=list)
    cancelled: int = 0
    closes: list[CloseCause] = field(default_factory=list)

    async def __call__(self, message: object) -> None:
        self.writing.append(message)
        try:
            await self.gate.wait()
        except trio.Cancelled:
            self.cancelled += 1
            raise
        finally:
            self.writing.remove(message)
        self.received.append(message)

    def resume(self) -> None:
        self.gate.set()

    def on_close(self, cause: CloseCause) -> None:
        self.closes.append(cause)


@dataclass(eq=False)
class Failing:
    """A sink that raises ``error`` on its ``after``-th write (0: the first)."""

    error: Exception
    after: int = 0
    received: list[object] = field(default_factory=list)
    closes: list[CloseCause] = field(default_factory=list)

    async def __call__(self, message: object) -> None:
        if len(self.received) >= self.after:
            raise self.error
        self.received.append(message)

    def on_close(self, cause: CloseCause) -> None:
        self.closes.append(cause)


@asynccontextmanager
async def running_hub(**settings: Any) -> AsyncIterator[NotificationHub]:
    """Run a ``NotificationHub`` (with ``settings``) under a supervisor for the block."""
    hub = NotificationHub(**settings)
    async with open_supervisor([hub.spec()]):
        yield hub


def notify_records(
    caplog: pytest.LogCaptureFixture, level: int = logging.WARNING
) -> list[logging.LogRecord]:
    """Return the captured records of the notify package at ``level`` or above."""
    return [r for r in caplog.records if r.name.startswith(NOTIFY_LOGGER) and r.levelno >= level]
