"""Merge parsed TOML tables, remembering which file wrote each key.

Merging is deep for tables and replacing for everything else, arrays included: an include
that sets ``roots = ["b"]`` replaces ``roots = ["a"]`` instead of appending to it, so what
a file says is what you get. Pure: no files are read here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._toml_text import KeyPath


class Origins:
    """Which file last wrote each key path.

    Only the paths a file wrote are recorded; a key inside a value (an array item, a key of
    a table that replaced a scalar) belongs to the nearest recorded path above it.
    """

    __slots__ = ("_by_path", "default")

    def __init__(self, default: str) -> None:
        """Start with no records; every path belongs to ``default`` until one is made."""
        self.default = default
        self._by_path: dict[KeyPath, str] = {}

    def file_of(self, path: KeyPath) -> str:
        """Return the file that wrote ``path``, or the nearest table around it."""
        return _nearest(self._by_path, path, self.default)

    def freeze(self) -> KeyOrigins:
        """Return the records as they are now, as an immutable value."""
        return KeyOrigins(self.default, tuple(self._by_path.items()))

    def record(self, path: KeyPath, file: str) -> None:
        """Note that ``file`` wrote the whole value at ``path``, replacing what was below."""
        # A replaced table's old keys must not keep pointing at the file that lost them.
        stale = [known for known in self._by_path if known[: len(path)] == path]
        for known in stale:
            del self._by_path[known]
        self._by_path[path] = file


@final
@dataclass(frozen=True, slots=True)
class KeyOrigins:
    """Which file wrote each key path, frozen once loading is done (see ``Origins``).

    Attributes:
        default: the file a path belongs to when no record covers it.
        paths: each recorded path with the file that last wrote it.
    """

    default: str
    paths: tuple[tuple[KeyPath, str], ...] = ()

    def file_of(self, path: KeyPath) -> str:
        """Return the file that wrote ``path``, or the nearest table around it."""
        return _nearest(dict(self.paths), path, self.default)


def _nearest(by_path: Mapping[KeyPath, str], path: KeyPath, default: str) -> str:
    for end in range(len(path), 0, -1):
        file = by_path.get(path[:end])
        if file is not None:
            return file
    return default


def merge_table(
    base: dict[str, object],
    overlay: Mapping[str, object],
    origins: Origins,
    file: str,
    prefix: KeyPath = (),
) -> None:
    """Merge ``overlay`` (written in ``file``) into ``base`` in place; ``overlay`` wins."""
    for key, value in overlay.items():
        path = (*prefix, key)
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merge_table(current, value, origins, file, path)
        else:
            # Copied so that later merges into base never reach back into overlay.
            base[key] = copy.deepcopy(value)
            origins.record(path, file)
