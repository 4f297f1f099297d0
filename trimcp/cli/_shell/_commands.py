"""The shell's commands: ``/help`` and the ``/mcp`` actions over the connection manager.

``run_command(context, line)`` runs one typed line. Each action gets the text after its name
and splits it itself: plain words for names, shell-like quoting for ``key=value`` arguments
(``text="two words"``), and a JSON object kept whole when the arguments start with ``{``.
Arguments are read by ``trimcp.cli._args`` as ``trimcp call`` reads them. A server that is
not named is found from what the connected servers offer (the URI, prompt or template
named); when several offer it, the message asks for ``SERVER`` first.

Errors are raised (``TrimcpError``, ``ValueError``) for the shell loop to print; a command
cancelled with Ctrl-C is cancelled in the middle, its request with it (the session sends
``notifications/cancelled``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast, final

from trimcp.cli._args import as_strings, parse_arguments
from trimcp.cli._output import write_prompt, write_tool_result
from trimcp.client import SessionUpstream, prompt_ref, qualify, resource_ref
from trimcp.errors import ConfigError

from ._completion import Entry, Names

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence
    from typing import TextIO

    from trimcp.client import ClientConfig, ClientSession, ConnectionManager
    from trimcp.protocol import JsonObject

    from ._display import Display

__all__ = ["HELP", "Context", "read_names", "run_command"]

HELP = """\
/mcp                          the status of every server
/mcp servers                  the same, with each one's transport and problem
/mcp connect NAME             connect (or reconnect) a server
/mcp disconnect NAME          disconnect it
/mcp tools [SERVER]           the tools, as mcp__<server>__<tool>
/mcp resources [SERVER]       the resources and resource templates
/mcp prompts [SERVER]         the prompts and their arguments
/mcp call TOOL [ARGS]         call a tool by its qualified name (or SERVER TOOL);
                              ARGS: key=value ... (a=1 name=Ada) or one JSON object
/mcp read [SERVER] URI        read a resource: text shown, binary summarised
/mcp prompt [SERVER] NAME [key=value ...]
                              get a prompt's messages for those arguments
/mcp complete [SERVER] PROMPT|TEMPLATE ARG=PREFIX [key=value ...]
                              the server's completions for one prompt argument or
                              resource template variable, as typed so far; the
                              key=value pairs are the arguments already chosen
                              (/mcp complete review language=py)
/mcp reload                   re-read the configuration and apply what changed
/help                         this list
/quit                         leave (so does Ctrl-D at an empty prompt)

Tab completes commands, server, tool, prompt and argument names and resource URIs.
Ctrl-C cancels the command running, or clears the line being typed."""

_TEMPLATE_EXPRESSION = re.compile(r"\{[^}]*\}")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What a command works with."""

    manager: ConnectionManager
    out: TextIO
    display: Display
    reload_config: Callable[[], ClientConfig]


async def read_names(manager: ConnectionManager) -> Names:
    """What the configured and connected servers offer now."""
    return Names.from_catalogs(await manager.servers(), await manager.live_catalogs())


async def run_command(context: Context, line: str) -> None:
    """Run one line typed at the prompt (not ``/quit``, which the loop handles).

    Raises:
        TrimcpError: the servers or the configuration refused (the message says why).
        ValueError: the line is not a command as ``/help`` shows them.
    """
    if line == "/help":
        context.out.write(HELP + "\n")
        return
    command, _, text = line.partition(" ")
    if command != "/mcp":
        raise ValueError(f"unknown command {command!r}; /help lists the commands")
    action, _, rest = text.strip().partition(" ")
    handler = _ACTIONS.get(action or "status")
    if handler is None:
        raise ValueError(f"unknown /mcp action {action!r}; /help lists them")
    await handler(context, rest.strip())


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:  # an unclosed quote
        raise ValueError(f"cannot split the arguments ({exc}): {text}") from None


def _split_first(text: str) -> tuple[str, str]:
    """The first space-separated word of ``text`` and the rest, untouched."""
    first, _, rest = text.strip().partition(" ")
    return first, rest.strip()


def _arguments(text: str) -> dict[str, object]:
    """``key=value`` words, or one JSON object kept whole (its spaces are its own)."""
    text = text.strip()
    if text.startswith("{"):
        return parse_arguments([text])
    return parse_arguments(_words(text))


# --- servers --------------------------------------------------------------------------------


async def _status(context: Context, rest: str) -> None:
    for status in await context.manager.status():
        # Reconnecting: the next attempt and when; failed: why it gave up and the exit.
        summary = status.summary()
        tail = f" - {summary}" if summary else ""
        context.out.write(
            f"{status.name}: {status.state}, {status.tools} tools, {status.resources} resources, "
            f"{status.prompts} prompts, {status.restarts} restarts{tail}\n"
        )


