"""The validator is generic: a new settings dataclass needs no new validation code.

These tests build a made-up schema with every supported kind of field, as a later section
would, and drive the private entry point ``build_settings`` with it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Literal

import pytest

from trimcp.config import SysConfig, render_settings, validate_config
from trimcp.config._merge import Origins
from trimcp.config._schema import at_least, non_empty, spec
from trimcp.config._validate import build_settings
from trimcp.errors import ConfigError


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    depth: Literal[1, 2, 3] = field(default=1, metadata=spec(meaning="how deep"))
    enabled: bool = field(default=False, metadata=spec(meaning="whether to limit at all"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Inner:
    limits: Limits = field(default_factory=Limits, metadata=spec(meaning="the limits"))
    roots: tuple[str, ...] = field(
        default=("/srv",), metadata=spec(meaning="folders served", check=non_empty())
    )
    weights: tuple[float, ...] = field(default=(), metadata=spec(meaning="weights"))
    modes: tuple[Literal["r", "w"], ...] = field(
        default=("r",), metadata=spec(meaning="modes", normalize=str.lower)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Outer:
    inner: Inner = field(default_factory=Inner, metadata=spec(meaning="the inner table"))
    retries: int = field(default=0, metadata=spec(meaning="retries", check=at_least(0)))


@dataclass(frozen=True, slots=True, kw_only=True)
class Unsupported:
    when: dict[str, str] = field(default_factory=dict, metadata=spec(meaning="not a setting"))


def build(data: dict[str, object]) -> Outer:
    return build_settings(Outer, data, Origins("made-up.toml"))


def test_arrays_nested_tables_bools_and_int_choices() -> None:
    built = build(
        {
            "inner": {
                "roots": ["/a", "/b"],
                "weights": [1, 2.5],
                "modes": ["R", "w"],
                "limits": {"depth": 3, "enabled": True},
            },
            "retries": 2,
        }
    )
    assert built == Outer(
        inner=Inner(
            roots=("/a", "/b"),
            weights=(1.0, 2.5),
            modes=("r", "w"),
            limits=Limits(depth=3, enabled=True),
        ),
        retries=2,
    )
    assert build({}) == Outer()


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"inner": {"roots": "/a"}}, "inner.roots", "an array of strings that is not empty"),
        ({"inner": {"roots": []}}, "inner.roots", "an array of strings that is not empty"),
        ({"inner": {"roots": ["/a", 3]}}, "inner.roots[1]", "an array of strings"),
        ({"inner": {"weights": [True]}}, "inner.weights[0]", "an array of numbers"),
        ({"inner": {"modes": ["x"]}}, "inner.modes[0]", 'an array of values each one of "r", "w"'),
        ({"inner": {"limits": {"depth": True}}}, "inner.limits.depth", "one of 1, 2, 3"),
        ({"inner": {"limits": {"depth": 4}}}, "inner.limits.depth", "one of 1, 2, 3 (how deep)"),
        ({"inner": {"limits": {"enabled": 1}}}, "inner.limits.enabled", "true or false"),
        ({"inner": {"limits": {"enabled": "yes"}}}, "inner.limits.enabled", "true or false"),
        ({"inner": {"limits": 3}}, "inner.limits", "a table (the limits)"),
        ({"inner": {"limits": {"deep": 3}}}, "inner.limits.deep", "a key known in [inner.limits]"),
    ],
)
def test_generic_errors(data: dict[str, object], key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build(data)
    assert (caught.value.file, caught.value.key) == ("made-up.toml", key)
    assert caught.value.expected is not None
    assert caught.value.expected.startswith(expected)


def test_array_item_error_shows_the_whole_key_in_the_example() -> None:
    with pytest.raises(ConfigError) as caught:
        build({"inner": {"roots": ["/a", 3]}})
    assert 'fix:      write e.g.  roots = ["/srv"]  in the [inner] table' in str(caught.value)


def test_every_bad_array_item_is_reported() -> None:
    with pytest.raises(ConfigError, match=r"^2 problems") as caught:
        build({"inner": {"roots": [1, 2]}})
    assert caught.value.key == "inner.roots[0]"


def test_nested_tables_render_with_dotted_headers_and_load_back() -> None:
    value = Outer(inner=Inner(roots=("a", 'b"'), limits=Limits(depth=2)), retries=1)
    text = render_settings(value)
    assert "\n[inner.limits]\ndepth = 2\n" in text
    assert text.startswith("retries = 1\n\n[inner]\n")
    assert build(tomllib.loads(text)) == value


def test_an_unsupported_type_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="settings cannot use the type"):
        build_settings(Unsupported, {"when": {}}, Origins("x"))


def test_the_real_defaults_pass_their_own_checks() -> None:
    assert validate_config(tomllib.loads(render_settings(SysConfig()))) == SysConfig()
