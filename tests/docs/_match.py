"""How a console block's expected output is compared with what its command printed.

Loosely, but so that a wrong answer fails:

- blank lines are ignored on both sides, and runs of spaces count as one space (a table's
  columns move when a value grows);
- ``...`` inside a line matches any text there (a path, a time, a session id);
- a line that is only ``...`` matches any number of lines, none included;
- every other expected line must match one line of the output, in order, and where no
  ``...`` line stands between them, nothing else may come between them (or before the
  first, or after the last).

So ``3`` alone expects the output to be exactly ``3``; ``...`` then ``3`` expects it to end
with ``3``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

ELLIPSIS = "..."


def normalize(line: str) -> str:
    """The line with its runs of whitespace made one space, and no space at either end."""
    return " ".join(line.split())


def _line_pattern(line: str) -> str:
    return "[^\n]*".join(re.escape(part) for part in line.split(ELLIPSIS))


def matches(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Whether ``actual`` (the output's lines) is what ``expected`` shows (module docstring)."""
    wanted = [normalize(line) for line in expected if line.strip()]
    if not wanted:
        return True
    got = "".join(normalize(line) + "\n" for line in actual if line.strip())
    pattern = "".join(
        "(?:[^\n]*\n)*?" if line == ELLIPSIS else _line_pattern(line) + "\n" for line in wanted
    )
    return re.fullmatch(pattern, got) is not None


def contains(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Whether the expected lines appear in ``actual`` in order, anything around them."""
    return matches([ELLIPSIS, *expected, ELLIPSIS], actual)
