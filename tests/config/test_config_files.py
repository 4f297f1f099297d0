"""Reading files: syntax errors, unreadable files, and which file is chosen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from trimcp.config import CONFIG_ENV_VAR, SysConfig, find_config_file, load_config
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable


def test_syntax_error_names_file_line_and_column(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("c.toml", "[supervision]\nintensity = three\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert error.file == str(path)
    assert error.key is None
    lines = str(error).splitlines()
    assert lines[0] == f"config error in {path}"
    assert lines[1] == "  line 2, column 13: Invalid value"
    assert lines[2] == "  2 | intensity = three"
    assert lines[3] == "    |             ^"
    assert lines[4].startswith("  fix:      correct the TOML syntax there")


def test_syntax_error_at_the_end_of_the_file(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("c.toml", "[supervision]\nintensity = [1,\n")
    with pytest.raises(ConfigError, match="at the end of the file: Invalid value"):
        load_config(path)


def test_duplicate_key_is_a_syntax_error(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("c.toml", "[actors]\nmailbox_size = 1\nmailbox_size = 2\n")
    with pytest.raises(ConfigError, match="Cannot overwrite a value") as caught:
        load_config(path)
    assert caught.value.file == str(path)


def test_crlf_line_is_quoted_without_the_carriage_return(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"[actors]\r\nmailbox_size = =\r\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "  2 | mailbox_size = =\n" in str(caught.value)


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.file == str(path)
    assert "cannot read the file: No such file or directory" in str(caught.value)
    assert "named explicitly" in str(caught.value)


def test_directory_is_not_a_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file") as caught:
        load_config(tmp_path)
    assert caught.value.file == str(tmp_path)


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[application]\nname = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=r"not UTF-8 text \(byte 25\)"):
        load_config(path)


def test_relative_path_is_reported_absolute(
    write_toml: Callable[[str, str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_toml("c.toml", "")
    monkeypatch.chdir(tmp_path)
    assert load_config("c.toml").sources == (str(tmp_path / "c.toml"),)


# --- which file ---------------------------------------------------------------------------


def test_env_var_names_the_file(write_toml: Callable[[str, str], Path]) -> None:
    path = write_toml("from_env.toml", "[actors]\nmailbox_size = 7\n")
    config = load_config(environ={CONFIG_ENV_VAR: str(path)})
    assert config.actors.mailbox_size == 7
    assert config.sources == (str(path),)


def test_os_environ_is_the_default_environment(
    write_toml: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_toml("from_env.toml", "[actors]\nmailbox_size = 7\n")
    monkeypatch.setenv(CONFIG_ENV_VAR, str(path))
    assert load_config().actors.mailbox_size == 7


def test_explicit_path_beats_env_var(write_toml: Callable[[str, str], Path]) -> None:
    explicit = write_toml("explicit.toml", "[actors]\nmailbox_size = 1\n")
    from_env = write_toml("from_env.toml", "[actors]\nmailbox_size = 2\n")
    config = load_config(explicit, environ={CONFIG_ENV_VAR: str(from_env)})
    assert config.actors.mailbox_size == 1


def test_env_var_beats_local_file(
    write_toml: Callable[[str, str], Path], no_config_around: Path
) -> None:
    write_toml("sys_config.toml", "[actors]\nmailbox_size = 1\n")
    from_env = write_toml("from_env.toml", "[actors]\nmailbox_size = 2\n")
    config = load_config(environ={CONFIG_ENV_VAR: str(from_env)})
    assert config.actors.mailbox_size == 2


def test_local_sys_config_is_read_when_nothing_is_named(
    write_toml: Callable[[str, str], Path], no_config_around: Path
) -> None:
    local = write_toml("sys_config.toml", "[actors]\nmailbox_size = 3\n")
    config = load_config(environ={})
    assert config.actors.mailbox_size == 3
    assert config.sources == (str(local),)


def test_empty_env_var_counts_as_unset(no_config_around: Path) -> None:
    assert load_config(environ={CONFIG_ENV_VAR: ""}) == SysConfig()
    assert find_config_file(environ={CONFIG_ENV_VAR: ""}) is None


def test_missing_file_from_env_var_says_where_the_name_came_from(tmp_path: Path) -> None:
    path = tmp_path / "gone.toml"
    with pytest.raises(ConfigError, match=f"named by the {CONFIG_ENV_VAR} environment variable"):
        load_config(environ={CONFIG_ENV_VAR: str(path)})


def test_find_config_file_follows_the_same_order(
    write_toml: Callable[[str, str], Path], no_config_around: Path
) -> None:
    assert find_config_file(environ={}) is None
    write_toml("sys_config.toml", "")
    assert find_config_file(environ={}) == no_config_around / "sys_config.toml"
    assert find_config_file(environ={CONFIG_ENV_VAR: "/x.toml"}) == Path("/x.toml")
    found = find_config_file("a/../y.toml", environ={CONFIG_ENV_VAR: "/x.toml"})
    assert found == no_config_around / "y.toml"
