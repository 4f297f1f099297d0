"""How a session says "the server is shutting down" (the graceful stop's drain, ``Drain``).

MCP defines no shutdown message (MCP 2025-11-25, Lifecycle > Shutdown,
https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#shutdown): a
session ends when its transport closes. But a request that arrives while the server drains,
or one still running when the drain's time is up, must be answered, not dropped: JSON-RPC 2.0
(section 5.1) reserves -32000 to -32099 for implementation-defined server errors, and
``SHUTTING_DOWN`` (-32000) is that answer, with a message that says what happened and
``data.reason`` = ``"shutting_down"`` for programs. The HTTP endpoint answers a POST it
refuses while draining with a 503 whose body is the same error.
"""

from __future__ import annotations

import typing

from trimcp.protocol import ErrorObject

__all__ = ["SHUTTING_DOWN", "SHUTTING_DOWN_MESSAGE", "shutting_down"]

#: The JSON-RPC error code of a request refused or cancelled because the server stops.
SHUTTING_DOWN: typing.Final = -32000
#: The message of a new request refused while the server drains.
SHUTTING_DOWN_MESSAGE: typing.Final = (
    "the server is shutting down and takes no new requests; retry once it is back"
)


def shutting_down(message: str = SHUTTING_DOWN_MESSAGE) -> ErrorObject:
    """Return the error that answers a request the stopping server will not serve."""
    return ErrorObject(code=SHUTTING_DOWN, message=message, data={"reason": "shutting_down"})
