"""Turn a config file's text into plain data, or into a problem that points at the spot.

JSON, TOML and YAML are read here; what the data *means* is ``_parse``'s business.
A syntax error becomes a :class:`ConfigProblem` with the line and column, the line itself
(and the one before), a caret under the spot and, for JSON, a hint for the usual slips:
trailing commas, comments, single quotes, unquoted keys, Windows backslashes.

JSON objects come back as :class:`JsonObject`, a dict that remembers keys written twice
(``json`` keeps the last silently), so validation can report them. YAML needs PyYAML, an
optional extra; without it a ``.yaml`` file is an error that says how to install it.
"""

from __future__ import annotations

import importlib
import json
import re
import tomllib
from typing import TYPE_CHECKING, Any, Literal

from ._errors import ConfigProblem, excerpt

if TYPE_CHECKING:
    from pathlib import PurePath

    from ._model import ConfigSource

Format = Literal["json", "toml", "yaml"]

_SUFFIXES: dict[str, Format] = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}
_JSON_SPEC = "https://www.json.org"
_TOML_SPEC = "https://toml.io/en/v1.0.0"

# tomllib puts the position only into its message, e.g. "Invalid value (at line 3, column 9)"
# or "... (at end of document)"; Python 3.14 adds attributes, 3.11 does not.
_TOML_POSITION = re.compile(
    r"^(?P<what>.*) \(at (?:line (?P<line>\d+), column (?P<column>\d+)|end of document)\)$",
    re.DOTALL,
)


class JsonObject(dict[str, object]):
    """A JSON object that remembers which keys were written more than once."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        twice: dict[str, None] = {}
        for key, _ in pairs:
            if key in seen:
                twice[key] = None
            seen.add(key)
        self.duplicates: tuple[str, ...] = tuple(twice)


def format_of(path: PurePath) -> Format:
    """Return the format a file's name implies: .toml, .yaml/.yml, anything else JSON."""
    return _SUFFIXES.get(path.suffix.lower(), "json")


def parse_document(
    text: str, fmt: Format, source: ConfigSource
) -> tuple[object, ConfigProblem | None]:
    """Return the parsed data, or None and the problem when the text is not valid ``fmt``.

    A byte-order mark at the start is skipped (Windows editors write one).
    """
    text = text.removeprefix("\ufeff")
    if fmt == "toml":
        return _parse_toml(text, source)
    if fmt == "yaml":
        return _parse_yaml(text, source)
    return _parse_json(text, source)


def _parse_json(text: str, source: ConfigSource) -> tuple[object, ConfigProblem | None]:
    try:
        return json.loads(text, object_pairs_hook=JsonObject), None
    except json.JSONDecodeError as exc:
        return None, json_syntax_problem(text, exc, source)
    except RecursionError:
        return None, _too_deep(source)


def json_syntax_problem(
    text: str, exc: json.JSONDecodeError, source: ConfigSource
) -> ConfigProblem:
    """Describe a JSON syntax error with its position, an excerpt and a hint."""
    position, what, hint = _json_hint(text, exc.pos, exc.msg)
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return ConfigProblem(
        source=source,
        detail=(f"line {line}, column {column}: {what}", *excerpt(text, line, column)),
        fix=hint,
    )


def _json_hint(text: str, pos: int, message: str) -> tuple[int, str, str]:
    """Return where to point, what is wrong and what to do, for the usual JSON mistakes.

    The parser's own words are kept unless the mistake is recognised: "Expecting property
    name" under a trailing comma helps nobody.
    """
    here = text[pos : pos + 2]
    before = text[:pos].rstrip()
    if not text.strip():
        return pos, "the file is empty", 'write {"mcpServers": {}}, or delete the file'
    if here.startswith(("//", "/*", "#")):
        return (
            pos,
            "a comment, which JSON does not allow",
            (
                "remove the comment, or write the configuration as YAML or TOML (mcp.yaml,"
                " mcp.toml), which allow comments"
            ),
        )
    if here.startswith("'"):
        return (
            pos,
            "a single quote",
            "JSON strings and keys need double quotes (\"), not single quotes (')",
        )
    if not text[pos:].strip() and message.startswith("Expecting"):
        return (
            pos,
            "the file ends too early",
            (
                "a closing } or ] (or a value after a : or ,) is missing: check that every { and"
                " [ is closed"
            ),
        )
    if here[:1] in ("}", "]") and before.endswith(","):
        return (
            len(before) - 1,
            "a comma after the last item",
            (f"remove this comma: JSON allows none before the closing {here[:1]}"),
        )
    return pos, message, _json_message_hint(message, here)


