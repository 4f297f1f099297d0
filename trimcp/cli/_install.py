"""``trimcp install HOST TARGET``: add a server to an MCP host's configuration file.

::

    trimcp install claude-desktop demo.py            the MCPServer in demo.py
    trimcp install cursor myapp.server:app --env API_KEY=...
    trimcp install vscode http://127.0.0.1:8000/mcp
    trimcp install claude-code --scope project -- node /srv/server.js
    trimcp install gemini-cli notes --print          a configured server, printed only

HOST is one of ``claude-desktop``, ``claude-code``, ``cursor``, ``vscode``, ``gemini-cli`` and
``mcp-json`` (a generic ``mcpServers`` file, ``./.mcp.json``); ``trimcp.cli._hosts`` knows
each one's file and entry shape. The entry names absolute paths: this interpreter
(``sys.executable``), the server's file, the program of a command (found on PATH now) and
arguments that name existing files, because a host starts servers from a folder of its own
choosing with a PATH of its own. Where the host ignores ``cwd``, a module TARGET gets
``PYTHONPATH`` set to the current folder so that it imports from anywhere.

The entry is merged into the existing file (``trimcp.cli._config_file``: nothing else in it
changes, a backup is kept, invalid JSON is never overwritten). A name already present is
replaced only with ``--force``; an identical entry is left alone. ``--print`` writes nothing
and reads no host file: it prints the JSON object to merge, shaped like the file
(``{"mcpServers": {"demo": {...}}}``), with the ``--env`` values in it, since that is what
was asked for; the message after a write names the variables but never shows their values.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from trimcp.cli._config_file import place_entry, read_document, write_document
from trimcp.cli._hosts import HOSTS, config_file, host_entry
from trimcp.cli._output import dump_json, is_terminal
from trimcp.cli._passthrough import add_passthrough_command, split_command
from trimcp.cli._reach import server_for
from trimcp.cli._target import parse_target
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.cli._hosts import Host, Scope
    from trimcp.cli._target import Target
    from trimcp.config.mcp_servers import ServerConfig

__all__ = ["add_command"]

_FAILURE = 1
# Server names as trimcp's own mcpServers files accept them (tools become mcp__<name>__<tool>).
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``install`` to the ``trimcp`` parser's subcommands (``trimcp.cli._passthrough``)."""
    add_passthrough_command(
        commands,
        "install",
        "add a server to an MCP host's configuration (trimcp install --help)",
        _install,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trimcp install",
        usage="trimcp install HOST [TARGET] [options] [-- command args...]",
        description="Add an MCP server to a host's configuration file, merged into what is "
        "there (a backup is kept).",
        epilog=_files_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("host", choices=list(HOSTS), metavar="HOST", help=", ".join(HOSTS))
    parser.add_argument(
        "target",
        nargs="?",
        metavar="TARGET",
        help="a configured server, file.py[:object], package.module:object or URL "
        "(or a command after --)",
    )
    parser.add_argument("--name", help="the server's name in the host (default: from TARGET)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server; repeatable",
    )
    parser.add_argument(
        "--scope",
        choices=["user", "project"],
        help="the user's file or the project's (default: user; vscode and mcp-json: project)",
    )
    parser.add_argument("--file", metavar="PATH", help="write this file instead of the host's")
    parser.add_argument("--force", action="store_true", help="replace a server of the same name")
    parser.add_argument(
        "--print",
        action="store_true",
        dest="print_only",
        help="print the JSON to merge instead of writing the file",
    )
    parser.add_argument(
        "--config",
        action="append",
        metavar="MCPFILE",
        help="an MCP servers file to look a configured TARGET up in; repeatable "
        "(default: the user and project files)",
    )
    return parser


def _files_help() -> str:
    """The file each host's scopes mean for this user, here (default scope first)."""
    lines = ["the files written (--scope; the first is the default):"]
    for host in HOSTS.values():
        try:
            files = "  ".join(f"{scope}: {config_file(host, scope)}" for scope in host.scopes)
        except ConfigError as exc:
            files = str(exc)
        lines.append(f"  {host.name:<15} {files}")
    lines.append("--print writes nothing: it prints the JSON to merge, shaped like the file.")
    return "\n".join(lines)


def _install(arguments: list[str]) -> int:
    words, command = split_command(arguments)
    options = _parser().parse_args(words)
    host = HOSTS[options.host]
    try:
        target = parse_target(options.target, command)
        name = _server_name(options.name, target)
        found = server_for(target, options.config)
        server = _portable(found, target, host, options.env)
        for note in _not_carried(found, host) if target.kind == "configured" else ():
            sys.stderr.write(f"note: {note}\n")
        entry = host_entry(host, server)
        scope = cast("Scope | None", options.scope)
        path = Path(options.file).expanduser() if options.file else config_file(host, scope)
        if options.print_only:
            _print_entry(host, path, name, entry)
            return 0
        return _write(host, path, name, entry, force=options.force)
    except ConfigError as exc:
        sys.stderr.write(f"trimcp install: {exc}\n")
        return _FAILURE


def _server_name(given: str | None, target: Target) -> str:
    name = target.name if given is None else given
    if not _NAME.match(name) or "__" in name:
        cleaned = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_-]+", "-", name)).strip("-_")
        raise ConfigError(
            f"{name!r} cannot be a server name: use letters, digits, - and _ (not __), "
            f"e.g. --name {cleaned or 'server'}"
        )
    return name


