"""file_info, list_directory and directory_tree against generated trees, compared with what
the standard library reports (os.listdir, os.lstat, os.walk, the files' own lines)."""

from __future__ import annotations

import os
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import call, skills_client, text_of
from .test_read import _LINE, error, lines_of, ok, png_bytes

# Any name a Linux file system takes: unicode, spaces, newlines, leading dots and tildes.
_NAMES = (
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"),
        min_size=1,
        max_size=10,
    )
    .filter(lambda name: name not in (".", "..", ".git"))
    .filter(lambda name: len(name.encode()) <= 255)
)
_CONTENT = st.lists(_LINE, max_size=6).map("\n".join)
Spec = dict[str, Any]
_TREES: st.SearchStrategy[Spec] = st.dictionaries(
    _NAMES,
    st.recursive(_CONTENT, lambda inner: st.dictionaries(_NAMES, inner, max_size=4), max_leaves=8),
    max_size=5,
)

# Nothing blocked, .gitignore not honoured: every generated name must be seen.
OPEN: dict[str, Any] = {"blocked_paths": (), "gitignore": False}


def build(folder: Path, spec: Spec) -> None:
    for name, value in spec.items():
        if isinstance(value, dict):
            (folder / name).mkdir()
            build(folder / name, value)
        else:
            (folder / name).write_text(value, encoding="utf-8")


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def folders_of(root: Path) -> list[Path]:
    return [Path(current) for current, _, _ in os.walk(root)]


def argument(root: Path, path: Path) -> str:
    """``path`` as a tool argument: relative, behind ``./`` so a leading ``~`` stays a name."""
    relative = path.relative_to(root)
    return "./" + str(relative) if str(relative) != "." else "."


# --- against the standard library ---------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(spec=_TREES)
def test_list_directory_matches_os_listdir_and_lstat(spec: Spec) -> None:
    async def scenario(root: Path) -> None:
        build(root, spec)
        async with skills_client(root, **OPEN) as client:
            for folder in folders_of(root):
                result = await ok(client, "list_directory", path=argument(root, folder))
                listing = result["structuredContent"]
                names = [entry["name"] for entry in listing["entries"]]
                assert names == sorted(os.listdir(folder))
                for entry in listing["entries"]:
                    info = os.lstat(folder / entry["name"])
                    assert entry["type"] == ("folder" if stat.S_ISDIR(info.st_mode) else "file")
                    assert entry["size"] == info.st_size
                    assert entry["modified"] == iso(info.st_mtime)
                # One line per entry (plus the header): a newline in a name cannot fake one.
                lines = text_of(result).split("\n")
                assert len(lines) == 1 + max(1, len(names))
                by_size = await ok(
                    client, "list_directory", path=argument(root, folder), sort="size"
                )
                sizes = [entry["size"] for entry in by_size["structuredContent"]["entries"]]
                assert sizes == sorted(sizes, reverse=True)

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


@settings(max_examples=30, deadline=None)
@given(spec=_TREES)
def test_directory_tree_matches_os_walk(spec: Spec) -> None:
    def walked(root: Path) -> dict[str, str]:
        expected: dict[str, str] = {}
        for current, dirs, files in os.walk(root):
            for name in dirs:
                expected[os.path.relpath(os.path.join(current, name), root)] = "folder"
            for name in files:
                expected[os.path.relpath(os.path.join(current, name), root)] = "file"
        return expected

    async def scenario(root: Path) -> None:
        build(root, spec)
        expected = await trio.to_thread.run_sync(walked, root)
        async with skills_client(root, **OPEN) as client:
            result = await ok(client, "directory_tree", depth=50)
        tree = result["structuredContent"]
        seen = {entry["path"]: entry["type"] for entry in tree["entries"]}
        assert seen == expected
        for entry in tree["entries"]:
            assert entry["depth"] == entry["path"].count("/") + 1
        folders = sum(1 for kind in expected.values() if kind == "folder")
        assert (tree["folders"], tree["files"]) == (folders, len(expected) - folders)
        lines = text_of(result).split("\n")
        # The top line, one line per entry, the summary: names cannot add lines.
        assert len(lines) == 1 + len(expected) + 1
        assert lines[-1].startswith(f"{folders} folder")

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


