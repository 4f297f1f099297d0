"""Parked calls: a 2026-07-28 caller's input, asked for by a backend, carried across retries.

A backend of either era may ask for its caller's input while it serves ``tools/call``,
``prompts/get`` or ``resources/read`` (sampling, elicitation, roots; ``_relay.py``). A
2026-07-28 caller has no session to be asked on: it is asked by *answering* its request
with an ``InputRequiredResult``, and it sends the request again with the answers
(``inputResponses``) and the ``requestState`` it got (MCP 2026-07-28, Basic > Patterns >
Multi Round-Trip Requests,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr). The backend,
meanwhile, waits for its answer in the middle of the call. So the gateway runs such a call
as a ``ParkedCall``:

* The first request starts the backend call in a task of the ``parked`` child of the
  gateway's supervisor (``ParkedCalls.run``), so that it outlives the request, and waits
  for what comes first: the backend's result (returned as it is), or an ask. Asks made
  together (a few scheduling passes) are returned together in one ``InputRequiredResult``,
  each under a key the gateway assigns (``elicitation``, ``sampling-2``, ...: unique over
  the call's life), with a ``requestState`` that names the call.
* The call is then **parked**: its backend call waits for the answers, under a deadline of
  ``[gateway] parked_call_ttl`` seconds (the state expires with it). When the deadline
  passes, the backend call is cancelled (the backend gets ``notifications/cancelled``, or
  its response stream is closed) and the call leaves the table.
* A retry delivers the answers under the keys asked (others are ignored), and waits again:
  for the result, or the next asks (another ``InputRequiredResult``). An ask the retry did
  not answer is asked again rather than refused (the spec's SHOULD). What the backend asked
  while the call was parked goes with the next round.
* At most ``[gateway] max_parked_calls`` calls are parked at once: parking one more cancels
  the one parked longest ago, at its backend, and its retry is refused.
* A request cancelled while it waits (its client closed the stream) cancels the call.

The ``requestState`` is sealed by a ``trimcp.server.RequestStateSealer`` (AES-256-GCM, a key
of this process: a parked call lives in one process, so a retry must reach the process that
parked it). It is bound to the caller's principal (issuer, subject and client of the access
token, none without auth), the method, and a digest of the salient params (``name`` and
``arguments``, or ``uri``); it expires with the parked call and is accepted once, and each
round's state names its round, so an earlier one is refused even if the sealer forgot it.
Every refusal is -32602 with ``data.reason``: ``invalid`` (not ours, or tampered),
``mismatch`` (another principal or request), ``expired`` (the call is gone: its deadline
passed, or it was cancelled to make room), ``replayed`` (used already).

Which capabilities the caller declared is read from its latest request (2026-07-28: "MUST
NOT infer capabilities from prior requests"); an ask it did not declare is refused as
``_relay.py`` says. Progress and log lines of the backend call go to the request waiting on
it, if any.

The limit of the relay's rule shows more here: a 2025-11-25 backend's asks are matched to
their caller by what is in flight on that backend (``_relay.py``), and a parked call stays in
flight while it waits, so meanwhile another caller's ask to the same backend is refused as
ambiguous. A 2026-07-28 backend asks inside the call, and is matched exactly.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

import trio

from trimcp.errors import InternalError, InvalidParams, JsonRpcError, RequestStateRejected
from trimcp.protocol import Absent, ErrorObject, error_object_for
from trimcp.server import RequestStateKeys, RequestStateSealer

from ._parked_call import ParkedCall, binding_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import JsonObject
    from trimcp.server import StateBinding
    from trimcp.sessions import RequestContext

__all__ = ["ParkedCalls", "ParkedStatistics"]

logger = logging.getLogger(__name__)

# Scheduling passes a round waits, once an ask came, for asks made beside it (the
# server's ``_mrtr`` waits as many: tasks started together run in the same batch).
_SETTLE_PASSES: Final = 3
_START_OVER = "send the request again without requestState and inputResponses to start over"


@final
@dataclass(frozen=True, slots=True)
class ParkedStatistics:
    """How many calls run for 2026-07-28 callers, and how many of them are parked."""

    calls: int
    parked: int
    max_parked: int


@final
class ParkedCalls:
    """The table of parked calls and the task they run in (module docstring).

    Args:
        limits: returns ``(max_parked_calls, parked_call_ttl)`` as configured now
            (``[gateway]``; a reload changes them for the calls parked afterwards).
    """

    def __init__(self, limits: Callable[[], tuple[int, float]]) -> None:
        self._limits = limits
        self._keys = RequestStateKeys()
        self._sealer_for: tuple[float, RequestStateSealer] | None = None
        self._calls: dict[str, ParkedCall] = {}
        # The calls parked now (waiting for a retry), the one parked longest ago first.
        self._parked: OrderedDict[str, ParkedCall] = OrderedDict()
        # Why recent calls ended without their retry (bounded): for the retry's refusal.
        self._ended: OrderedDict[str, str] = OrderedDict()
        self._nursery: trio.Nursery | None = None

    def statistics(self) -> ParkedStatistics:
        """Calls running or parked now."""
        return ParkedStatistics(len(self._calls), len(self._parked), self._limits()[0])

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the calls' tasks until cancelled (the ``parked`` child of the gateway)."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            for call in list(self._calls.values()):
                call.close("the trimcp gateway stopped")
            self._calls.clear()
            self._parked.clear()

    async def serve(
        self,
        method: str,
        params: JsonObject,
        context: RequestContext,
        start: Callable[[ParkedCall], Awaitable[JsonObject]],
    ) -> JsonObject:
        """Answer one request of a 2026-07-28 caller: start or resume its call, and wait.

        Returns the backend's result, or an ``InputRequiredResult``.

        Raises:
            RequestStateRejected: the ``requestState`` is refused (module docstring).
            InvalidParams: ``inputResponses`` is not an object of objects.
            JsonRpcError: the backend call failed (its error, as the backend sent it).
        """
        binding = binding_of(method, params, context)
        if "requestState" in params:
            call = self._resume(params, binding)
        else:
            call = self._start(binding, start)
        return await self._round(call, context)

    # --- inside -----------------------------------------------------------------------------

    def _sealer(self, ttl: float) -> RequestStateSealer:
        """The sealer for states valid ``ttl`` seconds (a new one when a reload changed it:
        the same keys open the states sealed before)."""
        if self._sealer_for is None or self._sealer_for[0] != ttl:
            # trio's clock: a parked call lives in this process, and its state with it.
            sealer = RequestStateSealer(self._keys, ttl=ttl, clock=trio.current_time)
            self._sealer_for = (ttl, sealer)
        return self._sealer_for[1]

    def _start(
        self, binding: StateBinding, start: Callable[[ParkedCall], Awaitable[JsonObject]]
    ) -> ParkedCall:
        if self._nursery is None:
            raise InternalError("the trimcp gateway is not running")
        call = ParkedCall(secrets.token_urlsafe(16), binding)
        self._calls[call.call_id] = call
        self._nursery.start_soon(self._run, call, start)
        return call

    async def _run(
        self, call: ParkedCall, start: Callable[[ParkedCall], Awaitable[JsonObject]]
    ) -> None:
        with call.scope:
            try:
                call.finish(await start(call))
            except JsonRpcError as exc:
                call.finish(error_object_for(exc))
            except Exception as exc:  # the request-dispatch boundary (STYLE 6), moved here
                logger.error("gateway call %s failed", call.binding.method, exc_info=exc)
                call.finish(error_object_for(exc))
            await call.collected.wait()  # until a request takes the outcome, or the deadline
        if not call.collected.is_set():
            self._end(call, "no retry came within parked_call_ttl seconds")

    def _end(self, call: ParkedCall, why: str) -> None:
        """Forget ``call`` (cancelled at its backend if it still runs)."""
        call.scope.cancel()
        call.close(why)
        self._parked.pop(call.call_id, None)
        if self._calls.pop(call.call_id, None) is not None and not call.collected.is_set():
            self._ended[call.call_id] = why
            while len(self._ended) > max(1, self._limits()[0]):
                self._ended.popitem(last=False)

    def _resume(self, params: JsonObject, binding: StateBinding) -> ParkedCall:
        responses = params.get("inputResponses", {})
        if not isinstance(responses, dict) or not all(
            isinstance(answer, dict) for answer in responses.values()
        ):
            raise InvalidParams(
                "params.inputResponses must be an object of answers by key (each the result "
                "of the input request sent under that key)",
                {"param": "inputResponses"},
            )
        _, ttl = self._limits()
        sealer = self._sealer(ttl)
        opened = sealer.open(params.get("requestState"), binding)
        sealer.consume(opened)
        call_id, round_ = opened.payload.get("c"), opened.payload.get("r")
        call = self._calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            why = self._ended.get(call_id, "it ended") if isinstance(call_id, str) else "it ended"
            message = f"the call that asked for this input is no longer waiting ({why})"
            raise RequestStateRejected("expired", f"{message}; {_START_OVER}")
        if call.call_id not in self._parked or round_ != call.round:
            raise RequestStateRejected("replayed", f"requestState was already used; {_START_OVER}")
        del self._parked[call.call_id]
        call.deliver(responses)  # type: ignore[arg-type]  # checked above
        return call

    async def _round(self, call: ParkedCall, context: RequestContext) -> JsonObject:
        """Wait on ``call`` for this request: its outcome, or what it asks next."""
        call.attach(context)
        answered = False
        try:
            while True:
                outcome = call.outcome
                if outcome is not None:
                    answered = True
                    call.collected.set()
                    self._end(call, "it answered")
                    if isinstance(outcome, ErrorObject):
                        data = None if isinstance(outcome.data, Absent) else outcome.data
                        raise JsonRpcError(outcome.code, outcome.message, data)
                    return outcome
                if call.pending:
                    for _ in range(_SETTLE_PASSES):
                        await trio.lowlevel.checkpoint()
                    if call.outcome is None and call.pending:
                        answered = True
                        return self._park(call)
                    continue
                await call.wait_changed()
        finally:
            call.detach()
            if not answered:  # this request was cancelled: its call goes with it
                self._end(call, "its caller went away")

    def _park(self, call: ParkedCall) -> JsonObject:
        max_parked, ttl = self._limits()
        while len(self._parked) >= max_parked:
            oldest = next(iter(self._parked.values()))
            logger.warning(
                "gateway: %d calls wait for their callers' input already; cancelling the one "
                "parked longest ago (at %g) to make room ([gateway] max_parked_calls)",
                len(self._parked),
                oldest.parked_at,
            )
            self._end(oldest, f"cancelled to make room: at most {max_parked} calls may wait")
        call.park(trio.current_time(), ttl)
        self._parked[call.call_id] = call
        state = self._sealer(ttl).seal({"c": call.call_id, "r": call.round}, call.binding)
        requests: JsonObject = {
            key: {"method": ask.method, "params": ask.params} for key, ask in call.pending.items()
        }
        return {"resultType": "input_required", "inputRequests": requests, "requestState": state}
