"""Defaults, the bundled sys_config.toml, and writing settings back out as TOML."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

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

BUNDLED = Path(__file__).resolve().parents[2] / "sys_config.toml"


def test_defaults_are_the_documented_values() -> None:
    config = SysConfig()
    assert config.sources == ()
    assert config.application == ApplicationSettings(name="trimcp", stop_timeout=30.0)
    assert config.supervision == SupervisionSettings(intensity=1, period=5.0, shutdown=5.0)
    assert config.actors == ActorSettings(mailbox_size=64, call_timeout=5.0)
    assert config.logging == LoggingSettings(level="INFO", format="text")


def test_settings_are_frozen() -> None:
    config = SysConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.supervision.intensity = 3  # type: ignore[misc]


@pytest.mark.usefixtures("no_config_around")
def test_no_file_anywhere_gives_defaults() -> None:
    assert load_config() == SysConfig()


def test_empty_file_gives_defaults_and_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.toml"
    path.write_text("")
    assert load_config(path) == SysConfig(sources=(str(path),))


#: The keys the bundled file sets apart from the defaults, on purpose: as shipped,
#: `trimcp serve --config sys_config.toml` serves the gateway over the built-in tools on
#: http://127.0.0.1:8000/mcp, while a daemon with no file at all still listens nowhere.
SHIPPED = SysConfig(
    http=dataclasses.replace(SysConfig().http, enabled=True),
    skills=dataclasses.replace(SysConfig().skills, enabled=True),
)


def test_bundled_sys_config_loads_to_exactly_the_defaults_but_the_shipped_ones() -> None:
    config = load_config(BUNDLED)
    assert config.sources == (str(BUNDLED),)
    assert dataclasses.replace(config, sources=()) == SHIPPED
    assert not SysConfig().http.enabled
    assert not SysConfig().skills.enabled


def test_bundled_sys_config_writes_every_key() -> None:
    written = tomllib.loads(BUNDLED.read_text(encoding="utf-8"))
    assert written == tomllib.loads(render_settings(SHIPPED))


def test_bundled_sys_config_documents_every_key_and_include() -> None:
    lines = BUNDLED.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("# include = [") for line in lines)
    for number, line in enumerate(lines):
        if "=" in line and not line.startswith("#"):
            assert lines[number - 1].startswith("# "), f"no comment above {line!r}"


def test_rendered_settings_load_back_to_the_same_config() -> None:
    config = SysConfig(
        application=ApplicationSettings(name='we"ird\\ \t\x7f name ✓', stop_timeout=0.25),
        supervision=SupervisionSettings(intensity=0, period=1e30, shutdown=float("inf")),
        logging=LoggingSettings(level="DEBUG", format="json"),
    )
    text = render_settings(config)
    assert validate_config(tomllib.loads(text)) == config


def test_render_refuses_what_is_not_settings() -> None:
    with pytest.raises(TypeError):
        render_settings(SysConfig)
