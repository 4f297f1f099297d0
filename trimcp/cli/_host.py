"""The host commands of ``trimcp``: talk to MCP servers from the command line, one request each.

::

    trimcp servers [--json]                     every configured server and its state
    trimcp tools [TARGET] [--json] [--export openai|openai-responses|anthropic|gemini]
    trimcp call TARGET TOOL [k=v ... | JSON]    call a tool; exit 1 when it reports an error
    trimcp resources [TARGET] [--json]          resources and resource templates
    trimcp prompts [TARGET] [--json]            prompts and their arguments
    trimcp read TARGET URI [--json]             read a resource
    trimcp get-prompt TARGET NAME [k=v ...]     a prompt's messages
    trimcp complete TARGET (--prompt NAME | --resource TEMPLATE) ARG [VALUE] [--context k=v]
    trimcp shell                                an interactive prompt with /mcp commands

TARGET (``_target.py``) is a server of the ``mcpServers`` files (by name), a ``file.py[:name]``,
a ``package.module:name``, an ``http(s)://`` or ``ws(s)://`` URL, or a command after ``--``
(``trimcp tools -- node server.js``). Without a TARGET the listings cover every configured
server. A configured server is read from ``--config PATH`` (repeatable: later files win), or
else from the user and project files (``trimcp.client.default_config_sources``) after the
``[upstreams]`` of sys_config.toml; the other kinds need no file. Arguments are ``key=value``
pairs or one JSON object (``_args.py``), or ``--arg-file FILE``.

The one-shot commands print a verdict, not a moment: they wait until every server they need
is connected or has failed for good (after one retry, or at once when retrying cannot help,
such as a command that is not installed), for at most ``--wait`` seconds (default 60). A
server still starting then is shown as such ("still starting after 60 s", with its next
attempt), never as failed; a failed one with why it gave up, its exit code and the last line
of its stderr. ``env`` and ``headers`` values are never printed (``servers --json`` shows
their names with ``***``).

While a request runs, the server's log messages and progress go to stderr (``_output.py``).
Ctrl-C cancels the request (the server gets ``notifications/cancelled``) and exits with 130.
``call`` runs a tool its server marks destructive only when allowed: ``--yes``, ``--allow
GLOB``, or the entry's ``alwaysAllow`` / ``autoApprove`` list; otherwise it says which of
these would. An unknown server, tool or prompt gets a "did you mean".
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

from trimcp.cli._listings import run_prompts, run_resources, run_servers, run_tools
from trimcp.cli._oneshot import (
    CONNECT_WAIT,
    FAILURE,
    INTERRUPTED,
    check_client_config,
    configured,
    load_host_config,
    run_host,
)
from trimcp.cli._requests import run_call, run_complete, run_get_prompt, run_read
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# ``load_host_config`` and ``check_client_config`` are read from here by ``_main``, ``_reach``.
__all__ = ["add_host_commands", "check_client_config", "load_host_config"]

_TARGETS = """\
TARGET is one of:
  NAME                  a server of the mcpServers files (trimcp servers lists them)
  file.py[:name]        the MCP server defined in a Python file
  package.module:name   an MCP server (or a function returning one) in an importable module
  http(s)://... ws(s)://...
                        a running server, over Streamable HTTP or WebSocket
  -- COMMAND [ARGS]     a command that speaks MCP on stdin/stdout (last on the line)
"""


@final
@dataclass(frozen=True, slots=True)
class _Command:
    """A command that takes a TARGET: its help, its words, and what runs it.

    ``words`` name the positional words in order; ``?`` marks an optional one and ``*``
    the rest. A command given after ``--`` takes the place of ``target``.
    """

    help: str
    usage: str
    words: tuple[str, ...]
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def add_host_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the host commands to the ``trimcp`` parser's subcommands."""
    servers = commands.add_parser("servers", help="show every configured MCP server and its state")
    _config_options(servers, wait=True)
    servers.add_argument(
        "--json",
        action="store_true",
        help="print each server's configuration (env and headers values as ***) and status as JSON",
    )
    servers.set_defaults(command=functools.partial(_reported, run_servers))
    for name, spec in _COMMANDS.items():
        # Passed on whole, ``--`` included, which argparse would drop: a command after it is
        # the TARGET, so where it stood matters (``_dispatch`` parses the rest).
        outer = commands.add_parser(name, help=spec.help, add_help=False, prefix_chars="\0")
        outer.add_argument("arguments", nargs=argparse.REMAINDER)
        outer.set_defaults(command=functools.partial(_dispatch, name))
    shell = commands.add_parser("shell", help="an interactive prompt for driving servers by hand")
    _config_options(shell, wait=False)
    shell.set_defaults(command=_shell)


def _config_options(parser: argparse.ArgumentParser, *, wait: bool) -> None:
    parser.add_argument(
        "--config",
        action="append",
        metavar="PATH",
        help="an MCP servers file (mcpServers JSON, TOML or YAML); repeatable, later wins "
        "(default: the user and project files)",
    )
    if wait:
        parser.add_argument(
            "--wait",
            type=_seconds,
            default=CONNECT_WAIT,
            metavar="SECONDS",
            help=f"how long to wait for the servers to connect or fail (default: {CONNECT_WAIT:g})",
        )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0:  # also refuses NaN
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, not {text!r}")
    return value