@settings(max_examples=30, deadline=None)
@given(spec=_TREES)
def test_file_info_matches_os_lstat_and_the_lines(spec: Spec) -> None:
    async def scenario(root: Path, paths: list[Path]) -> list[dict[str, Any]]:
        async with skills_client(root, **OPEN) as client:
            return [
                (await ok(client, "file_info", path=argument(root, path)))["structuredContent"]
                for path in paths
            ]

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        build(root, spec)
        paths = [
            Path(current, name) for current, dirs, files in os.walk(root) for name in dirs + files
        ]
        for path, info in zip(paths, trio.run(scenario, root, paths), strict=True):
            real = os.lstat(path)
            assert info["path"] == str(path.relative_to(root))
            assert info["size"] == real.st_size
            assert info["modified"] == iso(real.st_mtime)
            assert info["changed"] == iso(real.st_ctime)
            assert info["mode"] == f"{stat.S_IMODE(real.st_mode):04o}"
            assert info["permissions"] == stat.filemode(real.st_mode)[1:]
            if path.is_file():
                assert info["type"] == "file"
                assert info["is_binary"] is False
                assert info["lines"] == len(lines_of(path.read_text("utf-8")))
            else:
                assert info["type"] == "folder"
                assert "lines" not in info


# --- file_info ------------------------------------------------------------------------------------


async def test_file_info_describes_symlinks_by_where_they_lead(jail_root: Path) -> None:
    outside = jail_root.parent / "outside"
    (outside / "far.txt").write_text("far away\n")
    (jail_root / "a.txt").write_text("a\n")
    (jail_root / ".env").write_text("K=V\n")
    (jail_root / "in").symlink_to("a.txt")
    (jail_root / "out").symlink_to(outside / "far.txt")
    (jail_root / "secretish").symlink_to(".env")
    (jail_root / "dangling").symlink_to("nothing-here")
    async with skills_client(jail_root) as client:
        inward = await ok(client, "file_info", path="in")
        outward = await ok(client, "file_info", path="out")
        blocked = await ok(client, "file_info", path="secretish")
        dangling = await ok(client, "file_info", path="dangling")
    assert inward["structuredContent"]["target"] == "a.txt"
    assert "type: symlink -> a.txt" in text_of(inward)
    assert outward["structuredContent"]["target_status"] == "outside"
    for result in (outward, blocked):
        assert "target" not in result["structuredContent"]
        assert "size" not in result["structuredContent"]
    assert "points" not in text_of(blocked)
    assert ".env" not in text_of(blocked)
    assert "-> outside the allowed folders" in text_of(outward)
    assert "far" not in str(outward)
    assert str(outside) not in str(outward)
    assert dangling["structuredContent"]["target_status"] == "missing"


async def test_file_info_of_binary_large_and_root(jail_root: Path) -> None:
    (jail_root / "pic.png").write_bytes(png_bytes())
    (jail_root / "big.txt").write_text("x\n" * 2000)
    async with skills_client(jail_root, max_file_size=1000) as client:
        picture = (await ok(client, "file_info", path="pic.png"))["structuredContent"]
        big = await ok(client, "file_info", path="big.txt")
        root = (await ok(client, "file_info", path="."))["structuredContent"]
        missing = await error(client, "file_info", path="nope.txt")
    assert picture["is_binary"] is True
    assert picture["mime_type"] == "image/png"
    assert big["structuredContent"]["is_binary"] is False
    assert "lines" not in big["structuredContent"]
    assert "not counted" in text_of(big)
    assert root["type"] == "folder"
    assert root["path"] == "."
    assert "does not exist" in missing


async def test_file_info_refuses_fifos_and_blocked_names(jail_root: Path) -> None:
    os.mkfifo(jail_root / "pipe")
    (jail_root / "id_rsa").write_text("KEY")
    async with skills_client(jail_root) as client:
        assert "FIFO" in await error(client, "file_info", path="pipe")
        assert "blocked" in await error(client, "file_info", path="id_rsa")


# --- list_directory -----------------------------------------------------------------------------


