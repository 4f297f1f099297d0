"""Fixtures for the configuration tests: TOML files written under tmp_path."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture
def write_toml(tmp_path: Path) -> Callable[[str, str], Path]:
    """Return a function writing dedented TOML text to ``tmp_path / name`` (folders made)."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def no_config_around(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty directory with TRIMCP_CONFIG unset, so nothing is found by default."""
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path
