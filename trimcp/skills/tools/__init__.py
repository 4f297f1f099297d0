"""The skills tools, one folder per category; each has ``register(server, skills)``.

``read`` (read_file, read_many_files, file_info, list_directory, directory_tree),
``search`` (glob, grep, concat_files), ``vcs`` (read-only git), ``write`` (write_file,
edit_file, append_file, make_directory, move, copy, delete) and ``_execute`` (run_command).
Shared by several: ``_output`` (result text capped at max_result_bytes, saying so),
``_text`` (encodings and lines), ``_media`` (image and audio types by signature).
"""

from __future__ import annotations

from ._execute import register as register_execute
from .read._tools import register as register_read
from .search._tools import register as register_search
from .vcs._tools import register as register_vcs
from .write._tools import register as register_write

__all__ = [
    "register_execute",
    "register_read",
    "register_search",
    "register_vcs",
    "register_write",
]
