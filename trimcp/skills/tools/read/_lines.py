"""Choosing and fitting lines: what ``read_file`` was asked for, and what fits the result.

``Room`` counts the bytes left under ``max_result_bytes``; ``forward`` fills it from the
first line asked for (a range: the rest is reached with ``offset``), ``backward`` from the
last (a tail: its end matters most). When not even one line fits, that line is shown cut —
its start going forward, its end going backward — so a caller who continues always moves on.
The header (path, lines shown, total) is only known once the lines are fitted, so it is
written after them and put first by ``assemble``, inside the same ``Budget``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trimcp.errors import ToolError
from trimcp.skills.jail import shown
from trimcp.skills.tools._output import Budget

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "LineRequest",
    "Room",
    "Shown",
    "assemble",
    "backward",
    "format_line",
    "forward",
    "forward_footer",
    "header_room",
    "span",
]


@dataclass(frozen=True, slots=True)
class LineRequest:
    """Which lines ``read_file`` was asked for (all None: the whole file)."""

    offset: int | None = None
    limit: int | None = None
    head: int | None = None
    tail: int | None = None

    def check(self) -> None:
        """Refuse a request that mixes ways of choosing lines or counts below 1.

        Raises:
            ToolError: naming what was mixed and what to give instead.
        """
        for name in ("offset", "limit", "head", "tail"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ToolError(f"{name} must be 1 or more (lines are numbered from 1)")
        if self.head is not None and self.tail is not None:
            raise ToolError("give head or tail, not both")
        if (self.head is not None or self.tail is not None) and (
            self.offset is not None or self.limit is not None
        ):
            raise ToolError(
                "head/tail cannot be combined with offset/limit: give either head (or tail) "
                "alone, or offset (first line, from 1) with limit (line count)"
            )

    @property
    def partial(self) -> bool:
        """Whether only some lines were asked for."""
        return any(value is not None for value in (self.offset, self.limit, self.head, self.tail))

    @property
    def start(self) -> int:
        """The first line of a forward read."""
        return self.offset or 1

    @property
    def count(self) -> int | None:
        """How many lines a forward read shows at most (None: to the end)."""
        return self.head if self.head is not None else self.limit


def _size(line: str) -> int:
    return len(line.encode("utf-8", "surrogateescape")) + 1


@dataclass(slots=True)
class Room:
    """Bytes of result text left for lines; the last ``Budget`` gets only lines that fit."""

    left: int

    def take(self, line: str) -> bool:
        """Count ``line`` against the room if it fits; return whether it did."""
        size = _size(line)
        if size > self.left:
            return False
        self.left -= size
        return True


def format_line(number: int, text: str, numbers: bool) -> str:
    """One output line: ``cat -n`` style (number right-aligned in 6, a tab) or bare."""
    text = text.removesuffix("\r")
    return f"{number:>6}\t{text}" if numbers else text


def _cut(number: int, text: str, numbers: bool, left: int, keep_end: bool) -> str:
    """The line cut to ``left`` bytes: its start (or end), marked with an ellipsis."""
    prefix = format_line(number, "", numbers)
    room = max(0, left - _size(prefix) - 3)
    data = text.removesuffix("\r").encode("utf-8", "surrogateescape")
    if keep_end:
        piece = data[len(data) - room :] if room else b""
        return prefix + "…" + piece.decode("utf-8", "ignore")
    return prefix + data[:room].decode("utf-8", "ignore") + "…"


@dataclass(slots=True)
class Shown:
    """The lines fitted, the numbers of the first and last, and whether something was left."""

    lines: list[str] = field(default_factory=list)
    first: int | None = None
    last: int | None = None
    stopped: bool = False  # the room ran out before the requested lines did
    cut: bool = False  # one line was too long and is shown cut


def forward(room: Room, items: Iterable[tuple[int, str]], numbers: bool) -> Shown:
    """Fit ``(number, text)`` lines from the first on, until they end or the room does."""
    shown_ = Shown()
    for number, text in items:
        line = format_line(number, text, numbers)
        if not room.take(line):
            shown_.stopped = True
            if shown_.lines:
                break
            # Not even this one line fits: show its start, so continuing moves on.
            line = _cut(number, text, numbers, room.left, keep_end=False)
            room.left = 0
            shown_.cut = True
        shown_.lines.append(line)
        if shown_.first is None:
            shown_.first = number
        shown_.last = number
        if shown_.stopped:
            break
    return shown_


def backward(room: Room, items: list[tuple[int, str]], numbers: bool) -> Shown:
    """Fit ``(number, text)`` lines from the last back, until they end or the room does."""
    kept: list[str] = []
    cut = False
    for number, text in reversed(items):
        line = format_line(number, text, numbers)
        if not room.take(line):
            if not kept:
                # Not even the last line fits: show its end, the part a tail is about.
                kept.append(_cut(number, text, numbers, room.left, keep_end=True))
                room.left, cut = 0, True
            break
        kept.append(line)
    kept.reverse()
    shown_ = Shown(kept, stopped=len(kept) < len(items) or cut, cut=cut)
    if kept:
        shown_.first = items[len(items) - len(kept)][0]
        shown_.last = items[-1][0]
    return shown_


def assemble(limit: int, header: str, shown_: Shown, footer: str) -> str:
    """The result text: header, the fitted lines and the footer, in one ``Budget``."""
    budget = Budget(limit)
    budget.add(header)
    for line in shown_.lines:
        budget.add(line)
    return budget.text(footer)


def header_room(limit: int, path: str) -> Room:
    """The room for lines under ``limit``, less what the header and footer may take.

    The header holds the path, line numbers and an encoding note; the footer one note.
    """
    return Room(max(0, limit - _size(shown(path)) - 400))


def forward_footer(shown_: Shown, limit: int, *, more: bool) -> str:
    """The note under a forward read: where to continue, if anything is left.

    ``more``: lines follow the last one shown (in the file, not only in the request).
    """
    assert shown_.last is not None
    following = shown_.last + 1
    if shown_.cut:
        then = f"the next line is offset={following}" if more else "it is the last line"
        return (
            f"[line {shown_.last} is too long for max_result_bytes ({limit} bytes): only its "
            f"start is shown; {then}]"
        )
    if shown_.stopped:
        return f"[output cut at {limit} bytes (max_result_bytes); continue with offset={following}]"
    if more:
        return f"[more lines follow; continue with offset={following}]"
    return ""


def span(shown_: Shown) -> str:
    """The lines shown, for a header: ``"line 7"`` or ``"lines 7-9"``."""
    if shown_.first == shown_.last:
        return f"line {shown_.first}"
    return f"lines {shown_.first}-{shown_.last}"