async def test_list_directory_sorts_marks_and_hides(jail_root: Path) -> None:
    (jail_root / "small.txt").write_text("s")
    (jail_root / "large.txt").write_text("l" * 100)
    (jail_root / ".hidden").write_text("hh")
    (jail_root / ".env").write_text("K=V")
    (jail_root / "sub").mkdir()
    (jail_root / "link").symlink_to("small.txt")
    (jail_root / "away").symlink_to(jail_root.parent / "outside")
    os.mkfifo(jail_root / "pipe")
    os.utime(jail_root / "small.txt", (1_000_000_000, 1_000_000_000))
    os.utime(jail_root / "large.txt", (2_000_000_000, 2_000_000_000))
    async with skills_client(jail_root) as client:
        by_name = await ok(client, "list_directory")
        by_size = await ok(client, "list_directory", sort="size", show_hidden=False)
        newest = await ok(client, "list_directory", sort="modified")
        oldest = await ok(client, "list_directory", sort="modified", reverse=True)
        not_folder = await error(client, "list_directory", path="small.txt")
    names = [entry["name"] for entry in by_name["structuredContent"]["entries"]]
    assert names == [".hidden", "away", "large.txt", "link", "pipe", "small.txt", "sub"]
    assert by_name["structuredContent"]["blocked"] == 1
    text = text_of(by_name)
    assert "1 entry blocked" in text
    assert ".env" not in text
    assert "sub/" in text
    assert "link@ -> small.txt" in text
    assert "away@ -> outside the allowed folders" in text
    assert "pipe|" in text
    assert "100 B           100" in text
    assert str(jail_root.parent / "outside") not in str(by_name)
    sized = [entry["name"] for entry in by_size["structuredContent"]["entries"]]
    assert sized[:2] == ["sub", "large.txt"]
    assert ".hidden" not in sized
    assert by_size["structuredContent"]["hidden"] == 1
    newest_names = [entry["name"] for entry in newest["structuredContent"]["entries"]]
    oldest_names = [entry["name"] for entry in oldest["structuredContent"]["entries"]]
    assert newest_names.index("large.txt") < newest_names.index("small.txt")
    assert oldest_names[0] == "small.txt"
    assert oldest_names == list(reversed(newest_names))
    assert "read_file" in not_folder


async def test_names_that_are_not_utf8_are_listed_escaped(jail_root: Path) -> None:
    os.close(os.open(os.path.join(os.fsencode(jail_root), b"caf\xe9.txt"), os.O_CREAT, 0o644))
    async with skills_client(jail_root) as client:
        listing = await ok(client, "list_directory")
        tree = await ok(client, "directory_tree")
    assert listing["structuredContent"]["entries"][0]["name"] == "caf\\udce9.txt"
    assert tree["structuredContent"]["entries"][0]["path"] == "caf\\udce9.txt"
    assert "caf\\udce9.txt" in text_of(tree)


async def test_list_directory_output_is_capped(jail_root: Path) -> None:
    for index in range(200):
        (jail_root / f"file-{index:03d}.txt").write_text("x")
    async with skills_client(jail_root, max_result_bytes=2048) as client:
        result = await ok(client, "list_directory")
    text = text_of(result)
    assert len(text.encode()) < 2048 + 300
    assert "max_result_bytes" in text
    shown = result["structuredContent"]["entries"]
    assert 0 < len(shown) < 200
    assert result["structuredContent"]["truncated"] is True


# --- directory_tree -----------------------------------------------------------------------------


async def test_directory_tree_draws_like_tree(jail_root: Path) -> None:
    (jail_root / "src" / "pkg").mkdir(parents=True)
    (jail_root / "src" / "pkg" / "mod.py").write_text("")
    (jail_root / "src" / "main.py").write_text("")
    (jail_root / "README").write_text("")
    (jail_root / "docs").mkdir()
    async with skills_client(jail_root) as client:
        text = text_of(await ok(client, "directory_tree"))
    assert text == (
        ".\n"
        "├── README\n"
        "├── docs/\n"
        "└── src/\n"
        "    ├── main.py\n"
        "    └── pkg/\n"
        "        └── mod.py\n"
        "3 folders, 3 files"
    )


