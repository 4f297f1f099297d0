"""The grep tool against generated trees, compared with Python's own reading and GNU grep."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import call, skills_client, text_of

# Names that cannot form a blocked name (no "." or "_" but in the fixed suffixes) yet hold
# unicode, spaces and line breaks.
_NAME = st.text(alphabet="abé XΩ-\n", min_size=1, max_size=6)
_FILE = st.tuples(
    st.lists(_NAME, max_size=2),  # folders
    _NAME,
    st.sampled_from([".txt", ".py", ""]),
)
_LINE = st.text(alphabet="ab é\tAB\x1c", max_size=12)
_CONTENT = st.lists(_LINE, max_size=12)
_TREE = st.lists(st.tuples(_FILE, _CONTENT, st.booleans()), min_size=1, max_size=8)

_PATTERNS = [
    "a+b",
    "^a",
    "b$",
    r"\bab\b",
    "[aé]{2}",
    "é.",
    "(?i)AB",
    r"a\s",
    r"\s$",
    "^$",
    r"\Aa",
    "(?<=a)b",
    r"a(?=\s)",
    "x*",
    "[^a]",
    "a|é",
]


def build(root: Path, tree: list[tuple[tuple[list[str], str, str], list[str], bool]]) -> None:
    """Write a generated tree: each file's lines, with or without a final line break."""
    for (folders, name, suffix), lines, final in tree:
        folder = root.joinpath(*folders)
        target = folder / (name + suffix)
        if any(part.exists() and not part.is_dir() for part in (folder, *folder.parents)):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            continue
        text = "\n".join(lines) + ("\n" if final and lines else "")
        target.write_bytes(text.encode("utf-8"))


def python_lines(root: Path) -> dict[str, list[str]]:
    """Every regular file below ``root`` (os.walk, no symlinks), as decoded lines."""
    files: dict[str, list[str]] = {}
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in names:
            path = Path(folder, name)
            if path.is_symlink() or not path.is_file():
                continue
            text = path.read_bytes().decode("utf-8", "replace")
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            files[str(path.relative_to(root))] = lines
    return files


def expected_matches(root: Path, test: Any) -> set[tuple[str, int, str]]:
    return {
        (path, number, line)
        for path, lines in python_lines(root).items()
        for number, line in enumerate(lines, start=1)
        if test(line)
    }


def found(result: dict[str, Any]) -> set[tuple[str, int, str]]:
    assert result["isError"] is False, text_of(result)
    matches = result["structuredContent"]["matches"]
    return {(match["path"], match["line"], match["text"]) for match in matches}


def gnu_grep(root: Path, *args: str) -> bytes:
    done = subprocess.run(
        ["grep", *args],
        cwd=root,
        capture_output=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def parse_grep_z(output: bytes) -> set[tuple[str, int, str]]:
    """Parse ``grep -rnZ``: ``name NUL number:text LF`` per match (names may hold LF)."""
    matches = set()
    rest = output
    while rest:
        name, _, rest = rest.partition(b"\0")
        record, _, rest = rest.partition(b"\n")
        number, _, text = record.partition(b":")
        path = name.decode("utf-8").removeprefix("./")
        matches.add((path, int(number), text.decode("utf-8", "replace")))
    return matches


def lines_of(result: dict[str, Any]) -> list[str]:
    """The output lines before the summary (which starts at the first "[...]" line)."""
    lines = text_of(result).split("\n")
    while lines and lines[-1].startswith("["):
        lines.pop()
    return lines


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=_TREE, needle=st.sampled_from(["a", "ab", "é", "b a", " ", "Ω", "", "\t"]))
def test_fixed_string_matches_python_and_gnu_grep(tree: Any, needle: str) -> None:
    async def scenario(root: Path) -> None:
        build(root, tree)
        async with skills_client(root) as client:
            result = await call(
                client, "grep", pattern=needle, fixed_string=True, max_matches=10_000
            )
        got = found(result)
        assert got == expected_matches(root, lambda line: needle in line)
        grep_said = parse_grep_z(gnu_grep(root, "-rnZF", "--", needle, "."))
        assert got == grep_said
        files = len(python_lines(root))
        assert result["structuredContent"]["files_searched"] == files

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


