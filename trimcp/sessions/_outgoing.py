"""The session's own requests to the client (sampling, elicitation, roots, ping): the answers.

``Session.request`` encodes a request and waits for it on a ``PendingAnswer`` (the wait both
sides share, in ``trimcp.transports``); the session's reader answers it when the response
arrives (``ResponseReceived``) and hands it each progress report for the request, which
restarts its timeout (Lifecycle > Timeouts, MAY). This module says what an answer is and
what the caller gets from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from trimcp.errors import JsonRpcError, TransportClosed
from trimcp.protocol import Result

if TYPE_CHECKING:
    from trimcp.protocol import ErrorObject, JsonObject, ProgressParams
    from trimcp.transports import PendingAnswer

__all__ = ["Answer", "Waiter", "unwrap"]

#: What answers one of our requests: the client's result or error, or None when the session
#: ended first.
Answer: TypeAlias = "Result | ErrorObject | None"
#: The wait for one of our requests.
Waiter: TypeAlias = "PendingAnswer[Answer, ProgressParams]"


def unwrap(method: str, response: Answer) -> JsonObject:
    """Return the result of an answered request, or raise what the answer says.

    Raises:
        TransportClosed: the session ended before the answer came.
        JsonRpcError: the client answered with an error.
    """
    if response is None:
        raise TransportClosed(f"the session ended before the client answered {method}")
    if isinstance(response, Result):
        return response.result
    data = None if not isinstance(response.data, dict | list | str | int | float) else response.data
    raise JsonRpcError(response.code, response.message, data)
