"""Syntax errors: line, column, the line itself, a caret under the spot, and a hint."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

from trimcp.config.mcp_servers._files import load_client_config
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


def error_lines(tmp_path: Path, name: str, text: str) -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_client_config([path], environ={})
    assert caught.value.file == str(path)
    assert caught.value.key is None
    lines = str(caught.value).splitlines()
    assert lines[0] == f"config error in {path} (named with --config)"
    return lines[1:]


def test_trailing_comma_points_at_the_comma(tmp_path: Path) -> None:
    text = '{\n  "mcpServers": {\n    "s": {\n      "command": "npx",\n    }\n  }\n}\n'
    assert error_lines(tmp_path, "mcp.json", text) == [
        "  line 4, column 23: a comma after the last item",
        '  3 |     "s": {',
        '  4 |       "command": "npx",',
        "    |                       ^",
        "  fix:      remove this comma: JSON allows none before the closing }",
    ]


def test_trailing_comma_in_an_array(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", '{"servers": {"s": {"command": ["a", "b",]}}}')
    assert lines[0] == "  line 1, column 40: a comma after the last item"
    assert lines[-1].endswith("before the closing ]")


@pytest.mark.parametrize("comment", ["// servers", "/* servers */", "# servers"])
def test_comments(tmp_path: Path, comment: str) -> None:
    lines = error_lines(tmp_path, "mcp.json", f'{{\n  {comment}\n  "mcpServers": {{}}\n}}')
    assert lines[0] == "  line 2, column 3: a comment, which JSON does not allow"
    assert lines[2] == f"  2 |   {comment}"
    assert lines[3] == "    |   ^"
    assert "write the configuration as YAML or TOML" in lines[-1]


def test_single_quotes(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", "{'mcpServers': {}}")
    assert lines[0] == "  line 1, column 2: a single quote"
    assert (
        lines[-1]
        == "  fix:      JSON strings and keys need double quotes (\"), not single quotes (')"
    )


def test_missing_comma(tmp_path: Path) -> None:
    text = '{"mcpServers": {\n  "a": {"command": "x"}\n  "b": {"command": "y"}\n}}'
    lines = error_lines(tmp_path, "mcp.json", text)
    assert lines[0] == "  line 3, column 3: Expecting ',' delimiter"
    assert lines[1] == '  2 |   "a": {"command": "x"}'
    assert "a comma is missing" in lines[-1]


def test_unquoted_key(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", "{mcpServers: {}}")
    assert lines[-1] == '  fix:      keys need double quotes: write "key": value'


def test_windows_backslashes(tmp_path: Path) -> None:
    lines = error_lines(
        tmp_path, "mcp.json", r'{"mcpServers": {"w": {"command": "C:\Tools\x.exe"}}}'
    )
    assert lines[0].startswith("  line 1, column 37: Invalid \\escape")
    assert "forward slashes (C:/Users/me)" in lines[-1]


def test_capitalised_literals(tmp_path: Path) -> None:
    lines = error_lines(
        tmp_path, "mcp.json", '{"mcpServers": {"s": {"command": "x", "enabled": True}}}'
    )
    assert "true, false and null are written in lower case" in lines[-1]


def test_empty_json_file(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", "  \n")
    assert lines[0].endswith("the file is empty")
    assert lines[-1] == '  fix:      write {"mcpServers": {}}, or delete the file'


def test_two_objects_in_one_file(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", '{"mcpServers": {}}\n{"servers": {}}')
    assert lines[0] == "  line 2, column 1: Extra data"
    assert "put everything inside one top-level {...}" in lines[-1]


def test_unterminated_string(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", '{"mcpServers": {"s": {"command": "npx}}}')
    assert "no closing double quote" in lines[-1]


def test_tabs_keep_the_caret_aligned(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", '{\n\t"mcpServers": {\n\t\t"s": x\n\t}\n}')
    assert lines[2] == '  3 | \t\t"s": x'
    assert lines[3] == "    | \t\t     ^"


def test_long_line_is_cut_around_the_spot(tmp_path: Path) -> None:
    entries = ", ".join(f'"s{i}": {{"command": "x"}}' for i in range(20))
    text = '{"mcpServers": {' + entries + ', "bad": x}}'
    lines = error_lines(tmp_path, "mcp.json", text)
    excerpt, caret = lines[1], lines[2]
    assert excerpt.startswith("  1 | ...")
    assert len(excerpt) < 100
    assert excerpt[caret.index("^")] == "x"


def test_toml_syntax_error(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.toml", "[mcpServers.s]\ncommand = npx\n")
    assert lines[:3] == [
        "  line 2, column 11: Invalid value",
        "  1 | [mcpServers.s]",
        "  2 | command = npx",
    ]
    assert lines[3] == "    |           ^"
    assert lines[4].startswith("  fix:      correct the TOML syntax there; strings need quotes")


def test_toml_error_at_end_of_file(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.toml", "[mcpServers.s]\nargs = [1,\n")
    assert lines[0].startswith("  at the end of the file:")


def test_yaml_syntax_error(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    lines = error_lines(tmp_path, "mcp.yaml", "mcpServers:\n  s:\n    command: [npx\n")
    assert lines[0].startswith("  line 4, column 1:")
    assert "indent with spaces" in lines[-1]


def test_yaml_without_pyyaml_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    lines = error_lines(tmp_path, "mcp.yaml", "mcpServers: {}\n")
    assert lines == [
        "  this is a YAML file, and reading YAML needs PyYAML, which is not installed",
        "  fix:      pip install 'trimcp[yaml]'  (or write the file as JSON or TOML)",
    ]


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'{"mcpServers": {"s": {"command": "caf\xe9"}}}')
    with pytest.raises(ConfigError) as caught:
        load_client_config([path], environ={})
    assert "cannot read the file: it is not UTF-8 text (byte 37)" in str(caught.value)
    assert "save the file as UTF-8" in str(caught.value)


def test_deep_nesting_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    depth = sys.getrecursionlimit() + 10
    lines = error_lines(tmp_path, "mcp.json", "[" * depth + "]" * depth)
    assert lines[0] == "  the file nests arrays or objects too deeply to read"


def test_file_ending_too_early(tmp_path: Path) -> None:
    lines = error_lines(tmp_path, "mcp.json", '{"mcpServers": {"s": {"command": "x"}')
    assert lines[0] == "  line 1, column 38: the file ends too early"
    assert "check that every { and [ is closed" in lines[-1]
