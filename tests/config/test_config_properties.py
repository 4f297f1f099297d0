"""Properties: whatever TOML holds, the validator returns a SysConfig or raises ConfigError."""

from __future__ import annotations

import re
import string
import tempfile
import tomllib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.config import (
    ActorSettings,
    ApplicationSettings,
    LoggingSettings,
    SupervisionSettings,
    SysConfig,
    load_config,
    render_settings,
    validate_config,
)
from trimcp.errors import ConfigError

# Real names make the generator reach deep into the schema instead of stopping at the first
# unknown key.
_KNOWN_KEYS = [
    "application", "supervision", "actors", "logging", "sources", "include",
    "name", "stop_timeout", "intensity", "period", "shutdown",
    "mailbox_size", "call_timeout", "level", "format",
]  # fmt: skip

_keys = st.sampled_from(_KNOWN_KEYS) | st.text(max_size=12)
_scalars = (
    st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["debug", "INFO", "json", "text", "Warning", ""])
    | st.datetimes()
    | st.dates()
    | st.times()
)
_toml_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=20,
)
_toml_documents = st.dictionaries(_keys, _toml_values, max_size=6)


@given(_toml_documents)
def test_validator_returns_config_or_raises_config_error(document: dict[str, object]) -> None:
    try:
        result: SysConfig | ConfigError = validate_config(document)
    except ConfigError as error:
        result = error
    if isinstance(result, ConfigError):
        assert result.file == "<mapping>"
        assert result.key is not None
        header = r"(\d+ problems in the configuration:\n\n)?config error in <mapping>\n"
        assert re.match(header, str(result))
    else:
        assert isinstance(result, SysConfig)


@settings(deadline=None)  # real file I/O; a slow disk must not fail the test
@given(st.text(alphabet=string.printable + "=[]{}\"'é\x7f", max_size=200))
def test_loader_returns_config_or_raises_config_error_for_any_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.toml"
        path.write_text(text, encoding="utf-8")
        try:
            result: SysConfig | ConfigError = load_config(path)
        except ConfigError as error:
            result = error
    if isinstance(result, ConfigError):
        assert result.file == str(path)
    else:
        assert result.sources == (str(path),)


_finite_or_inf = st.floats(min_value=0, allow_nan=False)
_settings = st.builds(
    SysConfig,
    application=st.builds(
        ApplicationSettings,
        name=st.text(min_size=1).filter(str.strip),
        stop_timeout=_finite_or_inf.filter(bool),
    ),
    supervision=st.builds(
        SupervisionSettings,
        intensity=st.integers(min_value=0),
        period=_finite_or_inf.filter(bool),
        shutdown=_finite_or_inf,
    ),
    actors=st.builds(
        ActorSettings,
        mailbox_size=st.integers(min_value=1, max_value=2**63 - 1),
        call_timeout=_finite_or_inf.filter(bool),
    ),
    logging=st.builds(
        LoggingSettings,
        level=st.sampled_from(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]),
        format=st.sampled_from(["text", "json"]),
    ),
)


@given(_settings)
def test_any_valid_config_survives_render_and_reload(config: SysConfig) -> None:
    assert validate_config(tomllib.loads(render_settings(config))) == config
