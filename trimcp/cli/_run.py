"""``trimcp run``: being built; registers no command yet."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["add_command"]


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` to the ``trimcp`` parser's subcommands."""
    del commands
