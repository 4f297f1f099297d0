"""The read tools cannot be talked out of the jail: ``..`` chains, absolute paths, the prefix
sibling, symlinked files and folders that lead out, ``/proc/self/root``, FIFOs and devices,
blocked secrets and generated paths are refused (or described without their target), and
nothing from outside — its content, its path, its names — appears in any result."""

from __future__ import annotations

import json
import os
import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import call, skills_client, text_of

SECRET = "TOP-SECRET-OUTSIDE-MARKER"
# Names only found outside: they must not show up in a listing either.
OUTSIDE_NAMES = ("secret.txt", "inner-outside.txt")


def plant(base: Path) -> Path:
    """base/jail with a few files, links out and specials; the secret outside and beside it."""
    root = base / "jail"
    outside = base / "outside"
    sibling = base / "jail-x"
    for folder in (root / "sub", outside / "dir", sibling):
        folder.mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text(SECRET + "\n")
    (outside / "dir" / "inner-outside.txt").write_text(SECRET + "\n")
    (sibling / "secret.txt").write_text(SECRET + "\n")
    (root / "a.txt").write_text("alpha\n")
    (root / "sub" / "b.txt").write_text("beta\n")
    (root / ".env").write_text("TOKEN=" + SECRET + "\n")
    (root / "sub" / "id_rsa").write_text(SECRET + "\n")
    (root / "file-link").symlink_to(outside / "secret.txt")
    (root / "dir-link").symlink_to(outside / "dir")
    (root / "relative-link").symlink_to("../outside/secret.txt")
    (root / "sibling-link").symlink_to("../jail-x")
    (root / "null-link").symlink_to("/dev/null")
    (root / "proc-link").symlink_to("/proc/self/root" + str(outside / "secret.txt"))
    os.mkfifo(root / "pipe")
    return root


@pytest.fixture
def jail(tmp_path: Path) -> Path:
    return plant(tmp_path)


def atime_is_kept(folder: Path) -> bool:
    """Whether reading a file here updates its access time (so an outside read would show)."""
    probe = folder / "probe"
    probe.write_text("probe")
    before = probe.stat().st_atime_ns
    probe.read_text()
    after = probe.stat().st_atime_ns
    probe.unlink()
    return before != after


def outside_state(base: Path) -> dict[str, tuple[int, int, int]]:
    """(size, mtime, atime) of everything outside the jail, by lstat only (reads no file).

    Listing the folders here updates their access times the first time, so every path is
    gathered first and stat'ed after: what a later call sees changed, a tool changed.
    """
    paths = [
        os.path.join(current, name)
        for folder in (base / "outside", base / "jail-x")
        for current, dirs, files in os.walk(folder)
        for name in [".", *dirs, *files]
    ]
    state = {}
    for path in paths:
        info = os.lstat(path)
        state[path] = (info.st_size, info.st_mtime_ns, info.st_atime_ns)
    return state


def leaked(result: dict[str, Any], base: Path) -> list[str]:
    """What of the outside a result shows: the secret, the outside folder, its names."""
    dumped = json.dumps(result, ensure_ascii=False)
    found = [word for word in (SECRET, str(base / "outside"), *OUTSIDE_NAMES) if word in dumped]
    return found + (["/dev/null"] if "/dev/null" in dumped else [])


# Every path that must be refused by the tools that open it.
ESCAPES = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "../" * 12 + "etc/passwd",
    "/etc/passwd",
    "{base}/outside/secret.txt",
    "{base}/jail-x/secret.txt",
    "../jail-x/secret.txt",
    "{base}/jail/../jail-x/secret.txt",
    "/proc/self/root{base}/outside/secret.txt",
    "file-link",
    "relative-link",
    "dir-link/inner-outside.txt",
    "sibling-link/secret.txt",
    "proc-link",
    "null-link",
    "pipe",
    ".env",
    "sub/id_rsa",
    "~root/.bashrc",
]
FOLDER_ESCAPES = ["dir-link", "sibling-link", "..", "{base}/outside", "/proc/self/root/", "/"]
# Links inside the jail: file_info describes them (without their targets) instead of refusing.
DESCRIBED = {"file-link", "relative-link", "proc-link", "null-link", "dir-link", "sibling-link"}


def _fill(path: str, base: Path) -> str:
    return path.replace("{base}", str(base))


