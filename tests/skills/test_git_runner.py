"""The git runner (environment, command line, cap, messages) and the parsers of git's output."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import trio
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trimcp.errors import ToolError
from trimcp.skills.tools.vcs._git import (
    CONFIG_OVERRIDES,
    GitRunner,
    clean_message,
    git_argv,
    git_environment,
    refuse_option,
)
from trimcp.skills.tools.vcs._parse import (
    log_format,
    parse_log,
    parse_numstat,
    parse_status,
)

from .gitrepo import commit, git, write

_NAMES = (
    st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters="/\x00"),
        min_size=1,
        max_size=10,
    )
    .filter(lambda name: name not in (".", ".."))
    # git refuses names that are .git on some file system (core.protectNTFS/HFS).
    .filter(lambda name: name.lower().rstrip(". ") != ".git" and "git~" not in name.lower())
    .filter(lambda name: len(name.encode()) <= 255)
)


def test_the_environment_is_built_from_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_OBJECT_DIRECTORY",
        "LD_PRELOAD",
    ):
        monkeypatch.setenv(name, "/elsewhere")
    monkeypatch.setenv("TZ", "Europe/Paris")
    env = git_environment([Path("/a"), Path("/b")], [("filter.x y=z.clean", "")])
    assert not {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXEC_PATH"} & set(env)
    assert not {"GIT_CONFIG_PARAMETERS", "GIT_SSH_COMMAND", "LD_PRELOAD"} & set(env)
    assert env["GIT_CEILING_DIRECTORIES"] == "/a:/b"
    assert env["GIT_CONFIG_GLOBAL"] == env["GIT_CONFIG_SYSTEM"] == "/dev/null"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_OPTIONAL_LOCKS"] == "0"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_PAGER"] == env["PAGER"] == "cat"
    assert env["TZ"] == "Europe/Paris"
    assert env["GIT_CONFIG_COUNT"] == "1"
    assert env["GIT_CONFIG_KEY_0"] == "filter.x y=z.clean"
    assert env["GIT_CONFIG_VALUE_0"] == ""
    allowed = {"PATH", "HOME", "LC_ALL", "LANG", "TZ", "PAGER"}
    assert {name for name in env if not name.startswith("GIT_")} <= allowed


def test_the_command_line_starts_with_the_safety_options() -> None:
    argv = git_argv("/usr/bin/git", ["log", "--format=%H"])
    assert argv[:2] == ["/usr/bin/git", "--no-pager"]
    assert argv[-2:] == ["log", "--format=%H"]
    pairs = [argv[index + 1] for index, arg in enumerate(argv) if arg == "-c"]
    assert pairs == [f"{key}={value}" for key, value in CONFIG_OVERRIDES]
    assert "core.hooksPath=/dev/null" in pairs
    assert "core.fsmonitor=false" in pairs
    assert "protocol.allow=never" in pairs


@pytest.mark.parametrize(
    "value", ["-p", "--output=/tmp/x", "-c core.pager=sh", "--upload-pack=x", "-"]
)
def test_option_like_values_are_refused(value: str) -> None:
    with pytest.raises(ToolError, match="git option injection refused"):
        refuse_option(value, "revision")


@pytest.mark.parametrize("value", ["main", "HEAD~2", "v1.0^{commit}", "a-b", "refs/heads/-p"])
def test_ordinary_values_pass(value: str) -> None:
    assert refuse_option(value, "revision") == value


def test_control_characters_are_refused() -> None:
    with pytest.raises(ToolError, match="control character"):
        refuse_option("main\nHEAD", "revision")


def test_clean_message_hides_paths_outside_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "jail"
    stderr = (
        f"fatal: bad config line 1 in file {tmp_path}/outside/bad.cfg\n"
        "hint: do something\n"
        f"error: '{root}/repo/x' is fine\n"
        "warning: relative/path stays\n"
    )
    message = clean_message(stderr, [root])
    assert str(tmp_path / "outside") not in message
    assert "<a path outside the allowed folders>" in message
    assert f"{root}/repo/x" in message
    assert "relative/path stays" in message
    assert "hint" not in message
    assert "fatal" not in message


async def test_output_past_the_limit_is_cut_and_git_stopped(tmp_path: Path) -> None:
    write(tmp_path / "big", "x" * 100_000)
    git(tmp_path, "init", "-q")
    blob = git(tmp_path, "hash-object", "-w", "big").strip()
    runner = GitRunner(tmp_path, git_environment([]), trio.current_time() + 30, 30)
    output = await runner.run(["cat-file", "blob", blob], 1000)
    assert output.cut
    assert output.out == b"x" * 1000
    whole = await runner.run(["cat-file", "blob", blob], 100_000)
    assert not whole.cut
    assert whole.code == 0
    assert len(whole.out) == 100_000


# --- the parsers against git, with any names -------------------------------------------------


def _porcelain_v1(repo: Path) -> dict[str, str]:
    items = git(repo, "status", "--porcelain", "-z", "--untracked-files=all").split("\0")
    codes: dict[str, str] = {}
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        if item:
            codes[item[3:]] = item[:2]
            index += item[0] in "RC"
    return codes


@pytest.mark.slow  # ~6 s: 25 repositories, a dozen git runs each
@settings(max_examples=25, deadline=None)
@given(names=st.lists(_NAMES, min_size=2, max_size=8, unique=True))
@example(names=[":0", "b"])  # a name git would read as pathspec magic
def test_the_parsers_read_what_git_prints_for_any_names(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch)
        git(repo, "init", "-q")
        committed, fresh = names[: len(names) // 2], names[len(names) // 2 :]
        for name in committed:
            write(repo / name, "one\n")
        # ":(literal)": a generated name such as ":0" is a name, not pathspec magic.
        git(repo, "add", "--", *(f":(literal){name}" for name in committed))
        first = commit(repo, "first", day=1)
        for name in committed[::2]:
            write(repo / name, "two\n")  # unstaged
        for name in fresh[::2]:
            write(repo / name, "new\n")
            git(repo, "add", "--", f":(literal){name}")  # staged
        for name in fresh[1::2]:
            write(repo / name, "untracked\n")
        raw = git(
            repo,
            "status",
            "--porcelain=v2",
            "-z",
            "--branch",
            "--untracked-files=all",
        )
        status = parse_status(raw, str(repo), truncated=False)
        codes = {entry["path"]: entry["status"][0].upper() + "." for entry in status["staged"]}
        for entry in status["unstaged"]:
            codes[entry["path"]] = codes.get(entry["path"], "..")[0] + entry["status"][0].upper()
        codes |= dict.fromkeys(status["untracked"], "??")
        expected = {path: code.replace(" ", ".") for path, code in _porcelain_v1(repo).items()}
        assert codes == expected
        assert status["branch"] == "main"
        assert status["head"] == first

        git(repo, "add", "--all")
        second = commit(repo, "second", day=2)
        marker = "m" * 16
        raw = git(repo, "log", f"--format={log_format(marker)}", "--name-only", "-z")
        commits = parse_log(raw, marker, truncated=False)
        assert [entry["hash"] for entry in commits] == [second, first]
        for logged in commits:
            listed = git(repo, "show", "--format=", "--name-only", "-z", logged["hash"])
            assert logged["files"] == [name for name in listed.split("\0") if name]

        numstat = parse_numstat(git(repo, "diff", "--numstat", "-z", first, second))
        changed = git(repo, "diff", "--name-only", "-z", first, second).split("\0")
        assert [stat["path"] for stat in numstat] == [name for name in changed if name]
