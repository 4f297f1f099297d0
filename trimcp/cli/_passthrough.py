"""Subcommands whose arguments end with a server's own command line, after ``--``.

``trimcp install cursor --name x -- node server.js --port 1``: the words after the first
``--`` belong to the server, options included. argparse drops that ``--`` before a handler
could see where it was, so such a subcommand is registered here with a prefix character no
argument starts with (as ``trimcp skills`` is): its subparser hands every word over, and the
command splits them (``split_command``) and parses its own part with a parser of its own,
which also answers ``--help``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["add_passthrough_command", "split_command"]


def add_passthrough_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    run: Callable[[list[str]], int],
) -> None:
    """Register ``name``; ``run`` gets every word after it and returns the exit status."""
    parser = commands.add_parser(name, help=help_text, add_help=False, prefix_chars="\0")
    parser.add_argument("arguments", nargs=argparse.REMAINDER)

    def command(args: argparse.Namespace) -> int:
        words: list[str] = args.arguments
        return run(words)

    parser.set_defaults(command=command)


def split_command(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split ``words`` at the first ``--``: (the subcommand's own, the server's command)."""
    if "--" not in words:
        return list(words), []
    at = list(words).index("--")
    return list(words[:at]), list(words[at + 1 :])
