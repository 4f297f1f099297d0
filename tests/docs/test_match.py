"""The expected-output comparison is loose where the docs say so, and strict everywhere else."""

from __future__ import annotations

import pytest

from tests.docs._match import contains, matches


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (["3"], ["3"]),
        (["3"], ["", "3", ""]),  # blank lines do not count
        (["SERVER  STATE"], ["SERVER      STATE"]),  # nor do runs of spaces
        (["...", "3"], ["[demo] info: adding", "3"]),
        (["a", "...", "b"], ["a", "x", "y", "b"]),
        (["a", "...", "b"], ["a", "b"]),
        (["read .../sys_config.toml"], ["read /tmp/x/sys_config.toml"]),
        ([], ["whatever it printed"]),  # no output shown: only the exit status counts
    ],
)
def test_what_matches(expected: list[str], actual: list[str]) -> None:
    assert matches(expected, actual)


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (["3"], ["4"]),
        (["3"], ["3", "4"]),  # nothing may follow without a ... line
        (["3"], ["2", "3"]),  # nor come before
        (["a", "b"], ["a", "x", "b"]),  # nor come between
        (["a", "...", "b"], ["b", "a"]),  # order counts
        (["read .../sys_config.toml"], ["read /tmp/x/other.toml"]),
        (["3"], []),
    ],
)
def test_what_does_not(expected: list[str], actual: list[str]) -> None:
    assert not matches(expected, actual)


def test_background_output_is_found_among_the_rest() -> None:
    log = ["starting", "MCP at http://127.0.0.1:9/mcp", "started"]
    assert contains(["...MCP at http://127.0.0.1:9/mcp"], log)
    assert not contains(["MCP at http://127.0.0.1:10/mcp"], log)
