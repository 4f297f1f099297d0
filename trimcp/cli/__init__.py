"""The ``trimcp`` command line: ``main(argv)`` returns the exit status.

The modules: ``_main`` (the parser, ``config``, ``serve``, ``skills``), ``_host`` (the
commands over the configured MCP servers: ``servers``, ``tools``, ``call``, ...),
``_shell`` (``trimcp shell``) and ``_admin_commands`` (``status``, ``reload`` and
``restart``, which ask a running ``trimcp serve`` through its admin app).
"""

from trimcp.cli._main import main as main

__all__ = ["main"]
