"""Finding the lines of one file that match a grep pattern, without a Python loop per line.

A file is read whole and searched as one buffer; only matching lines cost Python work.

* A fixed string (and a regex with no special character, which is one) is searched in the
  file's bytes as its UTF-8 encoding. Instead of ``bytes.find`` (~1.6 GB/s for a short
  needle), the byte of the needle that is rarest in text is looked for with ``memchr``
  (``bytes.find`` of one byte, ~11 GB/s) and the needle checked where it turns up; when that
  byte proves common in a file the search falls back to ``bytes.find``.
* A regex, or a fixed string with ``ignore_case``, follows Python ``re`` semantics on text.
  A file that is pure ASCII is searched as bytes with the pattern compiled for bytes, which
  gives the same answers on ASCII text (``\\s`` would not: on str it also matches the ASCII
  separators ``\\x1c``-``\\x1f``, so a pattern that uses it always takes the text route). Any
  other file is decoded as UTF-8 (undecodable bytes become U+FFFD) and searched as str, so
  ``.``, classes and case folding work on characters, not bytes.

Matching is per line, as grep's: the whole buffer is searched with ``re.MULTILINE`` (``^``
and ``$`` at line ends), and each line a match starts in is confirmed by searching that line
alone, so a match that would run across a line break never counts. Patterns whose verdict
on a line could depend on its neighbours even so (lookarounds, ``\\A``, ``\\Z``, a scoped flag
removal such as ``(?-m:...)``) are searched line by line instead: slower, same answers.
Before any of that a file is ruled out cheaply when it lacks the literal text every match of
the pattern must hold (``NEEDLE_\\d+`` needs ``NEEDLE_``, ``\\bdef (\\w+)\\(`` needs ``def ``).
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any, AnyStr

from trimcp.errors import ToolError
from trimcp.skills.jail import shown

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Hit", "Matcher", "compile_matcher"]

#: One matching line: its start and end offsets in the searched text (the end excludes the
#: line break) and where the (first) match starts in it.
Hit = tuple[int, int, int]

# Characters with a meaning in a Python regex; a pattern without any is a plain string.
_META = frozenset(".^$*+?{}[]\\|()")
# Constructs that let a line's verdict depend on the text around it (see the docstring).
_NEIGHBOURLY = re.compile(r"\(\?[=!<]|\\[AZ]|\(\?[aiLmsux]*-")
_LONGEST_PATTERN = 10_000
# Bytes from most to least common in text and source code: the needle's byte that comes
# last here (or not at all) is the one memchr looks for.
_COMMON = b" etaoinsrhldcumfpgwybvk\n\t_.,()=;:'\"-/xjqz0123456789ETAOINSRHLDCUMFPGWYBVKXJQZ"
_RANK = {byte: rank for rank, byte in enumerate(_COMMON)}
# After this many candidate positions, memchr must have skipped this many bytes per
# candidate, or bytes.find takes over.
_TRIAL_CANDIDATES = 8
_BYTES_PER_CANDIDATE = 512


class _Literal:
    """A byte string searched with memchr on its rarest byte (see the module docstring)."""

    __slots__ = ("needle", "offset", "rare", "size")

    def __init__(self, needle: bytes) -> None:
        self.needle = needle
        self.size = len(needle)
        # The rarest byte and where it sits in the needle; the last on ties keeps the offset
        # large, so a candidate near the start of the buffer is rejected without a check.
        self.offset = max(range(self.size), key=lambda i: (_RANK.get(needle[i], 999), i))
        self.rare = needle[self.offset : self.offset + 1]

    def find(self, data: bytes, start: int) -> int:
        """Return the first position of the needle at or after ``start``, or -1."""
        needle, offset, rare = self.needle, self.offset, self.rare
        memchr = data.find
        at = memchr(rare, start + offset)
        tried = 0
        while at != -1:
            begin = at - offset
            if data.startswith(needle, begin):
                return begin
            tried += 1
            if tried >= _TRIAL_CANDIDATES and at - start < tried * _BYTES_PER_CANDIDATE:
                return memchr(needle, begin + 1)  # the rare byte is common here
            at = memchr(rare, at + 1)
        return -1


class Matcher:
    """A compiled grep pattern: finds the matching lines of one file's bytes.

    Use ``compile_matcher``. ``lines(data)`` returns the searched text (``data`` itself or
    its decoded str) and an iterator of ``Hit``s in it, in order.
    """

    __slots__ = ("_ascii", "_literal", "_per_line", "_regex", "_required", "rare")

    def __init__(
        self,
        literal: bytes | None,
        regex: re.Pattern[str] | None,
        ascii_regex: re.Pattern[bytes] | None,
        required: bytes,
        per_line: bool,
    ) -> None:
        self._literal = _Literal(literal) if literal else None
        self._regex = regex
        self._ascii = ascii_regex
        self._required = _Literal(required) if required else None
        self._per_line = per_line
        first_look = self._literal or self._required
        #: A byte every match holds (b"" when there is no such promise): a file without it
        #: is passed over with one memchr, before ``absent`` is asked.
        self.rare = first_look.rare if first_look is not None else b""

    def absent(self, data: bytes) -> bool:
        """True when ``data`` certainly holds no match (the cheap first look at a file)."""
        literal = self._literal or self._required
        return literal is not None and literal.find(data, 0) == -1

    def lines(self, data: bytes) -> tuple[bytes | str, Iterator[Hit]]:
        """Return the text searched and its matching lines."""
        if self._regex is None:
            return data, _literal_lines(data, self._literal)
        if self._ascii is not None and data.isascii():
            return data, _regex_lines(data, self._ascii, self._per_line, b"\n")
        text = data.decode("utf-8", "replace")
        return text, _regex_lines(text, self._regex, self._per_line, "\n")


def compile_matcher(pattern: str, *, fixed_string: bool, ignore_case: bool) -> Matcher:
    """Return the ``Matcher`` of a grep pattern.

    Raises:
        ToolError: the regex does not compile (naming the problem and its position), the
            pattern is too long, or it holds a line break (grep matches within one line).
    """
    if len(pattern) > _LONGEST_PATTERN:
        raise ToolError(
            f"the pattern is {len(pattern)} characters long; at most {_LONGEST_PATTERN} are allowed"
        )
    if "\n" in pattern or "\r" in pattern:
        raise ToolError(
            "the pattern holds a line break; grep matches within one line, so search for one "
            "line's text (use \\n-free patterns, or two searches)"
        )
    plain = fixed_string or not any(char in _META for char in pattern)
    if plain and not ignore_case:
        return Matcher(_utf8(pattern), None, None, b"", False)
    source = re.escape(pattern) if fixed_string else pattern
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        regex = re.compile(source, flags)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise ToolError(
            f"the regex {shown(pattern)} is invalid: {exc.msg}{where} (Python re syntax); "
            "escape special characters with a backslash, or pass fixed_string=true to search "
            "for the text as written"
        ) from None
    except (OverflowError, RecursionError) as exc:
        raise ToolError(f"the regex {shown(pattern)} cannot be compiled: {exc}") from None
    return Matcher(
        None,
        regex,
        _ascii_twin(source, flags),
        _required_literal(source, flags),
        _NEIGHBOURLY.search(source) is not None,
    )


def _utf8(text: str) -> bytes:
    # A lone surrogate (JSON allows "\ud800") has no UTF-8 form; surrogatepass gives bytes
    # that valid UTF-8 never holds, so it matches nothing instead of failing.
    return text.encode("utf-8", "surrogatepass")


def _ascii_twin(source: str, flags: int) -> re.Pattern[bytes] | None:
    """The pattern compiled for bytes, when it answers as the str one does on ASCII text."""
    if not source.isascii() or "\\s" in source or "\\S" in source:
        return None
    try:
        return re.compile(source.encode("ascii"), flags)
    except (re.error, OverflowError, RecursionError):
        return None  # e.g. \u escapes or (?u), which only str patterns know


def _required_literal(source: str, flags: int) -> bytes:
    """The longest text every match contains, as UTF-8 (b"" when there is none).

    Read from the pattern as ``re`` parses it: the top level of a pattern is a sequence
    whose items every match holds in order, so a run of plain characters there
    (``\\bTODO\\(`` holds ``TODO(``) appears in every match. Alternatives, repeats, classes
    and groups end a run; a case-insensitive pattern promises nothing. The parser is
    ``re``'s own (private) one; if it ever changes shape, no literal is promised.
    """
    try:
        parser: Any = importlib.import_module("re._parser")
        constants: Any = importlib.import_module("re._constants")
        parsed = parser.parse(source, flags)
        if parsed.state.flags & re.IGNORECASE:
            return b""
        best, run = "", []
        for op, argument in [*parsed.data, (None, None)]:
            if op is constants.LITERAL:
                run.append(chr(argument))
                continue
            best = max(best, "".join(run), key=len)
            run = []
    except Exception:  # noqa: BLE001 - a private parser: any surprise means no promise
        return b""
    if "\ufffd" in best:  # could come from undecodable bytes, which the bytes lack
        return b""
    return _utf8(best)


def _literal_lines(data: bytes, literal: _Literal | None) -> Iterator[Hit]:
    size = len(data)
    if literal is None:  # the empty string: every line matches
        start = 0
        while start < size:
            end = data.find(b"\n", start)
            end = size if end == -1 else end
            yield start, end, 0
            start = end + 1
        return
    at = literal.find(data, 0)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = size if end == -1 else end
        yield start, end, at - start
        at = literal.find(data, end + 1) if end < size else -1


def _regex_lines(
    text: AnyStr, regex: re.Pattern[AnyStr], per_line: bool, newline: AnyStr
) -> Iterator[Hit]:
    size = len(text)
    position = 0
    while position < size:
        if per_line:
            start = position
        else:
            match = regex.search(text, position)
            if match is None:
                return
            # A match may start on the line break itself (a pattern like \s); it then
            # belongs to the line that break ends.
            start = text.rfind(newline, position, match.start()) + 1 or position
            if start >= size:
                return
        end = text.find(newline, start)
        end = size if end == -1 else end
        found = regex.search(text[start:end])
        if found is not None:
            yield start, end, found.start()
        position = end + 1
