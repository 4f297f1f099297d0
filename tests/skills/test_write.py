"""The write tools against real trees: what they change, compared with the standard library's
view, what they refuse (escapes, blocked paths, overwrites) with nothing touched, and
atomicity (a failed edit leaves the file byte-identical)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, reject, settings
from hypothesis import strategies as st

from trimcp.config import DEFAULT_BLOCKED_PATHS, DEFAULT_WRITE_BLOCKED_PATHS
from trimcp.errors import PathRefused, ToolError
from trimcp.skills import Jail
from trimcp.skills.tools.write._edit import Edit, edit_resolved
from trimcp.skills.tools.write._ops import encode_content, write_resolved

from .conftest import call, skills_client, text_of

SECRET = "TOP-SECRET-OUTSIDE-MARKER"

Snapshot = dict[str, tuple[Any, ...]]


def snapshot(folder: Path) -> Snapshot:
    """Every entry below ``folder``: kind, content or link text, mode and mtime."""
    seen: Snapshot = {}
    for current, folders, files in os.walk(folder):
        for name in folders + files:
            path = Path(current, name)
            info = path.lstat()
            relative = str(path.relative_to(folder))
            if stat.S_ISLNK(info.st_mode):
                seen[relative] = ("link", os.readlink(path), info.st_mtime_ns)
            elif stat.S_ISDIR(info.st_mode):
                seen[relative] = ("dir", info.st_mode, info.st_mtime_ns)
            else:
                seen[relative] = ("file", path.read_bytes(), info.st_mode, info.st_mtime_ns)
    return seen


@pytest.fixture
def tree(jail_root: Path) -> Path:
    """jail/ with files, a .git and .env, symlinks in and out; outside/ and jail-x/ beside."""
    root = jail_root
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "sub" / "deep" / "b.txt").write_text("b\n")
    (root / "notes.txt").write_text("notes\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".env").write_text("TOKEN=1\n")
    outside = root.parent / "outside"
    (outside / "secret.txt").write_text(SECRET)
    (outside / "dir").mkdir()
    (outside / "dir" / "inner.txt").write_text(SECRET)
    sibling = root.parent / "jail-x"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET)
    (root / "link-file").symlink_to(outside / "secret.txt")
    (root / "link-dir").symlink_to(outside / "dir")
    (root / "link-in").symlink_to(root / "notes.txt")
    return root


async def ok(client: Any, tool: str, **arguments: Any) -> str:
    result = await call(client, tool, **arguments)
    assert not result["isError"], text_of(result)
    return text_of(result)


async def fails(client: Any, tool: str, **arguments: Any) -> str:
    result = await call(client, tool, **arguments)
    assert result["isError"], text_of(result)
    message = text_of(result)
    assert SECRET not in message
    assert "Error in tool" not in message  # a worded refusal, not a crash
    return message


def leftovers(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith(".trimcp-")]


# --- write_file ---------------------------------------------------------------------------------


async def test_write_file_creates_and_replaces_keeping_permissions(tree: Path) -> None:
    async with skills_client(tree) as client:
        message = await ok(client, "write_file", path="new.txt", content="héllo\n")
        assert message == "created new.txt (7 bytes)"
        assert (tree / "new.txt").read_bytes() == "héllo\n".encode()
        # A new file gets what open() would give it (0o666 less the umask).
        reference = tree / "reference.txt"
        reference.write_text("")
        assert (tree / "new.txt").stat().st_mode == reference.stat().st_mode
        (tree / "new.txt").chmod(0o640)
        message = await ok(client, "write_file", path="new.txt", content="bye")
        assert "3 bytes written (was 7 bytes)" in message
        assert (tree / "new.txt").read_text() == "bye"
        assert stat.S_IMODE((tree / "new.txt").stat().st_mode) == 0o640
        assert leftovers(tree) == []


async def test_write_file_refuses_to_overwrite_when_told_and_refuses_folders(tree: Path) -> None:
    before = snapshot(tree)
    async with skills_client(tree) as client:
        message = await fails(client, "write_file", path="notes.txt", content="x", overwrite=False)
        assert "already exists" in message
        assert "overwrite=true" in message
        message = await fails(client, "write_file", path="sub", content="x")
        assert "is a folder" in message
    assert snapshot(tree) == before


async def test_write_file_makes_parents_only_when_asked(tree: Path) -> None:
    async with skills_client(tree) as client:
        message = await fails(client, "write_file", path="x/y/z.txt", content="1")
        assert "x does not exist" in message
        assert "create_parents=true" in message
        assert not (tree / "x").exists()
        message = await ok(client, "write_file", path="x/y/z.txt", content="1", create_parents=True)
        assert "created folders x, x/y" in message
        assert (tree / "x" / "y" / "z.txt").read_text() == "1"


async def test_write_file_through_a_hard_link_leaves_the_other_name_alone(tree: Path) -> None:
    outside = tree.parent / "outside" / "secret.txt"
    os.link(outside, tree / "hard.txt")
    async with skills_client(tree) as client:
        await ok(client, "write_file", path="hard.txt", content="new")
        await ok(
            client, "edit_file", path="hard.txt", edits=[{"old_text": "new", "new_text": "newer"}]
        )
    assert outside.read_text() == SECRET
    assert (tree / "hard.txt").read_text() == "newer"


async def test_append_file_refuses_a_hard_linked_file(tree: Path) -> None:
    outside = tree.parent / "outside" / "secret.txt"
    os.link(outside, tree / "hard.txt")
    async with skills_client(tree) as client:
        message = await fails(client, "append_file", path="hard.txt", content="x")
        assert "2 hard links" in message
    assert outside.read_text() == SECRET


async def test_lone_surrogates_are_refused(tree: Path) -> None:
    with pytest.raises(ToolError, match="lone surrogate"):
        encode_content("a\ud800b")


_NAMES = (
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"),
        min_size=1,
        max_size=12,
    )
    .filter(lambda name: name not in (".", "..") and not name.startswith("~"))
    .filter(lambda name: len(name.encode()) <= 255)
)
_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200)


def _jail(root: Path) -> Jail:
    return Jail([root], blocked=DEFAULT_BLOCKED_PATHS, write_blocked=DEFAULT_WRITE_BLOCKED_PATHS)


@settings(max_examples=80, deadline=None)
@given(folder=_NAMES, name=_NAMES, content=_TEXT)
def test_any_name_and_content_is_written_as_the_standard_library_reads_it(
    folder: str, name: str, content: str
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        jail = _jail(root)
        try:
            resolved = jail.resolve(f"{folder}/{name}", "write")
        except PathRefused:
            reject()  # a blocked name such as .env
        write_resolved(resolved, encode_content(content), overwrite=False, create_parents=True)
        assert os.listdir(root) == [folder]
        assert os.listdir(root / folder) == [name]
        assert (root / folder / name).read_bytes() == content.encode()
        write_resolved(resolved, b"again", overwrite=True, create_parents=False)
        assert (root / folder / name).read_bytes() == b"again"
        assert os.listdir(root / folder) == [name]


# --- edit_file ----------------------------------------------------------------------------------


async def test_edit_file_replaces_in_order_and_returns_the_diff(tree: Path) -> None:
    path = tree / "sub" / "a.txt"
    path.chmod(0o600)
    async with skills_client(tree) as client:
        message = await ok(
            client,
            "edit_file",
            path="sub/a.txt",
            edits=[
                {"old_text": "beta", "new_text": "BETA"},
                {"old_text": "BETA\ngamma", "new_text": "BETA\ndelta"},
            ],
        )
    assert path.read_text() == "alpha\nBETA\ndelta\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert message.splitlines()[0].startswith("edited sub/a.txt: 2 edits, 2 lines added, 2 removed")
    assert "--- a/sub/a.txt" in message
    assert "-beta" in message
    assert "+delta" in message
    assert leftovers(tree / "sub") == []


async def test_edit_file_dry_run_writes_nothing(tree: Path) -> None:
    before = snapshot(tree)
    async with skills_client(tree) as client:
        message = await ok(
            client,
            "edit_file",
            path="sub/a.txt",
            edits=[{"old_text": "alpha", "new_text": "omega"}],
            dry_run=True,
        )
    assert message.startswith("dry run, nothing written")
    assert "-alpha\n+omega" in message
    assert snapshot(tree) == before


async def test_a_failed_edit_leaves_the_file_byte_identical(tree: Path) -> None:
    before = snapshot(tree)
    async with skills_client(tree) as client:
        message = await fails(
            client,
            "edit_file",
            path="sub/a.txt",
            edits=[
                {"old_text": "alpha", "new_text": "x"},
                {"old_text": "gamm\n", "new_text": "y"},
            ],
        )
        assert "edit 2 of 2: old_text matches 0 times" in message
        assert "line 3: 'gamma'" in message
        message = await fails(
            client,
            "edit_file",
            path="sub/a.txt",
            edits=[{"old_text": "a\n", "new_text": "x"}],
        )
        assert "edit 1 of 1: old_text matches 3 times" in message
        message = await fails(
            client, "edit_file", path="sub/a.txt", edits=[{"old_text": "", "new_text": "x"}]
        )
        assert "old_text is empty" in message
        await fails(client, "edit_file", path="sub/a.txt", edits=[])
    assert snapshot(tree) == before


async def test_edit_file_refuses_binary_and_keeps_crlf(tree: Path) -> None:
    (tree / "bin.dat").write_bytes(b"abc\x00def")
    (tree / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tree / "dos.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    async with skills_client(tree) as client:
        assert "binary" in await fails(
            client, "edit_file", path="bin.dat", edits=[{"old_text": "abc", "new_text": "x"}]
        )
        assert "not UTF-8" in await fails(
            client, "edit_file", path="latin.txt", edits=[{"old_text": "caf", "new_text": "x"}]
        )
        await ok(
            client,
            "edit_file",
            path="dos.txt",
            edits=[{"old_text": "one\ntwo\n", "new_text": "1\n2\n"}],
        )
    assert (tree / "dos.txt").read_bytes() == b"\xef\xbb\xbf1\r\n2\r\nthree\r\n"


_MARK = "\u2603MARK\u2603"
_PLAIN = st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))


@settings(max_examples=80, deadline=None)
@given(prefix=_PLAIN, suffix=_PLAIN, new=_PLAIN, twice=st.booleans())
def test_edits_match_str_replace_and_fail_atomically(
    prefix: str, suffix: str, new: str, twice: bool
) -> None:
    assume(_MARK not in prefix + suffix)
    text = prefix + _MARK + suffix + (_MARK if twice else "")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "f.txt").write_bytes(text.encode())
        before = (root / "f.txt").stat()
        resolved = _jail(root).resolve("f.txt", "write")
        edits: list[Edit] = [{"old_text": _MARK, "new_text": new}]
        if twice:
            with pytest.raises(ToolError, match="matches 2 times"):
                edit_resolved(
                    resolved, edits, dry_run=False, max_file_size=1 << 20, max_result_bytes=4096
                )
            assert (root / "f.txt").read_bytes() == text.encode()
            assert (root / "f.txt").stat().st_mtime_ns == before.st_mtime_ns
        else:
            edit_resolved(
                resolved, edits, dry_run=False, max_file_size=1 << 20, max_result_bytes=4096
            )
            assert (root / "f.txt").read_bytes() == text.replace(_MARK, new).encode()
        assert os.listdir(root) == ["f.txt"]


# --- append_file, make_directory ----------------------------------------------------------------


async def test_append_file(tree: Path) -> None:
    async with skills_client(tree) as client:
        message = await ok(client, "append_file", path="notes.txt", content="more\n")
        assert message == "appended 5 bytes to notes.txt (now 11 bytes)"
        assert "create=true" in await fails(
            client, "append_file", path="log.txt", content="x", create=False
        )
        assert await ok(client, "append_file", path="log.txt", content="x") == (
            "created log.txt with 1 byte"
        )
        assert "is a folder" in await fails(client, "append_file", path="sub", content="x")
    assert (tree / "notes.txt").read_text() == "notes\nmore\n"
    assert (tree / "log.txt").read_text() == "x"


async def test_make_directory_is_idempotent(tree: Path) -> None:
    async with skills_client(tree) as client:
        assert await ok(client, "make_directory", path="m/n/o") == ("created folders m, m/n, m/n/o")
        before = snapshot(tree)
        assert "already exists" in await ok(client, "make_directory", path="m/n/o")
        assert snapshot(tree) == before
        assert "parents=true" in await fails(client, "make_directory", path="p/q", parents=False)
        assert "not a folder" in await fails(client, "make_directory", path="notes.txt")
    assert (tree / "m" / "n" / "o").is_dir()
    assert not (tree / "p").exists()


# --- move ---------------------------------------------------------------------------------------


async def test_move_renames_and_refuses_to_overwrite_unless_asked(tree: Path) -> None:
    async with skills_client(tree) as client:
        assert await ok(client, "move", source="notes.txt", destination="sub/n.txt") == (
            "moved notes.txt to sub/n.txt"
        )
        before = snapshot(tree)
        message = await fails(client, "move", source="sub/n.txt", destination="sub/a.txt")
        assert "already exists" in message
        assert snapshot(tree) == before
        message = await ok(
            client, "move", source="sub/n.txt", destination="sub/a.txt", overwrite=True
        )
        assert "replacing the file" in message
        assert "inside" in await fails(client, "move", source="sub", destination="sub/deep/x")
        assert "make_directory" in await fails(client, "move", source="sub", destination="none/sub")
        await ok(client, "move", source="sub", destination="moved")
        assert "is a symlink" in await fails(client, "move", source="link-in", destination="l2")
    assert (tree / "moved" / "a.txt").read_text() == "notes\n"
    assert (tree / "moved" / "deep" / "b.txt").read_text() == "b\n"
    assert not (tree / "sub").exists()


async def test_move_refuses_a_folder_holding_blocked_paths(tree: Path) -> None:
    (tree / "repo" / ".git").mkdir(parents=True)
    (tree / "repo" / ".git" / "HEAD").write_text("ref\n")
    before = snapshot(tree)
    async with skills_client(tree) as client:
        message = await fails(client, "move", source="repo", destination="repo2")
        assert "repo/.git/" in message
        assert "nothing was moved" in message
    assert snapshot(tree) == before


# --- copy ---------------------------------------------------------------------------------------


async def test_copy_file_keeps_content_and_mode(tree: Path) -> None:
    (tree / "sub" / "a.txt").chmod(0o751)
    async with skills_client(tree) as client:
        await ok(client, "copy", source="sub/a.txt", destination="c.txt")
        assert "already exists" in await fails(
            client, "copy", source="notes.txt", destination="c.txt"
        )
        await ok(client, "copy", source="notes.txt", destination="c.txt", overwrite=True)
        assert "full path" in await fails(client, "copy", source="notes.txt", destination="sub")
        assert "recursive=true" in await fails(client, "copy", source="sub", destination="s2")
    assert (tree / "c.txt").read_text() == "notes\n"
    assert stat.S_IMODE((tree / "c.txt").stat().st_mode) == stat.S_IMODE(
        (tree / "notes.txt").stat().st_mode
    )


async def test_copy_folder_matches_the_source_without_symlinks(tree: Path) -> None:
    source = tree / "src"
    (source / "x" / "y").mkdir(parents=True)
    (source / "top.txt").write_text("top")
    (source / "x" / "y" / "deep.bin").write_bytes(bytes(range(256)))
    (source / "x" / "run.sh").write_text("#!/bin/sh\n")
    (source / "x" / "run.sh").chmod(0o755)
    (source / "out").symlink_to(tree.parent / "outside")
    (source / "in").symlink_to(source / "top.txt")
    outside_before = snapshot(tree.parent / "outside")
    async with skills_client(tree) as client:
        message = await ok(client, "copy", source="src", destination="dst", recursive=True)
        assert "3 file(s)" in message
        assert "2 folder(s)" in message
        assert "skipped 2 symlink(s)" in message
        assert "inside" in await fails(
            client, "copy", source="src", destination="src/x/again", recursive=True
        )
    expected = {key: value[:3] for key, value in snapshot(source).items() if value[0] == "file"} | {
        key: value[:1] for key, value in snapshot(source).items() if value[0] == "dir"
    }
    copied = snapshot(tree / "dst")
    got = {key: value[:3] if value[0] == "file" else value[:1] for key, value in copied.items()}
    assert got == expected
    assert snapshot(tree.parent / "outside") == outside_before


async def test_copy_limits_refuse_before_writing(tree: Path) -> None:
    (tree / "big").mkdir()
    for index in range(5):
        (tree / "big" / f"{index}.txt").write_text("x" * 100)
    async with skills_client(tree, max_files_visited=3) as client:
        assert "max_files_visited" in await fails(
            client, "copy", source="big", destination="b2", recursive=True
        )
    async with skills_client(tree, max_file_size=50) as client:
        assert "max_file_size" in await fails(
            client, "copy", source="big", destination="b2", recursive=True
        )
    assert not (tree / "b2").exists()


# --- delete -------------------------------------------------------------------------------------


async def test_delete_files_and_folders(tree: Path) -> None:
    (tree / "empty").mkdir()
    (tree / "sub" / "deep" / "out").symlink_to(tree.parent / "outside")
    outside_before = snapshot(tree.parent / "outside")
    async with skills_client(tree) as client:
        assert await ok(client, "delete", path="notes.txt") == "deleted file notes.txt (6 bytes)"
        assert "does not exist" in await fails(client, "delete", path="notes.txt")
        assert await ok(client, "delete", path="empty") == "deleted empty folder empty"
        assert "recursive=true" in await fails(client, "delete", path="sub")
        message = await ok(client, "delete", path="sub", recursive=True)
        assert "2 file(s), 1 folder(s) and 1 symlink(s)" in message
        message = await fails(client, "delete", path=".", recursive=True)
        assert "root folder" in message
    assert not (tree / "sub").exists()
    assert snapshot(tree.parent / "outside") == outside_before


async def test_delete_of_an_inward_symlink_deletes_the_link_only(tree: Path) -> None:
    async with skills_client(tree) as client:
        message = await ok(client, "delete", path="link-in")
        assert "symlink" in message
    assert not (tree / "link-in").is_symlink()
    assert (tree / "notes.txt").read_text() == "notes\n"


async def test_delete_refuses_a_folder_holding_blocked_paths_whole(tree: Path) -> None:
    (tree / "proj" / "a").mkdir(parents=True)
    (tree / "proj" / "a" / "f.txt").write_text("f")
    (tree / "proj" / ".env").write_text("TOKEN=2\n")
    before = snapshot(tree)
    async with skills_client(tree) as client:
        message = await fails(client, "delete", path="proj", recursive=True)
        assert "proj/.env" in message or ".env" in message
        assert "nothing was deleted" in message
        await fails(client, "delete", path=".git", recursive=True)
    assert snapshot(tree) == before


# --- escapes ------------------------------------------------------------------------------------


def _escapes(tree: Path) -> list[str]:
    outside = tree.parent / "outside"
    return [
        "../outside/new.txt",
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        str(outside / "secret.txt"),
        str(outside / "new.txt"),
        "../jail-x/secret.txt",
        str(tree.parent / "jail-x" / "new.txt"),
        "link-file",
        "link-dir/inner.txt",
        "link-dir/new.txt",
        f"/proc/self/root{outside}/secret.txt",
        "link-dir",
        "../outside/dir",
    ]


def _calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("write_file", {"path": path, "content": "pwned"}),
        ("write_file", {"path": path + "/x", "content": "pwned", "create_parents": True}),
        ("edit_file", {"path": path, "edits": [{"old_text": SECRET, "new_text": "pwned"}]}),
        ("append_file", {"path": path, "content": "pwned"}),
        ("make_directory", {"path": path + "/made"}),
        ("make_directory", {"path": path}),
        ("move", {"source": path, "destination": "moved"}),
        ("move", {"source": "notes.txt", "destination": path, "overwrite": True}),
        ("copy", {"source": path, "destination": "copied", "recursive": True}),
        ("copy", {"source": "notes.txt", "destination": path, "overwrite": True}),
        ("copy", {"source": "sub", "destination": path, "recursive": True, "overwrite": True}),
        ("delete", {"path": path}),
        ("delete", {"path": path, "recursive": True}),
    ]


async def test_escapes_are_refused_with_nothing_touched(tree: Path) -> None:
    watched = [tree.parent / "outside", tree.parent / "jail-x", tree]
    before = [snapshot(folder) for folder in watched]
    top = sorted(os.listdir(tree.parent))
    async with skills_client(tree) as client:
        for path in _escapes(tree):
            for tool, arguments in _calls(path):
                message = await fails(client, tool, **arguments)
                if path.startswith("link"):
                    # Where the symlink points is never told.
                    assert "outside" not in message.replace("outside the allowed", "")
                    assert "secret" not in message
    assert [snapshot(folder) for folder in watched] == before
    assert sorted(os.listdir(tree.parent)) == top


async def test_git_internals_and_secrets_are_refused(tree: Path) -> None:
    before = snapshot(tree)
    async with skills_client(tree) as client:
        for path in (".git/config", ".git/hooks/pre-commit", ".env", "sub/.env", "k/id_rsa"):
            for tool, arguments in _calls(path):
                if path.startswith(".git") and arguments.get("source") == path:
                    continue  # git's files may be read (copied from), not changed
                message = await fails(client, tool, **arguments)
                assert "blocked" in message
        # A copy out of .git reads it only.
        await ok(client, "copy", source=".git/config", destination="config.bak")
        assert (tree / "config.bak").read_text() == "[core]\n"
        (tree / "config.bak").unlink()
    assert snapshot(tree) == before


async def test_annotations_are_truthful(tree: Path) -> None:
    async with skills_client(tree) as client:
        listing: dict[str, Any] = await client.request("tools/list", {})
    hints = {tool["name"]: tool.get("annotations", {}) for tool in listing["tools"]}
    expected = {
        "write_file": (True, True),
        "edit_file": (True, False),
        "append_file": (False, False),
        "make_directory": (False, True),
        "move": (True, False),
        "copy": (True, False),
        "delete": (True, True),
    }
    for name, (destructive, idempotent) in expected.items():
        assert hints[name]["readOnlyHint"] is False
        assert hints[name]["openWorldHint"] is False
        assert hints[name]["destructiveHint"] is destructive, name
        assert hints[name]["idempotentHint"] is idempotent, name