async def test_read_file_and_file_info_refuse_every_escape(jail: Path) -> None:
    base = jail.parent
    keeps_atime = atime_is_kept(base)
    before = outside_state(base)
    async with skills_client(jail) as client:
        for template in ESCAPES + FOLDER_ESCAPES:
            path = _fill(template, base)
            read = await call(client, "read_file", path=path)
            assert read["isError"] is True, (path, text_of(read))
            # A link's own path is what the caller wrote; only its target is kept back.
            assert not [word for word in leaked(read, base) if word not in path], path
            info = await call(client, "file_info", path=path)
            assert not [word for word in leaked(info, base) if word not in path], path
            if template in DESCRIBED:
                assert info["isError"] is False, text_of(info)
                assert info["structuredContent"]["target_status"] == "outside"
                assert "outside the allowed folders" in text_of(info)
            elif template not in (".."):
                assert info["isError"] is True, (path, text_of(info))
    after = outside_state(base)
    assert {path: state[:2] for path, state in after.items()} == {
        path: state[:2] for path, state in before.items()
    }
    if keeps_atime:
        assert after == before  # nothing outside was even read


async def test_read_many_files_refuses_each_escape_inline(jail: Path) -> None:
    base = jail.parent
    paths = [_fill(template, base) for template in ESCAPES] + ["a.txt"]
    async with skills_client(jail, max_read_files=len(paths)) as client:
        result = await call(client, "read_many_files", paths=paths)
    text = text_of(result)
    assert result["isError"] is False
    assert SECRET not in text
    assert text.count("[not read: ") == len(ESCAPES)
    assert "     1\talpha" in text
    assert str(base / "outside") not in text.replace(paths[4], "").replace(paths[8], "")


async def test_listing_and_tree_never_follow_or_name_what_is_outside(jail: Path) -> None:
    base = jail.parent
    keeps_atime = atime_is_kept(base)
    before = outside_state(base)
    async with skills_client(jail) as client:
        listing = await call(client, "list_directory")
        tree = await call(client, "directory_tree", depth=20, gitignore=False)
        sub = await call(client, "list_directory", path="sub")
        for template in [*FOLDER_ESCAPES, "file-link", "pipe", "null-link"]:
            path = _fill(template, base)
            for tool in ("list_directory", "directory_tree"):
                result = await call(client, tool, path=path)
                assert result["isError"] is True, (tool, path, text_of(result))
                assert not [word for word in leaked(result, base) if word not in path]
    for result in (listing, tree, sub):
        assert result["isError"] is False
        assert leaked(result, base) == []
    listed = text_of(listing)
    for link in ("file-link", "dir-link", "relative-link", "sibling-link", "proc-link"):
        assert f"{link}@ -> outside the allowed folders" in listed
    assert "null-link@ -> outside the allowed folders" in listed
    assert ".env" not in listed
    assert "id_rsa" not in text_of(sub)
    assert "id_rsa" not in text_of(tree)
    assert "dir-link@ -> outside the allowed folders" in text_of(tree)
    tree_paths = [entry["path"] for entry in tree["structuredContent"]["entries"]]
    assert not [path for path in tree_paths if path.startswith("dir-link/")]
    if keeps_atime:
        assert outside_state(base) == before


# A path built from pieces that reach for the outside, and from anything at all.
_SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "sub",
        "outside",
        "jail",
        "jail-x",
        "secret.txt",
        "inner-outside.txt",
        "dir",
        "file-link",
        "dir-link",
        "relative-link",
        "sibling-link",
        "proc-link",
        "null-link",
        "pipe",
        ".env",
        "id_rsa",
        "~",
        "/",
        "proc",
        "self",
        "root",
        "a.txt",
        "\n",
        " ",
    ]
) | st.text(alphabet=string.printable + "é\u202e", max_size=6)


@settings(max_examples=40, deadline=None)
@given(segments=st.lists(_SEGMENTS, min_size=1, max_size=7), start=st.sampled_from(["", "base"]))
def test_generated_paths_give_inside_content_or_an_error(segments: list[str], start: str) -> None:
    async def scenario(base: Path) -> None:
        jail = plant(base)
        path = "/".join(segments)
        if start:
            path = str(base) + "/" + path
        async with skills_client(jail) as client:
            results = [
                await call(client, "read_file", path=path),
                await call(client, "file_info", path=path),
                await call(client, "list_directory", path=path),
                await call(client, "directory_tree", path=path, gitignore=False),
                await call(client, "read_many_files", paths=[path, "a.txt"]),
            ]
        for result in results:
            dumped = json.dumps(result, ensure_ascii=False)
            assert SECRET not in dumped
            for name in OUTSIDE_NAMES:
                assert name not in dumped or name in path
        assert (base / "outside" / "secret.txt").read_text() == SECRET + "\n"

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))