@settings(max_examples=40, deadline=None)
@given(tree=_TREE, pattern=st.sampled_from(_PATTERNS), ignore_case=st.booleans())
def test_regex_matches_python_re_line_by_line(tree: Any, pattern: str, ignore_case: bool) -> None:
    regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)

    async def scenario(root: Path) -> None:
        build(root, tree)
        async with skills_client(root) as client:
            result = await call(
                client, "grep", pattern=pattern, ignore_case=ignore_case, max_matches=10_000
            )
        assert found(result) == expected_matches(root, lambda line: regex.search(line))

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


@settings(max_examples=25, deadline=None)
@given(tree=_TREE, needle=st.sampled_from(["a", "AB", "é", "Ω", "b A"]))
def test_ignore_case_fixed_string_folds_as_python_does(tree: Any, needle: str) -> None:
    async def scenario(root: Path) -> None:
        build(root, tree)
        async with skills_client(root) as client:
            result = await call(client, "grep", pattern=needle, fixed_string=True, ignore_case=True)
        regex = re.compile(re.escape(needle), re.IGNORECASE)
        assert found(result) == expected_matches(root, lambda line: regex.search(line))

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


@settings(max_examples=20, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["hit here", "plain", "more hit", "x"]), max_size=25),
    before=st.integers(0, 3),
    after=st.integers(0, 3),
)
def test_context_lines_are_gnu_greps(lines: list[str], before: int, after: int) -> None:
    async def scenario(root: Path) -> None:
        for name in ("a.txt", "b.txt"):
            (root / name).write_text("\n".join(lines) + "\n")
        async with skills_client(root) as client:
            result = await call(client, "grep", pattern="hit", before=before, after=after)
        # GNU grep prints "--" between groups once context is asked for, even -A0.
        flags = [f"-B{before}", f"-A{after}"] if before or after else []
        expected = gnu_grep(root, "-n", "-H", *flags, "-F", "hit", "--", "a.txt", "b.txt")
        got = lines_of(result) if "hit" in "".join(lines) else []
        assert got == expected.decode().splitlines()

    with tempfile.TemporaryDirectory() as scratch:
        trio.run(scenario, Path(scratch))


async def test_binary_and_large_files_are_skipped_and_counted(jail_root: Path) -> None:
    (jail_root / "text.txt").write_text("needle\n")
    (jail_root / "bin.dat").write_bytes(b"needle\0\n")
    # A NUL past the first 8 KiB does not make a file binary.
    (jail_root / "late.txt").write_bytes(b"x" * 9000 + b"\0\nneedle\n")
    (jail_root / "big.txt").write_text("needle\n" + "y" * 10_000)
    async with skills_client(jail_root, max_file_size=9500) as client:
        result = await call(client, "grep", pattern="needle")
    text = text_of(result)
    assert {path for path, _, _ in found(result)} == {"text.txt", "late.txt"}
    assert "1 binary" in text
    assert "1 over max_file_size (9500 bytes)" in text
    skipped = result["structuredContent"]["skipped"]
    assert skipped["binary"] == 1
    assert skipped["too_large"] == 1


async def test_gitignore_is_honoured_unless_turned_off(jail_root: Path) -> None:
    (jail_root / ".gitignore").write_text("build/\n*.log\n")
    (jail_root / "build").mkdir()
    (jail_root / "build" / "out.txt").write_text("needle\n")
    (jail_root / "app.log").write_text("needle\n")
    (jail_root / "src.txt").write_text("needle\n")
    async with skills_client(jail_root) as client:
        honoured = await call(client, "grep", pattern="needle")
        ignored = await call(client, "grep", pattern="needle", gitignore=False)
    async with skills_client(jail_root, gitignore=False) as client:
        by_setting = await call(client, "grep", pattern="needle")
    assert {path for path, _, _ in found(honoured)} == {"src.txt"}
    assert "2 ignored (.gitignore)" in text_of(honoured)
    everything = {"src.txt", "app.log", "build/out.txt"}
    assert {path for path, _, _ in found(ignored)} == everything
    assert {path for path, _, _ in found(by_setting)} == everything


async def test_include_and_exclude_globs(jail_root: Path) -> None:
    for path in ("a.py", "b.txt", "src/c.py", "src/gen/d.py", "docs/e.md"):
        (jail_root / path).parent.mkdir(parents=True, exist_ok=True)
        (jail_root / path).write_text("needle\n")
    async with skills_client(jail_root) as client:
        py = await call(client, "grep", pattern="needle", include=["*.py"])
        no_gen = await call(client, "grep", pattern="needle", include=["*.py"], exclude=["gen/"])
        in_src = await call(client, "grep", pattern="needle", path="src", include=["gen/*.py"])
        two = await call(client, "grep", pattern="needle", include=["*.md", "b.*"])
    assert {p for p, _, _ in found(py)} == {"a.py", "src/c.py", "src/gen/d.py"}
    assert {p for p, _, _ in found(no_gen)} == {"a.py", "src/c.py"}
    assert {p for p, _, _ in found(in_src)} == {"src/gen/d.py"}
    assert {p for p, _, _ in found(two)} == {"b.txt", "docs/e.md"}


