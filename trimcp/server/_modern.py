"""How ``MCPServer`` serves a per-request (MCP 2026-07-28) request.

The same registered tools, resources and prompts answer both eras; what differs here:

* ``server/discover`` answers what ``initialize`` used to (Server > Discovery,
  https://modelcontextprotocol.io/specification/2026-07-28/server/discover);
* the methods 2026-07-28 removed (``initialize``, ``ping``, ``logging/setLevel``,
  ``resources/subscribe``/``unsubscribe``, ``tasks/result`` and ``tasks/list``) are -32601;
* ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` belong to the Tasks extension
  (SEP-2663), and a task-supporting tool's call may answer with a task (``_tasks_ext.py``);
* ``tools/call``, ``resources/read`` and ``prompts/get`` run in multi round-trip passes
  (``_mrtr.py``), so ``ctx.elicit`` and friends answer with an ``InputRequiredResult``;
* every result carries ``resultType``; cacheable ones ``ttlMs`` and ``cacheScope``
  (``_cache_hints.py``);
* an unknown resource is -32602 with ``data.uri`` (the revision forbids -32002);
* ``subscriptions/listen`` holds its request open and writes the list-changed and
  resource-updated notifications the client opted in to, each tagged with the subscription
  id, after a first ``notifications/subscriptions/acknowledged`` (Basic > Patterns >
  Subscriptions); the server's broadcasts reach it as they reach sessions (a ``Listener``),
  and the tasks it names in ``taskIds`` as ``notifications/tasks`` (SEP-2663).
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Final, Protocol

from trimcp.errors import InvalidParams, MethodNotFound, ResourceNotFound
from trimcp.protocol import HANDSHAKE_ONLY_METHODS, discover_result
from trimcp.server._context import Context
from trimcp.server._dispatch import METHODS, Call, dispatch
from trimcp.server._mrtr import MRTR_METHODS, end_round, open_round, run_round
from trimcp.server._tasks_ext import EXTENSION_ID as TASKS_EXTENSION
from trimcp.server._tasks_ext import TASK_METHODS
from trimcp.sessions import serve_listen

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from trimcp.protocol import Implementation, JsonObject, Request, ServerCapabilities
    from trimcp.server._broadcast import SessionSet
    from trimcp.server._cache_hints import CachePolicy
    from trimcp.server._catalog import Catalog
    from trimcp.server._pagination import Paginator
    from trimcp.server._request_state import RequestStateSealer
    from trimcp.server._tasks import TaskStore
    from trimcp.server._tasks_ext import TasksExtension
    from trimcp.server._tasks_ext_store import ExtensionTask
    from trimcp.sessions import RequestContext, SessionHandle

    #: The server's parts a modern request may use (``MCPServer`` holds them).
    ModernParts = tuple[
        SessionSet, Paginator, TaskStore, RequestStateSealer, CachePolicy, TasksExtension
    ]

__all__ = ["REMOVED_METHODS", "ModernHost", "serve_modern"]

#: Methods of the handshake era that 2026-07-28 removed (Changelog), answered -32601. The
#: Tasks extension has no tasks/result (tasks/get inlines the result) and no tasks/list
#: (SEP-2663: -32601 for both); ``trimcp.protocol`` lists them with the rest.
REMOVED_METHODS: Final = HANDSHAKE_ONLY_METHODS

# subscriptions/listen filter member -> (notification, the capability flag it needs).
_LIST_FILTERS: Final = (
    ("toolsListChanged", "notifications/tools/list_changed", "tools_list_changed"),
    ("promptsListChanged", "notifications/prompts/list_changed", "prompts_list_changed"),
    ("resourcesListChanged", "notifications/resources/list_changed", "resources_list_changed"),
)


class ModernHost(Protocol):
    """What of the server a modern request needs (``MCPServer`` provides it)."""

    @property
    def server_info(self) -> Implementation:
        """Name and version, for ``serverInfo``."""
        ...

    @property
    def instructions(self) -> str | None:
        """The ``instructions`` hint."""
        ...

    @property
    def capabilities(self) -> ServerCapabilities:
        """What the server declares now."""
        ...


async def serve_modern(  # noqa: PLR0913 - the server's parts a request may use, each its own
    host: ModernHost,
    catalog: Catalog,
    request: Request,
    context: RequestContext,
    parts: ModernParts,
    *,
    extra: JsonObject | None = None,
) -> JsonObject:
    """Answer one modern request (see the module docstring).

    ``extra`` is added to ``server/discover``'s capabilities (extensions).

    Raises:
        JsonRpcError: the request is refused or its handler failed.
    """
    sessions, paginator, tasks, _, cache, tasks_ext = parts
    method = request.method
    params = request.params or {}
    if method == "server/discover":
        result = _discover(host, extra)
    elif method == "subscriptions/listen":
        return await _listen(host, catalog, (sessions, tasks_ext), params, context)
    elif method in TASK_METHODS:
        result = await tasks_ext.serve_method(method, params, context)
    elif method in REMOVED_METHODS or method not in METHODS:
        raise MethodNotFound(method, _not_found(method))
    elif method in MRTR_METHODS:
        result = await _serve_rounds(catalog, method, params, context, parts)
        if result.get("resultType") in ("input_required", "task"):
            return result
    else:
        call = Call(Context(context, catalog.read_resource), sessions, paginator, context, tasks)
        result = await _dispatch(catalog, method, params, call)
    result.setdefault("resultType", "complete")
    cache.apply(method, result, authorized=context.identity is not None)
    return result


async def _serve_rounds(
    catalog: Catalog,
    method: str,
    params: JsonObject,
    context: RequestContext,
    parts: ModernParts,
) -> JsonObject:
    """Serve one pass of a multi round-trip method; a task-supporting call may become a task.

    Raises:
        JsonRpcError: the request is refused or its handler failed.
    """
    sessions, paginator, tasks, sealer, _, tasks_ext = parts
    runs_as_task = tasks_ext.may_become_task(catalog, method, params, context)
    round_, binding = open_round(sealer, method, params, context.identity)
    handler_context = Context(context, catalog.read_resource, round_)
    call = Call(handler_context, sessions, paginator, context, tasks)

    async def body() -> JsonObject:
        return await _dispatch(catalog, method, params, call)

    if not runs_as_task:
        return await run_round(round_, body, sealer, binding)
    result, is_task = await tasks_ext.serve_call(round_, context, params, body)
    if is_task and result is not None:
        return result
    return end_round(round_, result, sealer, binding)


async def _dispatch(catalog: Catalog, method: str, params: JsonObject, call: Call) -> JsonObject:
    try:
        return await dispatch(catalog, method, params, call)
    except ResourceNotFound as exc:
        # 2026-07-28 forbids -32002: an unknown resource is invalid params (SEP-2164).
        raise InvalidParams(f"Resource not found: {exc.uri}", {"uri": exc.uri}) from None


def _not_found(method: str) -> str:
    if method in ("tasks/result", "tasks/list"):
        return (
            f"Method not found: {method} is not part of MCP 2026-07-28: the Tasks extension "
            f"({TASKS_EXTENSION}) inlines a task's result in tasks/get and lists no tasks; "
            "poll tasks/get with the taskId a tools/call returned"
        )
    if method in REMOVED_METHODS:
        return (
            f"Method not found: {method} is not part of MCP 2026-07-28 (removed with the "
            "initialize handshake); send it in a session (initialize first, 2025-11-25) or "
            "use its replacement (server/discover, subscriptions/listen, _meta logLevel)"
        )
    return f"Method not found: {method}"


def _discover(host: ModernHost, extra: JsonObject | None) -> JsonObject:
    """The shared ``server/discover`` result, plus what only an ``MCPServer`` adds."""
    result = discover_result(host.server_info, host.capabilities, host.instructions)
    wire = typing.cast("JsonObject", result["capabilities"])
    if host.capabilities.tasks:
        # Some tool allows tasks: offered as the extension, never as the 2025-11-25 core
        # capability (SEP-2663, Backward Compatibility: MUST NOT advertise the legacy one).
        extensions = wire.get("extensions")
        wire["extensions"] = {
            **(extensions if isinstance(extensions, dict) else {}),
            TASKS_EXTENSION: {},
        }
    if extra:
        wire.update(extra)
    return result


@typing.final
class _ServerListen:
    """The server's broadcasts lent to one listen stream (``trimcp.sessions.ListenHost``)."""

    __slots__ = ("_catalog", "_context", "_sessions")

    def __init__(self, catalog: Catalog, sessions: SessionSet, context: RequestContext) -> None:
        self._catalog = catalog
        self._sessions = sessions
        self._context = context

    def join(self, listener: SessionHandle) -> None:
        self._sessions.opened(listener)

    async def subscribe(self, listener: SessionHandle, uri: str) -> bool:
        try:
            found = self._catalog.find_resource(uri)
        except ResourceNotFound:  # a template matched, but a variable does not convert
            found = None
        if found is None:
            return False  # not ours: left out of the acknowledgement
        # The resource's own subscribing hook runs first, as for resources/subscribe.
        await found[0].subscribing(uri, Context(self._context, self._catalog.read_resource))
        self._sessions.subscribe(listener, uri)
        return True

    def leave(self, listener: SessionHandle) -> None:
        self._sessions.closed(listener)


