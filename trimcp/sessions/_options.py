"""``SessionOptions``: the limits and timeouts of one server session.

Plain data, read by the session, its writer and the session manager; imports nothing of
this package, so every module here may use it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import final

from trimcp.protocol import DEFAULT_MAX_MESSAGE_SIZE, ServerConnectionOptions

__all__ = ["SessionOptions", "server_options"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionOptions:
    """Per-session limits and timeouts.

    Attributes:
        initialization_timeout: seconds from the session's start until the client must have
            sent ``notifications/initialized``; then the session closes (Lifecycle >
            Timeouts). ``math.inf`` disables it.
        request_timeout: default seconds a server-to-client request (sampling, elicitation,
            roots, ping) waits for its answer before it is cancelled.
        max_message_size: bytes; larger messages are refused before parsing.
        legacy_aliases: accept ``list_tools``/``call_tool``-style method names.
        write_queue: replies buffered for the writer before request handlers wait for it.
        write_timeout: seconds a write may wait for a client that reads nothing before the
            session gives up on it and closes (a stalled peer never blocks a shutdown).
        drain_timeout: seconds the requests still running when input ends (the client
            closed stdin or the connection) get to finish and be answered before the
            session stops anyway.
        observed: report the session and its requests to telemetry (``trimcp.telemetry``).
            False for a server that is part of another one in the same process (a
            gateway's in-process backend): the gateway already reports each call it
            forwards, and counting it twice would make the request rates lie.
    """

    initialization_timeout: float = 60.0
    request_timeout: float = 60.0
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    legacy_aliases: bool = False
    write_queue: int = 256
    drain_timeout: float = 5.0
    write_timeout: float = 60.0
    observed: bool = True


@functools.lru_cache(maxsize=64)
def server_options(
    instructions: str | None, max_message_size: int, legacy_aliases: bool
) -> ServerConnectionOptions:
    """The protocol core's options for a server's sessions (and its 2026-07-28 requests).

    Shared (they are frozen) rather than one copy per session.
    """
    return ServerConnectionOptions(
        instructions=instructions,
        max_message_size=max_message_size,
        legacy_aliases=legacy_aliases,
    )
