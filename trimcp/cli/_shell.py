"""``trimcp shell``: drive the configured MCP servers by hand.

::

    /mcp                      the status of every server
    /mcp servers              the same, with each one's transport and problem
    /mcp connect NAME         connect (or reconnect) a server
    /mcp disconnect NAME      disconnect it
    /mcp tools [SERVER]       the tools, as mcp__<server>__<tool>
    /mcp resources [SERVER]   the resources
    /mcp prompts [SERVER]     the prompts
    /mcp call TOOL [JSON]     call a tool by its qualified name (or SERVER TOOL)
    /mcp reload               re-read the configuration and apply what changed
    /help                     this list
    /quit                     leave (so does end of input, Ctrl-D)

Lines are read with ``readline`` where it exists: history (kept in ``~/.trimcp_history``)
and Tab completion of commands, server names and tool names. Input is read in a worker
thread, so servers keep being served (and reconnected) while the prompt waits.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import trio

from trimcp.errors import ConfigError, TrimcpError

if TYPE_CHECKING:
    from collections.abc import Callable

    from trimcp.client import ClientConfig, ConnectionManager, Progress
    from trimcp.protocol import JsonObject

__all__ = ["run_shell"]

_COMMANDS = (
    "/mcp",
    "/mcp servers",
    "/mcp connect",
    "/mcp disconnect",
    "/mcp tools",
    "/mcp resources",
    "/mcp prompts",
    "/mcp call",
    "/mcp reload",
    "/help",
    "/quit",
)
_HISTORY = Path(os.path.expanduser("~/.trimcp_history"))


class _Completion:
    """Tab completion over the commands, server names and tool names seen so far."""

    def __init__(self) -> None:
        self.words: list[str] = list(_COMMANDS)
        self._matches: list[str] = []

    def complete(self, text: str, state: int) -> str | None:
        if state == 0:
            self._matches = [word for word in self.words if word.startswith(text)]
        return self._matches[state] if state < len(self._matches) else None


def _setup_readline(completion: _Completion) -> Callable[[], None]:
    """Turn on history and completion if ``readline`` exists; return what saves history."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input() still works
        return lambda: None
    readline.set_completer(completion.complete)
    readline.set_completer_delims(" ")
    readline.parse_and_bind("tab: complete")
    with contextlib.suppress(OSError):
        readline.read_history_file(_HISTORY)

    def save() -> None:
        with contextlib.suppress(OSError):
            readline.set_history_length(1000)
            readline.write_history_file(_HISTORY)

    return save


async def run_shell(
    manager: ConnectionManager,
    *,
    reload_config: Callable[[], ClientConfig],
    output: TextIO | None = None,
    prompt: str = "mcp> ",
) -> int:
    """Read and run commands until ``/quit`` or end of input; return 0."""
    out = output or sys.stdout
    completion = _Completion()
    interactive = sys.stdin.isatty()
    save_history = _setup_readline(completion) if interactive else (lambda: None)
    out.write("trimcp shell: /help lists the commands; Ctrl-D leaves.\n")
    await manager.connect_all()
    await _refresh_words(manager, completion)
    try:
        while True:
            out.flush()
            try:
                line = await trio.to_thread.run_sync(
                    _read_line, prompt if interactive else "", abandon_on_cancel=True
                )
            except EOFError:
                out.write("\n")
                return 0
            line = line.strip()
            if not line:
                continue
            if line in ("/quit", "/exit"):
                return 0
            try:
                await _run_command(manager, line, out, reload_config)
            except (TrimcpError, ValueError) as exc:
                out.write(f"{exc}\n")
            await _refresh_words(manager, completion)
    finally:
        save_history()


def _read_line(prompt: str) -> str:
    return input(prompt)


async def _refresh_words(manager: ConnectionManager, completion: _Completion) -> None:
    servers = list(await manager.servers())
    tools = [tool.qualified_name for tool in await manager.all_tools()]
    completion.words = [*_COMMANDS, *servers, *tools]


async def _run_command(
    manager: ConnectionManager, line: str, out: TextIO, reload_config: Callable[[], ClientConfig]
) -> None:
    if line == "/help":
        out.write(__doc__.split("::", 1)[1].split("Lines are read", 1)[0].strip("\n") + "\n")
        return
    if not line.startswith("/mcp"):
        out.write(f"unknown command {line.split()[0]!r}; /help lists the commands\n")
        return
    action, _, remainder = line[len("/mcp") :].strip().partition(" ")
    action = action or "status"
    # ``call`` keeps its JSON as typed; the other actions take plain words.
    rest = [remainder.strip()] if action == "call" else remainder.split()
    handler = _ACTIONS.get(action)
    if handler is None:
        out.write(f"unknown /mcp action {action!r}; /help lists them\n")
        return
    await handler(manager, rest, out, reload_config)


