"""``Budget``: the text of one tool result, capped at ``max_result_bytes`` and saying so.

A tool appends lines; once the cap would be passed the rest is dropped and ``text()`` ends
with a line saying how much was left out and how to get it, so a model never mistakes a cut
result for a whole one.
"""

from __future__ import annotations

__all__ = ["Budget"]


class Budget:
    """Lines of output up to ``limit`` UTF-8 bytes.

    Args:
        limit: the most bytes the joined lines may take (``max_result_bytes``).
        hint: what the caller can do to see the rest, appended to the truncation note.
    """

    def __init__(self, limit: int, hint: str = "narrow the request") -> None:
        self.limit = limit
        self.hint = hint
        self.used = 0
        self.lines: list[str] = []
        self.dropped_lines = 0
        self.full = False

    def add(self, line: str) -> bool:
        """Append ``line``; return False (and drop it) once the cap is reached."""
        size = len(line.encode("utf-8", "surrogateescape")) + 1
        if self.full or self.used + size > self.limit:
            self.full = True
            self.dropped_lines += 1
            return False
        self.used += size
        self.lines.append(line)
        return True

    def text(self, footer: str = "") -> str:
        """Return the lines, then ``footer`` and the truncation note when something was cut."""
        parts = list(self.lines)
        if footer:
            parts.append(footer)
        if self.full:
            parts.append(
                f"[output cut at {self.limit} bytes (max_result_bytes): "
                f"{self.dropped_lines} more line(s) not shown; {self.hint}]"
            )
        return "\n".join(parts)
