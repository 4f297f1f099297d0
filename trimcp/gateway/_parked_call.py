"""``ParkedCall``: one backend call of a 2026-07-28 caller, across its rounds (``_parked.py``).

It is the call's ``_relay.Caller``: the backend's asks wait in ``pending`` under the keys
the gateway assigns until a retry brings their answers; progress and log lines go to the
request waiting on it, if any; what the caller declared is read from its latest request.
``binding`` is what its ``requestState`` is bound to.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.errors import InternalError
from trimcp.protocol import ClientCapabilities, ErrorObject
from trimcp.server import StateBinding, params_digest

from ._relay import downstream_params

if TYPE_CHECKING:
    from trimcp.client import Progress
    from trimcp.protocol import JsonObject, JsonValue
    from trimcp.sessions import RequestContext

__all__ = ["ParkedCall", "binding_of"]

# The key stem of each kind of ask (as the server's own rounds name theirs).
_STEMS: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def binding_of(method: str, params: JsonObject, context: RequestContext) -> StateBinding:
    """The binding of a request's state: its principal (issuer, subject and client of the
    access token, as ``trimcp.server`` binds its own states), its method and a digest of its
    salient params (``trimcp.server.params_digest``)."""
    identity = context.identity
    principal = None if identity is None else "\x1f".join(identity.principal)
    return StateBinding(principal, method, params_digest(method, params))


@final
class _Ask:
    """One ask of the backend, until the caller answers it."""

    __slots__ = ("answer", "answered", "method", "params")

    def __init__(self, method: str, params: JsonObject) -> None:
        self.method = method
        self.params = params
        self.answer: JsonObject | None = None
        self.answered = trio.Event()


@final
class ParkedCall:
    """One backend call of a 2026-07-28 caller, across its rounds (a ``_relay.Caller``)."""

    def __init__(self, call_id: str, binding: StateBinding) -> None:
        self.call_id = call_id
        self.binding = binding
        #: Rounds answered with an ``InputRequiredResult`` so far; the state names the last.
        self.round = 0
        #: Asks without an answer yet, by key (in the order asked).
        self.pending: dict[str, _Ask] = {}
        #: The call's answer once it has one: a result, or an error.
        self.outcome: JsonObject | ErrorObject | None = None
        #: Encloses the backend call; its deadline is the parked TTL while parked.
        self.scope = trio.CancelScope()
        #: When it was parked (trio's clock); None while a request waits on it.
        self.parked_at: float | None = None
        #: Set when a request takes the outcome.
        self.collected = trio.Event()
        self._context: RequestContext | None = None
        self._capabilities = ClientCapabilities()
        self._log_level: str | None = None
        self._counts: dict[str, int] = {}
        self._changed = trio.Event()
        self._closed: str | None = None

    # --- the rounds' side -------------------------------------------------------------------

    def attach(self, context: RequestContext) -> None:
        """A request waits on the call now: its capabilities count, no deadline runs."""
        self._context = context
        self._capabilities = context.session.client_capabilities
        self._log_level = context.session.log_level
        self.parked_at = None
        self.scope.deadline = math.inf

    def detach(self) -> None:
        """The request stopped waiting on the call."""
        self._context = None

    def park(self, now: float, ttl: float) -> None:
        """No request waits on it now; cancel the backend call after ``ttl`` seconds."""
        self.round += 1
        self.parked_at = now
        self.scope.deadline = now + ttl

    async def wait_changed(self) -> None:
        """Wait until the call asks something more or has its outcome."""
        await self._changed.wait()

    def finish(self, outcome: JsonObject | ErrorObject) -> None:
        """The backend call ended with ``outcome``."""
        self.outcome = outcome
        self._signal()

    def close(self, reason: str) -> None:
        """The call is over: asks still waiting fail, later ones too, and a request still
        waiting on it (the gateway stops under it) gets an error rather than no answer."""
        self._closed = reason
        if self.outcome is None:
            self.outcome = ErrorObject(code=-32603, message=f"the call ended: {reason}")
        for ask in self.pending.values():
            ask.answered.set()
        self._signal()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # --- _relay.Caller ----------------------------------------------------------------------

    @property
    def key(self) -> object:
        return self

    @property
    def modern(self) -> bool:
        return True

    @property
    def capabilities(self) -> ClientCapabilities:
        return self._capabilities

    @property
    def version(self) -> str | None:
        return None

    @property
    def log_level(self) -> str | None:
        return self._log_level

    @property
    def wants_progress(self) -> bool:
        return True  # each round may bring its own progressToken

    def describe(self) -> str:
        info = None if self._context is None else self._context.session.client_info
        return f"{info.name!r}" if info is not None else "a 2026-07-28 client"

    async def ask(self, method: str, params: JsonObject | None) -> JsonObject:
        """Put the ask in the next ``InputRequiredResult``; wait for the caller's answer.

        Raises:
            InternalError: the call ended before an answer came (its caller went away,
                or it expired).
        """
        if self._closed is None:
            stem = _STEMS.get(method, method.replace("/", "-"))
            count = self._counts[stem] = self._counts.get(stem, 0) + 1
            key = stem if count == 1 else f"{stem}-{count}"
            ask = self.pending[key] = _Ask(method, downstream_params(params))
            self._signal()
            try:
                await ask.answered.wait()
            finally:
                self.pending.pop(key, None)
            if ask.answer is not None:
                return ask.answer
        raise InternalError(f"{method} was not answered: {self._closed}")

    def deliver(self, responses: dict[str, JsonObject]) -> None:
        """Hand the answers to the asks waiting under their keys (others are ignored)."""
        for key, answer in responses.items():
            ask = self.pending.pop(key, None)
            if ask is not None:
                ask.answer = answer
                ask.answered.set()

    async def report(self, progress: Progress) -> None:
        context = self._context
        if context is not None and context.progress_token is not None:
            await context.report_progress(progress.progress, progress.total, progress.message)

    async def log(self, level: str, data: JsonValue, logger: str) -> None:
        context = self._context
        if context is not None:
            await context.log(level, data, logger)
