"""What one session looks like from outside, for the admin app's ``/status`` and metrics.

Everything here is read, never changed, from what the session's record (``SessionRecord``),
its ``Session`` actor object and its stream already hold: no counter is kept for this, so a
session costs nothing more between two looks. A look at one session is a handful of
attribute reads; ``describe_sessions`` bounds how many it describes (the most recently active
first) and says how many there are.

Session ids are secrets of a kind (whoever holds one may use the session over HTTP): only an
8-character prefix ever leaves this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, final, runtime_checkable

import trio

from ._context import SessionHandle
from ._manager import ConnectionBound

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._manager import SessionManager, SessionRecord

__all__ = [
    "ID_PREFIX",
    "SessionDescription",
    "StreamCounter",
    "describe_session",
    "describe_sessions",
]

#: Characters of a session id shown.
ID_PREFIX = 8


@runtime_checkable
class StreamCounter(Protocol):
    """A session stream that can say how many response streams it has open (HTTP's)."""

    @property
    def open_streams(self) -> int:
        """SSE and JSON responses open now, the standalone GET stream included."""
        ...


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SessionDescription:
    """One session, as ``/status`` lists it (None: not known for this kind of session).

    Attributes:
        id: the first ``ID_PREFIX`` characters of the session id.
        age: seconds since it started.
        idle: seconds since it was last active.
        protocol_version: the version ``initialize`` negotiated (None before).
        client: the client's ``name version`` from ``initialize`` (None before).
        mailbox_length, mailbox_capacity, mailbox_peak: its actor's mailbox.
        dropped_notifications: messages its actor discarded (notifications posted while it
            was closing, or past its mailbox).
        streams: response streams open (HTTP), 1 for a connection (WebSocket).
        subscriptions: resources it subscribed to, if the server can say.
        in_flight: requests running in a task of their own.
        alive: False once its actor has exited (a record about to leave the table).
    """

    id: str
    age: float
    idle: float
    protocol_version: str | None
    client: str | None
    mailbox_length: int
    mailbox_capacity: int
    mailbox_peak: int
    dropped_notifications: int
    streams: int | None
    subscriptions: int | None
    in_flight: int | None
    alive: bool

    def as_json(self) -> dict[str, object]:
        """The ``/status`` shape (without the listener, which the caller adds)."""
        return {
            "id": self.id,
            "age": self.age,
            "idle": self.idle,
            "protocol_version": self.protocol_version,
            "client": self.client,
            "mailbox": {
                "length": self.mailbox_length,
                "capacity": self.mailbox_capacity,
                "peak": self.mailbox_peak,
            },
            "dropped_notifications": self.dropped_notifications,
            "streams": self.streams,
            "subscriptions": self.subscriptions,
            "in_flight": self.in_flight,
        }


def describe_session(
    record: SessionRecord,
    *,
    subscriptions: Callable[[SessionHandle], int] | None = None,
    now: float | None = None,
) -> SessionDescription:
    """Describe one live session (module docstring). Call it inside trio.

    ``subscriptions`` counts a session's resource subscriptions, if the server keeps them
    (the gateway does); without it, ``subscriptions`` is None.
    """
    moment = trio.current_time() if now is None else now
    stats = record.ref.statistics()
    session = record.session
    client: str | None = None
    version: str | None = None
    in_flight: int | None = None
    counted: int | None = None
    if session is not None:
        info = session.connection.client_info
        if info is not None:
            client = f"{info.name} {info.version}".strip()
        version = session.connection.negotiated_version
        in_flight = session.in_flight
        if subscriptions is not None:
            counted = subscriptions(SessionHandle(session))
    return SessionDescription(
        id=record.session_id[:ID_PREFIX],
        age=max(0.0, moment - record.created),
        idle=max(0.0, moment - record.last_active),
        protocol_version=version,
        client=client,
        mailbox_length=stats.mailbox_length,
        mailbox_capacity=stats.mailbox_capacity,
        mailbox_peak=stats.mailbox_peak,
        dropped_notifications=stats.dropped,
        streams=_streams(record),
        subscriptions=counted,
        in_flight=in_flight,
        alive=stats.alive,
    )


def describe_sessions(
    manager: SessionManager,
    *,
    limit: int,
    subscriptions: Callable[[SessionHandle], int] | None = None,
) -> tuple[list[SessionDescription], int]:
    """Describe at most ``limit`` of ``manager``'s sessions, the most recently active first.

    Returns them and how many sessions there are in all.
    """
    if limit < 0:
        raise ValueError("limit must be >= 0")
    table = manager.table
    total = len(table)
    now = trio.current_time()
    records = table.records()  # least recently active first
    chosen = records[::-1][:limit]
    described = [describe_session(r, subscriptions=subscriptions, now=now) for r in chosen]
    return described, total


def _streams(record: SessionRecord) -> int | None:
    stream: object = record.stream
    if isinstance(stream, StreamCounter):
        return stream.open_streams
    if isinstance(stream, ConnectionBound):
        return 1
    return None
