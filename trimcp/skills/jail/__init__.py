"""The jail of the skills tools: which paths they may touch, and opening them race-free.

``Jail`` checks a path (roots by component, symlinks resolved, blocked patterns); ``_fs``
opens and walks what it accepted through directory descriptors with ``O_NOFOLLOW``, so a
symlink swapped in after the check is refused, not followed.
"""

from __future__ import annotations

from ._fs import FILE_FLAGS as FILE_FLAGS
from ._fs import Entry as Entry
from ._fs import Found as Found
from ._fs import WalkStats as WalkStats
from ._fs import open_dir as open_dir
from ._fs import open_parent as open_parent
from ._fs import open_regular as open_regular
from ._fs import read_regular as read_regular
from ._fs import walk as walk
from ._fs import walk_files as walk_files
from ._jail import Access as Access
from ._jail import BlockedCheck as BlockedCheck
from ._jail import Jail as Jail
from ._jail import Resolved as Resolved
from ._jail import describe_roots as describe_roots
from ._jail import kind_of as kind_of
from ._jail import shown as shown

__all__ = [
    "FILE_FLAGS",
    "Access",
    "BlockedCheck",
    "Entry",
    "Found",
    "Jail",
    "Resolved",
    "WalkStats",
    "describe_roots",
    "kind_of",
    "open_dir",
    "open_parent",
    "open_regular",
    "read_regular",
    "shown",
    "walk",
    "walk_files",
]
