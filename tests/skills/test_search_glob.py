"""glob and concat_files against generated trees, compared with os.walk and fnmatch."""

from __future__ import annotations

import fnmatch
import os
import tempfile
from pathlib import Path
from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import call, skills_client, text_of

_NAME = st.text(alphabet="abé XΩ-\n[]", min_size=1, max_size=5)
_PATHS = st.lists(
    st.tuples(st.lists(_NAME, max_size=3), st.sampled_from([".txt", ".py", ""])),
    min_size=1,
    max_size=10,
)
_GLOBS = [
    "*",
    "**",
    "**/*",
    "*.txt",
    "**/*.py",
    "a*/**",
    "?",
    "**/?*.txt",
    "[a-b]*",
    "[!a]*",
    "*/*",
    "**/b*/*",
    "*X*/**/*",
    "é*",
    "\\[*",
]


def build(root: Path, paths: list[tuple[list[str], str]]) -> None:
    for parts, suffix in paths:
        *folders, name = parts or ["file"]
        folder = root.joinpath(*folders)
        target = folder / (name + suffix)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_text(f"{target.name}\n")
        except (FileExistsError, NotADirectoryError):
            continue  # a file already took the folder's name


def glob_matches(pattern: list[str], parts: list[str]) -> bool:
    """Independent matcher: fnmatch per component, ``**`` as zero or more components."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        if not rest:
            return bool(parts)
        return any(glob_matches(rest, parts[index:]) for index in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and glob_matches(rest, parts[1:])


def walked(root: Path) -> list[tuple[list[str], bool]]:
    """Every file and folder below ``root`` with os.walk (no symlinks), in walk order."""
    out: list[tuple[list[str], bool]] = []
    for folder, dirs, names in os.walk(root):
        base = Path(folder).relative_to(root).parts
        out.extend(([*base, name], True) for name in dirs)
        out.extend(([*base, name], False) for name in names if not Path(folder, name).is_symlink())
    return sorted(out, key=lambda item: item[0])


def listed(result: dict[str, Any]) -> list[str]:
    assert result["isError"] is False, text_of(result)
    return [match["path"] for match in result["structuredContent"]["matches"]]


@settings(max_examples=40, deadline=None)
@given(paths=_PATHS, pattern=st.sampled_from(_GLOBS), folders=st.booleans())
def test_glob_matches_an_independent_fnmatch_walk(
    paths: list[tuple[list[str], str]], pattern: str, folders: bool
) -> None:
    # fnmatch knows no backslash escapes: give it the class that means the same.
    fn_pattern = pattern.replace("\\[", "[[]").split("/")

    async def scenario(root: Path) -> None:
        build(root, paths)
        async with skills_client(root) as client:
            result = await call(client, "glob", pattern=pattern, include_folders=folders)
        expected = [
            "/".join(parts)
            for parts, is_dir in walked(root)
            if (folders or not is_dir) and glob_matches(fn_pattern, parts)
        ]
        assert listed(result) == expected
        kinds = {match["path"]: match["folder"] for match in result["structuredContent"]["matches"]}
        assert all(kinds[path] == (root / path).is_dir() for path in expected)

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


async def test_braces_classes_trailing_slash_and_path(jail_root: Path) -> None:
    for path in ("a.ts", "b.tsx", "c.js", "src/d.ts", "src/lib/e.tsx", "src/lib/f.md", "x/y/z.ts"):
        (jail_root / path).parent.mkdir(parents=True, exist_ok=True)
        (jail_root / path).write_text("x\n")
    async with skills_client(jail_root) as client:
        braces = await call(client, "glob", pattern="**/*.{ts,tsx}")
        nested = await call(client, "glob", pattern="{src/{lib,x},x/y}/*")
        folders = await call(client, "glob", pattern="**/", include_folders=False)
        below = await call(client, "glob", pattern="*.ts*", path="src/lib")
        literal = await call(client, "glob", pattern="src/lib/*.md", gitignore=False)
    assert listed(braces) == ["a.ts", "b.tsx", "src/d.ts", "src/lib/e.tsx", "x/y/z.ts"]
    assert listed(nested) == ["src/lib/e.tsx", "src/lib/f.md", "x/y/z.ts"]
    assert listed(folders) == ["src", "src/lib", "x", "x/y"]
    assert text_of(folders).splitlines()[0] == "src/"
    assert listed(below) == ["src/lib/e.tsx"]
    assert listed(literal) == ["src/lib/f.md"]


async def test_glob_honours_gitignore_unless_told(jail_root: Path) -> None:
    (jail_root / ".gitignore").write_text("gen/\n")
    (jail_root / "gen").mkdir()
    (jail_root / "gen" / "a.py").write_text("x")
    (jail_root / "b.py").write_text("x")
    (jail_root / ".git").mkdir()
    (jail_root / ".git" / "c.py").write_text("x")
    async with skills_client(jail_root) as client:
        honoured = await call(client, "glob", pattern="**/*.py")
        everything = await call(client, "glob", pattern="**/*.py", gitignore=False)
        prefixed = await call(client, "glob", pattern="gen/*.py")
        into_git = await call(client, "glob", pattern=".git/*", gitignore=False)
    assert listed(honoured) == ["b.py"]
    assert "1 ignored (.gitignore)" in text_of(honoured)
    assert listed(everything) == ["b.py", "gen/a.py"]
    assert listed(prefixed) == []
    assert listed(into_git) == []


async def test_max_results_is_stated(jail_root: Path) -> None:
    for index in range(5):
        (jail_root / f"f{index}.txt").write_text("x")
    async with skills_client(jail_root) as client:
        capped = await call(client, "glob", pattern="*.txt", max_results=3)
        exact = await call(client, "glob", pattern="*.txt", max_results=5)
    assert listed(capped) == ["f0.txt", "f1.txt", "f2.txt"]
    assert capped["structuredContent"]["stopped_by"] == "max_results"
    assert "stopped at max_results=3" in text_of(capped)
    assert exact["structuredContent"]["stopped_by"] is None


async def test_bad_glob_patterns_are_refused(jail_root: Path) -> None:
    (jail_root / "f.txt").write_text("x")
    async with skills_client(jail_root) as client:
        absolute = await call(client, "glob", pattern="/etc/*")
        parent = await call(client, "glob", pattern="../*")
        empty = await call(client, "glob", pattern=" ")
        file_path = await call(client, "glob", pattern="*", path="f.txt")
        too_many = await call(
            client, "glob", pattern="{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}"
        )
    for result, words in [
        (absolute, "absolute"),
        (parent, "'..'"),
        (empty, "empty"),
        (file_path, "is a file"),
        (too_many, "alternatives"),
    ]:
        assert result["isError"] is True
        assert words in text_of(result)


async def test_concat_files_by_paths_in_order_with_notes(jail_root: Path) -> None:
    (jail_root / "a.txt").write_text("alpha\n")
    (jail_root / "b.md").write_text("beta")
    (jail_root / "bin").write_bytes(b"\0\1\2")
    (jail_root / "big.txt").write_text("x" * 3000)
    (jail_root / "d").mkdir()
    async with skills_client(jail_root, max_file_size=2000) as client:
        result = await call(
            client, "concat_files", paths=["b.md", "a.txt", "bin", "big.txt", "d", "nope"]
        )
    assert result["isError"] is False
    assert text_of(result).split("\n") == [
        "==> b.md <==",
        "beta",
        "",
        "==> a.txt <==",
        "alpha",
        "",
        "==> bin <==",
        "[binary file, 3 bytes: not shown]",
        "",
        "==> big.txt <==",
        "[not shown: 3000 bytes, more than max_file_size (2000); read part of it with read_file]",
        "",
        "==> d <==",
        "[not read: it is a folder; name files, or use pattern]",
        "",
        "==> nope <==",
        "[not read: nope does not exist]",
        "[2 file(s) shown; 4 noted, not shown]",
    ]


async def test_concat_files_by_pattern_and_its_limits(jail_root: Path) -> None:
    for index in range(6):
        (jail_root / "src" / f"m{index}.py").parent.mkdir(exist_ok=True)
        (jail_root / "src" / f"m{index}.py").write_text(f"module {index}\n" * 3)
    async with skills_client(jail_root, max_read_files=4) as client:
        capped = await call(client, "concat_files", pattern="**/*.py")
        none = await call(client, "concat_files", pattern="*.rs")
        neither = await call(client, "concat_files")
        both = await call(client, "concat_files", paths=["a"], pattern="*")
    text = text_of(capped)
    assert text.count("==> src/m") == 4
    assert "2 more file(s) not shown because at most 4 files are read per call" in text
    assert "src/m4.py, src/m5.py" in text
    assert text_of(none) == "No files match *.rs below ."
    assert neither["isError"] is True
    assert both["isError"] is True
    assert "either paths" in text_of(neither)


async def test_concat_files_cuts_at_max_result_bytes(jail_root: Path) -> None:
    (jail_root / "a.txt").write_text("".join(f"line {index}\n" for index in range(200)))
    (jail_root / "b.txt").write_text("b\n")
    async with skills_client(jail_root, max_result_bytes=1024) as client:
        result = await call(client, "concat_files", paths=["a.txt", "b.txt"])
    text = text_of(result)
    assert text.startswith("==> a.txt <==\nline 0\n")
    assert "[cut: " in text
    assert "read the rest with read_file" in text
    assert "1 more file(s) not shown because the output reached 1024 bytes" in text
    assert "b.txt" in text.split("[cut: ")[1]
    assert len(text.encode()) < 1024 + 400
