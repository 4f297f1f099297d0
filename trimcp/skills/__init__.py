"""The built-in file, search and git tools server: ``trimcp skills``.

Tools in categories (``[skills] enable``): ``read`` (on), ``search`` (on), ``vcs`` (on,
read-only git), ``write`` (off), ``execute`` (off). Every path goes through a ``Jail``:
inside the configured roots by path component, symlinks resolved and never followed out,
``blocked_paths`` refused, files opened through directory descriptors with ``O_NOFOLLOW`` so
a symlink swapped in after the check is refused. Built on the public ``MCPServer`` API.
"""

from __future__ import annotations

from ._command import configured_roots as configured_roots
from ._command import main as main
from ._runtime import Skills as Skills
from ._server import build_server as build_server
from ._server import resolve_roots as resolve_roots
from .jail import Jail as Jail

__all__ = ["Jail", "Skills", "build_server", "configured_roots", "main", "resolve_roots"]
