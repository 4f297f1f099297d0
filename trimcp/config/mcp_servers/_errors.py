"""Word what is wrong with the MCP server configuration, in one place.

Every check describes a finding as a :class:`ConfigProblem`; this module alone turns findings
into text and into the one exception type, :class:`~trimcp.errors.ConfigError`. The layout
copies ``trimcp.config``'s (a "config error in FILE" line, then labelled lines aligned after
``expected:``), so the daemon's own config errors and these read alike; the labels add the
server and its field, and values are described in JSON's words (an object, null) because
most of these files are JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ._source import ConfigSource

Severity = Literal["error", "warning"]

# Labels are padded to one width so that the values line up, as in trimcp.config.
_LABEL_WIDTH = len("expected: ")

# Messages quote at most this much of a value; a whole pasted object helps nobody.
_MAX_QUOTE = 72

# An excerpt shows at most this many characters of a line around the column (minified JSON
# is one long line).
_EXCERPT_WIDTH = 80


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigProblem:
    """One thing wrong with (or worth knowing about) the server configuration.

    Attributes:
        source: the file and layer that wrote it.
        server: the server's name, or None for a file-level problem.
        field: the field inside the server entry, e.g. ``command``, ``env.TOKEN``,
            ``args[2]``; or a top-level key when ``server`` is None.
        given: the value as written, described with its type; None when not shown
            (missing, or possibly a secret).
        expected: what would have been accepted.
        fix: one concrete thing to do about it.
        detail: lines shown before the labelled ones (a syntax error excerpt, a cause).
        severity: "error" stops loading; "warning" is reported and loading goes on.
    """

    source: ConfigSource
    server: str | None = None
    field: str | None = None
    given: str | None = None
    expected: str | None = None
    fix: str
    detail: tuple[str, ...] = ()
    severity: Severity = "error"

    def render(self) -> str:
        """Return the problem as the indented, labelled block shown to people."""
        lines = [f"config {self.severity} in {self.source.describe()}"]
        lines.extend(f"  {line}" for line in self.detail)
        server = None if self.server is None else json.dumps(self.server, ensure_ascii=False)
        for label, value in (
            ("server", server),
            ("field", self.field),
            ("given", self.given),
            ("expected", self.expected),
            ("fix", self.fix),
        ):
            if value is not None:
                lines.append(f"  {label + ':':<{_LABEL_WIDTH}}{value}")
        return "\n".join(lines)


def render_problems(problems: Iterable[ConfigProblem]) -> str:
    """Return every problem's block, errors first, with a count line when there are several."""
    ordered = sorted(problems, key=lambda problem: problem.severity != "error")
    text = "\n\n".join(problem.render() for problem in ordered)
    errors = sum(problem.severity == "error" for problem in ordered)
    warnings = len(ordered) - errors
    if len(ordered) > 1:
        counts = [_count(errors, "error"), _count(warnings, "warning")]
        heading = " and ".join(count for count in counts if count)
        text = f"{heading} in the MCP server configuration:\n\n{text}"
    return text


def config_error(problems: Sequence[ConfigProblem]) -> ConfigError:
    """Return a ConfigError reporting every problem; its attributes describe the first error.

    ``key`` is ``server.field`` (or the field alone for a file-level problem). Warnings are
    included in the message after the errors, so a person sees everything at once.
    """
    errors = [problem for problem in problems if problem.severity == "error"]
    if not errors:
        raise ValueError("config_error() needs at least one error")
    first = errors[0]
    key = ".".join(part for part in (first.server, first.field) if part is not None) or None
    return ConfigError(
        render_problems(problems),
        file=first.source.path,
        key=key,
        given=first.given,
        expected=first.expected,
    )


def describe_value(value: object, *, toml: bool = False) -> str:
    """Return ``value`` quoted and typed, e.g. ``"three" (a string)`` or ``null``."""
    if value is None:
        return "null"
    text = _quote(value)
    if len(text) > _MAX_QUOTE:
        text = text[: _MAX_QUOTE - 3] + "..."
    return f"{text} ({kind_of(value, toml=toml)})"


def kind_of(value: object, *, toml: bool = False) -> str:
    """Return the type of a parsed value in the words of its file format."""
    kinds: tuple[tuple[type | tuple[type, ...], str], ...] = (
        (str, "a string"),
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a number"),
        ((list, tuple), "an array"),
        (dict, "a table" if toml else "an object"),
    )
    for kind, name in kinds:
        if isinstance(value, kind):
            return name
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def excerpt(text: str, line: int, column: int) -> tuple[str, ...]:
    """Return the 1-based ``line`` (and the one before it) with a caret under ``column``.

    Tabs before the column are copied into the caret line so the caret stays aligned; a
    long line is cut to a window around the column.
    """
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ()
    width = len(str(line))
    shown: list[str] = []
    previous = lines[line - 2].rstrip("\r") if line > 1 else ""
    if previous.strip() and len(previous) <= _EXCERPT_WIDTH:
        shown.append(f"{line - 1:>{width}} | {previous}")
    current, column = _window(lines[line - 1].rstrip("\r"), column)
    pad = "".join("\t" if char == "\t" else " " for char in current[: column - 1])
    shown.append(f"{line} | {current}")
    shown.append(f"{'':>{width}} | {pad}^")
    return tuple(shown)


def _window(text: str, column: int) -> tuple[str, int]:
    column = max(1, min(column, len(text) + 1))
    if len(text) <= _EXCERPT_WIDTH:
        return text, column
    start = max(0, column - 1 - _EXCERPT_WIDTH // 2)
    end = start + _EXCERPT_WIDTH
    prefix = "..." if start else ""
    suffix = "..." if end < len(text) else ""
    return prefix + text[start:end] + suffix, column - start + len(prefix)


def _quote(value: object) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        # Keys that are not strings (YAML allows them), circular data and the like.
        return repr(value)


def _count(number: int, noun: str) -> str:
    if not number:
        return ""
    return f"{number} {noun}{'' if number == 1 else 's'}"