async def _status(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    for status in await manager.status():
        # Reconnecting: the next attempt and when; failed: why it gave up and the exit.
        summary = status.summary()
        tail = f" - {summary}" if summary else ""
        out.write(
            f"{status.name}: {status.state}, {status.tools} tools, {status.resources} resources, "
            f"{status.prompts} prompts, {status.restarts} restarts{tail}\n"
        )


async def _servers(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    servers = await manager.servers()
    from trimcp.client.process import redact_arguments

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


async def _connect(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    if len(rest) != 1:
        raise ValueError("usage: /mcp connect NAME")
    status = (
        await manager.reconnect(rest[0])
        if manager.is_connected(rest[0])
        else await manager.connect(rest[0])
    )
    out.write(f"{status.name}: {status.state}, {status.tools} tools\n")
    if status.last_error and not status.connected:
        out.write("".join(f"    {line}\n" for line in status.last_error.splitlines()))


async def _disconnect(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    if len(rest) != 1:
        raise ValueError("usage: /mcp disconnect NAME")
    done = await manager.disconnect(rest[0])
    out.write(f"{rest[0]}: {'disconnected' if done else 'was not connected'}\n")


async def _tools(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    for tool in await manager.all_tools():
        if not rest or tool.server == rest[0]:
            summary = (tool.description or tool.title or "").strip().splitlines()
            out.write(f"{tool.qualified_name}  {summary[0] if summary else ''}\n")


async def _resources(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    for server, item in await manager.all_resources():
        if not rest or server == rest[0]:
            out.write(f"{server}  {item.get('uri', '')}  {item.get('name', '')}\n")


async def _prompts(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    for server, item in await manager.all_prompts():
        if not rest or server == rest[0]:
            out.write(f"{server}  {item.get('name', '')}  {item.get('description', '')}\n")


async def _call(manager: ConnectionManager, rest: list[str], out: TextIO, _: object) -> None:
    from trimcp.client import qualify

    if not rest or not rest[0]:
        raise ValueError(
            "usage: /mcp call TOOL [JSON]  (TOOL as mcp__server__tool, or SERVER TOOL)"
        )
    first, _, tail = rest[0].partition(" ")
    tail = tail.strip()
    if first.startswith("mcp__"):
        name, arguments_text = first, tail or "{}"
    else:
        tool, _, arguments_text = tail.partition(" ")
        if not tool:
            raise ValueError("usage: /mcp call SERVER TOOL [JSON]")
        name, arguments_text = qualify(first, tool), arguments_text.strip() or "{}"
    try:
        arguments = json.loads(arguments_text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the arguments are not valid JSON ({exc.msg}): {arguments_text}"
        ) from None

    def progress(update: Progress) -> None:
        total = f"/{update.total:g}" if update.total is not None else ""
        out.write(f"  progress {update.progress:g}{total} {update.message or ''}\n")

    _write_result(await manager.call_tool(name, arguments, on_progress=progress), out)


def _write_result(result: JsonObject, out: TextIO) -> None:
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            out.write(f"{block.get('text', '')}\n")
        elif isinstance(block, dict):
            out.write(f"[{block.get('type')}]\n")
    if result.get("structuredContent") is not None:
        out.write(json.dumps(result["structuredContent"], indent=2) + "\n")
    if result.get("isError"):
        out.write("(the tool reported an error)\n")


async def _reload(
    manager: ConnectionManager,
    rest: list[str],
    out: TextIO,
    reload_config: Callable[[], ClientConfig],
) -> None:
    try:
        config = reload_config()
    except ConfigError as exc:
        out.write(f"the configuration was not reloaded:\n{exc}\n")
        return
    diff = await manager.reload(config)
    for kind in ("added", "removed", "changed", "unchanged"):
        names = ", ".join(sorted(diff[kind])) or "none"
        out.write(f"{kind}: {names}\n")


_ACTIONS = {
    "status": _status,
    "servers": _servers,
    "connect": _connect,
    "disconnect": _disconnect,
    "tools": _tools,
    "resources": _resources,
    "prompts": _prompts,
    "call": _call,
    "reload": _reload,
}
