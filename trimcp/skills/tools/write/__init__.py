"""The write tools: write_file, edit_file, append_file, make_directory, move, copy, delete.

``_tools.register`` registers them; ``_fs`` holds the descriptor-relative primitives (create,
replace atomically, rename without overwriting), ``_ops`` the single-file steps, ``_edit``
exact-match edits, ``_tree`` moves and deletes, ``_copy`` copies.
"""

from __future__ import annotations

__all__: list[str] = []