def _env(pairs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not _ENV_NAME.match(key):
            raise ConfigError(
                f"--env {key if equals else pair!r}: expected NAME=VALUE with a variable name "
                "of letters, digits and _, e.g. --env API_KEY=..."
            )
        env[key] = value
    return env


def _portable(
    server: ServerConfig, target: Target, host: Host, env_pairs: Sequence[str]
) -> ServerConfig:
    """``server`` as an entry that works whichever folder and PATH the host starts it with."""
    env = _env(env_pairs)
    if server.transport != "stdio":
        if env:
            raise ConfigError(
                "--env sets variables for a server the host starts; the host only connects "
                f"to {server.url}, so set them where that server runs"
            )
        return server
    here = server.cwd or os.getcwd()
    command, args = server.command or "", server.args
    if not target.is_python:  # a Python target's command line is absolute already
        command = _program(command, here)
        args = tuple(_argument(argument, here) for argument in args)
    merged = dict(server.env)
    cwd: str | None = os.path.abspath(here)
    if not host.honours_cwd:
        if target.kind == "module" and "PYTHONPATH" not in merged:
            merged["PYTHONPATH"] = os.path.abspath(here)
        cwd = None
    merged.update(env)
    return dataclasses.replace(server, command=command, args=args, env=merged, cwd=cwd)


def _not_carried(server: ServerConfig, host: Host) -> list[str]:
    """What a configured definition says that the host's entry cannot."""
    notes: list[str] = []
    if server.env_passthrough:
        notes.append(
            f"env_passthrough ({', '.join(server.env_passthrough)}) is not carried over: "
            f"{host.label} decides what a server inherits; add --env NAME=VALUE if it needs them"
        )
    if server.cwd and server.transport == "stdio" and not host.honours_cwd:
        notes.append(
            f"{host.label} ignores cwd, so the server will not start in {server.cwd}; "
            "its paths were made absolute instead"
        )
    return notes


def _program(command: str, here: str) -> str:
    if os.path.isabs(command):
        return command
    if os.sep in command or "/" in command:  # ./server, bin/server: relative to the folder
        return os.path.abspath(os.path.join(here, command))
    found = shutil.which(command)
    if found is None:
        raise ConfigError(
            f'the command "{command}" was not found on PATH: install it, or give its full '
            "path after --, so that the host can start it"
        )
    return os.path.abspath(found)


def _argument(argument: str, here: str) -> str:
    """An argument naming an existing file (or a path with a separator) made absolute."""
    if not argument or argument.startswith("-") or os.path.isabs(argument):
        return argument
    candidate = os.path.join(here, argument)
    looks_like_path = os.sep in argument or "/" in argument or os.path.isfile(candidate)
    return os.path.abspath(candidate) if looks_like_path and os.path.exists(candidate) else argument


def _print_entry(host: Host, path: Path, name: str, entry: dict[str, object]) -> None:
    snippet = {host.table: {name: entry}}
    if is_terminal(sys.stdout):
        from rich.console import Console
        from rich.json import JSON

        Console().print(JSON.from_data(snippet, ensure_ascii=False))
    else:
        dump_json(snippet)
    sys.stderr.write(f'not written: this goes into {path}, under "{host.table}"\n')


def _write(host: Host, path: Path, name: str, entry: dict[str, object], *, force: bool) -> int:
    where = str(path)
    document = read_document(path)
    placement = place_entry(document or {}, host.table, name, entry, where)
    if placement.change == "replaced" and not force:
        raise placement.refused(where, name)
    if placement.change == "unchanged":
        _say([(f'"{name}" is already in {where} with this definition; nothing written.', "")])
        return 0
    backup = write_document(path, placement.document)
    verb = {"added": "Added", "replaced": "Replaced"}[placement.change]
    headline = f'{verb} "{name}" in {where} ({host.label}).'
    if document is None:
        headline = f'Created {where} with "{name}" ({host.label}).'
    lines = [(headline, "bold green")]
    lines += [(f"  {line}", "") for line in _describe(entry)]
    if backup is not None:
        lines.append((f"  backup of the previous file: {backup}", "dim"))
    lines.append((host.next_step, "bold"))
    _say(lines)
    return 0


def _describe(entry: dict[str, object]) -> list[str]:
    """What the entry runs or reaches, with env and header names but never their values."""
    from trimcp.client.process import redact_arguments

    lines: list[str] = []
    url = entry.get("url") or entry.get("httpUrl")
    if isinstance(url, str):
        lines.append(f"url: {url}")
    else:
        args = entry.get("args")
        words = [str(entry.get("command", ""))] + (
            [str(a) for a in args] if isinstance(args, list) else []
        )
        lines.append("runs: " + " ".join(redact_arguments(words)))
    if isinstance(entry.get("cwd"), str):
        lines.append(f"in: {entry['cwd']}")
    for key, label in (("env", "env"), ("headers", "headers")):
        values = entry.get(key)
        if isinstance(values, dict) and values:
            lines.append(f"{label}: {', '.join(values)} (values not shown)")
    return lines


def _say(lines: Sequence[tuple[str, str]]) -> None:
    """Print ``(text, rich style)`` lines: styled on a terminal, plain otherwise."""
    if not is_terminal(sys.stdout):
        sys.stdout.write("".join(f"{text}\n" for text, _ in lines))
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    for text, style in lines:
        console.print(Text(text, style=style))
