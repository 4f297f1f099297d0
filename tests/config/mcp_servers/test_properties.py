"""Properties: whatever a file holds, reading it returns a report; nothing else escapes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.config.mcp_servers._errors import ConfigProblem
from trimcp.config.mcp_servers._expand import expand
from trimcp.config.mcp_servers._files import client_config_from_mapping, inspect_client_config
from trimcp.config.mcp_servers._model import INLINE, ClientConfig, ServerConfig, diff_configs
from trimcp.config.mcp_servers._parse import parse_servers
from trimcp.errors import ConfigError

# Real names make the generator reach deep into the checks instead of stopping at the first
# unknown key.
_KEYS = [
    "mcpServers", "servers", "upstreams", "command", "args", "env", "env_passthrough", "cwd",
    "url", "headers", "transport", "type", "enabled", "disabled", "auto_connect", "autoConnect",
    "startup_timeout", "request_timeout", "reset_timeout_on_progress", "max_request_timeout",
    "timeout", "s", "github", "PATH",
]  # fmt: skip
_STRINGS = [
    "npx", "npx -y pkg", "https://example.com/mcp", "ws://h/ws", "ftp://h", "sse", "stdio",
    "websocket", "${HOME}", "${X:-d}", "${1X}", "$${A}", "", " ", "a b", "true", "30",
]  # fmt: skip

_keys = st.sampled_from(_KEYS) | st.text(max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from(_STRINGS)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=25,
)
_entries = st.dictionaries(st.sampled_from(_KEYS[3:20]), _values, max_size=6)
_documents = st.dictionaries(
    st.sampled_from(["mcpServers", "servers", "upstreams"]) | _keys,
    st.dictionaries(_keys, _entries | _values, max_size=4) | _values,
    max_size=3,
)


def _check_problems(problems: list[ConfigProblem] | tuple[ConfigProblem, ...]) -> None:
    for problem in problems:
        assert isinstance(problem, ConfigProblem)
        assert problem.render().startswith(f"config {problem.severity} in ")


@settings(max_examples=150, deadline=None)
@given(_documents | _values)
def test_parse_servers_never_raises(data: object) -> None:
    parsed = parse_servers(data, INLINE)
    assert all(isinstance(server, ServerConfig) for server in parsed.servers.values())
    _check_problems(parsed.problems)


@settings(max_examples=150, deadline=None)
@given(_documents)
def test_from_mapping_returns_a_config_or_raises_config_error(data: dict[str, object]) -> None:
    config: ClientConfig | None = None
    message = ""
    try:
        config = client_config_from_mapping(data, environ={"HOME": "/h"})
    except ConfigError as exc:
        message = str(exc)
    if config is None:
        assert "config error in <inline> (given in code)" in message
        return
    _check_problems(config.warnings)
    for server in config.servers.values():
        assert server.fingerprint() == ServerConfig(**_fields(server)).fingerprint()  # type: ignore[arg-type]


def _fields(server: ServerConfig) -> dict[str, object]:
    return {name: getattr(server, name) for name in ServerConfig.__dataclass_fields__}


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["mcp.json", "mcp.toml", "mcp.yaml"]),
    st.text(max_size=200) | _documents.map(json.dumps),
)
def test_any_text_in_any_format_gives_a_report(name: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        report = inspect_client_config([path], environ={})
    _check_problems(report.errors)
    _check_problems(report.warnings)
    assert report.ok == (not report.errors)


@given(st.binary(max_size=100))
def test_any_bytes_give_a_report(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mcp.json"
        path.write_bytes(data)
        report = inspect_client_config([path], environ={})
    _check_problems(report.errors)


_texts = st.text(alphabet=st.sampled_from("${}:-$ABx_1 \\"), max_size=30) | st.text(max_size=30)
_environs = st.dictionaries(st.sampled_from(["A", "B", "x_1"]), st.text(max_size=5), max_size=3)


@given(_texts, _environs)
def test_escaped_text_expands_to_itself(text: str, environ: dict[str, str]) -> None:
    assert expand(text.replace("${", "$${"), environ) == (text, ())


@given(_texts.filter(lambda text: "$" not in text), _environs)
def test_text_without_dollars_is_untouched(text: str, environ: dict[str, str]) -> None:
    assert expand(text, environ) == (text, ())


@given(_texts, _environs)
def test_expansion_never_raises_and_names_only_unset_variables(
    text: str, environ: dict[str, str]
) -> None:
    _, missing = expand(text, environ)
    assert not set(missing) & environ.keys()


_servers = st.dictionaries(
    st.sampled_from("abcdef"),
    st.builds(
        ServerConfig,
        name=st.just("n"),
        transport=st.just("stdio"),
        command=st.sampled_from(["x", "y"]),
        args=st.lists(st.sampled_from(["1", "2"]), max_size=2).map(tuple),
        enabled=st.booleans(),
    ),
)


@given(_servers, _servers)
def test_diff_partitions_every_name(
    old: dict[str, ServerConfig], new: dict[str, ServerConfig]
) -> None:
    diff = diff_configs(old, new)
    groups = [diff.added, diff.removed, diff.changed, diff.unchanged]
    assert sum(len(group) for group in groups) == len(old.keys() | new.keys())
    assert frozenset().union(*groups) == old.keys() | new.keys()
    assert all(old[name].fingerprint() == new[name].fingerprint() for name in diff.unchanged)
    assert diff_configs(new, old).added == diff.removed
