"""The listing commands: ``trimcp servers``, ``tools``, ``resources`` and ``prompts``.

Each connects the servers it lists (every configured one, or the TARGET), waits for a
verdict on each (``_oneshot.connect_wanted``), says on stderr why any is down, and prints a
table (``_output.write_table``) or JSON. A listing that could not ask every server it
should have exits 1, since what it printed is not the whole answer.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from trimcp.cli._oneshot import (
    configured,
    connect_wanted,
    problem_cell,
    prompt_arguments,
    report_down,
    resolve_scope,
    run_host,
)
from trimcp.cli._output import dump_json, write_table

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from trimcp.client import ConnectionManager, HostTool

__all__ = ["run_prompts", "run_resources", "run_servers", "run_tools"]


def run_servers(args: argparse.Namespace) -> int:
    """``trimcp servers``: every configured server, its state and why it is not connected."""

    async def body(manager: ConnectionManager) -> int:
        servers = await manager.servers()
        verdicts = {s.name: s for s in await connect_wanted(manager, None, args.wait)}
        rows: list[tuple[str, ...]] = [
            ("SERVER", "TRANSPORT", "STATE", "TOOLS", "RESOURCES", "PROMPTS", "RESTARTS", "PROBLEM")
        ]
        listing: list[dict[str, object]] = []
        for name in sorted(servers):
            config = servers[name]
            status = verdicts[name] if name in verdicts else await manager.status_of(name)
            state: str = status.state if config.enabled else "disabled"
            if config.enabled and not config.auto_connect and status.state == "stopped":
                state = "not auto-connected"
            # The configuration as shown anywhere: env and headers values are ***.
            shown = {"config": config.shown(), "source": config.source.describe()}
            listing.append({**status.as_json(), "state": state, **shown})
            counts = (status.tools, status.resources, status.prompts, status.restarts)
            problem = problem_cell(status, args.wait)
            rows.append((name, config.transport, state, *map(str, counts), problem))
        if args.json:
            dump_json(listing)
        else:
            write_table(rows)
        return 0 if all(s.connected for s in verdicts.values()) else 1

    return run_host(configured(args.config, None), body)


def _listed(
    args: argparse.Namespace, show: Callable[[ConnectionManager, str | None], Awaitable[None]]
) -> int:
    """Run a listing over ``args.target`` (or every server); 1 if a server it needs is down."""
    scope = resolve_scope(args)

    async def body(manager: ConnectionManager) -> int:
        statuses = await connect_wanted(manager, scope.server, args.wait)
        report_down(statuses, args.wait)
        await show(manager, scope.server)
        # A listing that misses a server that is down is not a success.
        return 0 if all(s.connected for s in statuses) else 1

    return run_host(scope.config, body)


def run_tools(args: argparse.Namespace) -> int:
    """``trimcp tools``: the tools, as ``mcp__<server>__<tool>`` (or JSON, or for an LLM API)."""

    async def show(manager: ConnectionManager, server: str | None) -> None:
        tools = [t for t in await manager.all_tools() if server in (None, t.server)]
        if args.export:
            from trimcp.client import export_tools

            dump_json(export_tools(tools, args.export))
        elif args.json:
            dump_json([_tool_json(tool) for tool in tools])
        else:
            rows = [("TOOL", "DESCRIPTION")]
            rows += [(t.qualified_name, _first_line(t.description or t.title or "")) for t in tools]
            write_table(rows)

    return _listed(args, show)


def _tool_json(tool: HostTool) -> dict[str, object]:
    return {
        "name": tool.qualified_name,
        "server": tool.server,
        "tool": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": dict(tool.input_schema),
    }


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


def run_resources(args: argparse.Namespace) -> int:
    """``trimcp resources``: the resources, then the resource templates."""

    async def show(manager: ConnectionManager, server: str | None) -> None:
        resources, templates = [], []
        for name, catalog in await manager.live_catalogs():
            if server in (None, name):
                resources += [{"server": name, **item} for item in catalog["resources"]]
                templates += [{"server": name, **item} for item in catalog["resourceTemplates"]]
        if args.json:
            dump_json({"resources": resources, "resourceTemplates": templates})
            return
        rows = [("SERVER", "URI", "NAME")]
        rows += [
            (str(r["server"]), str(r.get("uri", "")), str(r.get("name", ""))) for r in resources
        ]
        write_table(rows)
        if templates:
            sys.stdout.write("\n")
            rows = [("SERVER", "URI TEMPLATE", "NAME")]
            rows += [
                (str(t["server"]), str(t.get("uriTemplate", "")), str(t.get("name", "")))
                for t in templates
            ]
            write_table(rows)

    return _listed(args, show)


def run_prompts(args: argparse.Namespace) -> int:
    """``trimcp prompts``: the prompts, with their arguments (``[optional]``)."""

    async def show(manager: ConnectionManager, server: str | None) -> None:
        prompts = [
            {"server": name, **item}
            for name, item in await manager.all_prompts()
            if server in (None, name)
        ]
        if args.json:
            dump_json(prompts)
            return
        rows = [("SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION")]
        for prompt in prompts:
            words = [f"{a}" if req else f"[{a}]" for a, req in prompt_arguments(prompt)]
            description = _first_line(str(prompt.get("description", "")))
            rows.append(
                (str(prompt["server"]), str(prompt.get("name", "")), " ".join(words), description)
            )
        write_table(rows)

    return _listed(args, show)
