"""What the gateway sends a backend, said in the era the backend speaks.

The gateway's ``ClientSession`` to a backend speaks MCP 2026-07-28 when the backend does,
else the 2025-11-25 handshake era (``ClientSession.era``). Most requests are the same in
both, and go as they are (``ClientSession.request``); these differ (MCP 2026-07-28,
Changelog, https://modelcontextprotocol.io/specification/2026-07-28/changelog):

* ``resources/subscribe`` and ``resources/unsubscribe`` were replaced by the session's
  ``subscriptions/listen`` stream: ``ClientSession.subscribe_resource`` says it either way;
* ``logging/setLevel`` was replaced by a ``logLevel`` in each request's ``_meta``:
  ``ClientSession.set_logging_level`` says it either way (``_logs.py`` picks the level);
* ``ping`` was removed: ``ClientSession.ping`` asks ``server/discover`` instead;
* ``tools/call``, ``prompts/get`` and ``resources/read`` may be answered with an
  ``InputRequiredResult``: towards a 2026-07-28 backend they go through the session's own
  methods, which answer every round with the gateway's ``ClientHandlers`` (``_relay.py``)
  and return the complete result. Towards a 2025-11-25 backend they go as they are, and the
  backend asks with requests of its own, answered by the same handlers.

The result of a 2026-07-28 backend loses its ``resultType``: that member belongs to the hop
it came on, and the gateway sets its own for a 2026-07-28 caller (``_modern.py``). The
legacy ``task`` member of ``tools/call`` (MCP 2025-11-25 tasks) goes to 2025-11-25 backends
only: the gateway declares no tasks, and 2026-07-28 moved them to an extension.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from trimcp.errors import InvalidParams
from trimcp.protocol import Era

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.client import ClientSession, Progress
    from trimcp.protocol import JsonObject

__all__ = ["send"]


async def send(
    session: ClientSession,
    method: str,
    params: JsonObject,
    on_progress: Callable[[Progress], Awaitable[None]] | None = None,
) -> JsonObject:
    """Send ``method`` to the backend of ``session`` in its era; return the result.

    Raises:
        JsonRpcError: the backend refused (or did not declare the capability).
        InvalidParams: a prompt argument is not a string (the schema's ``string``).
    """
    done = await _said_by_session(session, method, params)
    if done is not None:
        return done
    if session.era is not Era.MODERN:
        return await session.request(method, params, on_progress=on_progress)
    if method == "tools/call":
        arguments = params.get("arguments")
        meta = params.get("_meta")
        called = await session.call_tool(
            str(params.get("name")),
            dict(arguments) if isinstance(arguments, Mapping) else {},
            on_progress=on_progress,
            meta=dict(meta) if isinstance(meta, Mapping) else None,
        )
        result = dict(called.raw)
        result.pop("resultType", None)
        return result
    if method == "prompts/get":
        return await _get_prompt(session, params)
    if method == "resources/read":
        contents = await session.read_resource(str(params.get("uri")))
        return {"contents": [item.to_wire() for item in contents]}
    return await session.request(method, params, on_progress=on_progress)


async def _said_by_session(
    session: ClientSession, method: str, params: JsonObject
) -> JsonObject | None:
    """Send what the session has an era-aware method for; None if it has none."""
    if method == "resources/subscribe":
        await session.subscribe_resource(str(params.get("uri")))
    elif method == "resources/unsubscribe":
        await session.unsubscribe_resource(str(params.get("uri")))
    elif method == "logging/setLevel":
        await session.set_logging_level(str(params.get("level")))
    elif method == "ping":
        await session.ping()
    else:
        return None
    return {}


async def _get_prompt(session: ClientSession, params: JsonObject) -> JsonObject:
    arguments = params.get("arguments")
    given: dict[str, str] | None = None
    if isinstance(arguments, Mapping):
        given = {}
        for key, value in arguments.items():
            if not isinstance(value, str):
                raise InvalidParams(f"prompt argument {key!r} must be a string", {"argument": key})
            given[key] = value
    got = await session.get_prompt(str(params.get("name")), given)
    result: JsonObject = {"messages": [message.to_wire() for message in got.messages]}
    if got.description is not None:
        result["description"] = got.description
    if got.meta is not None:
        result["_meta"] = got.meta
    return result
