"""One function per MCP method the server answers, and the table that finds them.

Each method function takes the server's ``Catalog`` (what is registered), the request's
params (``{}`` when absent) and a ``Call`` (the request context, the server's sessions and
paginator) and returns the JSON result or raises a ``JsonRpcError``. ``ping`` and
``initialize`` never get here: the protocol core answers them. A method missing from
``METHODS`` is -32601.
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trimcp.errors import InvalidCursor, InvalidParams, MethodNotFound, ResourceNotFound
from trimcp.protocol import LATEST_VERSION, features
from trimcp.server._compat import call_result_for, definition_for, prompt_result_for
from trimcp.server._completion import (
    PromptRef,
    completion_result,
    read_completion_request,
)
from trimcp.server._pagination import snapshot_of
from trimcp.server._tasks import TaskRequest, announce, outcome, run_task

if TYPE_CHECKING:
    from trimcp.protocol import JsonObject, JsonValue, VersionFeatures
    from trimcp.server._agent_skills import SkillDirectory
    from trimcp.server._broadcast import SessionSet
    from trimcp.server._catalog import Catalog
    from trimcp.server._context import Context
    from trimcp.server._pagination import Paginator
    from trimcp.server._tasks import TaskStore
    from trimcp.server._tools import ToolEntry
    from trimcp.sessions import RequestContext

__all__ = ["METHODS", "Call", "dispatch"]


@typing.final
@dataclass(frozen=True, slots=True)
class Call:
    """What a method function may use besides the catalog."""

    context: Context
    sessions: SessionSet
    paginator: Paginator
    request: RequestContext
    tasks: TaskStore


Method = Callable[["Catalog", "JsonObject", Call], Awaitable["JsonObject"]]


def _string(params: JsonObject, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParams(f"params.{key} must be a string", {"param": key})
    return value


def _older(call: Call) -> VersionFeatures | None:
    """What the session's version allows, if it is older than the newest (else None)."""
    version = call.context.session.protocol_version
    return None if version is None or version == LATEST_VERSION else features(version)


def _definitions(call: Call, kind: str, items: dict[str, JsonObject]) -> dict[str, JsonObject]:
    older = _older(call)
    if older is None:
        return items
    return {key: definition_for(kind, item, older) for key, item in items.items()}


def _page(
    call: Call, params: JsonObject, method: str, key: str, items: dict[str, JsonObject]
) -> JsonObject:
    cursor = params.get("cursor")
    text = cursor if cursor is None or isinstance(cursor, str) else ""  # "" is never valid
    try:
        page = call.paginator.page(
            list(items.values()), text, method=method, snapshot=snapshot_of(items)
        )
    except InvalidCursor as exc:
        raise InvalidParams(str(exc), {"cursor": cursor}) from exc
    result: JsonObject = {key: list["JsonValue"](page.items)}
    if page.next_cursor is not None:
        result["nextCursor"] = page.next_cursor
    return result


# --- tools -----------------------------------------------------------------------------------


