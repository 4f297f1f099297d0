"""The skills tools, one module per category; each has ``register(server, skills)``.

``_read`` (read_file, read_many_files, file_info, list_directory, directory_tree),
``_search`` (glob, grep, concat_files), ``_vcs`` with ``_git`` (read-only git), ``_write``
(write_file, edit_file, append_file, make_directory, move, copy, delete), ``_execute``
(run_command). ``_output`` caps result text.
"""

from __future__ import annotations

from ._execute import register as register_execute
from ._read import register as register_read
from ._search import register as register_search
from ._vcs import register as register_vcs
from ._write import register as register_write

__all__ = [
    "register_execute",
    "register_read",
    "register_search",
    "register_vcs",
    "register_write",
]
