"""A client that stops reading: notifications to it are dropped, then its session closes."""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

import trio

from trimcp.sessions import SessionHandle, SessionOptions
from trimcp.sessions._context import MAX_DROPPED_NOTICES, MAX_QUEUED_NOTICES

from .conftest import ScriptedHandler, open_client

if TYPE_CHECKING:
    import pytest

LOG = {"level": "info", "data": "tick"}


async def test_a_stalled_client_never_blocks_the_sender_and_is_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with open_client(ScriptedHandler()) as client:
        handle = SessionHandle(client.actor)
        accepted = dropped = 0
        with trio.fail_after(5):  # the sender never waits, however stuck the client is
            for _ in range(MAX_QUEUED_NOTICES + MAX_DROPPED_NOTICES + 1000):
                await trio.lowlevel.checkpoint()  # let the session run between posts
                if handle.notify_nowait("notifications/message", LOG):
                    accepted += 1
                else:
                    dropped += 1
            await client.session.wait_exited()
        assert dropped >= MAX_DROPPED_NOTICES
        statistics = client.session.statistics()
        assert statistics.mailbox_peak <= MAX_QUEUED_NOTICES + 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("not keeping up" in w for w in warnings) == 1
    assert sum("slow consumer" in w for w in warnings) == 1


async def test_a_session_whose_client_reads_nothing_still_stops(autojump_clock: object) -> None:
    options = SessionOptions(write_timeout=5.0, initialization_timeout=math.inf)
    async with open_client(ScriptedHandler(), options=options) as client:
        handle = SessionHandle(client.actor)
        for _ in range(200):  # far more than the stream holds: the session's writer is stuck
            handle.notify_nowait("notifications/message", LOG)
            await trio.lowlevel.checkpoint()
        client.session.request_stop()
        with trio.fail_after(10):
            await client.session.wait_exited()
        assert trio.current_time() >= 5.0
