"""Which streams offer which optional capabilities of the seam (``transports/_stream.py``).

Sessions ask with ``isinstance``, so a method renamed on one side would silently turn a
fast path off rather than fail: this table pins what each transport offers.
"""

from __future__ import annotations

import pytest

from trimcp.client import HttpClientStream, LegacySseClientStream, ServerProcess
from trimcp.http._legacy import LegacySseStream
from trimcp.http._stream import HttpSessionStream
from trimcp.transports import (
    AsgiWebSocketStream,
    ImmediateOutput,
    MemoryMessageStream,
    PushedInput,
    ReadyMarker,
    RequestStreamControl,
    RoutedOutput,
    StdioStream,
    WebSocketStream,
)

CAPABILITIES = (PushedInput, RoutedOutput, ImmediateOutput, RequestStreamControl, ReadyMarker)

OFFERS: dict[type, set[type]] = {
    StdioStream: {ImmediateOutput},
    ServerProcess: {ImmediateOutput, ReadyMarker},
    HttpSessionStream: {PushedInput, RoutedOutput, RequestStreamControl},
    MemoryMessageStream: set(),
    WebSocketStream: set(),
    AsgiWebSocketStream: set(),
    LegacySseStream: set(),
    HttpClientStream: set(),
    LegacySseClientStream: set(),
}


@pytest.mark.parametrize("stream", list(OFFERS), ids=lambda cls: cls.__name__)
def test_each_stream_offers_what_it_should(stream: type) -> None:
    offered = {capability for capability in CAPABILITIES if issubclass(stream, capability)}
    assert offered == OFFERS[stream]