async def _servers(context: Context, rest: str) -> None:
    from trimcp.client.process import redact_arguments

    manager, out = context.manager, context.out
    servers = await manager.servers()
    for status in await manager.status():
        config = servers[status.name]
        # Secret-looking arguments (--token X) hidden, as in every launch message.
        where = config.url or " ".join(redact_arguments([config.command or "", *config.args]))
        out.write(f"{status.name} ({config.transport}: {where}): {status.state}\n")
        if status.failure:
            out.write(f"    {status.failure}\n")
        elif status.next_attempt_in is not None:
            out.write(f"    attempt {status.attempt} in {status.next_attempt_in:.1f} s\n")
        if status.last_error and not status.connected:
            out.write("".join(f"    {line}\n" for line in status.last_error.splitlines()))


async def _connect(context: Context, rest: str) -> None:
    names = rest.split()
    if len(names) != 1:
        raise ValueError("usage: /mcp connect NAME")
    manager, [name] = context.manager, names
    connected = manager.is_connected(name)
    status = await (manager.reconnect(name) if connected else manager.connect(name))
    context.out.write(f"{status.name}: {status.state}, {status.tools} tools\n")
    if status.last_error and not status.connected:
        context.out.write("".join(f"    {line}\n" for line in status.last_error.splitlines()))


async def _disconnect(context: Context, rest: str) -> None:
    names = rest.split()
    if len(names) != 1:
        raise ValueError("usage: /mcp disconnect NAME")
    done = await context.manager.disconnect(names[0])
    context.out.write(f"{names[0]}: {'disconnected' if done else 'was not connected'}\n")


async def _reload(context: Context, rest: str) -> None:
    try:
        config = context.reload_config()
    except ConfigError as exc:
        context.out.write(f"the configuration was not reloaded:\n{exc}\n")
        return
    diff = await context.manager.reload(config)
    for kind in ("added", "removed", "changed", "unchanged"):
        context.out.write(f"{kind}: {', '.join(sorted(diff[kind])) or 'none'}\n")


# --- listings -------------------------------------------------------------------------------


async def _tools(context: Context, rest: str) -> None:
    for tool in await context.manager.all_tools():
        if not rest or tool.server == rest:
            summary = (tool.description or tool.title or "").strip().splitlines()
            context.out.write(f"{tool.qualified_name}  {summary[0] if summary else ''}\n")


async def _resources(context: Context, rest: str) -> None:
    for server, kinds in await context.manager.live_catalogs():
        if rest and server != rest:
            continue
        for item in kinds["resources"]:
            context.out.write(f"{server}  {item.get('uri', '')}  {item.get('name', '')}\n")
        for item in kinds["resourceTemplates"]:
            template, name = item.get("uriTemplate", ""), item.get("name", "")
            context.out.write(f"{server}  {template}  {name} (template)\n")


async def _prompts(context: Context, rest: str) -> None:
    for server, item in await context.manager.all_prompts():
        if rest and server != rest:
            continue
        arguments = item.get("arguments")
        names = [
            str(a.get("name")) + ("" if a.get("required") else "?")
            for a in (arguments if isinstance(arguments, list) else [])
            if isinstance(a, dict)
        ]
        shown = f"({', '.join(names)})" if names else ""
        description = str(item.get("description") or "").strip().splitlines()
        first = description[0] if description else ""
        context.out.write(f"{server}  {item.get('name', '')}{shown}  {first}\n")


# --- calling, reading, prompting, completing ------------------------------------------------


async def _call(context: Context, rest: str) -> None:
    first, tail = _split_first(rest)
    if not first:
        raise ValueError(
            "usage: /mcp call TOOL [ARGS]  (TOOL as mcp__server__tool, or SERVER TOOL)"
        )
    if first.startswith("mcp__"):
        name = first
    else:
        tool, tail = _split_first(tail)
        if not tool:
            raise ValueError("usage: /mcp call SERVER TOOL [ARGS]")
        name = qualify(first, tool)
    # The values are JSON values or strings as typed: a JSON object for the wire.
    arguments = cast("JsonObject", _arguments(tail))
    display = context.display
    result = await context.manager.call_tool(name, arguments, on_progress=display.progress)
    display.finish()
    write_tool_result(result, context.out)
    if result.get("isError"):
        context.out.write("(the tool reported an error)\n")


