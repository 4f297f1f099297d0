"""Arguments for a tool, prompt or completion as the command line gives them.

::

    trimcp call demo.py add a=1 b=2                  key=value pairs
    trimcp call demo.py add '{"a": 1, "b": 2}'       one JSON object
    trimcp call demo.py echo text='"quoted"' n=007   values that are JSON are JSON ...
    trimcp call demo.py echo --arg-file big.json     ... else strings; or a file

A value is parsed as JSON when it is JSON (``1``, ``true``, ``null``, ``[1, 2]``,
``{"k": 1}``, ``"text"``), otherwise it is the string as typed, so ``path=/tmp/x`` and
``name=Ada`` need no quotes. ``key:=value`` forces JSON (an error when it is not) and
``key==value`` forces a string (``n==007`` is the string ``"007"``), for the cases where
the guess is wrong. Prompt arguments are strings on the wire; :func:`as_strings` turns
what was parsed back into strings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["as_strings", "parse_arguments"]

_EXAMPLE = "write key=value pairs (a=1 name=Ada) or one JSON object ('{\"a\": 1}')"


def parse_arguments(words: Sequence[str], arg_file: str | None = None) -> dict[str, object]:
    """Return the arguments object that ``words`` (and ``arg_file``, read first) give.

    Raises:
        ConfigError: a word is neither JSON nor ``key=value``, a key is given twice, the file
            cannot be read or is not a JSON object; the message shows the word and the fix.
    """
    arguments: dict[str, object] = {}
    if arg_file is not None:
        arguments.update(_read_file(arg_file))
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        arguments.update(_json_object(words[0], "the arguments"))
        return arguments
    seen: set[str] = set()
    for word in words:
        key, value = _pair(word)
        if key in seen:
            raise ConfigError(f"{key!r} is given twice ({word!r}); give each argument once")
        seen.add(key)
        arguments[key] = value
    return arguments


def as_strings(arguments: dict[str, object]) -> dict[str, str]:
    """Prompt arguments: strings as they are, anything else as compact JSON."""
    return {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        for key, value in arguments.items()
    }


def _pair(word: str) -> tuple[str, object]:
    if "=" not in word:
        if word.lstrip().startswith("{"):
            raise ConfigError(
                f"a JSON object must be the only argument: {word!r} came with others; {_EXAMPLE}"
            )
        raise ConfigError(f"{word!r} is not key=value; {_EXAMPLE}")
    key, _, value = word.partition("=")
    if key.endswith(":"):  # key:=value, JSON or an error
        key = key[:-1]
        _check_key(key, word)
        try:
            return key, json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{word!r}: the value after := must be JSON ({exc.msg} at column {exc.colno}); "
                f"write {key}={value} for a string"
            ) from exc
    _check_key(key, word)
    if value.startswith("="):  # key==value, a string as typed
        return key, value[1:]
    try:
        return key, json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        return key, value


def _check_key(key: str, word: str) -> None:
    if not key or key != key.strip():
        raise ConfigError(f"{word!r} has no argument name before '='; {_EXAMPLE}")


def _json_object(text: str, what: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what} are not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; "
            f"{_EXAMPLE}"
        ) from exc
    except RecursionError as exc:
        raise ConfigError(f"{what} are nested too deeply to read") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{what} must be a JSON object, not {type(value).__name__}; {_EXAMPLE}")
    return value


def _read_file(path: str) -> dict[str, object]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the argument file {path}: {exc}") from exc
    return _json_object(text, f"the arguments in {path}")
