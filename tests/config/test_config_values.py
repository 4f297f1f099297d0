"""Every kind of wrong value, and the values that are accepted after conversion."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from trimcp.config import load_config, validate_config
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_BAD_VALUES = [
    # (table, line, key path, given, start of expected)
    ("supervision", 'intensity = "three"', "supervision.intensity", '"three" (a string)',
     "an integer >= 0 (the number of restarts allowed within supervision.period)"),
    ("supervision", "intensity = -1", "supervision.intensity", "-1 (an integer)",
     "an integer >= 0"),
    ("supervision", "intensity = true", "supervision.intensity", "true (a boolean)",
     "an integer >= 0"),
    ("supervision", "intensity = 1.5", "supervision.intensity", "1.5 (a float)",
     "an integer >= 0"),
    ("supervision", "period = 0", "supervision.period", "0 (an integer)", "a number > 0"),
    ("supervision", "period = false", "supervision.period", "false (a boolean)",
     "a number > 0"),
    ("supervision", "period = nan", "supervision.period", "nan (a float)", "a number > 0"),
    ("supervision", "shutdown = -0.5", "supervision.shutdown", "-0.5 (a float)",
     "a number >= 0"),
    ("actors", "mailbox_size = 0", "actors.mailbox_size", "0 (an integer)",
     "an integer >= 1"),
    ("actors", "mailbox_size = true", "actors.mailbox_size", "true (a boolean)",
     "an integer >= 1"),
    ("actors", 'call_timeout = "5s"', "actors.call_timeout", '"5s" (a string)',
     "a number > 0"),
    ("application", 'name = ""', "application.name", '"" (a string)',
     "a string that is not empty"),
    ("application", 'name = "   "', "application.name", '"   " (a string)',
     "a string that is not empty"),
    ("application", "name = 3", "application.name", "3 (an integer)", "a string"),
    ("application", 'name = ["a"]', "application.name", '["a"] (an array)', "a string"),
    ("application", "name = 1979-05-27T07:32:00Z", "application.name",
     "1979-05-27T07:32:00+00:00 (a date-time)", "a string"),
    ("application", "stop_timeout = -1", "application.stop_timeout", "-1 (an integer)",
     "a number > 0"),
    ("logging", 'level = "verbose"', "logging.level", '"verbose" (a string)',
     'one of "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"'),
    ("logging", "level = 10", "logging.level", "10 (an integer)", 'one of "DEBUG"'),
    ("logging", 'format = "xml"', "logging.format", '"xml" (a string)',
     'one of "text", "json"'),
    ("logging", 'format = "JSON"', "logging.format", '"JSON" (a string)',
     'one of "text", "json"'),
]  # fmt: skip


@pytest.mark.parametrize("case", _BAD_VALUES, ids=lambda case: case[1])
def test_bad_value_names_file_key_given_and_expected(
    write_toml: Callable[[str, str], Path], case: tuple[str, str, str, str, str]
) -> None:
    table, line, key, given, expected = case
    path = write_toml("sys_config.toml", f"[{table}]\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert (error.file, error.key, error.given) == (str(path), key, given)
    assert error.expected is not None
    assert error.expected.startswith(expected)
    message = str(error)
    assert message.startswith(f"config error in {path}\n")
    assert f"  key:      {key}\n" in message
    assert f"  given:    {given}\n" in message
    assert f"  expected: {error.expected}\n" in message
    assert "  fix:      write e.g.  " in message


def test_fix_shows_a_valid_line_for_the_key(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("c.toml", '[supervision]\nintensity = "three"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "fix:      write e.g.  intensity = 1  in the [supervision] table" in str(caught.value)


def test_scalar_where_a_table_belongs(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("c.toml", "supervision = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == "supervision"
    assert caught.value.expected == "a table (default restart limits of supervisors)"
    assert "intensity, period, shutdown" in str(caught.value)


def test_integers_are_accepted_as_numbers_and_become_floats(
    write_toml: Callable[[str, str], Path],
) -> None:
    path = write_toml("c.toml", "[supervision]\nperiod = 3\nshutdown = 0\n")
    supervision = load_config(path).supervision
    assert (supervision.period, supervision.shutdown) == (3.0, 0.0)
    assert type(supervision.period) is float
    assert type(supervision.shutdown) is float


def test_huge_integer_for_a_number_is_an_error_not_an_overflow() -> None:
    with pytest.raises(ConfigError, match=r"supervision\.period"):
        validate_config({"supervision": {"period": 10**400}})


def test_infinite_shutdown_is_allowed() -> None:
    config = validate_config({"supervision": {"shutdown": math.inf}})
    assert config.supervision.shutdown == math.inf


@pytest.mark.parametrize("given", ["debug", "Debug", "DEBUG"])
def test_level_is_case_insensitive_and_stored_upper_case(given: str) -> None:
    assert validate_config({"logging": {"level": given}}).logging.level == "DEBUG"


def test_zero_is_a_valid_intensity() -> None:
    assert validate_config({"supervision": {"intensity": 0}}).supervision.intensity == 0


def test_unset_keys_keep_their_defaults(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("c.toml", "[actors]\nmailbox_size = 8\n")
    config = load_config(path)
    assert config.actors.mailbox_size == 8
    assert config.actors.call_timeout == 5.0


@pytest.mark.parametrize(
    ("text", "key", "fix"),
    [
        ("[supervision]\nintesity = 3\n", "supervision.intesity", 'did you mean "intensity"?'),
        ("[supervison]\nintensity = 3\n", "supervison", 'did you mean "supervision"?'),
        ("[logging]\nLevel = 'info'\n", "logging.Level", 'did you mean "level"?'),
        ("[actors]\nzzz = 1\n", "actors.zzz", "remove the key or correct its spelling"),
        ('sources = ["x.toml"]\n', "sources", "remove the key or correct its spelling"),
        ('[application]\ninclude = ["x.toml"]\n', "application.include", "remove the key"),
        ('"odd key" = 1\n', '"odd key"', "remove the key"),
    ],
)
def test_unknown_key_with_suggestion(
    write_toml: Callable[[str, str], Path], text: str, key: str, fix: str
) -> None:
    path = write_toml("c.toml", text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert (caught.value.file, caught.value.key) == (str(path), key)
    assert caught.value.expected is not None
    assert caught.value.expected.startswith("a key known ")
    assert f"  fix:      {fix}" in str(caught.value)


def test_unknown_top_level_key_lists_the_tables() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config({"nope": 1})
    assert caught.value.expected == (
        "a key known at the top level: application, supervision, actors, logging, server, "
        "http, websocket, stdio, sessions, skills, gateway, auth, admin, otel"
    )
    assert caught.value.file == "<mapping>"


def test_every_problem_is_reported_and_the_first_is_deterministic(
    write_toml: Callable[[str, str], Path],
) -> None:
    path = write_toml(
        "c.toml",
        """\
        [logging]
        format = "xml"
        [supervision]
        intensity = -1
        bogus = 2
        """,
    )
    for _ in range(3):
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert caught.value.key == "logging.format"
        message = str(caught.value)
        assert message.startswith("3 problems in the configuration:\n\nconfig error in ")
        keys = ["logging.format", "supervision.intensity", "supervision.bogus"]
        positions = [message.index(f"key:      {key}\n") for key in keys]
        assert positions == sorted(positions)


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config({"application": {"name": ["x" * 50] * 5}})
    assert caught.value.given is not None
    assert caught.value.given.endswith("... (an array)")
    assert len(caught.value.given) < 100


def test_non_string_keys_are_unknown_keys() -> None:
    with pytest.raises(ConfigError, match=r"key:      supervision\.1\n"):
        validate_config({"supervision": {1: 2}})