async def test_directory_tree_depth_exclude_and_gitignore(jail_root: Path) -> None:
    (jail_root / "a" / "b" / "c").mkdir(parents=True)
    (jail_root / "a" / "b" / "c" / "deep.txt").write_text("")
    (jail_root / "build").mkdir()
    (jail_root / "build" / "out.o").write_text("")
    (jail_root / "x.log").write_text("")
    (jail_root / "keep.txt").write_text("")
    (jail_root / "ignored.txt").write_text("")
    (jail_root / ".gitignore").write_text("ignored.txt\n")
    (jail_root / ".env").write_text("K=V\n")
    (jail_root / "link").symlink_to(jail_root.parent / "outside")
    async with skills_client(jail_root) as client:
        shallow = await ok(client, "directory_tree", depth=1)
        excluded = await ok(client, "directory_tree", exclude=["*.log", "build/"])
        everything = await ok(client, "directory_tree", gitignore=False, depth=10)
        bad = await error(client, "directory_tree", path="keep.txt")
        pattern = await error(client, "directory_tree", exclude=["\\"])
    shallow_paths = [entry["path"] for entry in shallow["structuredContent"]["entries"]]
    assert "a" in shallow_paths
    assert "a/b" not in shallow_paths
    assert "1 folder at depth 1 not expanded" not in text_of(shallow)
    assert "2 folders at depth 1 not expanded" in text_of(shallow)
    excluded_paths = [entry["path"] for entry in excluded["structuredContent"]["entries"]]
    assert "x.log" not in excluded_paths
    assert "build" not in excluded_paths
    assert "ignored.txt" not in excluded_paths
    summary = text_of(excluded).split("\n")[-1]
    assert "1 ignored by .gitignore" in summary
    assert "1 blocked" in summary
    assert "1 symlink (not followed)" in summary
    assert "link@ -> outside the allowed folders" in text_of(excluded)
    all_paths = [entry["path"] for entry in everything["structuredContent"]["entries"]]
    assert "ignored.txt" in all_paths
    assert "a/b/c/deep.txt" in all_paths
    assert ".env" not in all_paths
    assert "read_file" in bad
    assert "not a valid gitignore-style glob" in pattern


async def test_directory_tree_stops_at_max_files_visited_and_the_budget(jail_root: Path) -> None:
    for index in range(100):
        (jail_root / f"file-number-{index:03d}.txt").write_text("")
    async with skills_client(jail_root, max_files_visited=10) as client:
        visited = await ok(client, "directory_tree")
    async with skills_client(jail_root, max_result_bytes=1024) as client:
        budget = await ok(client, "directory_tree")
    assert len(visited["structuredContent"]["entries"]) == 10
    assert visited["structuredContent"]["truncated"] is True
    assert "max_files_visited (10)" in text_of(visited)
    assert budget["structuredContent"]["truncated"] is True
    assert "max_result_bytes" in text_of(budget)


async def test_a_newline_in_a_name_cannot_fake_a_tree_line(jail_root: Path) -> None:
    (jail_root / "evil\n├── fake.txt").write_text("")
    async with skills_client(jail_root) as client:
        text = text_of(await ok(client, "directory_tree"))
    assert text.split("\n") == [".", "└── 'evil\\n├── fake.txt'", "0 folders, 1 file"]


# --- the tools' definitions ---------------------------------------------------------------------


async def test_read_tools_are_annotated_read_only(jail_root: Path) -> None:
    async with skills_client(jail_root) as client:
        listed: Any = await client.request("tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    for name in ("read_file", "read_many_files", "file_info", "list_directory", "directory_tree"):
        assert tools[name]["annotations"] == {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }
    for name in ("file_info", "list_directory", "directory_tree"):
        assert tools[name]["outputSchema"]["type"] == "object"
    assert "outputSchema" not in tools["read_file"]
    schema = tools["read_file"]["inputSchema"]["properties"]
    assert schema["offset"]["minimum"] == 1
    assert tools["list_directory"]["inputSchema"]["properties"]["sort"]["enum"] == [
        "name",
        "size",
        "modified",
    ]


async def test_an_unknown_sort_is_an_error(jail_root: Path) -> None:
    async with skills_client(jail_root) as client:
        result = await call(client, "list_directory", sort="colour")
    assert result["isError"] is True
