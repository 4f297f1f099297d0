"""The request commands: ``trimcp call``, ``read``, ``get-prompt`` and ``complete``.

Each sends one request to one server (its TARGET), once it is connected, with the server's
log messages and the request's progress on stderr meanwhile (``_output.Activity``). A name
the server does not offer (a tool, a prompt, a template, an argument) is answered before
anything is sent, with the closest names; an error answer is printed with the server's name
and exits 1, as does a tool result with ``isError``.

``call`` runs a tool its server marks destructive only when the user allowed it: ``--yes``,
``--allow GLOB`` (the tool's name or its ``mcp__server__tool`` name), or the server entry's
``alwaysAllow`` / ``autoApprove`` list (``ServerConfig.always_allow``, which the
``ConnectionManager`` honours). The flags answer the ``PermissionPolicy``'s question, since
there is no one else to ask; a refusal lists each way to allow the call.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from typing import TYPE_CHECKING, cast

from trimcp.cli._args import as_strings, parse_arguments
from trimcp.cli._oneshot import (
    FAILURE,
    catalog_of,
    connect_one,
    prompt_arguments,
    resolve_scope,
    run_host,
    say_unknown,
    session_of,
)
from trimcp.cli._output import (
    Activity,
    dump_json,
    is_terminal,
    write_completion,
    write_prompt,
    write_resource,
    write_tool_result,
)
from trimcp.errors import JsonRpcError, ToolCallDenied

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable, Sequence

    from trimcp.client import (
        CallRequest,
        ConfigSource,
        ConnectionManager,
        HostTool,
        PermissionPolicy,
    )
    from trimcp.protocol import JsonObject

__all__ = ["run_call", "run_complete", "run_get_prompt", "run_read"]


def _request(
    args: argparse.Namespace,
    body: Callable[[ConnectionManager, str, Activity], Awaitable[int]],
    *,
    permissions: PermissionPolicy | None = None,
) -> int:
    """Run one request to ``args.target``: connected first, the server's log shown meanwhile."""
    scope = resolve_scope(args)
    assert scope.server is not None
    server = scope.server
    activity = Activity()

    async def run(manager: ConnectionManager) -> int:
        if not await connect_one(manager, server, args.wait):
            return FAILURE
        try:
            return await body(manager, server, activity)
        except JsonRpcError as exc:
            activity.close()
            sys.stderr.write(f"{server} answered with an error: {exc}\n")
            return FAILURE

    return run_host(scope.config, run, activity=activity, permissions=permissions)


def _settled(activity: Activity) -> None:
    """Take the progress line away once the answer is in.

    Log messages that came before the answer were shown already: the session hands an
    answer to its caller only after its hooks handled the notifications that preceded it.
    """
    activity.close()


def run_call(args: argparse.Namespace) -> int:
    """``trimcp call``: call one tool; exit 1 when it reports an error (``isError``)."""
    # Read from JSON or from words that are JSON or strings: JSON values, whatever the type says.
    arguments = cast("JsonObject", parse_arguments(args.arguments, args.arg_file))

    async def body(manager: ConnectionManager, server: str, activity: Activity) -> int:
        tools = [t for t in await manager.all_tools() if t.server == server]
        tool = next((t for t in tools if args.tool in (t.name, t.qualified_name)), None)
        if tool is None:
            return say_unknown(
                server, "tool", args.tool, [t.name for t in tools], f"trimcp tools {server}"
            )
        try:
            result = await manager.call_tool(
                tool.qualified_name, arguments, on_progress=activity.progress
            )
        except ToolCallDenied as exc:
            activity.close()
            source = (await manager.servers())[server].source
            sys.stderr.write(_refusal(tool, exc, source) + "\n")
            return FAILURE
        _settled(activity)
        if args.json:
            dump_json(result)
        else:
            write_tool_result(result)
        return FAILURE if result.get("isError") else 0

    return _request(args, body, permissions=_permissions(args.yes, args.allow))


def _permissions(yes: bool, allowed: Sequence[str]) -> PermissionPolicy:
    """The call's policy: what the policy would ask about, ``--yes`` / ``--allow`` answer."""
    from trimcp.client import PermissionPolicy

    async def answer(request: CallRequest) -> bool:
        names = (request.tool, request.qualified_name)
        return yes or any(fnmatch.fnmatchcase(n, glob) for glob in allowed for n in names)

    return PermissionPolicy(ask=answer)


def _refusal(tool: HostTool, exc: ToolCallDenied, source: ConfigSource | None) -> str:
    """Why the call was not made, and each way to allow it (``source``: the server's file)."""
    hints = tool.annotations or {}
    destructive = hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True
    why = f'{tool.server} marks its tool "{tool.name}" destructive' if destructive else f"{exc}"
    lines = [
        f"{why}: trimcp call runs it only when told to, with one of",
        "  --yes                       (this call, whatever the tool is)",
        f"  --allow {tool.name:<19} (this tool; a glob, such as --allow '{tool.name}*', too)",
    ]
    if source is not None and source.layer == "sys_config":
        lines.append(
            f'  always_allow = ["{tool.name}"] in [upstreams.{tool.server}] of {source.path}'
        )
    elif source is not None and source.path is not None:
        lines.append(
            f'  "alwaysAllow": ["{tool.name}"] in the entry of "{tool.server}" in '
            f"{source.describe()}"
        )
    return "\n".join(lines)