async def _tools_list(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    tools = {name: entry.definition for name, entry in catalog.tools.items()}
    return _page(call, params, "tools/list", "tools", _definitions(call, "tool", tools))


async def _tools_call(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    name = _string(params, "name")
    tool = catalog.tools.get(name)
    if tool is None:
        # Tools > Error Handling: an unknown tool is a protocol error (-32602).
        raise InvalidParams(f"Unknown tool: {name}", {"name": name})
    # Tasks (2025-11-25): only where this session declared them; elsewhere ``task`` is
    # ignored and every tool runs as a plain call (Tasks: MUST process normally).
    if call.context.session.server_capabilities.tasks_tools_call:
        task = params.get("task")
        if task is not None:
            if tool.task_support == "forbidden":
                raise MethodNotFound(
                    "tools/call",
                    f"Tool {name} does not support task-augmented calls "
                    "(its execution.taskSupport is forbidden); call it without params.task",
                )
            return _start_task(tool, params, task, call)
        if tool.task_support == "required":
            raise MethodNotFound(
                "tools/call",
                f"Tool {name} must be called as a task (execution.taskSupport is required); "
                'add params.task, e.g. {"ttl": 60000}',
            )
    result = await tool.call(params.get("arguments"), call.context)
    older = _older(call)
    return result if older is None else call_result_for(result, older)


def _start_task(tool: ToolEntry, params: JsonObject, task: object, call: Call) -> JsonObject:
    session = call.context.session
    record = call.tasks.create(session, task)
    view = TaskRequest(record, session, call.request.request_id, call.request.keep_progress())
    context = call.context.for_task(view)
    arguments = params.get("arguments")

    async def work() -> JsonObject:
        return await tool.call(arguments, context)

    async def run() -> None:
        await run_task(view, work, f"tools/call {tool.name}")

    session.start_soon(run)
    return {"task": record.to_wire()}


# --- tasks -----------------------------------------------------------------------------------


async def _tasks_get(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    return call.tasks.get(call.context.session, params).to_wire()


async def _tasks_result(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    record = call.tasks.get(call.context.session, params)
    await record.done.wait()
    return outcome(record)


async def _tasks_list(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    return _page(call, params, "tasks/list", "tasks", call.tasks.listed(call.context.session))


async def _tasks_cancel(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    session = call.context.session
    record = call.tasks.get(session, params)
    # Cancelled before the reply, and for good (Tasks > Cancellation: MUST).
    if not record.move("cancelled", "cancelled by the client"):
        raise InvalidParams(
            f"Task {record.task_id} is already {record.status}; only a task that is not "
            "terminal can be cancelled",
            {"taskId": record.task_id, "status": record.status},
        )
    record.scope.cancel()
    announce(session, record)
    return record.to_wire()


# --- resources -------------------------------------------------------------------------------


async def _resources_list(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    resources = {uri: entry.definition for uri, entry in catalog.resources.items()}
    # Then what templates with ``list_with`` stand for now; a static URI keeps its place.
    fresh = params.get("cursor") is None
    for template in catalog.templates.values():
        for item in await template.listed(call.context, fresh):
            resources.setdefault(str(item["uri"]), item)
    if catalog.skills is not None:
        for item in catalog.skills.resource_definitions():
            resources.setdefault(str(item["uri"]), item)
    return _page(
        call, params, "resources/list", "resources", _definitions(call, "resource", resources)
    )


async def _templates_list(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    templates = {uri: entry.definition for uri, entry in catalog.templates.items()}
    listed = _definitions(call, "template", templates)
    return _page(call, params, "resources/templates/list", "resourceTemplates", listed)


async def _resources_read(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    contents = await catalog.read_resource(_string(params, "uri"), call.context)
    return {"contents": list["JsonValue"](contents)}


async def _subscribe(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    uri = _string(params, "uri")
    found = catalog.find_resource(uri)
    if found is None:
        raise ResourceNotFound(uri)
    await found[0].subscribing(uri, call.context)
    # No checkpoint between the hook's end and the record, so a hook that starts watching
    # ``uri`` never sees it unsubscribed in between.
    call.sessions.subscribe(call.context.session, uri)
    return {}


async def _unsubscribe(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    call.sessions.unsubscribe(call.context.session, _string(params, "uri"))
    return {}


# --- prompts, completion, logging ------------------------------------------------------------


async def _prompts_list(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    prompts = {name: entry.definition for name, entry in catalog.prompts.items()}
    return _page(call, params, "prompts/list", "prompts", _definitions(call, "prompt", prompts))


async def _prompts_get(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    name = _string(params, "name")
    prompt = catalog.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}", {"name": name})
    result = await prompt.render(params.get("arguments"), call.context)
    older = _older(call)
    return result if older is None else prompt_result_for(result, older)


async def _complete(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    handler = catalog.completion
    if handler is None:
        raise MethodNotFound("completion/complete")
    request = read_completion_request(params)
    ref = request.ref
    if isinstance(ref, PromptRef):
        if ref.name not in catalog.prompts:
            raise InvalidParams(f"Unknown prompt: {ref.name}", {"name": ref.name})
    elif ref.uri not in catalog.templates and catalog.find_resource(ref.uri) is None:
        raise InvalidParams(f"Unknown resource template: {ref.uri}", {"uri": ref.uri})
    answer = await handler(
        ref, request.argument_name, request.argument_value, request.context_arguments
    )
    return completion_result(answer)


async def _set_level(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    level = params.get("level")
    try:
        call.context.session.set_log_level(str(level))
    except ValueError as exc:
        raise InvalidParams(str(exc), {"level": level}) from exc
    return {}


# --- Agent Skills (SEP-2640, the io.modelcontextprotocol/skills extension) --------------------


def _skills(catalog: Catalog, method: str) -> SkillDirectory:
    if catalog.skills is None:
        raise MethodNotFound(method, f"Method not found: {method} (this server serves no skills)")
    return catalog.skills


async def _skills_list(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    return _skills(catalog, "skills/list").list_skills(params)


async def _skills_get(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    return _skills(catalog, "skills/get").get_skill(params)


async def _directory_read(catalog: Catalog, params: JsonObject, call: Call) -> JsonObject:
    return _skills(catalog, "resources/directory/read").read_directory(params)


METHODS: dict[str, Method] = {
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "resources/list": _resources_list,
    "resources/templates/list": _templates_list,
    "resources/read": _resources_read,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "prompts/list": _prompts_list,
    "prompts/get": _prompts_get,
    "completion/complete": _complete,
    "logging/setLevel": _set_level,
    "tasks/get": _tasks_get,
    "tasks/result": _tasks_result,
    "tasks/list": _tasks_list,
    "tasks/cancel": _tasks_cancel,
    "skills/list": _skills_list,
    "skills/get": _skills_get,
    "resources/directory/read": _directory_read,
}


async def dispatch(catalog: Catalog, method: str, params: JsonObject, call: Call) -> JsonObject:
    """Run the method function for ``method``.

    Raises:
        MethodNotFound: no such method.
        JsonRpcError: whatever the method function raises.
    """
    function = METHODS.get(method)
    if function is None:
        raise MethodNotFound(method)
    return await function(catalog, params, call)
