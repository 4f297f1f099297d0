"""The search tools never leave the jail, never read blocked files, and stop when cancelled."""

from __future__ import annotations

import itertools
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pathspec
import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.config import SkillsSettings
from trimcp.skills._runtime import Cancelled, Progress
from trimcp.skills.jail import Jail
from trimcp.skills.tools._output import Budget
from trimcp.skills.tools.search._grep import GrepQuery, GrepRun
from trimcp.skills.tools.search._grep_match import compile_matcher

from .conftest import call, skills_client, text_of

if TYPE_CHECKING:
    from collections.abc import Callable

MARKER = "MARKER-7f3a9c"


def plant(jail_root: Path) -> None:
    """A marker outside the jail, links to it from inside, and one in a blocked file."""
    outside = jail_root.parent / "outside"
    (outside / "secret.txt").write_text(f"{MARKER}\n")
    (outside / "deeper").mkdir()
    (outside / "deeper" / "more.txt").write_text(f"{MARKER}\n")
    (jail_root / "linkdir").symlink_to(outside, target_is_directory=True)
    (jail_root / "link.txt").symlink_to(outside / "secret.txt")
    (jail_root / "sub").mkdir()
    (jail_root / "sub" / "up").symlink_to("../..", target_is_directory=True)
    (jail_root / "sub" / ".env").write_text(f"TOKEN={MARKER}\n")
    (jail_root / "id_rsa").write_text(f"{MARKER}\n")
    (jail_root / "plain.txt").write_text("nothing to see\n")


def plant_sibling(jail_root: Path) -> None:
    """A folder whose name starts with the jail's (``/jail-x`` beside ``/jail``)."""
    sibling = Path(f"{jail_root}-x")
    sibling.mkdir()
    (sibling / "x.txt").write_text(MARKER)


def assert_clean(result: dict[str, Any]) -> None:
    assert MARKER not in text_of(result)
    assert MARKER not in repr(result.get("structuredContent"))
    assert "outside" not in text_of(result).replace("outside the allowed", "")


async def test_grep_glob_and_concat_never_follow_links_out_or_read_blocked_files(
    jail_root: Path,
) -> None:
    plant(jail_root)
    async with skills_client(jail_root) as client:
        results = [
            await call(client, "grep", pattern="MARKER-7f3a9."),
            await call(client, "grep", pattern="MARKER-7f", gitignore=False, fixed_string=True),
            await call(client, "grep", pattern="MARKER", path="sub"),
            await call(client, "grep", pattern=".", include=["**/*"], files_only=True),
            await call(client, "glob", pattern="**/*", include_folders=True),
            await call(client, "glob", pattern="linkdir/**"),
            await call(client, "glob", pattern="sub/up/**", gitignore=False),
            await call(client, "concat_files", pattern="**/*"),
            await call(client, "concat_files", pattern="linkdir/*", gitignore=False),
            await call(client, "concat_files", paths=["link.txt", "sub/.env", "id_rsa"]),
        ]
    for result in results:
        assert_clean(result)
    grep_text = text_of(results[0])
    assert "No matches" in grep_text
    assert "symlink(s), never followed" in grep_text
    assert "blocked (blocked_paths)" in grep_text
    listed = {match["path"] for match in results[4]["structuredContent"]["matches"]}
    assert listed == {"plain.txt", "sub"}


@pytest.mark.parametrize("tool", ["grep", "glob"])
@pytest.mark.parametrize(
    "path", ["../outside", "{outside}", "{jail}-x", "linkdir", "sub/up", "/proc/self/root"]
)
async def test_paths_outside_are_refused_without_leaking(
    jail_root: Path, tool: str, path: str
) -> None:
    plant(jail_root)
    plant_sibling(jail_root)
    argument = path.format(outside=jail_root.parent / "outside", jail=jail_root)
    async with skills_client(jail_root) as client:
        pattern = "MARKER" if tool == "grep" else "*"
        result = await call(client, tool, pattern=pattern, path=argument)
    assert result["isError"] is True
    text = text_of(result)
    assert "outside the allowed folders" in text
    assert MARKER not in text
    assert "secret" not in text


async def test_blocked_path_argument_is_refused(jail_root: Path) -> None:
    plant(jail_root)
    async with skills_client(jail_root) as client:
        result = await call(client, "grep", pattern="MARKER", path="sub/.env")
    assert result["isError"] is True
    assert "blocked_paths" in text_of(result)
    assert MARKER not in text_of(result)


