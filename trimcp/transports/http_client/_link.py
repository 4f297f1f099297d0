"""``HttpLink``: what every task of one Streamable HTTP client stream shares.

The httpx client and the endpoint URL, the configured headers and authorization
(``HttpAuth``, None without), the ``Inbox`` the tasks deliver to, and the session: its
``MCP-Session-Id`` (from the ``initialize`` answer), the negotiated
``MCP-Protocol-Version``, and the cancel scopes of the tasks that belong to it (the GET
stream, answers being read, resumptions), cancelled together when the session ends.
Also the bound on requests in flight (``slots``), the requests in flight by id (so that a
cancel can find its request), and what the server's answers taught about when it sends a
request's status (``status_with_result``).

Requests of the per-request era (MCP 2026-07-28) belong to no session: they carry their
version from their own ``_meta`` and the ``Mcp-*`` headers that mirror their body
(``modern_headers``; the ``x-mcp-header`` parameters of each tool in ``tool_headers``,
handed over by the session), never ``MCP-Session-Id``.

All of it is touched only from the tasks of one trio run, between checkpoints: no locks.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.errors import SessionExpired
from trimcp.protocol import request_headers

from ._slots import Slots

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from trimcp.protocol import HeaderParams

    from ._auth import HttpAuth
    from ._handoff import Handoff
    from ._inbox import Inbox
    from ._json import Outline, RequestId
    from ._resume import ReconnectPolicy
    from ._wire import Sender

__all__ = ["ACCEPT_BOTH", "ACCEPT_SSE", "HttpLink"]

logger = logging.getLogger(__name__)

#: A POST's ``Accept``: MCP 2025-11-25 requires both (Transports > Sending Messages).
ACCEPT_BOTH: Final = "application/json, text/event-stream"
ACCEPT_SSE: Final = "text/event-stream"

# Headers this transport sets itself; configured ones with these names are replaced.
_OWN = frozenset(
    {
        "accept",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "mcp-method",
        "mcp-name",
    }
)


@final
class HttpLink:
    """Shared state of one client stream (module docstring)."""

    def __init__(  # noqa: PLR0913  # the parts are independent settings, each named
        self,
        sender: Sender,
        url: str,
        inbox: Inbox,
        *,
        headers: Mapping[str, str],
        max_message_size: int,
        policy: ReconnectPolicy,
        max_requests: int,
        auth: HttpAuth | None = None,
    ) -> None:
        self.sender = sender
        self.auth = auth
        self.client = sender.client
        self.url = url
        self.inbox = inbox
        self.max_message_size = max_message_size
        self.policy = policy
        # The requests whose POST is in flight (sent, its answer not yet read to the end).
        # A request finding no free slot waits for one in its own task, never the sender.
        self.slots: Slots[Handoff] = Slots(max_requests)
        # The requests in flight, by id: a cancel waits until its request has left, or
        # withdraws it while it still waits for a slot.
        self.in_flight: dict[RequestId, Handoff] = {}
        # Whether the server sends a request's HTTP status only with its result: learned
        # from its answers to requests (application/json: yes; an SSE stream: no). While it
        # is False, a sender may wait for the status, which then comes at once.
        self.status_with_result = False
        self._custom = {
            name.lower(): value for name, value in headers.items() if name.lower() not in _OWN
        }
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        # The server forgot the session: only a new initialize may be sent now.
        self.expired = False
        # Where background tasks run; set by the stream that owns it.
        self.nursery: trio.Nursery | None = None
        self._scopes: set[trio.CancelScope] = set()
        # Per tool, the x-mcp-header parameters its calls mirror (2026-07-28).
        self.tool_headers: dict[str, HeaderParams] = {}
        # A per-request-era POST got an HTTP answer: the server exists, so a connection
        # failure later fails its request only (there is no session to lose).
        self.answered = False
        # The Authorization value the last request carried (a digest of it names the
        # authorization context of cached results; the value itself never leaves).
        self.last_authorization: str | None = self._custom.get("authorization")

    def headers(
        self, accept: str, *, post: bool = False, last_event_id: str = ""
    ) -> dict[str, str]:
        """Return the headers of one request: configured ones, then the protocol's."""
        sent = dict(self._custom)
        sent["accept"] = accept
        if post:
            sent["content-type"] = "application/json"
        if self.session_id is not None:
            sent["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            sent["mcp-protocol-version"] = self.protocol_version
        if last_event_id:
            sent["last-event-id"] = last_event_id
        return sent

    def modern_headers(self, outline: Outline) -> dict[str, str]:
        """Return the headers of a per-request-era POST (MCP 2026-07-28, Streamable HTTP).

        ``MCP-Protocol-Version`` equal to the body's ``_meta`` version, ``Mcp-Method``,
        ``Mcp-Name`` and the called tool's ``Mcp-Param-*``; no session id.
        """
        sent = dict(self._custom)
        sent["accept"] = ACCEPT_BOTH
        sent["content-type"] = "application/json"
        if outline.modern_version is not None:
            sent["mcp-protocol-version"] = outline.modern_version
        if outline.method is None:
            return sent
        params = outline.params
        name = params.get("name") if params is not None else None
        tool = self.tool_headers.get(name) if isinstance(name, str) else None
        # A method no header can carry: the server answers the body's real problem.
        with contextlib.suppress(ValueError):
            sent.update(request_headers(outline.method, params, tool))
        return sent

    def track(
        self, request_ids: Iterable[RequestId], handoff: Handoff, *, slot: bool = True
    ) -> None:
        """Record ``handoff`` as the POST carrying ``request_ids``; give it a slot if one is free.

        Otherwise it waits in line, and ``handoff.slot_given`` is set when its turn comes.
        Without ``slot`` (a ``subscriptions/listen`` stream, which lasts as long as the
        session, as the GET stream of 2025-11-25 does) it takes none and never waits.
        """
        for request_id in request_ids:
            self.in_flight[request_id] = handoff
        if not slot:
            return
        if self.slots.take(handoff):
            handoff.holds_slot = True
        else:
            handoff.slot_given = trio.Event()

    def give_back(self, handoff: Handoff) -> None:
        """End ``handoff``'s claim: free its slot for the next in line, or leave the line
        (a no-op for a POST that never took part)."""
        if not handoff.holds_slot:
            self.slots.leave(handoff)
            return
        handoff.holds_slot = False
        self._pass_on(self.slots.release())

    def withdraw(self, handoff: Handoff) -> bool:
        """Withdraw a request still waiting for a slot; False if it has one (or had)."""
        if not self.slots.leave(handoff):
            return False
        handoff.withdrawn = True
        if handoff.slot_given is not None:
            handoff.slot_given.set()  # its task wakes, sees it was withdrawn, and ends
        return True

    @staticmethod
    def _pass_on(waiter: Handoff | None) -> None:
        if waiter is not None:
            waiter.holds_slot = True
            if waiter.slot_given is not None:
                waiter.slot_given.set()

    def untrack(self, request_ids: Iterable[RequestId], handoff: Handoff) -> None:
        """Forget ``request_ids`` if ``handoff`` still carries them (new sessions reuse ids)."""
        for request_id in request_ids:
            if self.in_flight.get(request_id) is handoff:
                del self.in_flight[request_id]

    @contextlib.contextmanager
    def in_session(self) -> Iterator[trio.CancelScope]:
        """Run the block in a scope that ends with the current session."""
        scope = trio.CancelScope()
        self._scopes.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._scopes.discard(scope)

    def begin_initialize(self) -> None:
        """Forget the session before a new ``initialize`` goes out, ending its tasks."""
        self._end_tasks(keep=None)
        self.inbox.new_epoch()
        self.in_flight.clear()
        self.session_id = None
        self.protocol_version = None
        self.expired = False

    def forget(self, session_id: str | None, *, keep: trio.CancelScope | None) -> bool:
        """Drop ``session_id`` if it is still the current session; return whether it was.

        Its tasks are cancelled, except the one running in ``keep`` (the caller's own).
        """
        if session_id is None or session_id != self.session_id:
            return False
        logger.info("the server at %s ended the MCP session", self.url)
        self.session_id = None
        self.expired = True
        self._end_tasks(keep=keep)
        return True

    async def expire(self, session_id: str | None, *, keep: trio.CancelScope | None) -> None:
        """Drop the session after a 404 on a background request; tell the reader, once.

        Shielded: forgetting the session cancels the session's tasks, maybe the caller's own.
        """
        if self.forget(session_id, keep=keep):
            with trio.CancelScope(shield=True):
                await self.inbox.put(
                    SessionExpired(f"the server at {self.url} no longer knows this session (404)")
                )

    def _end_tasks(self, *, keep: trio.CancelScope | None) -> None:
        for scope in list(self._scopes):
            if scope is not keep:
                scope.cancel()
