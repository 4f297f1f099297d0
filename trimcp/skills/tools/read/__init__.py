"""The read tools: read_file, read_many_files, file_info, list_directory, directory_tree.

``_tools.register`` registers them; ``_file``/``_lines``/``_stream`` read text (whole, by line
range, or the tail of a large file), ``_info``, ``_list`` and ``_tree`` describe files and
folders, ``_many`` reads several, ``_common`` holds what they share.
"""

from __future__ import annotations

__all__: list[str] = []