def _tree(root: Path, files: int) -> None:
    for index in range(files):
        folder = root / f"d{index % 20}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{index}.txt").write_text("some text\n" * 50)


def test_the_worker_stops_at_the_next_file_once_cancelled(tmp_path: Path) -> None:
    _tree(tmp_path, 3000)
    jail = Jail([tmp_path])
    settings = SkillsSettings()
    query = GrepQuery(
        matcher=compile_matcher("absent", fixed_string=True, ignore_case=False),
        before=0,
        after=0,
        files_only=False,
        max_matches=10,
        max_file_size=settings.max_file_size,
        max_visited=settings.max_files_visited,
        gitignore=True,
        include=None,
        exclude=None,
    )
    progress = Progress()
    progress.cancelled = True
    with pytest.raises(Cancelled):
        GrepRun(query, Budget(4096), progress).run(jail, jail.resolve("."), "")
    assert progress.done == 0

    # Cancelled midway (from another thread, as the request does): it stops there. The
    # worker is held at its 100th file until the flag is set, so the order is certain.
    paused = _PausingProgress(at=100)
    outcome: list[BaseException | None] = []

    def search() -> None:
        try:
            GrepRun(query, Budget(4096), paused).run(jail, jail.resolve("."), "")
        except Cancelled as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=search)
    worker.start()
    assert paused.reached.wait(timeout=60)
    paused.cancelled = True
    paused.resume.set()
    worker.join(timeout=60)
    assert isinstance(outcome[0], Cancelled)
    # It stopped at the next file: the 100 searched and none more.
    assert paused.done == 100