def _json_message_hint(message: str, here: str) -> str:  # noqa: PLR0911 - one table
    if message.startswith("Expecting ',' delimiter"):
        return "a comma is missing: add one at the end of the item before this spot"
    if message.startswith("Expecting property name") and here[:1].isalpha():
        return 'keys need double quotes: write "key": value'
    if message.startswith(("Invalid \\escape", "Invalid \\u")):
        return (
            "a backslash starts an escape in JSON strings: write Windows paths with double"
            " backslashes (C:\\\\Users\\\\me) or with forward slashes (C:/Users/me)"
        )
    if message.startswith("Invalid control character"):
        return (
            "a string runs over a line break or holds a tab: close its quote, or write \\n or \\t"
        )
    if message.startswith("Unterminated string"):
        return 'this string has no closing double quote (")'
    if message.startswith("Extra data"):
        return (
            "there is more text after the end of the JSON value: put everything inside one"
            " top-level {...} (an extra } above, or two objects pasted one after the other?)"
        )
    if message.startswith("Expecting value") and here[:1].isalpha():
        return "strings need double quotes; true, false and null are written in lower case"
    return f"correct the JSON there (see {_JSON_SPEC})"


def _parse_toml(text: str, source: ConfigSource) -> tuple[object, ConfigProblem | None]:
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        return None, _toml_syntax_problem(text, str(exc), source)
    except RecursionError:
        return None, _too_deep(source)


def _toml_syntax_problem(text: str, message: str, source: ConfigSource) -> ConfigProblem:
    fix = f"correct the TOML syntax there; strings need quotes (see {_TOML_SPEC})"
    match = _TOML_POSITION.match(message)
    if match is None:
        return ConfigProblem(source=source, detail=(message,), fix=fix)
    if match["line"] is None:
        return ConfigProblem(
            source=source, detail=(f"at the end of the file: {match['what']}",), fix=fix
        )
    line, column = int(match["line"]), int(match["column"])
    return ConfigProblem(
        source=source,
        detail=(f"line {line}, column {column}: {match['what']}", *excerpt(text, line, column)),
        fix=fix,
    )


def _parse_yaml(text: str, source: ConfigSource) -> tuple[object, ConfigProblem | None]:
    try:
        # Imported by name so that type checking does not need PyYAML's stubs.
        yaml: Any = importlib.import_module("yaml")
    except ImportError:
        return None, ConfigProblem(
            source=source,
            detail=("this is a YAML file, and reading YAML needs PyYAML, which is not installed",),
            fix="pip install 'trimcp[yaml]'  (or write the file as JSON or TOML)",
        )
    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as exc:
        return None, _yaml_syntax_problem(text, exc, source)
    except RecursionError:
        return None, _too_deep(source)


def _yaml_syntax_problem(text: str, exc: Any, source: ConfigSource) -> ConfigProblem:  # noqa: ANN401 - PyYAML is untyped
    fix = "correct the YAML there: indent with spaces, not tabs, and quote strings holding ': '"
    mark = getattr(exc, "problem_mark", None)
    what = str(getattr(exc, "problem", None) or exc)
    if mark is None:
        return ConfigProblem(source=source, detail=(what,), fix=fix)
    line, column = int(mark.line) + 1, int(mark.column) + 1
    return ConfigProblem(
        source=source,
        detail=(f"line {line}, column {column}: {what}", *excerpt(text, line, column)),
        fix=fix,
    )


def _too_deep(source: ConfigSource) -> ConfigProblem:
    return ConfigProblem(
        source=source,
        detail=("the file nests arrays or objects too deeply to read",),
        fix="a server configuration needs three or four levels; check the file is the right one",
    )
