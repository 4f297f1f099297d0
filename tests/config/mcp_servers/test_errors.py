"""Each validation error's text: file and layer, server, field, given, expected, fix."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from trimcp.config.mcp_servers._files import (
    client_config_from_mapping,
    inspect_client_config,
    load_client_config,
)
from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


def error_of(entry: object, *, section: str = "mcpServers", name: str = "s") -> str:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping({section: {name: entry}}, environ={})
    return str(caught.value)


def test_message_names_file_layer_server_field_given_expected_fix(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps({"mcpServers": {"github": {"command": "npx", "args": "-y server"}}}),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_client_config([path], environ={})
    error = caught.value
    assert str(error).splitlines() == [
        f"config error in {path} (named with --config)",
        '  server:   "github"',
        "  field:    args",
        '  given:    "-y server" (a string)',
        "  expected: an array of strings",
        '  fix:      write it as an array: ["-y", "server"]',
    ]
    assert error.file == str(path)
    assert error.key == "github.args"
    assert error.given == '"-y server" (a string)'
    assert error.expected == "an array of strings"


def test_user_and_project_layers_are_named(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".config" / "trimcp").mkdir(parents=True)
    project.mkdir()
    (home / ".config" / "trimcp" / "mcp.json").write_text(
        '{"mcpServers": {"a": {"command": 1}}}', encoding="utf-8"
    )
    (project / ".mcp.json").write_text('{"mcpServers": {"b": {"url": 2}}}', encoding="utf-8")
    report = inspect_client_config(environ={}, home=home, cwd=project)
    text = report.render()
    assert text.startswith("2 errors in the MCP server configuration:")
    assert f"config error in {home}/.config/trimcp/mcp.json (user config)" in text
    assert f"config error in {project}/.mcp.json (project config)" in text
    assert not report.ok


def test_every_problem_is_collected() -> None:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping(
            {
                "mcpServers": {
                    "a": {"command": ["npx", "x"]},
                    "b": {"url": "ftp://h/"},
                    "c": {"command": "x", "enabled": "yes"},
                }
            },
            environ={},
        )
    text = str(caught.value)
    assert text.startswith("3 errors in the MCP server configuration:")
    assert all(f'server:   "{name}"' in text for name in "abc")


def test_command_array_in_mcp_servers_suggests_args_or_servers_form() -> None:
    text = error_of({"command": ["npx", "-y", "@modelcontextprotocol/server-github"]})
    assert 'given:    ["npx", "-y", "@modelcontextprotocol/server-github"] (an array)' in text
    assert 'expected: a string in "mcpServers": the program alone' in text
    assert (
        'move the arguments into "args": "command": "npx",'
        ' "args": ["-y", "@modelcontextprotocol/server-github"]'
    ) in text
    assert 'or use the "servers" form, where "command" is one array' in text


def test_command_line_in_one_string_suggests_splitting() -> None:
    text = error_of({"command": "npx -y 'my server'"})
    assert 'expected: the program alone; its arguments go in "args"' in text
    assert 'fix:      split it: "command": "npx", "args": ["-y", "my server"]' in text


def test_command_line_in_servers_form_also_suggests_the_array() -> None:
    text = error_of({"command": "uvx srv"}, section="servers")
    assert '"command": "uvx", "args": ["srv"]; or "command": ["uvx", "srv"]' in text


def test_command_with_spaces_and_args_is_a_program_path() -> None:
    config = client_config_from_mapping(
        {"mcpServers": {"s": {"command": "/opt/My Tools/srv", "args": ["-v"]}}}, environ={}
    )
    assert config.servers["s"].command == "/opt/My Tools/srv"


def test_existing_path_with_spaces_is_a_program(tmp_path: Path) -> None:
    program = tmp_path / "my server"
    program.write_text("", encoding="utf-8")
    config = client_config_from_mapping(
        {"mcpServers": {"s": {"command": str(program)}}}, environ={}
    )
    assert config.servers["s"].command == str(program)


def test_servers_form_command_array_and_args_together() -> None:
    text = error_of({"command": ["uvx", "srv"], "args": ["-v"]}, section="servers")
    assert "field:    args" in text
    assert '"command" is already an array holding them' in text


def test_servers_form_empty_command_array() -> None:
    text = error_of({"command": []}, section="servers")
    assert "the first item is the program" in text


def test_unknown_field_did_you_mean() -> None:
    text = error_of({"command": "x", "comand": "y"})
    assert "field:    comand" in text
    assert "expected: a known field: command, args, env" in text
    assert 'fix:      did you mean "command"?' in text


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("ENV", "env"),
        ("environment", "env"),
        ("arguments", "args"),
        ("requestTimout", "requestTimeout"),
    ],
)
def test_unknown_field_suggestions(key: str, suggestion: str) -> None:
    assert f'did you mean "{suggestion}"?' in error_of({"command": "x", key: {}})


def test_env_variable_written_at_entry_level() -> None:
    text = error_of({"command": "x", "GITHUB_TOKEN": "secret-value"})
    assert 'an environment variable? Put it in "env": {"GITHUB_TOKEN": "..."}' in text
    assert "secret-value" not in text


def test_both_command_and_url() -> None:
    text = error_of({"command": "x", "url": "https://example.com/mcp"})
    assert "field:    url" in text
    assert (
        'either "command" (launch a local server) or "url" (reach a running one), not both' in text
    )
    assert 'remove "url" to launch the command, or remove "command"' in text


def test_no_transport_configured_says_what_to_add() -> None:
    text = error_of({"args": ["-y", "pkg"], "env": {}})
    assert (
        'no transport configured: the entry has neither "command" nor "url" (it has "args", "env")'
        in text
    )
    assert 'to launch a local server add e.g. "command": "npx"' in text
    assert 'to connect to a running one add e.g. "url": "https://example.com/mcp"' in text


@pytest.mark.parametrize(
    ("url", "fix"),
    [
        ("ftp://example.com/mcp", "use http:// or https:// for Streamable HTTP, ws:// or wss://"),
        ("example.com/mcp", "write the scheme too, e.g. https://example.com/mcp"),
        ("file:///srv/mcp", 'to launch a local server, use "command" instead of "url"'),
        ("https:///mcp", "add the host"),
    ],
)
def test_bad_url(url: str, fix: str) -> None:
    text = error_of({"url": url})
    assert f'given:    "{url}" (a string)' in text
    assert "expected: an http://, https://, ws:// or wss:// URL" in text
    assert fix in text


def test_transport_disagreeing_with_url_scheme() -> None:
    text = error_of({"url": "https://example.com/mcp", "transport": "websocket"})
    assert "expected: a ws:// or wss:// URL, since the transport is websocket" in text
    assert 'remove "transport": the scheme says http' in text


def test_stdio_transport_with_url_and_http_with_command() -> None:
    assert 'replace "url" with "command"' in error_of({"url": "https://h/", "type": "stdio"})
    assert 'replace "command" with "url"' in error_of({"command": "x", "transport": "http"})


def test_unknown_transport() -> None:
    text = error_of({"command": "x", "transport": "pipe"})
    assert 'expected: one of "stdio", "http", "websocket"' in text


def test_env_values_must_be_strings() -> None:
    text = error_of({"command": "x", "env": {"PORT": 8080, "DEBUG": True, "EMPTY": None}})
    assert "field:    env.PORT" in text
    # The kind of value and the fix, never the value: a number may be a PIN.
    assert "given:    an integer" in text
    assert "given:    a boolean" in text
    assert "put it in double quotes" in text
    assert "8080" not in text
    assert "true" not in text
    assert 'write "" for an empty value' in text
    assert "list it in env_passthrough" in text


def test_env_as_list_of_assignments_suggests_an_object() -> None:
    text = error_of({"command": "x", "env": ["A=1", "B=sk-two=2"]})
    # The names, not the values (which are the secrets themselves).
    assert 'write it as an object: {"A": "...", "B": "..."}' in text
    assert "sk-two" not in text


def test_env_as_a_string_is_not_quoted() -> None:
    text = error_of({"command": "x", "env": "API_KEY=sk-secret"})
    assert "given:    a string" in text
    assert "sk-secret" not in text


def test_a_malformed_reference_in_a_header_is_not_quoted() -> None:
    config = client_config_from_mapping(
        {"mcpServers": {"s": {"url": "https://h/", "headers": {"X": "sk-${abc"}}}}
    )
    text = "\n".join(problem.render() for problem in config.warnings)
    assert "headers.X" in text
    assert "sk-" not in text


def test_env_and_header_string_values_are_never_quoted() -> None:
    text = error_of({"url": "https://h/", "headers": {"Bad Name": "Bearer sk-secret"}})
    assert "sk-secret" not in text
    assert "a header name" in text


def test_header_value_with_line_break() -> None:
    text = error_of({"url": "https://h/", "headers": {"X": "a\r\nInjected: 1"}})
    assert "field:    headers.X" in text
    assert "Injected" not in text


def test_booleans_in_quotes() -> None:
    text = error_of({"command": "x", "enabled": "false"})
    assert 'given:    "false" (a string)' in text
    assert "fix:      write false without quotes" in text


@pytest.mark.parametrize("value", [0, -1, "30", True, float("nan"), float("inf"), 10**400])
def test_timeouts_must_be_positive_numbers(value: object) -> None:
    text = error_of({"command": "x", "request_timeout": value})
    assert "expected: a number of seconds greater than 0" in text


def test_quoted_timeout_gets_the_unquoted_fix() -> None:
    assert "write 30 without quotes" in error_of({"command": "x", "startup_timeout": "30"})


@pytest.mark.parametrize("name", ["my server", "a__b", "", "github.com"])
def test_server_names_must_fit_tool_names(name: str) -> None:
    text = error_of({"command": "x"}, name=name)
    assert "expected: a server name of letters, digits, - and _, without __" in text
    assert "rename it" in text


def test_entry_that_is_a_command_line_string() -> None:
    text = error_of("npx -y server")
    assert 'expected: an object with "command"' in text
    assert 'write {"command": "npx", "args": ["-y", "server"]}' in text


def test_alias_and_canonical_name_together() -> None:
    text = error_of({"url": "https://h/", "type": "http", "transport": "http"})
    assert '"type" and "transport" mean the same: keep one' in text


def test_enabled_and_disabled_contradicting() -> None:
    text = error_of({"command": "x", "enabled": True, "disabled": True})
    assert "expected: the opposite of enabled (true)" in text


def test_top_level_not_an_object() -> None:
    with pytest.raises(ConfigError, match=r'expected: an object holding "mcpServers"'):
        client_config_from_mapping([], environ={})  # type: ignore[arg-type]


def test_server_fields_at_the_top_level() -> None:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping({"command": "npx", "args": []}, environ={})
    assert "look like one server's fields at the top level" in str(caught.value)


def test_server_at_the_top_level() -> None:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping({"github": {"command": "npx"}}, environ={})
    assert 'move it inside "mcpServers": {"github": {...}}' in str(caught.value)


def test_misspelt_section() -> None:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping({"mcp_servers": {}}, environ={})
    assert 'did you mean "mcpServers"?' in str(caught.value)


def test_section_not_an_object() -> None:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping({"mcpServers": [{"command": "x"}]}, environ={})
    assert "expected: an object of server names to server entries" in str(caught.value)


def test_duplicate_keys_in_json_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{"mcpServers": {"s": {"command": "a"}, "s": {"command": "b", "args": [], "args": []}}}',
        encoding="utf-8",
    )
    report = inspect_client_config([path], environ={})
    text = report.render()
    assert "written twice in mcpServers" in text
    assert "field:    args" in text


def test_same_server_in_two_tables_of_one_file() -> None:
    with pytest.raises(ConfigError, match="in more than one table"):
        client_config_from_mapping(
            {"mcpServers": {"s": {"command": "x"}}, "servers": {"s": {"command": ["y"]}}},
            environ={},
        )


def test_warnings_alone_do_not_raise_but_ride_along_with_errors() -> None:
    with pytest.raises(ConfigError) as caught:
        client_config_from_mapping(
            {"mcpServers": {"a": {"command": "x", "trust": True}, "b": {"command": 1}}},
            environ={},
        )
    text = str(caught.value)
    assert text.startswith("1 error and 1 warning in the MCP server configuration:")
    assert text.index("config error in") < text.index("config warning in")


def test_fields_the_transport_does_not_use_are_warned_about() -> None:
    config = client_config_from_mapping(
        {
            "mcpServers": {
                "r": {"url": "https://h/", "cwd": "/srv"},
                "l": {"command": "x", "headers": {}},
            }
        },
        environ={},
    )
    assert [(w.server, w.field) for w in config.warnings] == [("r", "cwd"), ("l", "headers")]
    assert 'only used for servers launched with "command"' in config.warnings[0].render()


def test_malformed_reference_is_warned_about() -> None:
    config = client_config_from_mapping(
        {"mcpServers": {"s": {"command": "x", "args": ["${1X}", "${OPEN"]}}}, environ={}
    )
    text = "\n".join(w.render() for w in config.warnings)
    assert '"${1X}" is not a variable reference and stays as written' in text
    assert "field:    args[1]" in text
    assert "write $${ for a literal ${" in text


def test_password_in_a_bad_url_is_not_repeated() -> None:
    text = error_of({"url": "ftp://bob:hunter2@example.com/mcp"})
    assert 'given:    "ftp://***@example.com/mcp" (a string)' in text
    assert "hunter2" not in text


def test_always_allow_must_be_an_array_of_tool_names() -> None:
    assert error_of({"command": "x", "alwaysAllow": "read_file search"}).splitlines()[2:] == [
        "  field:    alwaysAllow",
        '  given:    "read_file search" (a string)',
        "  expected: an array of this server's tool names",
        '  fix:      write it as an array: ["read_file", "search"]',
    ]
    assert "item 1 is an integer" in error_of({"command": "x", "autoApprove": ["a", 1]})


def test_always_allow_and_auto_approve_together() -> None:
    text = error_of({"command": "x", "alwaysAllow": ["a"], "autoApprove": ["a"]})
    assert '"alwaysAllow" and "autoApprove" mean the same: keep one' in text
