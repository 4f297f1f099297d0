"""The event store's byte bound as a setting: [http] max_event_store_bytes and HttpOptions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from trimcp.config import HttpSettings, load_config
from trimcp.errors import ConfigError
from trimcp.http import HttpOptions
from trimcp.transports import MemoryEventStore

if TYPE_CHECKING:
    from pathlib import Path


async def test_the_byte_bound_defaults_agree_across_layers() -> None:
    default = HttpOptions().max_event_store_bytes
    assert default == HttpSettings().max_event_store_bytes == 32 * 1024 * 1024
    # MemoryEventStore's own default is the same: filled past it, the store holds the line.
    store = MemoryEventStore()
    stream = await store.open_stream("s")
    for _ in range(default // 600_000 + 1):
        await store.store_event("s", stream, b"x" * 600_000)
    assert default - 600_000 < store.statistics().footprint <= default


def test_the_byte_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_event_store_bytes"):
        HttpOptions(max_event_store_bytes=0)


def test_the_setting_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "sys_config.toml"
    path.write_text("[http]\nmax_event_store_bytes = 1048576\n", encoding="utf-8")
    assert load_config(path).http.max_event_store_bytes == 1_048_576
    path.write_text("[http]\nmax_event_store_bytes = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.key == "http.max_event_store_bytes"
    assert caught.value.expected is not None
    assert caught.value.expected.startswith("an integer >= 1")
