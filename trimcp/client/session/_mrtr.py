"""Multi round-trip requests: answering a 2026-07-28 server's ``InputRequiredResult``.

A 2026-07-28 server asks for an elicitation, a sampling or the roots by answering
``tools/call``, ``resources/read`` or ``prompts/get`` with ``resultType:
"input_required"`` (Basic > Patterns > Multi Round-Trip Requests,
https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr). ``rounds``
answers each ``inputRequests`` entry with the session's ``ClientHandlers`` (the same ones
that answer a 2025-11-25 server's requests), then sends the method again through ``send``:
the session core gives every send a new JSON-RPC id; the params are the original ones plus
``inputResponses`` and the exact ``requestState`` (none if none was given). Nothing of one
call's rounds touches another call running beside it.

``input_required_from_wire`` reads such a result strictly (it steers what the client does
next); ``retry_params`` builds the retry's params. A request for a capability the client
did not declare (the server MUST NOT send one) fails the call with ``RemoteProtocolError``,
as does a round beyond ``max_rounds``: a server asking forever would otherwise hold the
caller forever. A handler that raises fails the call with its exception: a round has no
way to carry an error back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from trimcp.errors import InvalidParams, MethodNotFound, RemoteProtocolError
from trimcp.protocol import Request

from ._discovery import result_type
from ._handlers import answer_request

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from trimcp.protocol import ClientConnection, JsonObject

    from ._handlers import ClientHandlers

__all__ = [
    "INPUT_METHODS",
    "MRTR_METHODS",
    "InputRequest",
    "InputRequired",
    "answer_input",
    "input_required_from_wire",
    "retry_params",
    "rounds",
]

logger = logging.getLogger(__name__)

#: The only requests a server may answer with an ``InputRequiredResult`` (MRTR, "Server
#: Requirements"): from any other method it is a protocol violation.
MRTR_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get"})

#: What an ``inputRequests`` entry may ask for (schema ``InputRequest``).
INPUT_METHODS: Final = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})

#: Members of the original params that belong to one round only; a retry sets its own.
_ROUND_KEYS: Final = ("inputResponses", "requestState")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequest:
    """One entry of ``inputRequests``: the server's key, the method and its params."""

    key: str
    method: str
    params: JsonObject


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InputRequired:
    """An ``InputRequiredResult``: what to fulfil before retrying, and the state to echo.

    ``request_state`` is None when the server sent none; the retry then carries none.
    """

    requests: tuple[InputRequest, ...] = ()
    request_state: str | None = None


def input_required_from_wire(result: JsonObject, method: str) -> InputRequired:
    """Read the ``InputRequiredResult`` that answered ``method``.

    Raises:
        RemoteProtocolError: ``method`` may not get one; neither ``inputRequests`` nor
            ``requestState`` is present (the schema requires at least one); an entry is not
            an object with a known ``method`` and object ``params``; or ``requestState`` is
            not a string.
    """
    where = f"{method}: InputRequiredResult"
    if method not in MRTR_METHODS:
        raise RemoteProtocolError(
            f"{where}: only {', '.join(sorted(MRTR_METHODS))} may ask for input"
        )
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        raise RemoteProtocolError(f"{where}: requestState must be a string")
    wire = result.get("inputRequests")
    if wire is None and state is None:
        raise RemoteProtocolError(f"{where}: has neither inputRequests nor requestState")
    if wire is not None and not isinstance(wire, dict):
        raise RemoteProtocolError(f"{where}: inputRequests must be an object")
    requests = tuple(_entry(where, key, value) for key, value in (wire or {}).items())
    return InputRequired(requests=requests, request_state=state)


def _entry(where: str, key: str, value: object) -> InputRequest:
    if not isinstance(value, dict):
        raise RemoteProtocolError(f"{where}: inputRequests[{key!r}] must be an object")
    method = value.get("method")
    if not isinstance(method, str) or method not in INPUT_METHODS:
        raise RemoteProtocolError(
            f"{where}: inputRequests[{key!r}] asks for {method!r}, not one of "
            f"{', '.join(sorted(INPUT_METHODS))}"
        )
    params = value.get("params", {})
    if not isinstance(params, dict):
        raise RemoteProtocolError(f"{where}: inputRequests[{key!r}].params must be an object")
    return InputRequest(key=key, method=method, params=params)


def retry_params(
    params: JsonObject | None, responses: Mapping[str, JsonObject], request_state: str | None
) -> JsonObject:
    """Return the params of the retry: the original ones, the answers, the exact state.

    ``inputResponses`` holds one answer per key the server asked about (left out when it
    asked for nothing: a result with only ``requestState`` is retried at once);
    ``requestState`` only if the server gave one, unchanged. A previous round's members
    are replaced, never kept.
    """
    retry: JsonObject = {
        key: value for key, value in (params or {}).items() if key not in _ROUND_KEYS
    }
    if responses:
        retry["inputResponses"] = dict(responses)
    if request_state is not None:
        retry["requestState"] = request_state
    return retry


async def rounds(
    send: Callable[[JsonObject | None], Awaitable[JsonObject]],
    method: str,
    params: JsonObject | None,
    answer: Callable[[InputRequest], Awaitable[JsonObject]],
    max_rounds: int,
) -> JsonObject:
    """Send ``method`` with ``params`` until the server's result is complete; return it.

    ``send`` sends one round (a new request each time); ``answer`` fulfils one input
    request. An absent ``resultType`` counts as complete (older servers send none).

    Raises:
        RemoteProtocolError: an unknown ``resultType``, a malformed
            ``InputRequiredResult``, an undeclared capability asked for, or more than
            ``max_rounds`` rounds.
        Exception: whatever ``send`` or ``answer`` raised.
    """
    current = params
    for done in range(max_rounds + 1):
        result = await send(current)
        if result_type(result, method) == "complete":
            return result
        if done == max_rounds:
            break
        needed = input_required_from_wire(result, method)
        logger.debug(
            "%s needs input (%s); round %d",
            method,
            ", ".join(f"{r.key}: {r.method}" for r in needed.requests) or "state only",
            done + 1,
        )
        responses = {request.key: await answer(request) for request in needed.requests}
        current = retry_params(params, responses, needed.request_state)
    raise RemoteProtocolError(
        f"{method}: the server still asked for input after {max_rounds} rounds "
        "(ClientSessionOptions.max_input_rounds); the call was given up"
    )


async def answer_input(
    handlers: ClientHandlers, connection: ClientConnection, request: InputRequest
) -> JsonObject:
    """Fulfil one input request with ``handlers``; return the wire result.

    ``connection`` checks the declared capabilities, as it does a 2025-11-25 server's
    requests.

    Raises:
        RemoteProtocolError: the request needs a capability the client did not declare.
        Exception: whatever the handler raised.
    """
    try:
        connection.check_declared(request.method, request.params)
    except (MethodNotFound, InvalidParams) as exc:
        raise RemoteProtocolError(
            f"the server asked for {request.method} (input {request.key!r}) against the "
            f"client's declared capabilities: {exc.message}"
        ) from exc
    return await answer_request(
        handlers, Request(id=request.key, method=request.method, params=request.params)
    )