async def test_max_matches_and_max_bytes_are_stated(jail_root: Path) -> None:
    (jail_root / "a.txt").write_text("hit\n" * 30)
    (jail_root / "b.txt").write_text("hit\n" * 30)
    async with skills_client(jail_root) as client:
        capped = await call(client, "grep", pattern="hit", max_matches=40)
        exact = await call(client, "grep", pattern="hit", max_matches=60)
        small = await call(client, "grep", pattern="hit", max_bytes=100)
        listed = await call(client, "grep", pattern="hit", files_only=True, max_matches=1)
    assert len(found(capped)) == 40
    assert capped["structuredContent"]["stopped_by"] == "max_matches"
    assert "stopped at max_matches=40" in text_of(capped)
    assert len(found(exact)) == 60
    assert exact["structuredContent"]["stopped_by"] is None
    assert "stopped" not in text_of(exact)
    assert small["structuredContent"]["stopped_by"] == "max_bytes"
    assert "stopped at max_bytes=100" in text_of(small)
    assert sum(len(line) + 1 for line in lines_of(small)) <= 100
    assert len(found(small)) == len(lines_of(small))
    assert lines_of(listed) == ["a.txt"]
    assert "stopped at max_matches=1" in text_of(listed)


async def test_long_lines_are_cut_around_the_match(jail_root: Path) -> None:
    (jail_root / "min.js").write_text("a" * 5000 + "needle" + "b" * 5000 + "\n")
    async with skills_client(jail_root) as client:
        result = await call(client, "grep", pattern="needle")
    (line,) = lines_of(result)
    assert line.startswith("min.js:1:[+")
    assert "needle" in line
    assert line.endswith(" chars]")
    (match,) = result["structuredContent"]["matches"]
    assert match["truncated"] is True
    assert "needle" in match["text"]
    assert len(match["text"]) == 1000


async def test_invalid_regex_names_the_problem_and_position(jail_root: Path) -> None:
    async with skills_client(jail_root) as client:
        result = await call(client, "grep", pattern="ab(c")
        lookbehind = await call(client, "grep", pattern="(?<=a+)b")
        fixed = await call(client, "grep", pattern="ab(c", fixed_string=True)
    assert result["isError"] is True
    text = text_of(result)
    assert "missing ), unterminated subpattern" in text
    assert "position 2" in text
    assert "fixed_string" in text
    assert lookbehind["isError"] is True
    assert "look-behind requires fixed-width pattern" in text_of(lookbehind)
    assert fixed["isError"] is False


async def test_names_with_line_breaks_are_quoted_in_text_exact_in_structure(
    jail_root: Path,
) -> None:
    (jail_root / "two\nlines.txt").write_text("needle\n")
    async with skills_client(jail_root) as client:
        result = await call(client, "grep", pattern="needle")
    assert lines_of(result) == ["'two\\nlines.txt':1:needle"]
    assert found(result) == {("two\nlines.txt", 1, "needle")}


async def test_a_single_file_can_be_searched(jail_root: Path) -> None:
    (jail_root / "one.txt").write_text("a\nneedle\n")
    (jail_root / "two.txt").write_text("needle\n")
    async with skills_client(jail_root) as client:
        result = await call(client, "grep", pattern="needle", path="one.txt")
        missing = await call(client, "grep", pattern="needle", path="nope")
    assert found(result) == {("one.txt", 2, "needle")}
    assert missing["isError"] is True
    assert "does not exist" in text_of(missing)


async def test_unicode_regex_works_on_characters_not_bytes(jail_root: Path) -> None:
    (jail_root / "u.txt").write_text("é\nÉTÉ\nab\n")
    async with skills_client(jail_root) as client:
        dot = await call(client, "grep", pattern="^.$")
        folded = await call(client, "grep", pattern="été", ignore_case=True)
    assert found(dot) == {("u.txt", 1, "é")}
    assert found(folded) == {("u.txt", 2, "ÉTÉ")}