def _dispatch(name: str, outer: argparse.Namespace) -> int:
    """Parse a TARGET command's words (split at ``--``) and run it."""
    spec = _COMMANDS[name]
    words: list[str] = outer.arguments
    command: list[str] = []
    if "--" in words:
        split = words.index("--")
        words, command = words[:split], words[split + 1 :]
    parser = argparse.ArgumentParser(
        prog=f"trimcp {name}",
        usage=spec.usage,
        description=spec.help,
        epilog=_TARGETS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    _config_options(parser, wait=True)
    spec.options(parser)
    args = parser.parse_intermixed_args(words)
    args.command_line = command
    _assign(parser, args, spec.words)
    return _reported(spec.run, args)


def _assign(
    parser: argparse.ArgumentParser, args: argparse.Namespace, names: Sequence[str]
) -> None:
    """Set ``args.<name>`` from ``args.words`` as ``names`` describe (see ``_Command``)."""
    words: list[str] = list(args.words)
    for name in names:
        key = name.rstrip("?*")
        if key == "target" and args.command_line and not (name.endswith("?") and words):
            args.target = None  # the command after -- is the TARGET
        elif name.endswith("*"):
            setattr(args, key, words)
            words = []
        elif words:
            setattr(args, key, words.pop(0))
        elif name.endswith("?"):
            setattr(args, key, None)
        else:
            parser.error(f"{key.upper()} is missing")
    if words:
        parser.error(f"unexpected {' '.join(words)!r}")


def _reported(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command; print a ``ConfigError`` as the friendly message it is; Ctrl-C is 130."""
    try:
        return run(args)
    except ConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return FAILURE
    except KeyboardInterrupt:  # before or after the request ran (``run_host`` has the rest)
        sys.stderr.write("interrupted\n")
        return INTERRUPTED


def _listing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def _tools_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the tool definitions as JSON")
    parser.add_argument(
        "--export",
        choices=["openai", "openai-responses", "anthropic", "gemini"],
        help="print the tools as function definitions for an LLM API",
    )


def _arg_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arg-file",
        metavar="FILE",
        help="read the arguments from a JSON file (key=value words are added to them)",
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")


def _call_options(parser: argparse.ArgumentParser) -> None:
    _arg_file_option(parser)
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="run the tool even if its server marks it destructive",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="GLOB",
        help="run the tools whose name (or mcp__SERVER__TOOL name) matches GLOB even if their"
        " server marks them destructive; repeatable",
    )


def _complete_options(parser: argparse.ArgumentParser) -> None:
    ref = parser.add_mutually_exclusive_group(required=True)
    ref.add_argument("--prompt", metavar="NAME", help="complete an argument of this prompt")
    ref.add_argument(
        "--resource",
        metavar="TEMPLATE",
        help="complete a variable of this resource template (its URI template)",
    )
    parser.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an argument already chosen, which the server may use; repeatable",
    )
    parser.add_argument("--json", action="store_true", help="print the completion as JSON")


_COMMANDS: dict[str, _Command] = {
    "tools": _Command(
        "list the tools of the connected servers (or of TARGET)",
        "trimcp tools [TARGET] [--json | --export FORMAT] [-- COMMAND ...]",
        ("target?",),
        _tools_options,
        run_tools,
    ),
    "call": _Command(
        "call a tool: trimcp call TARGET TOOL a=1 b=2",
        "trimcp call TARGET TOOL [KEY=VALUE ... | JSON] [--arg-file FILE] [--yes]"
        " [--allow GLOB]...\n"
        "       trimcp call TOOL [KEY=VALUE ...] -- COMMAND [ARGS ...]",
        ("target", "tool", "arguments*"),
        _call_options,
        run_call,
    ),
    "resources": _Command(
        "list the resources and resource templates of the connected servers (or of TARGET)",
        "trimcp resources [TARGET] [--json] [-- COMMAND ...]",
        ("target?",),
        _listing_options,
        run_resources,
    ),
    "prompts": _Command(
        "list the prompts of the connected servers (or of TARGET)",
        "trimcp prompts [TARGET] [--json] [-- COMMAND ...]",
        ("target?",),
        _listing_options,
        run_prompts,
    ),
    "read": _Command(
        "read a resource: trimcp read TARGET URI",
        "trimcp read TARGET URI [--json]\n       trimcp read URI [--json] -- COMMAND [ARGS ...]",
        ("target", "uri"),
        _listing_options,
        run_read,
    ),
    "get-prompt": _Command(
        "get a prompt's messages: trimcp get-prompt TARGET NAME key=value ...",
        "trimcp get-prompt TARGET NAME [KEY=VALUE ... | JSON] [--arg-file FILE] [--json]\n"
        "       trimcp get-prompt NAME [KEY=VALUE ...] -- COMMAND [ARGS ...]",
        ("target", "name", "arguments*"),
        _arg_file_option,
        run_get_prompt,
    ),
    "complete": _Command(
        "ask a server to complete an argument of a prompt or resource template",
        "trimcp complete TARGET (--prompt NAME | --resource TEMPLATE) ARG [VALUE] "
        "[--context KEY=VALUE ...] [--json]",
        ("target", "argument", "value?"),
        _complete_options,
        run_complete,
    ),
}


def _shell(args: argparse.Namespace) -> int:
    from trimcp.cli._shell import run_shell

    reload = functools.partial(load_host_config, args.config)
    body = functools.partial(run_shell, reload_config=reload)
    return _reported(lambda _: run_host(configured(args.config, None), body), args)
