"""Tool arguments from the command line (``trimcp.cli._args``)."""

from __future__ import annotations

import json
from pathlib import Path  # noqa: TC003  (pytest resolves fixture annotations)

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp.cli._args import as_strings, parse_arguments
from trimcp.errors import ConfigError


def test_values_are_json_when_they_are_and_strings_otherwise() -> None:
    got = parse_arguments(["a=1", "b=true", "c=[1, 2]", "name=Ada", "path=/tmp/x", "e="])
    assert got == {"a": 1, "b": True, "c": [1, 2], "name": "Ada", "path": "/tmp/x", "e": ""}
    assert parse_arguments(["n==007", "s=a=b"]) == {"n": "007", "s": "a=b"}
    assert parse_arguments(["x:=[1]"]) == {"x": [1]}
    assert parse_arguments(["text=✓ déjà"]) == {"text": "✓ déjà"}


def test_one_json_object() -> None:
    assert parse_arguments(['{"a": 1}']) == {"a": 1}
    assert parse_arguments([]) == {}


def test_mistakes_say_what_to_write() -> None:
    with pytest.raises(ConfigError, match="is not key=value"):
        parse_arguments(["a", "b=1"])
    with pytest.raises(ConfigError, match="given twice"):
        parse_arguments(["a=1", "a=2"])
    with pytest.raises(ConfigError, match="no argument name"):
        parse_arguments(["=1"])
    with pytest.raises(ConfigError, match="must be JSON"):
        parse_arguments(["a:=nope"])
    with pytest.raises(ConfigError, match="not valid JSON"):
        parse_arguments(['{"a": }'])
    with pytest.raises(ConfigError, match="must be the only argument"):
        parse_arguments(['{"a": 1}', "b=2"])


def test_an_argument_file_comes_first(tmp_path: Path) -> None:
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"big": "x" * 1000, "a": 1}))
    assert parse_arguments(["a=2"], str(path)) == {"big": "x" * 1000, "a": 2}
    with pytest.raises(ConfigError, match="cannot read the argument file"):
        parse_arguments([], str(tmp_path / "missing.json"))


def test_prompt_arguments_are_strings() -> None:
    assert as_strings({"a": 1, "b": "x", "c": [1]}) == {"a": "1", "b": "x", "c": "[1]"}


@given(st.lists(st.text(max_size=20), max_size=5))
def test_any_words_give_an_object_or_a_clear_error(words: list[str]) -> None:
    try:
        got = parse_arguments(words)
    except ConfigError as exc:
        message = str(exc)
        assert message
        return
    assert isinstance(got, dict)
