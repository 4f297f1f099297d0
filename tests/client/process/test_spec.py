"""``ProcessSpec``: built from a server definition, checked before anything is launched."""

from __future__ import annotations

import sys

import pytest

from trimcp.client.process._launch import ProcessSpec, prepare_launch
from trimcp.config.mcp_servers._model import ConfigSource, ServerConfig


def test_from_config_copies_the_stdio_fields() -> None:
    config = ServerConfig(
        name="files",
        transport="stdio",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem"),
        env={"DEBUG": "1"},
        env_passthrough=("GITHUB_TOKEN",),
        cwd="/srv",
        source=ConfigSource("/home/me/.config/trimcp/mcp.json", "user"),
    )
    spec = ProcessSpec.from_config(config)
    assert spec.name == "files"
    assert (spec.command, spec.args) == ("npx", ("-y", "@modelcontextprotocol/server-filesystem"))
    assert dict(spec.env) == {"DEBUG": "1"}
    assert spec.env_passthrough == ("GITHUB_TOKEN",)
    assert spec.cwd == "/srv"
    assert spec.source == "/home/me/.config/trimcp/mcp.json (user config)"
    assert (spec.close_grace, spec.term_grace, spec.stderr_lines) == (2.0, 2.0, 50)


def test_from_config_refuses_a_url_server() -> None:
    config = ServerConfig(name="web", transport="http", url="https://example.com/mcp")
    with pytest.raises(ValueError, match="not a stdio server"):
        ProcessSpec.from_config(config)


@pytest.mark.parametrize(
    "options",
    [{"stderr_lines": 0}, {"max_message_size": 0}, {"close_grace": -1.0}, {"term_grace": -0.1}],
)
def test_bad_options_are_refused_before_launch(options: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=">= "):
        ProcessSpec(name="s", command="x", **options)  # type: ignore[arg-type]


def test_spec_copies_its_mappings() -> None:
    env = {"A": "1"}
    spec = ProcessSpec(name="s", command="x", env=env, args=["a"])  # type: ignore[arg-type]
    env["A"] = "2"
    assert dict(spec.env) == {"A": "1"}
    assert spec.args == ("a",)


def test_prepare_launch_uses_the_given_environment() -> None:
    spec = ProcessSpec(name="s", command=sys.executable, env={"X": "1"})
    launch = prepare_launch(spec, {"PATH": "/bin", "TOKEN": "t"})
    assert dict(launch.environment) == {"PATH": "/bin", "X": "1"}
    assert launch.resolved.argv == (sys.executable,)
    assert launch.context.server == "s"


def test_repr_hides_env_values_and_secret_arguments() -> None:
    spec = ProcessSpec(
        name="api",
        command="server",
        args=("--api-key", "sk-arg-secret", "--verbose"),
        env={"API_KEY": "sk-env-secret"},
    )
    text = repr(spec)
    assert "sk-" not in text
    assert "'API_KEY': '***'" in text
    assert "--verbose" in text
    # The launch's environment (the merged one) is not in its repr either.
    launch = prepare_launch(
        ProcessSpec(name="py", command=sys.executable, env={"API_KEY": "sk-env-secret"})
    )
    assert launch.environment["API_KEY"] == "sk-env-secret"
    assert "sk-env-secret" not in repr(launch)
