"""Multi round-trip requests (MCP 2026-07-28): ``ctx.elicit`` and friends without a session.

The 2026-07-28 revision has no server-to-client requests. A ``tools/call``,
``resources/read`` or ``prompts/get`` that needs the client's input answers with an
``InputRequiredResult`` naming what it needs (``inputRequests``, each under a key) and an
opaque ``requestState``; the client retries the same method with ``inputResponses`` under
those keys and the state echoed (Basic > Patterns > Multi Round-Trip Requests,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr).

trimcp keeps the author's code unchanged: a handler awaits ``ctx.elicit(...)`` as it would
in a session. Each round runs the handler from its start (``run_round``):

* an ask whose key has an answer (sent in this retry, or carried from an earlier round in
  the sealed state) returns it at once;
* an ask without one is recorded, and after a few scheduling passes, so that asks started
  together (say, in one nursery) join it, the round's cancel scope ends the handler; the
  recorded asks become the ``inputRequests`` of the result.

So a handler runs again from the top on every retry: the code before its last ask must be
safe to repeat. What must not repeat (creating an order, sending a mail) goes in
``ctx.once(key, fn)``, whose result is sealed into the state and handed back on later rounds
instead of running ``fn`` again. Answers already given travel in the state too, so each
round asks only for what is still missing; a retry that lacks an answer the handler needs
gets a new ``InputRequiredResult`` for it (the spec's SHOULD), and answers under keys
nobody asks for are ignored.

The state is sealed (AEAD, ``_request_state.py``): bound to the principal, the method and a
digest of the call's name and arguments, valid for a few minutes, and used once.

A ``tools/call`` may go on as a task of the Tasks extension (``_tasks_ext.py``; SEP-2663,
https://modelcontextprotocol.io/seps/2663-tasks-extension). Its round then has a ``host``,
and once the host says the call is a task, an ask no longer ends the pass: it waits, in the
same running handler, for the client's ``tasks/update`` (the task's own ``inputRequests``,
keyed by the same ``key_for``, so a key is never reused over the task's life). Asks made
before that are ordinary rounds: the SEP has the multi round-trip phase resolved before the
``CreateTaskResult`` (Composition with Multi Round-Trip Requests).
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Final, Protocol

import trio

from trimcp.errors import InvalidParams, LocalProtocolError
from trimcp.server._request_state import StateBinding, params_digest

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.auth import Identity
    from trimcp.protocol import JsonObject, JsonValue
    from trimcp.server._request_state import RequestStateSealer

__all__ = ["MRTR_METHODS", "Binding", "Round", "TaskHost", "end_round", "open_round", "run_round"]

#: The only requests that may answer with an InputRequiredResult (MUST NOT on any other).
MRTR_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get"})

# Scheduling passes an ask waits for others started beside it before the round ends. Tasks
# started together run in the same batch, so one pass suffices; the rest is margin.
_SETTLE_PASSES: Final = 3

# The short names auto-generated keys start with, by method.
_KEY_STEMS: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


class TaskHost(Protocol):
    """The task a ``tools/call`` may become (offered by ``_tasks_ext_runner.CallJob``).

    Implementers guarantee that ``task_id`` turns from None to the task's id at most once,
    and that ``ask`` waits until the client answers ``key`` or the task ends (cancelled).
    """

    @property
    def task_id(self) -> str | None:
        """The task the call now runs as; None while it is an ordinary request."""
        ...

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled the task (``tasks/cancel``) or its TTL ran out."""
        ...

    def continue_as_task(self) -> bool:
        """Answer the request with a task now and keep running; False if it may not be."""
        ...

    async def ask(self, key: str, request: JsonObject) -> JsonObject:
        """Put ``request`` in the task's ``inputRequests`` under ``key``; return the answer.

        Raises:
            LocalProtocolError: ``key`` is outstanding already.
        """
        ...


@typing.final
class Round:
    """One pass of a modern request's handler: the answers it has, the asks it made."""

    __slots__ = (
        "_counts",
        "answers",
        "carried",
        "failure",
        "host",
        "over",
        "pending",
        "scope",
        "used",
    )

    def __init__(self, answers: dict[str, JsonObject], carried: dict[str, JsonValue]) -> None:
        #: Answers by key: carried from earlier rounds, then this retry's ``inputResponses``.
        self.answers = answers
        #: ``Context.once`` results by key, carried across rounds.
        self.carried = carried
        #: What this pass asked for and has no answer to: key -> ``{method, params}``.
        self.pending: dict[str, JsonObject] = {}
        #: Keys whose answers this pass used (they are carried into the next state).
        self.used: set[str] = set()
        #: Encloses the handler; an unanswered ask cancels it.
        self.scope = trio.CancelScope()
        #: A misuse found while asking (two asks under one key); it fails the call.
        self.failure: LocalProtocolError | None = None
        #: The task this call may become (a task-supporting ``tools/call``), if any.
        self.host: TaskHost | None = None
        #: True once the pass answered: a Context kept past it can no longer ask.
        self.over = False
        self._counts: dict[str, int] = {}

    def key_for(self, method: str) -> str:
        """Return the next automatic key for an ask of ``method``: ``elicitation``, then
        ``elicitation-2``, ... (in the order the handler asks; pass ``key=`` to name it)."""
        stem = _KEY_STEMS.get(method, method.replace("/", "-"))
        count = self._counts[stem] = self._counts.get(stem, 0) + 1
        return stem if count == 1 else f"{stem}-{count}"

    async def ask(self, key: str, method: str, params: JsonObject | None) -> JsonObject:
        """Return the answer under ``key``, or record the ask and end the pass.

        In a task (``host.task_id`` set) the ask waits for the answer instead; a key
        answered once, in a round or in the task, keeps its answer for the whole call.

        Raises:
            LocalProtocolError: two different asks of one pass share ``key``.
            InvalidParams: the answer under ``key`` is not a JSON object.
        """
        if key in self.answers:
            answer = self.answers[key]
            self.used.add(key)
            return answer
        host = self.host
        if host is not None and host.task_id is not None:
            return await self._ask_task(host, key, {"method": method, "params": dict(params or {})})
        if self.over:
            raise LocalProtocolError(
                f"{method}: the 2026-07-28 request this context served is over; a client can "
                "be asked for input only while its request runs"
            )
        if key in self.pending:
            # A bug in the handler: kept, so that it fails the call even though the tool
            # layer turns what the handler raises into an isError result.
            self.failure = LocalProtocolError(
                f"two requests for the client's input share the key {key!r}; "
                "give each its own key= (the client answers each key once)"
            )
            raise self.failure
        self.pending[key] = {"method": method, "params": dict(params or {})}
        for _ in range(_SETTLE_PASSES):
            await trio.lowlevel.checkpoint()
        self.scope.cancel()
        await trio.sleep_forever()
        raise AssertionError("unreachable: the round's scope was cancelled")  # pragma: no cover

    async def _ask_task(self, host: TaskHost, key: str, request: JsonObject) -> JsonObject:
        try:
            answer = await host.ask(key, request)
        except LocalProtocolError as exc:
            # As in a round: a handler's bug fails the task, not the tool's result.
            self.failure = exc
            raise
        self.answers[key] = answer
        return answer


