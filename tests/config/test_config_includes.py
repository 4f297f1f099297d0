"""``include``: merge order, relative paths, nesting, cycles, and which file an error names."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from trimcp.config import load_config
from trimcp.config._merge import Origins, merge_table
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def test_includes_merge_in_order_and_the_last_wins(write_toml: Callable[[str, str], Path]) -> None:
    main = write_toml("main.toml", 'include = ["a.toml", "b.toml"]\n[supervision]\nintensity = 1\n')
    a = write_toml("a.toml", "[supervision]\nintensity = 2\nperiod = 9\n")
    b = write_toml("b.toml", "[supervision]\nintensity = 3\n")
    config = load_config(main)
    assert config.sources == (str(main), str(a), str(b))
    assert config.supervision.intensity == 3
    assert config.supervision.period == 9.0


def test_tables_merge_deeply(write_toml: Callable[[str, str], Path]) -> None:
    main = write_toml(
        "main.toml", 'include = ["a.toml"]\n[supervision]\nperiod = 2\n[actors]\nmailbox_size = 5\n'
    )
    write_toml("a.toml", "[supervision]\nintensity = 4\n")
    config = load_config(main)
    assert (config.supervision.intensity, config.supervision.period) == (4, 2.0)
    assert config.actors.mailbox_size == 5


def test_relative_includes_start_at_the_including_file(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("etc/main.toml", 'include = ["conf.d/local.toml"]\n')
    local = write_toml("etc/conf.d/local.toml", 'include = ["../shared.toml"]\n')
    shared = write_toml("etc/shared.toml", "[actors]\nmailbox_size = 11\n")
    config = load_config(main)
    assert config.sources == (str(main), str(local), str(shared))
    assert config.actors.mailbox_size == 11


def test_absolute_include(write_toml: Callable[[str, str], Path], tmp_path: Path) -> None:
    other = write_toml("elsewhere/abs.toml", "[actors]\nmailbox_size = 12\n")
    main = write_toml("main.toml", f"include = [{str(other)!r}]\n")
    assert load_config(main).actors.mailbox_size == 12


def test_nested_includes_merge_depth_first(write_toml: Callable[[str, str], Path]) -> None:
    main = write_toml("main.toml", 'include = ["a.toml", "d.toml"]\n')
    a = write_toml("a.toml", 'include = ["b.toml"]\n[actors]\nmailbox_size = 1\n')
    b = write_toml("b.toml", 'include = ["c.toml"]\n[actors]\nmailbox_size = 2\n')
    c = write_toml("c.toml", "[actors]\nmailbox_size = 3\ncall_timeout = 1.5\n")
    d = write_toml("d.toml", "[actors]\nmailbox_size = 4\n")
    config = load_config(main)
    assert config.sources == tuple(map(str, (main, a, b, c, d)))
    assert (config.actors.mailbox_size, config.actors.call_timeout) == (4, 1.5)


def test_the_same_file_twice_without_a_cycle_is_fine(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml", "b.toml"]\n')
    write_toml("a.toml", 'include = ["common.toml"]\n')
    write_toml("b.toml", 'include = ["common.toml"]\n')
    common = write_toml("common.toml", "[actors]\nmailbox_size = 9\n")
    config = load_config(main)
    assert config.sources.count(str(common)) == 2
    assert config.actors.mailbox_size == 9


def test_include_cycle_names_the_chain(write_toml: Callable[[str, str], Path]) -> None:
    a = write_toml("a.toml", 'include = ["b.toml"]\n')
    b = write_toml("b.toml", 'include = ["sub/../a.toml"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(a)
    error = caught.value
    assert (error.file, error.key, error.given) == (str(b), "include", '"sub/../a.toml" (a string)')
    assert f"include cycle:\n    {a}\n    -> {b}\n    -> {a}\n" in str(error)


def test_a_file_including_itself_is_a_cycle(write_toml: Callable[[str, str], Path]) -> None:
    a = write_toml("a.toml", 'include = ["a.toml"]\n')
    with pytest.raises(ConfigError, match="include cycle") as caught:
        load_config(a)
    assert caught.value.file == str(a)


def test_missing_include_names_the_including_file(
    write_toml: Callable[[str, str], Path], tmp_path: Path
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml"]\n')
    a = write_toml("a.toml", 'include = ["missing.toml"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(main)
    error = caught.value
    assert (error.file, error.key, error.given) == (str(a), "include", '"missing.toml" (a string)')
    assert f"cannot read {tmp_path / 'missing.toml'}: No such file or directory" in str(error)


def test_syntax_error_in_an_include_names_the_include(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml"]\n')
    a = write_toml("a.toml", "[actors\n")
    with pytest.raises(ConfigError) as caught:
        load_config(main)
    assert caught.value.file == str(a)


@pytest.mark.parametrize(
    ("line", "given"),
    [
        ('include = "a.toml"', '"a.toml" (a string)'),
        ('include = ["a.toml", 3]', '["a.toml", 3] (an array)'),
        ('include = [""]', '[""] (an array)'),
        ("include = { a = 1 }", "{ a = 1 } (a table)"),
    ],
)
def test_include_must_be_an_array_of_paths(
    write_toml: Callable[[str, str], Path], line: str, given: str
) -> None:
    main = write_toml("main.toml", line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(main)
    assert (caught.value.file, caught.value.key, caught.value.given) == (
        str(main),
        "include",
        given,
    )
    assert 'write e.g.  include = ["local.toml"]' in str(caught.value)


def test_error_names_the_include_that_wrote_the_bad_value(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml"]\n[supervision]\nperiod = 2\n')
    a = write_toml("a.toml", '[supervision]\nintensity = "three"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(main)
    assert (caught.value.file, caught.value.key) == (str(a), "supervision.intensity")
    assert str(caught.value).startswith(f"config error in {a}\n")


def test_error_names_the_including_file_when_it_wrote_the_bad_value(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml"]\n[supervision]\nperiod = -2\n')
    write_toml("a.toml", "[supervision]\nintensity = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(main)
    assert (caught.value.file, caught.value.key) == (str(main), "supervision.period")


def test_an_include_can_correct_a_bad_value(write_toml: Callable[[str, str], Path]) -> None:
    main = write_toml("main.toml", 'include = ["fix.toml"]\n[supervision]\nintensity = -1\n')
    write_toml("fix.toml", "[supervision]\nintensity = 2\n")
    assert load_config(main).supervision.intensity == 2


def test_a_scalar_replacing_a_table_is_blamed_on_its_file(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml"]\n[supervision]\nintensity = 2\n')
    a = write_toml("a.toml", "supervision = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(main)
    assert (caught.value.file, caught.value.key) == (str(a), "supervision")


def test_unknown_key_in_an_include_is_blamed_on_the_include(
    write_toml: Callable[[str, str], Path],
) -> None:
    main = write_toml("main.toml", 'include = ["a.toml"]\n[actors]\nmailbox_size = 2\n')
    a = write_toml("a.toml", "[actors]\nmailbox_sise = 3\n")
    with pytest.raises(ConfigError, match='did you mean "mailbox_size"') as caught:
        load_config(main)
    assert (caught.value.file, caught.value.key) == (str(a), "actors.mailbox_sise")


# --- the pure merge -----------------------------------------------------------------------


def test_merge_replaces_arrays_and_scalars_and_merges_tables() -> None:
    base: dict[str, object] = {"t": {"a": 1, "arr": [1, 2], "sub": {"x": 1}}, "s": "keep"}
    origins = Origins("base.toml")
    merge_table(base, {"t": {"arr": [3], "sub": {"y": 2}}, "n": 5}, origins, "top.toml")
    assert base == {"t": {"a": 1, "arr": [3], "sub": {"x": 1, "y": 2}}, "s": "keep", "n": 5}
    assert origins.file_of(("t", "a")) == "base.toml"
    assert origins.file_of(("t", "arr", 0)) == "top.toml"
    assert origins.file_of(("t", "sub", "y")) == "top.toml"
    assert origins.file_of(("n",)) == "top.toml"


def test_merge_forgets_the_origins_of_a_replaced_table() -> None:
    base: dict[str, object] = {}
    origins = Origins("?")
    merge_table(base, {"t": {"a": 1}}, origins, "first.toml")
    merge_table(base, {"t": 3}, origins, "second.toml")
    merge_table(base, {"t": {"b": 1}}, origins, "third.toml")
    assert base == {"t": {"b": 1}}
    assert origins.file_of(("t", "a")) == "third.toml"


def test_merge_does_not_share_values_with_the_overlay() -> None:
    base: dict[str, object] = {}
    overlay: dict[str, object] = {"t": {"a": 1}}
    origins = Origins("?")
    merge_table(base, overlay, origins, "one.toml")
    merge_table(base, {"t": {"b": 2}}, origins, "two.toml")
    assert overlay == {"t": {"a": 1}}