@typing.final
class _TaskStatus:
    """The Tasks extension's ``taskIds`` on a listen stream (``trimcp.sessions.ListenExtra``)."""

    __slots__ = ("_followed", "_tasks")

    def __init__(self, tasks: TasksExtension) -> None:
        self._tasks = tasks
        self._followed: list[ExtensionTask] = []

    def accept(self, wanted: JsonObject, context: RequestContext) -> JsonObject | None:
        followed = self._tasks.followed(wanted, context)
        if followed is None:
            return None
        self._followed = followed
        return {"taskIds": [task.task_id for task in followed]}

    async def run(self, send: Callable[[str, JsonObject | None], Awaitable[None]]) -> None:
        if self._followed:
            await self._tasks.follow(self._followed, send)


async def _listen(
    host: ModernHost,
    catalog: Catalog,
    parts: tuple[SessionSet, TasksExtension],
    params: JsonObject,
    context: RequestContext,
) -> JsonObject:
    """Serve ``subscriptions/listen`` (``trimcp.sessions.serve_listen``), with task status.

    Raises:
        InvalidParams: ``notifications`` is missing or malformed.
        MissingClientCapability: ``taskIds`` without the Tasks extension declared (-32021).
    """
    sessions, tasks_ext = parts
    return await serve_listen(
        context,
        params,
        _ServerListen(catalog, sessions, context),
        host.server_info,
        host.capabilities,
        extras=(_TaskStatus(tasks_ext),),
    )
