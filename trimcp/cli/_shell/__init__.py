"""``trimcp shell``: drive the configured MCP servers by hand, at a prompt.

``/help`` lists the commands (``_commands.HELP``): the servers' status, connecting them,
their tools, resources and prompts; calling a tool, reading a resource, getting a prompt,
asking for completions. The parts:

- ``_loop``: ``run_shell`` — the read-run loop, Ctrl-C routed by trio, the permission
  question for destructive tools, the servers' log messages;
- ``_commands``: what each command does, over the ``ConnectionManager``;
- ``_completion``: what Tab offers, a pure function of the line and a catalog snapshot;
- ``_terminal``: where lines come from (GNU readline driven from trio's thread, with
  history in ``~/.trimcp_history``; or ``input()`` in a thread when there is no terminal);
- ``_display``: log lines and the one progress line shown while a command runs.

It is not a general REPL: no scripting, no variables. The one-shot commands (``trimcp
call`` and the others, ``trimcp.cli._host``) do the same things from a shell script.
"""

from __future__ import annotations

from ._loop import run_shell as run_shell

__all__ = ["run_shell"]