async def _read(context: Context, rest: str) -> None:
    words = _words(rest)
    if len(words) not in (1, 2):
        raise ValueError("usage: /mcp read [SERVER] URI")
    uri = words[-1]
    server = words[0] if len(words) == 2 else _server_of_uri(await read_names(context.manager), uri)
    session = await _session(context.manager, server)
    contents = await session.read_resource(uri)
    # Not _output.write_resource: its note on binary content says to redirect stdout to a
    # file, which a prompt cannot; here binary content is only summarised.
    out = context.out
    for item in contents:
        if len(contents) > 1:
            out.write(f"--- {item.uri}\n")
        if item.text is not None:
            out.write(item.text if item.text.endswith("\n") else f"{item.text}\n")
        else:
            mime = item.mime_type or "binary data"
            out.write(f"[{mime}, {len(item.blob or b'')} bytes]\n")


async def _prompt(context: Context, rest: str) -> None:
    names = await read_names(context.manager)
    entry, pairs = _named(_words(rest), names, names.prompts, "prompt")
    arguments = as_strings(parse_arguments(pairs)) if pairs else None
    session = await _session(context.manager, entry.server)
    write_prompt(await session.get_prompt(entry.name, arguments), context.out)


async def _complete(context: Context, rest: str) -> None:
    usage = "usage: /mcp complete [SERVER] PROMPT|TEMPLATE ARG=PREFIX [key=value ...]"
    names = await read_names(context.manager)
    words = _words(rest)
    if not words:
        raise ValueError(usage)
    entry, pairs = _named(words, names, (*names.prompts, *names.templates), "prompt or template")
    if not pairs or "=" not in pairs[0]:
        raise ValueError(usage)
    argument, _, value = pairs[0].partition("=")
    context_arguments = as_strings(parse_arguments(pairs[1:])) if pairs[1:] else None
    is_prompt = entry in names.prompts
    ref = prompt_ref(entry.name) if is_prompt else resource_ref(entry.name)
    session = await _session(context.manager, entry.server)
    completion = await session.complete(ref, argument, value, context=context_arguments)
    out = context.out
    for candidate in completion.values:
        out.write(f"{candidate}\n")
    shown = len(completion.values)
    if not shown:
        out.write("(no completions)\n")
    elif completion.total is not None and completion.total > shown:
        out.write(f"({shown} of {completion.total} shown)\n")
    elif completion.has_more:
        out.write(f"({shown} shown; the server has more)\n")


async def _session(manager: ConnectionManager, server: str) -> ClientSession:
    upstream = await manager.get_connection(server)
    if not isinstance(upstream, SessionUpstream):
        raise ValueError(f"MCP server {server!r} is not reached through an MCP client session")
    return upstream.session


def _named(
    words: list[str], names: Names, entries: Sequence[Entry], what: str
) -> tuple[Entry, list[str]]:
    """The entry ``words`` name (``[SERVER] NAME ...``) and the words after it."""
    if not words:
        raise ValueError(f"name a {what}")
    if len(words) > 1 and words[0] in names.servers and "=" not in words[1]:
        server, name, rest = words[0], words[1], words[2:]
        found = [e for e in entries if e.server == server and e.name == name]
    else:
        server, name, rest = "", words[0], words[1:]
        found = [e for e in entries if e.name == name]
    if not found:
        where = f"MCP server {server!r}" if server else "no connected server"
        offered = ", ".join(sorted({e.name for e in entries if e.server == server or not server}))
        raise ValueError(
            f"{where} offers no {what} named {name!r}"
            + (f" (offered: {offered})" if offered else "")
        )
    servers = sorted({e.server for e in found})
    if len(servers) > 1:
        raise ValueError(
            f"{', '.join(servers)} all offer a {what} named {name!r}; put the server first"
        )
    return found[0], rest


def _server_of_uri(names: Names, uri: str) -> str:
    """The connected server that lists ``uri``, or whose template matches it."""
    listed = {e.server for e in names.resources if e.name == uri}
    if not listed:
        listed = {e.server for e in names.templates if _matches(e.name, uri)}
    if len(listed) == 1:
        return listed.pop()
    if listed:
        raise ValueError(
            f"{', '.join(sorted(listed))} all offer {uri}; name one: /mcp read SERVER {uri}"
        )
    raise ValueError(f"no connected server lists {uri}; name one: /mcp read SERVER {uri}")


def _matches(template: str, uri: str) -> bool:
    """Whether ``uri`` could come from RFC 6570 ``template`` (any expression, any text)."""
    pieces = _TEMPLATE_EXPRESSION.split(template)
    pattern = ".+".join(re.escape(piece) for piece in pieces)
    return re.fullmatch(pattern, uri) is not None


_ACTIONS: dict[str, Callable[[Context, str], Awaitable[None]]] = {
    "status": _status,
    "servers": _servers,
    "connect": _connect,
    "disconnect": _disconnect,
    "tools": _tools,
    "resources": _resources,
    "prompts": _prompts,
    "call": _call,
    "read": _read,
    "prompt": _prompt,
    "complete": _complete,
    "reload": _reload,
}