class _PausingProgress(Progress):
    """A ``Progress`` whose worker waits, once ``done`` reaches ``at``, until ``resume``."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.reached = threading.Event()
        self.resume = threading.Event()
        self._cancelled = False
        super().__init__()

    @property  # type: ignore[override]
    def cancelled(self) -> bool:
        if self.done >= self.at and not self.reached.is_set():
            self.reached.set()
            self.resume.wait(timeout=60)
        return self._cancelled

    @cancelled.setter
    def cancelled(self, value: bool) -> None:
        self._cancelled = value


class _SwapBeforeOpen(Progress):
    """A ``Progress`` whose ``cancelled`` (read by grep just before it opens each file)
    swaps the files named in ``swaps`` for something else: the race between listing a
    folder and opening its files, made deterministic."""

    def __init__(self, swaps: dict[int, Callable[[], None]]) -> None:
        super().__init__()
        self.swaps = swaps
        self.asked = 0

    @property  # type: ignore[override]
    def cancelled(self) -> bool:
        self.asked += 1
        swap = self.swaps.get(self.asked)
        if swap is not None:
            swap()
        return False

    @cancelled.setter
    def cancelled(self, value: bool) -> None:
        pass


def test_files_swapped_after_listing_are_not_followed_nor_read(jail_root: Path) -> None:
    """grep trusts the listing's file type to pick files, never to read them: a file turned
    into a symlink out of the jail (O_NOFOLLOW refuses it) or a FIFO (fstat of the open
    descriptor refuses it, O_NONBLOCK keeps the open from waiting) after the listing is
    counted unreadable, and nothing of the outside shows."""
    plant(jail_root)
    target = jail_root / "swapped"
    target.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (target / name).write_text(f"{name} needle\n")
    outside = jail_root.parent / "outside" / "secret.txt"

    def to_symlink() -> None:
        (target / "b.txt").unlink()
        (target / "b.txt").symlink_to(outside)

    def to_fifo() -> None:
        (target / "c.txt").unlink()
        os.mkfifo(target / "c.txt")

    query = GrepQuery(
        matcher=compile_matcher("needle|" + MARKER, fixed_string=False, ignore_case=False),
        before=0,
        after=0,
        files_only=False,
        max_matches=100,
        max_file_size=1 << 20,
        max_visited=1000,
        gitignore=True,
        include=None,
        exclude=None,
    )
    jail = Jail([jail_root], blocked=SkillsSettings().blocked_paths)
    budget = Budget(1 << 20)
    progress = _SwapBeforeOpen({2: to_symlink, 3: to_fifo})
    tally = GrepRun(query, budget, progress).run(jail, jail.resolve("swapped"), "")
    assert progress.asked == 4
    assert [found["path"] for found in tally.found] == ["swapped/a.txt", "swapped/d.txt"]
    assert tally.unreadable == ["swapped/b.txt", "swapped/c.txt"]
    assert tally.searched == 2
    assert MARKER not in budget.text()


@pytest.fixture
def idle_jump_clock() -> trio.testing.MockClock:
    """Skips ahead once trio has been idle 5 ms, so the half-second progress timer fires
    without waiting, yet the loop never spins while the worker thread runs (pytest-trio
    uses a fixture that returns a clock as the test's clock)."""
    return trio.testing.MockClock(autojump_threshold=0.005)


async def test_a_long_grep_reports_progress_and_stops_when_cancelled(
    tmp_path: Path, idle_jump_clock: trio.testing.MockClock
) -> None:
    _tree(tmp_path, 3000)
    async with skills_client(tmp_path) as client:
        request_id = await client.start_request(
            "tools/call",
            {"name": "grep", "arguments": {"pattern": "absent"}},
            progress_token="grep-1",
        )
        first = await client.wait_notification("notifications/progress")
        assert first.params is not None
        assert first.params["progressToken"] == "grep-1"
        assert str(first.params["message"]).endswith("files")
        await client.cancel(request_id, "user pressed stop")
        # The request ends (its worker thread returned) and is never answered.
        after = await call(client, "grep", pattern="some", path="d1", max_matches=1)
        assert after["isError"] is False
        # Draining waits for the cancelled request, which ends when its worker returns.
        await client.stream.aclose()
        await client.session.wait_exited()
        assert not client.has_response(request_id)
    workers = [thread.name for thread in threading.enumerate()]
    assert not any(name.startswith("work from") for name in workers), workers


async def test_progress_counts_files_as_they_are_searched(
    tmp_path: Path, idle_jump_clock: trio.testing.MockClock
) -> None:
    _tree(tmp_path, 2000)
    async with skills_client(tmp_path) as client:
        result = await client.request(
            "tools/call",
            {"name": "grep", "arguments": {"pattern": "absent"}},
            progress_token=7,
        )
    assert "2000 file(s) searched" in text_of(result)
    progress = client.received("notifications/progress")
    assert progress, "a long grep sends notifications/progress"
    values = [float(str(note.params["progress"])) for note in progress if note.params is not None]
    assert values == sorted(set(values))  # strictly increasing
    assert all(0 <= value <= 2000 for value in values)


def test_no_search_module_opens_paths_by_name() -> None:
    """Files are opened only through the jail's descriptor helpers (``open_regular``)."""
    search = Path(__file__).resolve().parents[2] / "trimcp" / "skills" / "tools" / "search"
    modules = sorted(search.glob("*.py"))
    assert len(modules) >= 5
    for module in modules:
        name, source = module.name, module.read_text()
        for banned in ("open(", "read_text(", "read_bytes(", "os.walk(", "scandir("):
            offending = [
                line
                for line in source.splitlines()
                if banned in line
                and "os.open" not in line
                and "open_regular(" not in line
                and "open_parent(" not in line
            ]
            assert not offending, (name, banned, offending)


_COMPONENTS = st.sampled_from(
    [".env", ".env.local", ".env.example", "id_rsa", ".ssh", "x.pem", "key.pem", ".kube",
     "config", ".docker", "config.json", "a", "b.txt", ".git-credentials", "secrets.toml",
     "src", ".aws", "credentials.json", "é", "a b", ".npmrc", "pem", "env", "id_rsa\n",
     "a\nb", "xay", "xby", "conf", "config.d", ".pem", "x.pem\n", "ab", "aXb"]
)  # fmt: skip
# Patterns of every shape pathspec compiles: floating names, folders only, anchored, "**",
# classes (pathspec's "[^a]" matches "/": not a name-only pattern), "?", a bare "*",
# negations, escapes.
_EXTRA = st.sampled_from(
    ["*.txt", "!b.txt", "src/", "/a", "**/é", "!.env", "x[!a]y", "a**b", "?b.txt", "*",
     "**/src/a", "conf*/", "!config.d", "src/**", "a/**/b.txt", "\\#x", "[ab]", "!.pem",
     "a?b", "é/", "*.d/"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    parts=st.lists(_COMPONENTS, min_size=1, max_size=4),
    is_dir=st.booleans(),
    extra=st.lists(_EXTRA, max_size=4),
)
def test_the_blocked_hint_never_changes_a_verdict(
    parts: list[str], is_dir: bool, extra: list[str]
) -> None:
    """``Jail.is_blocked`` rules paths out with one regex first, a walk's ``BlockedCheck``
    with a name and a taint per folder; pathspec alone agrees with both, blocked folders
    above or not."""
    patterns = [*SkillsSettings().blocked_paths, *extra]
    with tempfile.TemporaryDirectory() as scratch:
        jail = Jail([scratch], blocked=patterns, write_blocked=patterns[:3])
    text = "/".join(parts) + ("/" if is_dir else "")
    exact = pathspec.GitIgnoreSpec.from_lines(patterns)
    assert jail.is_blocked(parts, "read", is_dir=is_dir) == exact.match_file(text)
    writes = exact.match_file(text) or pathspec.GitIgnoreSpec.from_lines(patterns[:3]).match_file(
        text
    )
    assert jail.is_blocked(parts, "write", is_dir=is_dir) == writes
    folder = "".join(f"{part}/" for part in parts[:-1])
    for access, verdict in (("read", exact.match_file(text)), ("write", writes)):
        check = jail.blocked_check(access)  # type: ignore[arg-type]
        tainted = False
        for part in parts[:-1]:
            tainted = check.taints(tainted, part)
        assert check.is_blocked(folder, parts[-1], is_dir=is_dir, tainted=tainted) == verdict


_SHAPES = ["*.txt", "src/", "/a", "**/é", "x[!a]y", "a**b", "?b.txt", "*", "**/src/a",
           "conf*/", "src/**", "a/**/b.txt", "\\#x", "[ab]", "a?b", "é/", "*.d/", "id_rsa",
           "a/b.txt", "**/a/**/b.txt", "\\*", "*.pem", ".ssh/", ".kube/config"]  # fmt: skip
_PARTS = ["src", "a", "b.txt", "é", "xay", "xby", "conf", "config.d", "x.pem", "id_rsa\n",
          "a\nb", "#x", "*", ".ssh", "config"]  # fmt: skip


@pytest.mark.parametrize("pattern", _SHAPES)
def test_the_walk_check_agrees_with_pathspec_on_every_short_path(pattern: str) -> None:
    """Every path of up to three components from ``_PARTS``, against each pattern shape
    alone (hypothesis above mixes them; this leaves no combination to chance)."""
    patterns = [pattern, "!keep"]
    with tempfile.TemporaryDirectory() as scratch:
        check = Jail([scratch], blocked=patterns).blocked_check("read")
    exact = pathspec.GitIgnoreSpec.from_lines(patterns)
    for length in (1, 2, 3):
        for parts in itertools.product(_PARTS, repeat=length):
            folder = "".join(f"{part}/" for part in parts[:-1])
            tainted = False
            for part in parts[:-1]:
                tainted = check.taints(tainted, part)
            for is_dir in (False, True):
                verdict = exact.match_file(folder + parts[-1] + ("/" if is_dir else ""))
                got = check.is_blocked(folder, parts[-1], is_dir=is_dir, tainted=tainted)
                assert got == verdict, (pattern, parts, is_dir)


def test_the_walk_check_splits_name_patterns_from_path_patterns() -> None:
    """The default patterns but two are matched against a name alone; a class that pathspec
    lets match "/" is not, nor are anchored patterns; a pattern pathspec does not compile
    to a regex leaves every path to pathspec."""
    with tempfile.TemporaryDirectory() as scratch:
        jail = Jail([scratch], blocked=[*SkillsSettings().blocked_paths, "x[!a]y"])
    check = jail.blocked_check("read")
    assert not check.everywhere
    assert check.names.match("server.pem")
    assert check.names.match(".ssh/")
    assert not check.names.match(".ssh")  # a file called .ssh is not the folder pattern
    assert not check.names.match("config")
    assert check.paths.search(".kube/config")
    assert check.paths.search("x/y")  # pathspec's [^a] matches the slash
    assert check.is_blocked("x/", "y", is_dir=False, tainted=False)
    assert check.taints(False, ".env.example")  # .env.* matches it: check below it whole
    assert not check.taints(False, "src")
