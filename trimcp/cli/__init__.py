"""The ``trimcp`` command line: ``main(argv)`` returns the exit status.

The modules: ``_main`` (the parser, ``config``, ``serve``, ``skills``), ``_host`` (the
commands over the configured MCP servers: ``servers``, ``tools``, ``call``, ...) and
``_shell`` (``trimcp shell``).
"""

from trimcp.cli._main import main as main

__all__ = ["main"]
