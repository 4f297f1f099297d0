"""The search tools: glob, grep, concat_files.

``_tools.register`` registers them; ``_glob`` compiles shell globs, ``_grep`` runs a search over
the jail's ``walk_files`` and ``_grep_match`` finds matches in one file's bytes,
``_concat`` joins files.
"""

from __future__ import annotations

__all__: list[str] = []
