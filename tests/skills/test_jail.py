"""The jail: which paths resolve, which are refused, and opens that never follow a symlink."""

from __future__ import annotations

import contextlib
import os
import string
import tempfile
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp.config import DEFAULT_BLOCKED_PATHS, DEFAULT_WRITE_BLOCKED_PATHS
from trimcp.errors import PathRefused
from trimcp.skills import Jail
from trimcp.skills.jail import (
    WalkStats,
    open_dir,
    open_parent,
    open_regular,
    read_regular,
    walk,
    walk_files,
)

SECRET = "TOP-SECRET-OUTSIDE-MARKER"


def make_jail(root: Path) -> Jail:
    return Jail([root], blocked=DEFAULT_BLOCKED_PATHS, write_blocked=DEFAULT_WRITE_BLOCKED_PATHS)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/jail with files, tmp/jail-x (a prefix sibling) and tmp/outside with a secret."""
    root = tmp_path / "jail"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("print('hi')\n")
    (root / "notes.txt").write_text("notes\n")
    (root / ".env").write_text("TOKEN=1\n")
    (root / ".env.example").write_text("TOKEN=\n")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("pem\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    sibling = tmp_path / "jail-x"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET)
    (root / "link-out").symlink_to(outside / "secret.txt")
    (root / "dir-out").symlink_to(outside)
    (root / "link-in").symlink_to(root / "notes.txt")
    return root


def refused(jail: Jail, path: str, access: str = "read") -> str:
    with pytest.raises(PathRefused) as info:
        jail.resolve(path, access)  # type: ignore[arg-type]
    message = str(info.value)
    assert SECRET not in message
    if "out" not in path:
        # Where a symlink leads is never told.
        assert "outside" not in message.replace("outside the allowed", "")
    return message


def test_paths_inside_resolve_to_their_components(tree: Path) -> None:
    jail = make_jail(tree)
    resolved = jail.resolve("src/pkg/mod.py")
    assert resolved.real == tree / "src" / "pkg" / "mod.py"
    assert resolved.parts == ("src", "pkg", "mod.py")
    assert resolved.relative == "src/pkg/mod.py"
    assert jail.resolve(str(tree / "notes.txt")).parts == ("notes.txt",)
    assert jail.resolve(".").parts == ()
    assert jail.resolve("src/../notes.txt").parts == ("notes.txt",)
    # A symlink inside that stays inside resolves to its target.
    assert jail.resolve("link-in").parts == ("notes.txt",)
    # Not existing yet is fine (a write may create it).
    assert jail.resolve("new/file.txt", "write").parts == ("new", "file.txt")


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "../../../../../../etc/passwd",
        "/etc/passwd",
        "/",
        "~/",
        "link-out",
        "dir-out/secret.txt",
        "dir-out",
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd",
        "/dev/null",
    ],
)
def test_escapes_are_refused_without_leaking(tree: Path, path: str) -> None:
    message = refused(make_jail(tree), path)
    assert "outside the allowed folders" in message


def test_a_prefix_sibling_is_not_inside(tree: Path) -> None:
    jail = make_jail(tree)
    refused(jail, str(tree.parent / "jail-x" / "secret.txt"))
    refused(jail, "../jail-x/secret.txt")


def test_other_users_home_and_nul_are_refused(tree: Path) -> None:
    jail = make_jail(tree)
    assert "another user" in refused(jail, "~root/x")
    assert "NUL" in refused(jail, "a\x00b")
    assert "empty" in refused(jail, "")
    assert "4096" in refused(jail, "a/" * 3000)


def test_blocked_names_win_over_roots(tree: Path) -> None:
    jail = make_jail(tree)
    assert "blocked_paths" in refused(jail, ".env")
    assert "blocked_paths" in refused(jail, "keys/server.pem")
    jail.resolve(".env.example")  # re-allowed by "!.env.example"
    # .git internals: readable, not writable.
    jail.resolve(".git/config")
    assert "write_blocked_paths" in refused(jail, ".git/config", "write")
    assert "write_blocked_paths" in refused(jail, ".git/hooks/pre-commit", "write")
    # A symlink inside pointing to a blocked file is blocked too.
    (tree / "innocent").symlink_to(tree / ".env")
    assert "blocked_paths" in refused(jail, "innocent")


def test_devices_fifos_and_sockets_are_refused(tree: Path) -> None:
    jail = make_jail(tree)
    os.mkfifo(tree / "pipe")
    assert "FIFO" in refused(jail, "pipe")
    (tree / "null").symlink_to("/dev/null")
    refused(jail, "null")


def test_a_symlink_loop_is_refused(tree: Path) -> None:
    (tree / "loop").symlink_to(tree / "loop")
    refused(make_jail(tree), "loop")


def test_roots_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an existing folder"):
        Jail([tmp_path / "missing"])
    with pytest.raises(ValueError, match="at least one root"):
        Jail([])


def test_several_roots_and_narrowing(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    (first / "sub").mkdir(parents=True)
    second.mkdir()
    jail = Jail([first, second])
    assert jail.resolve(str(second / "x")).root == second
    narrowed = jail.narrowed([first / "sub"])
    assert narrowed is not None
    assert narrowed.roots == (first / "sub",)
    with pytest.raises(PathRefused):
        narrowed.resolve(str(first / "other"))
    # Never widened: a folder above a root keeps the root.
    above = jail.narrowed([tmp_path])
    assert above is not None
    assert above.roots == (first, second)
    assert jail.narrowed([tmp_path / "elsewhere"]) is None


# --- opening through descriptors -------------------------------------------------------------


def test_open_regular_reads_inside_and_refuses_symlinks_and_folders(tree: Path) -> None:
    jail = make_jail(tree)
    data, info = read_regular(jail.resolve("src/pkg/mod.py"), 1000)
    assert data == b"print('hi')\n"
    assert info.st_size == len(data)
    with pytest.raises(PathRefused, match="more than the 3 allowed"):
        read_regular(jail.resolve("notes.txt"), 3)
    fd = open_dir(jail.resolve("."))
    try:
        with pytest.raises(PathRefused, match="symlink"):
            open_regular(fd, "link-out", "link-out")
        with pytest.raises(PathRefused, match="not a regular file"):
            open_regular(fd, "src", "src")
    finally:
        os.close(fd)


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(tree: Path) -> None:
    jail = make_jail(tree)
    resolved = jail.resolve("src/pkg/mod.py")
    outside = tree.parent / "outside"
    (outside / "pkg").mkdir()
    (outside / "pkg" / "mod.py").write_text(SECRET)
    # The race: after the check, src becomes a symlink to the outside folder.
    os.rename(tree / "src", tree / "src-moved")
    (tree / "src").symlink_to(outside)
    with pytest.raises(PathRefused, match="changed while it was being opened") as info:
        read_regular(resolved, 1000)
    assert SECRET not in str(info.value)
    with pytest.raises(PathRefused), open_parent(resolved):
        pass


def test_a_file_swapped_for_a_symlink_after_the_check_is_not_followed(tree: Path) -> None:
    jail = make_jail(tree)
    resolved = jail.resolve("notes.txt")
    (tree / "notes.txt").unlink()
    (tree / "notes.txt").symlink_to(tree.parent / "outside" / "secret.txt")
    with pytest.raises(PathRefused, match="symlink"):
        read_regular(resolved, 1000)


def test_a_fifo_swapped_in_does_not_hang(tree: Path) -> None:
    jail = make_jail(tree)
    resolved = jail.resolve("notes.txt")
    (tree / "notes.txt").unlink()
    os.mkfifo(tree / "notes.txt")
    with pytest.raises(PathRefused, match="FIFO"):
        read_regular(resolved, 1000)


def test_open_parent_of_a_root_is_refused(tree: Path) -> None:
    with (
        pytest.raises(PathRefused, match="root folder itself"),
        open_parent(make_jail(tree).resolve(".")),
    ):
        pass


# --- walking -------------------------------------------------------------------------------


def walked(jail: Jail, path: str = ".", **options: object) -> tuple[list[str], WalkStats]:
    stats = WalkStats()
    max_visited = int(options.pop("max_visited", 10_000))  # type: ignore[call-overload]
    with contextlib.closing(
        walk(jail, jail.resolve(path), stats=stats, max_visited=max_visited, **options)  # type: ignore[arg-type]
    ) as entries:
        names = [entry.relative for entry in entries]
    return names, stats


def test_walk_skips_blocked_git_and_never_enters_symlinks(tree: Path) -> None:
    names, stats = walked(make_jail(tree))
    assert names == [
        ".env.example",
        "dir-out",
        "keys",
        "link-in",
        "link-out",
        "notes.txt",
        "src",
        "src/pkg",
        "src/pkg/mod.py",
    ]
    assert stats.blocked == 2  # .env and keys/server.pem
    assert stats.symlinks == 3
    assert not any(name.startswith("dir-out/") for name in names)


def test_walk_honours_gitignore_and_its_negations(tree: Path) -> None:
    (tree / ".gitignore").write_text("*.txt\n!keep.txt\nbuild/\n")
    (tree / "keep.txt").write_text("k")
    (tree / "build").mkdir()
    (tree / "build" / "out.o").write_text("o")
    (tree / "src" / ".gitignore").write_text("!notes.txt\n*.py\n")
    names, stats = walked(make_jail(tree))
    assert "notes.txt" not in names
    assert "keep.txt" in names
    assert "build" not in names
    assert "src/pkg/mod.py" not in names
    assert stats.ignored == 3
    everything, _ = walked(make_jail(tree), gitignore=False)
    assert {"notes.txt", "build/out.o", "src/pkg/mod.py"} <= set(everything)


def test_walk_stops_at_max_visited_and_says_so(tree: Path) -> None:
    names, stats = walked(make_jail(tree), max_visited=3)
    assert len(names) == 3
    assert stats.truncated


def test_walk_max_depth(tree: Path) -> None:
    names, _ = walked(make_jail(tree), max_depth=1)
    assert "src" in names
    assert "src/pkg" not in names


# --- hypothesis ----------------------------------------------------------------------------

_SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "src",
        "pkg",
        "outside",
        "jail-x",
        "secret.txt",
        "link-out",
        "dir-out",
        "~",
        "/",
        "//",
        "\\",
        "proc",
        "self",
        "root",
        "etc",
        "passwd",
        ".env",
        "é",
        " ",
        "\n",
    ]
) | st.text(alphabet=string.printable + "éß\u202e", max_size=8)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(segments=st.lists(_SEGMENTS, min_size=1, max_size=8), absolute=st.booleans())
def test_any_path_resolves_inside_or_is_refused(
    tree: Path, segments: list[str], absolute: bool
) -> None:
    jail = make_jail(tree)
    path = "/".join(segments)
    if absolute:
        path = str(tree) + "/" + path
    try:
        resolved = jail.resolve(path)
    except PathRefused as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert SECRET not in message
        return
    assert resolved.real.is_relative_to(tree)
    assert os.path.realpath(resolved.real) == str(resolved.real)
    if resolved.real.is_file():
        data, _ = read_regular(resolved, 1 << 20)
        assert SECRET.encode() not in data


_NAMES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1,
    max_size=12,
).filter(lambda name: name not in (".", ".."))


@settings(max_examples=40, deadline=None)
@given(names=st.lists(_NAMES, min_size=1, max_size=12, unique=True))
def test_walk_sees_what_os_walk_sees(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for index, name in enumerate(names):
            target = root / name
            try:
                if index % 3 == 0:
                    target.mkdir()
                    (target / "inner.txt").write_text("x")
                else:
                    target.write_text("x")
            except OSError:  # a name the file system refuses (too long in bytes)
                continue
        jail = Jail([root])
        seen, _ = walked(jail, gitignore=False)
        expected = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [name for name in dirs if name != ".git"]
            expected.extend(
                os.path.relpath(os.path.join(folder, name), root) for name in dirs + files
            )
        assert sorted(seen) == sorted(expected)


def test_walk_files_yields_the_regular_files_walk_yields_with_the_same_counts(tree: Path) -> None:
    (tree / "src" / ".gitignore").write_text("*.log\n")
    (tree / "src" / "x.log").write_text("x")
    os.mkfifo(tree / "src" / "pipe")
    jail = make_jail(tree)
    entries, walk_stats = walked(jail)
    files_stats = WalkStats()
    with contextlib.closing(
        walk_files(jail, jail.resolve("."), stats=files_stats, max_visited=10_000)
    ) as found:
        paths = [folder + item.name for _, _, folder, items, _ in found for item in items]
    regular = [name for name in entries if (tree / name).is_file() and name != "src/pipe"]
    assert paths == [name for name in regular if not (tree / name).is_symlink()]
    assert paths == [".env.example", "notes.txt", "src/.gitignore", "src/pkg/mod.py"]
    assert files_stats == walk_stats
    assert (files_stats.special, files_stats.ignored, files_stats.symlinks) == (1, 1, 3)


_WALK_PARTS = st.sampled_from(
    ["src", "a", "b.txt", "x.pem", ".env", ".env.example", "conf.d", "id_rsa", "id_rsa\n",
     "xay", "é", ".ssh", "config", ".kube", "keep"]
)  # fmt: skip
_WALK_PATTERNS = st.sampled_from(
    ["*.txt", "!b.txt", "src/", "/a", "**/é", "x[!a]y", "a**b", "*.d/", "**/src/a",
     "!.env.example", "!keep", "!x.pem", "a/**/b.txt", "!conf.d/", "[ab]", "!*.pem"]
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    paths=st.lists(st.lists(_WALK_PARTS, min_size=1, max_size=3), min_size=1, max_size=10),
    patterns=st.lists(_WALK_PATTERNS, max_size=4),
)
def test_walk_skips_exactly_what_pathspec_blocks(
    paths: list[list[str]], patterns: list[str]
) -> None:
    """The walk's per-folder blocked check gives pathspec's verdict on every entry it meets
    (a blocked folder is not entered), counted as pathspec would have them."""
    blocked = [*DEFAULT_BLOCKED_PATHS, *patterns]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for parts in paths:
            with contextlib.suppress(OSError):  # a file where a folder goes, or the reverse
                root.joinpath(*parts[:-1]).mkdir(parents=True, exist_ok=True)
                root.joinpath(*parts).write_text("x")
        spec = pathspec.GitIgnoreSpec.from_lines(blocked)
        expected: list[str] = []
        skipped = 0

        def reference(folder: Path, prefix: str) -> None:
            nonlocal skipped
            for item in sorted(os.scandir(folder), key=lambda item: item.name):
                is_dir = item.is_dir(follow_symlinks=False)
                path = prefix + item.name
                if spec.match_file(path + ("/" if is_dir else "")):
                    skipped += 1
                    continue
                expected.append(path)
                if is_dir:
                    reference(Path(item.path), path + "/")

        reference(root, "")
        jail = Jail([root], blocked=blocked)
        seen, stats = walked(jail, gitignore=False)
        assert seen == expected
        assert stats.blocked == skipped
        files_stats = WalkStats()
        with contextlib.closing(
            walk_files(
                jail, jail.resolve("."), stats=files_stats, max_visited=10_000, gitignore=False
            )
        ) as found:
            files = [folder + item.name for _, _, folder, items, _ in found for item in items]
        assert files == [path for path in expected if (root / path).is_file()]
        assert files_stats == stats
        # Started lower, the folders above (whose patterns may reach below) are accounted
        # for too.
        for folder in [path for path in expected if "/" not in path and (root / path).is_dir()]:
            below, _ = walked(jail, folder, gitignore=False)
            assert below == [path for path in expected if path.startswith(folder + "/")]


def test_a_walk_below_the_root_honours_the_gitignore_files_above_it(tree: Path) -> None:
    (tree / ".gitignore").write_text("__pycache__/\n*.log\n")
    (tree / "src" / ".gitignore").write_text("!keep.log\n")
    cache = tree / "src" / "pkg" / "__pycache__"
    cache.mkdir()
    (cache / "mod.pyc").write_text("x")
    (tree / "src" / "pkg" / "run.log").write_text("x")
    (tree / "src" / "pkg" / "keep.log").write_text("x")
    names, stats = walked(make_jail(tree), "src/pkg")
    assert names == ["src/pkg/keep.log", "src/pkg/mod.py"]
    assert stats.ignored == 2
    everything, _ = walked(make_jail(tree), "src/pkg", gitignore=False)
    assert "src/pkg/__pycache__/mod.pyc" in everything
