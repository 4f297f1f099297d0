"""The ``stream_pair`` fixture: every MessageStream implementation, for the conformance suite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio.testing

from trimcp.transports import MessageStream, StdioStream, memory_stream_pair

PairFactory = Callable[[int], tuple[MessageStream, MessageStream]]


def _memory(max_message_size: int) -> tuple[MessageStream, MessageStream]:
    return memory_stream_pair(max_message_size=max_message_size)


def _stdio_over(
    make: Callable[[], tuple[trio.StapledStream[Any, Any], trio.StapledStream[Any, Any]]],
) -> PairFactory:
    def build(max_message_size: int) -> tuple[MessageStream, MessageStream]:
        left, right = make()
        return (
            StdioStream(left.receive_stream, left.send_stream, max_message_size=max_message_size),
            StdioStream(right.receive_stream, right.send_stream, max_message_size=max_message_size),
        )

    return build


PAIRS: dict[str, PairFactory] = {
    "memory": _memory,
    "stdio-memory-streams": _stdio_over(trio.testing.memory_stream_pair),
    "stdio-lockstep-streams": _stdio_over(trio.testing.lockstep_stream_pair),
}


@pytest.fixture(params=sorted(PAIRS))
def stream_pair(request: pytest.FixtureRequest) -> PairFactory:
    """Return a factory of connected (left, right) streams with a given size limit."""
    factory: PairFactory = PAIRS[request.param]
    return factory