def principal_of(identity: Identity | None) -> str | None:
    """The principal a state is bound to: issuer, subject and client of the token."""
    return None if identity is None else "\x1f".join(identity.principal)


@typing.final
class Binding:
    """What a request's state is bound to, computed only when a state is opened or sealed.

    Most calls neither carry a state nor ask for input: they skip the params digest.
    """

    __slots__ = ("_identity", "_method", "_params", "_value")

    def __init__(self, identity: Identity | None, method: str, params: JsonObject) -> None:
        self._identity = identity
        self._method = method
        self._params = params
        self._value: StateBinding | None = None

    @property
    def value(self) -> StateBinding:
        """The binding (principal, method, digest of the salient params)."""
        if self._value is None:
            digest = params_digest(self._method, self._params)
            self._value = StateBinding(principal_of(self._identity), self._method, digest)
        return self._value


def open_round(
    sealer: RequestStateSealer,
    method: str,
    params: JsonObject,
    identity: Identity | None,
) -> tuple[Round, Binding]:
    """Read a request's ``inputResponses`` and ``requestState`` into a ``Round``.

    Raises:
        InvalidParams: ``inputResponses`` is not an object of objects (-32602).
        RequestStateRejected: the state is forged, expired, for another request or
            principal, or used already (-32602).
    """
    binding = Binding(identity, method, params)
    responses = params.get("inputResponses")
    if responses is None and "inputResponses" in params:
        raise InvalidParams(
            "params.inputResponses must be an object of answers by key, not null; leave it "
            "out when there is nothing to answer",
            {"param": "inputResponses"},
        )
    if responses is not None and not isinstance(responses, dict):
        raise InvalidParams(
            "params.inputResponses must be an object of answers by key (each the result of "
            "the input request sent under that key)",
            {"param": "inputResponses"},
        )
    answers: dict[str, JsonObject] = {}
    carried: dict[str, JsonValue] = {}
    state = params.get("requestState")
    if state is not None or "requestState" in params:
        opened = sealer.open(state, binding.value)
        sealer.consume(opened)
        earlier = opened.payload.get("a")
        once = opened.payload.get("o")
        if isinstance(earlier, dict):
            answers.update({k: v for k, v in earlier.items() if isinstance(v, dict)})
        if isinstance(once, dict):
            carried.update(once)
    for key, value in (responses or {}).items():
        if not isinstance(value, dict):
            raise InvalidParams(
                f"params.inputResponses[{key!r}] must be an object: the result of the input "
                f"request sent under {key!r} (an ElicitResult, CreateMessageResult or "
                "ListRootsResult)",
                {"param": f"inputResponses.{key}"},
            )
        answers[key] = value
    return Round(answers, carried), binding


async def run_round(
    round_: Round,
    body: Callable[[], Awaitable[JsonObject]],
    sealer: RequestStateSealer,
    binding: Binding,
) -> JsonObject:
    """Run one pass of the handler; return its result or an ``InputRequiredResult``."""
    result: JsonObject | None = None
    with round_.scope:
        result = await body()
    return end_round(round_, result, sealer, binding)


def end_round(
    round_: Round,
    result: JsonObject | None,
    sealer: RequestStateSealer,
    binding: Binding,
) -> JsonObject:
    """Return what a finished pass answers: ``result``, or an ``InputRequiredResult``.

    ``result`` is None when the pass ended without one (an ask cancelled it).

    Raises:
        LocalProtocolError: the handler misused the asks (``Round.failure``).
    """
    round_.over = True
    if round_.failure is not None:
        raise round_.failure
    if result is not None and not round_.pending:
        return result
    if not round_.pending:  # pragma: no cover - the scope is only cancelled by an ask
        raise LocalProtocolError("the handler was cancelled without asking for input")
    state: JsonObject = {
        "a": {key: round_.answers[key] for key in round_.used},
        "o": round_.carried,
    }
    return {
        "resultType": "input_required",
        "inputRequests": dict(round_.pending),
        "requestState": sealer.seal(state, binding.value),
    }
