"""``edit_file``'s work: exact-match replacements, checked all together, shown as a diff.

Each edit's ``old_text`` must occur exactly once in the text as the edits before it left it:
zero matches means the model's picture of the file is wrong (the message points at the
closest line, found with ``difflib``), several mean the replacement is ambiguous (the
message says how many, so the model adds context). Either fails the whole call before
anything is written; the file is replaced atomically only when every edit applied.

Only UTF-8 text is edited (a byte-order mark is kept as it is); a file with NUL bytes or
invalid UTF-8 is refused as binary. Line endings are kept: when a file uses CRLF and an
``old_text`` written with LF matches only in its CRLF form, that form (and ``new_text``
with CRLF) is used.
"""

from __future__ import annotations

import difflib
import os
from typing import TYPE_CHECKING, TypedDict

from trimcp.errors import ToolError
from trimcp.skills.jail import open_regular, shown
from trimcp.skills.tools._output import Budget

from ._fs import parent_of, put_file

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.skills.jail import Resolved

__all__ = ["Edit", "apply_edits", "decode_text", "edit_resolved", "unified_diff"]

# Lines compared when looking for the line closest to an old_text that did not match.
_MAX_HINT_LINES = 50_000
# Characters of a line quoted in a hint.
_MAX_HINT_CHARS = 200


class Edit(TypedDict):
    """One exact-match replacement.

    Attributes:
        old_text: text that must occur exactly once in the file (after the earlier edits),
            copied exactly, whitespace and indentation included.
        new_text: the text that replaces it (empty to delete it).
    """

    old_text: str
    new_text: str


def decode_text(data: bytes, given: str) -> str:
    """Return ``data`` as text, or refuse it as binary.

    Raises:
        ToolError: it holds a NUL byte or is not valid UTF-8.
    """
    if b"\x00" in data:
        raise ToolError(
            f"{shown(given)} is a binary file (it holds NUL bytes); only text is edited"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown(given)} is not UTF-8 text (invalid byte at offset {exc.start}); only "
            "UTF-8 text files are edited; write_file can replace it as a whole"
        ) from None


def apply_edits(text: str, edits: Sequence[Edit], given: str) -> str:
    """Return ``text`` with ``edits`` applied in order.

    Raises:
        ToolError: an edit's ``old_text`` is empty, matches nothing or matches more than
            once; the message names the edit (1-based) and the count.
    """
    total = len(edits)
    if not total:
        raise ToolError("no edits given; pass at least one {old_text, new_text}")
    for number, edit in enumerate(edits, start=1):
        old, new = edit["old_text"], edit["new_text"]
        which = f"edit {number} of {total}"
        if not old:
            raise ToolError(f"{which}: old_text is empty; give the exact text to replace")
        count = text.count(old)
        if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
            crlf = old.replace("\n", "\r\n")
            if text.count(crlf):
                old, new = crlf, new.replace("\r\n", "\n").replace("\n", "\r\n")
                count = text.count(old)
        if count == 0:
            raise ToolError(
                f"{which}: old_text matches 0 times in {shown(given)}; nothing was changed."
                + _closest_hint(text, old)
            )
        if count > 1:
            raise ToolError(
                f"{which}: old_text matches {count} times in {shown(given)}; nothing was "
                "changed. Include more of the surrounding lines so it matches exactly once."
            )
        text = text.replace(old, new, 1)
    return text


def _closest_hint(text: str, old: str) -> str:
    wanted = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if not wanted:
        return " Check whitespace and line endings."
    lines = text.splitlines()[:_MAX_HINT_LINES]
    stripped = [line.strip() for line in lines]
    found = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6)
    if not found:
        return " No line resembles its first line; read the file again."
    number = stripped.index(found[0]) + 1
    line = lines[number - 1]
    if len(line) > _MAX_HINT_CHARS:
        line = line[:_MAX_HINT_CHARS] + "..."
    return (
        f" The closest line to its first line is line {number}: {line!r}. Copy the text "
        "exactly, whitespace included."
    )


def unified_diff(before: str, after: str, relative: str) -> list[str]:
    """Return the unified diff of ``before`` to ``after`` as lines (no line ends)."""
    lines: list[str] = []
    for line in difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{relative}",
        tofile=f"b/{relative}",
    ):
        if line.endswith("\n"):
            lines.append(line[:-1].removesuffix("\r"))
        else:  # the last line of a file without a final newline, as diff(1) marks it
            lines.append(line)
            lines.append("\\ No newline at end of file")
    return lines


def _counts(diff: list[str]) -> tuple[int, int]:
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    return added, removed


def edit_resolved(
    resolved: Resolved,
    edits: Sequence[Edit],
    *,
    dry_run: bool,
    max_file_size: int,
    max_result_bytes: int,
) -> str:
    """Apply ``edits`` to the file ``resolved`` (the inner step of ``edit_file``).

    Reads and replaces through the parent folder's descriptor, never following a symlink;
    the replace is refused if the file changed since it was read.

    Raises:
        PathRefused: the path changed on the way, or is not a regular file.
        ToolError: too large, binary, an edit did not match exactly once, or writing failed.
    """
    given = resolved.given
    with parent_of(resolved) as (dir_fd, name):
        fd, info = open_regular(dir_fd, name, given)
        with os.fdopen(fd, "rb") as file:
            if info.st_size > max_file_size:
                raise ToolError(
                    f"{shown(given)} is {info.st_size} bytes, more than the {max_file_size} "
                    "edit_file may read (max_file_size)"
                )
            data = file.read(max_file_size + 1)
        if len(data) > max_file_size:
            raise ToolError(f"{shown(given)} grew past {max_file_size} bytes while being read")
        before = decode_text(data, given)
        after = apply_edits(before, edits, given)
        diff = unified_diff(before, after, resolved.relative)
        added, removed = _counts(diff)
        count = f"{len(edits)} edit{'s' if len(edits) != 1 else ''}"
        if after == before:
            return f"{shown(given)}: {count} matched but changed nothing; nothing written"
        if dry_run:
            head = (
                f"dry run, nothing written: {count} to {shown(given)} would add {added} and "
                f"remove {removed} lines"
            )
        else:
            encoded = after.encode("utf-8")
            put_file(dir_fd, name, encoded, given=given, overwrite=True, expected=info)
            head = (
                f"edited {shown(given)}: {count}, {added} lines added, {removed} removed, "
                f"now {len(encoded)} bytes"
            )
    hint = (
        "the diff is long; preview fewer edits at a time"
        if dry_run
        else "the edit itself was applied in full; read the file to see the rest"
    )
    budget = Budget(max_result_bytes - len(head.encode()) - 1, hint=hint)
    for line in diff:
        if not budget.add(line):
            break
    budget.dropped_lines += len(diff) - len(budget.lines) - budget.dropped_lines
    return head + "\n" + budget.text()