def run_read(args: argparse.Namespace) -> int:
    """``trimcp read``: a resource's contents (one binary item to a file or pipe as bytes)."""

    async def body(manager: ConnectionManager, server: str, activity: Activity) -> int:
        contents = await (await session_of(manager, server)).read_resource(args.uri)
        _settled(activity)
        if args.json:
            dump_json({"contents": [item.to_wire() for item in contents]})
        else:
            write_resource(contents, raw=not is_terminal(sys.stdout))
        return 0

    return _request(args, body)


def run_get_prompt(args: argparse.Namespace) -> int:
    """``trimcp get-prompt``: a prompt's messages for the arguments given."""
    arguments = as_strings(parse_arguments(args.arguments, args.arg_file))

    async def body(manager: ConnectionManager, server: str, activity: Activity) -> int:
        prompts = await catalog_of(manager, server, "prompts")
        prompt = next((p for p in prompts if p.get("name") == args.name), None)
        if prompt is None:
            names = [str(p.get("name")) for p in prompts]
            return say_unknown(server, "prompt", args.name, names, f"trimcp prompts {server}")
        declared = prompt_arguments(prompt)
        missing = [name for name, required in declared if required and name not in arguments]
        if missing:
            usage = " ".join(f"{n}=..." if req else f"[{n}=...]" for n, req in declared)
            sys.stderr.write(
                f'prompt "{args.name}" needs {", ".join(missing)}: '
                f"trimcp get-prompt {args.target or '-- ...'} {args.name} {usage}\n"
            )
            return FAILURE
        result = await (await session_of(manager, server)).get_prompt(args.name, arguments)
        _settled(activity)
        if args.json:
            messages = [{"role": m.role, "content": m.content} for m in result.messages]
            dump_json({"description": result.description, "messages": messages})
        else:
            write_prompt(result)
        return 0

    return _request(args, body)


#: One expression of an RFC 6570 URI template: an operator, then names with modifiers.
_EXPRESSION = re.compile(r"\{[+#./;?&]?([^}]*)\}")


def _template_variables(template: str) -> list[str]:
    """The variable names of a URI template (``{id}``, ``{+path}``, ``{?q,page}``)."""
    names = []
    for body in _EXPRESSION.findall(template):
        for spec in body.split(","):
            name = spec.split(":", 1)[0].rstrip("*").strip()
            if name:
                names.append(name)
    return names


def run_complete(args: argparse.Namespace) -> int:
    """``trimcp complete``: the values a server offers for one argument (MCP completion)."""
    context = as_strings(parse_arguments(args.context))

    async def body(manager: ConnectionManager, server: str, activity: Activity) -> int:
        ref = await _reference(manager, server, args)
        if ref is None:
            return FAILURE
        session = await session_of(manager, server)
        if not session.server_capabilities.completions:
            sys.stderr.write(f"{server} offers no completions (no completions capability)\n")
            return FAILURE
        completion = await session.complete(ref, args.argument, args.value or "", context=context)
        _settled(activity)
        if args.json:
            dump_json(completion.to_wire())
        else:
            write_completion(completion)
        return 0

    return _request(args, body)


async def _reference(
    manager: ConnectionManager, server: str, args: argparse.Namespace
) -> JsonObject | None:
    """The ``ref`` of ``--prompt`` / ``--resource``; None after saying what does not exist.

    Checked against the server's catalog first, with the argument: the completion request of
    MCP 2025-11-25 names a prompt or a resource template and one of its arguments.
    """
    from trimcp.client import prompt_ref, resource_ref

    if args.prompt is not None:
        items = await catalog_of(manager, server, "prompts")
        key, what, listing, wanted = "name", "prompt", "prompts", args.prompt
    else:
        items = await catalog_of(manager, server, "resourceTemplates")
        key, what, listing, wanted = "uriTemplate", "resource template", "resources", args.resource
    item = next((i for i in items if i.get(key) == wanted), None)
    if item is None:
        known = [str(i.get(key)) for i in items]
        say_unknown(server, what, wanted, known, f"trimcp {listing} {server}")
        return None
    if args.prompt is not None:
        names = [name for name, _ in prompt_arguments(item)]
    else:
        names = _template_variables(wanted)
    if args.argument not in names:
        usage = f"trimcp {listing} {server} --json"
        say_unknown(f'{what} "{wanted}"', "argument", args.argument, names, usage)
        return None
    return prompt_ref(wanted) if args.prompt is not None else resource_ref(wanted)
