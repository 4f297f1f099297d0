"""Token stores: the 0600 file per server (written atomically) and the in-memory one."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import pytest

from trimcp.auth.client import (
    ClientRegistration,
    FileTokenStore,
    MemoryTokenStore,
    StoredAuth,
    TokenSet,
    TokenStore,
    default_token_directory,
)
from trimcp.auth.client._store import store_file_name

if TYPE_CHECKING:
    from pathlib import Path

RECORD = StoredAuth(
    tokens=TokenSet(
        access_token="access-1",
        refresh_token="refresh-1",
        expires_at=1_800_000_000.5,
        scopes=("a", "b"),
        issuer="https://as.example",
        resource="https://mcp.example/mcp",
    ),
    clients={
        "https://as.example": ClientRegistration(
            client_id="dyn-1",
            client_secret="secret-1",
            auth_method="client_secret_basic",
            redirect_uris=("http://127.0.0.1:4000/callback",),
            issuer="https://as.example",
            kind="dynamic",
        )
    },
)


async def test_a_file_store_keeps_a_record_per_key_readable_by_the_user_only(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "config" / "trimcp" / "tokens"
    store = FileTokenStore(folder)
    assert isinstance(store, TokenStore)
    assert await store.load("notes") is None
    await store.save("notes", RECORD)
    path = folder / "notes.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert await FileTokenStore(folder).load("notes") == RECORD
    assert os.listdir(folder) == ["notes.json"]  # no temporary file left behind
    await store.save("notes", StoredAuth())
    assert await store.load("notes") == StoredAuth()
    await store.delete("notes")
    await store.delete("notes")
    assert await store.load("notes") is None


async def test_a_file_written_wider_becomes_0600_on_the_next_save(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path)
    path = store.path_for("notes")
    path.write_text("{}")
    path.chmod(0o644)
    await store.save("notes", RECORD)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("text", ["not json", "[]", '{"tokens": {"access_token": 3}}'])
async def test_an_unreadable_file_counts_as_no_sign_in(tmp_path: Path, text: str) -> None:
    store = FileTokenStore(tmp_path)
    store.path_for("notes").write_text(text)
    record = await store.load("notes")
    assert record is None or record.tokens is None


async def test_the_memory_store() -> None:
    store = MemoryTokenStore()
    assert isinstance(store, TokenStore)
    await store.save("k", RECORD)
    assert await store.load("k") is RECORD
    await store.delete("k")
    assert await store.load("k") is None


@pytest.mark.parametrize(
    "key",
    ["notes", "https://mcp.example.com/mcp", "../../etc/passwd", ".hidden", "x" * 200, ""],
)
def test_file_names_stay_in_the_folder_and_differ(key: str) -> None:
    name = store_file_name(key)
    assert "/" not in name
    assert not name.startswith(".")
    assert name.endswith(".json")
    assert len(name) <= 80
    assert store_file_name(key + "x") != name


def test_the_default_folder_follows_xdg(tmp_path: Path) -> None:
    xdg = str(tmp_path)
    assert default_token_directory({"XDG_CONFIG_HOME": xdg}) == tmp_path / "trimcp" / "tokens"
    relative = default_token_directory({"XDG_CONFIG_HOME": "relative/path"})
    assert relative.parts[-3:] == (".config", "trimcp", "tokens")


async def test_loads_at_the_same_time_do_not_lose_what_was_kept_meanwhile(
    autojump_clock: object,
) -> None:
    import trio

    from trimcp.auth.client._keeper import TokenKeeper

    class SlowStore(MemoryTokenStore):
        async def load(self, key: str) -> StoredAuth | None:
            record = await super().load(key)  # read now, answer later
            await trio.sleep(1 if self.slow else 0)
            return record

        slow = True

    store = SlowStore()
    await store.save("notes", RECORD)
    keeper = TokenKeeper("https://mcp.example/mcp", store, "notes")
    fresh = TokenSet(access_token="access-2", resource="https://mcp.example/mcp")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(keeper.load)  # slow: finishes at t=1
        await trio.sleep(0.5)
        store.slow = False
        await keeper.load()
        assert keeper.tokens == RECORD.tokens
        await keeper.keep(fresh)
    assert keeper.tokens == fresh  # the slow load did not put the old record back
