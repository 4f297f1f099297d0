"""The vcs tools against real repositories, compared with what ``git`` itself reports."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from trimcp.protocol import ClientCapabilities

from .conftest import call, skills_client, text_of
from .gitrepo import ODD_NAMES, commit, git, git_bytes, make_project, write

if TYPE_CHECKING:
    from pathlib import Path

    from trimcp.testing import InMemoryClient

VCS_TOOLS = ("git_status", "git_log", "git_diff", "git_show", "git_blame", "git_branches")


async def ok(client: InMemoryClient, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await call(client, tool, **arguments)
    assert result["isError"] is False, text_of(result)
    return result


async def refused(client: InMemoryClient, tool: str, **arguments: Any) -> str:
    result = await call(client, tool, **arguments)
    assert result["isError"] is True, text_of(result)
    return text_of(result)


@pytest.fixture
def project(jail_root: Path) -> dict[str, str]:
    return make_project(jail_root)


def _v1_status(repo: Path) -> dict[str, str]:
    """``git status --porcelain -z``: XY code by path (the new name of a rename)."""
    items = git(repo, "status", "--porcelain", "-z", "--untracked-files=normal").split("\0")
    codes: dict[str, str] = {}
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        if item:
            codes[item[3:]] = item[:2]
            if item[0] in "RC":
                index += 1  # the original name
    return codes


async def test_tools_are_listed_with_truthful_annotations(jail_root: Path) -> None:
    async with skills_client(jail_root, enable=("vcs",)) as client:
        listed: dict[str, Any] = await client.request("tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert sorted(tools) == sorted(VCS_TOOLS)
    for tool in tools.values():
        assert tool["annotations"] == {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }
    assert "outputSchema" in tools["git_log"]
    assert tools["git_log"]["inputSchema"]["properties"]["max_count"]["maximum"] == 500


# --- status ---------------------------------------------------------------------------------


async def test_status_matches_git_status(jail_root: Path, project: dict[str, str]) -> None:
    write(jail_root / "a.txt", "changed\n")  # unstaged
    write(jail_root / "new\nline.txt", "staged change\n")
    git(jail_root, "add", "new\nline.txt")
    git(jail_root, "mv", "ünï cødé.txt", "rénamed.txt")  # staged rename
    (jail_root / 'quo"te.txt').unlink()  # unstaged delete
    write(jail_root / "untracked one.txt", "u\n")
    write(jail_root / "dir\nwith newline" / "f", "u\n")
    async with skills_client(jail_root) as client:
        result = await ok(client, "git_status")
    status = result["structuredContent"]
    expected = _v1_status(jail_root)
    seen: dict[str, str] = {}
    for entry in status["staged"]:
        seen[entry["path"]] = entry["status"][0].upper() + seen.get(entry["path"], "..")[1]
    for entry in status["unstaged"]:
        seen[entry["path"]] = seen.get(entry["path"], "..")[0] + entry["status"][0].upper()
    for path in status["untracked"]:
        seen[path] = "??"
    assert {path: code.replace(".", " ") for path, code in seen.items()} == expected
    renamed = next(entry for entry in status["staged"] if entry["status"] == "renamed")
    assert renamed == {"path": "rénamed.txt", "status": "renamed", "orig_path": "ünï cødé.txt"}
    assert status["branch"] == "main"
    assert status["head"] == project["third"]
    assert status["repository"] == str(jail_root)
    text = text_of(result)
    assert "'new\\nline.txt'" in text  # a name with a line feed is quoted in the text
    assert "ünï cødé.txt -> rénamed.txt" in text


async def test_status_reports_a_conflict_and_the_upstream(jail_root: Path, tmp_path: Path) -> None:
    origin = tmp_path / "outside" / "origin"
    make_project(origin)
    git(jail_root, "clone", "-q", str(origin), "clone")
    clone = jail_root / "clone"
    git(clone, "checkout", "-q", "-b", "side", "HEAD~1")
    write(clone / "a.txt", "side\n")
    git(clone, "commit", "-qam", "side")
    git(clone, "checkout", "-q", "main")
    write(clone / "a.txt", "main\n")
    git(clone, "commit", "-qam", "main")
    with pytest.raises(AssertionError):
        git(clone, "merge", "-q", "side")
    async with skills_client(jail_root) as client:
        result = await ok(client, "git_status", repo="clone")
    status = result["structuredContent"]
    assert status["conflicted"] == [{"path": "a.txt", "status": "both modified"}]
    assert status["upstream"] == "origin/main"
    assert (status["ahead"], status["behind"]) == (1, 0)
    assert str(origin) not in text_of(result)


# --- log and show ---------------------------------------------------------------------------


async def test_log_lists_what_git_log_lists(jail_root: Path, project: dict[str, str]) -> None:
    def hashes(*args: str) -> list[str]:
        return git(jail_root, "log", "--format=%H", *args).split()

    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({}, hashes()),
        ({"max_count": 2}, hashes("-2")),
        ({"revision_range": f"{project['first']}..HEAD"}, hashes(f"{project['first']}..HEAD")),
        ({"revision_range": "HEAD~1"}, hashes("HEAD~1")),
        ({"path": "a.txt"}, hashes("--", "a.txt")),
        ({"path": "src"}, hashes("--", "src")),
        ({"author": "bob"}, [project["second"]]),
        ({"author": "LOVELACE"}, [project["third"], project["first"]]),
        ({"since": "2024-01-02T00:00:00+02:00"}, [project["third"], project["second"]]),
        ({"until": "2024-01-01T23:00:00+02:00"}, [project["first"]]),
    ]
    async with skills_client(jail_root) as client:
        for arguments, expected in cases:
            result = await ok(client, "git_log", **arguments)
            commits = result["structuredContent"]["commits"]
            assert [entry["hash"] for entry in commits] == expected, arguments
    async with skills_client(jail_root) as client:
        result = await ok(client, "git_log", max_count=1)
    entry = result["structuredContent"]["commits"][0]
    assert entry["subject"] == "third"
    assert entry["body"] == "A body line.\nAnother one."
    assert entry["author"] == "Ada Lovelace"
    assert entry["date"] == "2024-01-03T12:00:00+02:00"
    assert entry["parents"] == [project["second"]]
    assert entry["refs"] == ["HEAD -> main"]
    assert project["third"] in text_of(result)
    assert "    A body line." in text_of(result)


async def test_log_patch_matches_git_and_leaves_blocked_files_out(
    jail_root: Path, project: dict[str, str]
) -> None:
    async with skills_client(jail_root) as client:
        result = await ok(client, "git_log", patch=True)
    commits = {entry["hash"]: entry for entry in result["structuredContent"]["commits"]}
    assert list(commits) == [project["third"], project["second"], project["first"]]
    first = git(jail_root, "-c", "core.quotePath=false", "show", "--format=", project["first"])
    first = first.strip("\n")
    assert commits[project["first"]]["patch"] == first
    assert "'new\\nline.txt'" not in commits[project["first"]]["patch"]  # git quotes it
    text = text_of(result)
    assert "hunter2" not in text
    assert "correct horse" not in text
    assert "hunter2" not in str(result["structuredContent"])
    assert result["structuredContent"]["left_out"] == [".env"]
    assert "blocked_paths" in text
    assert "+five" in commits[project["third"]]["patch"]
    assert "rename from sp ace.txt" in commits[project["third"]]["patch"]


async def test_show_a_commit_and_files_at_a_revision(
    jail_root: Path, project: dict[str, str]
) -> None:
    async with skills_client(jail_root) as client:
        head = text_of(await ok(client, "git_show"))
        second = text_of(await ok(client, "git_show", revision=project["second"][:10]))
        old = text_of(await ok(client, "git_show", revision="HEAD~2", path="a.txt"))
        odd = text_of(await ok(client, "git_show", revision="HEAD~2", path="new\nline.txt"))
        moved = text_of(await ok(client, "git_show", revision="HEAD~1", path="sp ace.txt"))
        folder = text_of(await ok(client, "git_show", path="."))
        gone = await refused(client, "git_show", revision="HEAD~1", path="moved space.txt")
        secret = await refused(client, "git_show", revision="HEAD~1", path=".env")
    assert f"commit {project['third']} (HEAD -> main)" in head
    assert "Author: Ada Lovelace <ada@example.com>" in head
    assert "+five" in head
    assert "hunter2" not in head + second
    assert "correct horse" not in head
    assert "Author: Bob Ünïcode <bob@example.com>" in second
    assert "+print('m')" in second
    assert old.endswith("(14 bytes):\none\ntwo\nthree")
    assert odd.endswith("new\nline.txt")
    assert moved.endswith("sp ace.txt")
    for name in ("a.txt", "src/", "moved space.txt", "ünï cødé.txt", "'new\\nline.txt'"):
        assert f"\n  {name}" in folder
    assert "did not exist at that revision" in gone
    assert "blocked" in secret


# --- diff -----------------------------------------------------------------------------------


async def test_diff_matches_git_diff(jail_root: Path, project: dict[str, str]) -> None:
    write(jail_root / "a.txt", "zero\none\nTWO\nthree\nfour\nfive\nsix\n")
    write(jail_root / "ünï cødé.txt", "changed\n")
    git(jail_root, "add", "ünï cødé.txt")
    write(jail_root / "src" / "m.py", "print('changed')\n")

    def body(text: str) -> str:
        lines = text.split("\n")[2:]  # after the repository and title lines
        return "\n".join(line for line in lines if not line.startswith("left out"))

    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({}, []),
        ({"staged": True}, ["--cached"]),
        ({"base": "HEAD~1"}, [project["second"]]),
        ({"base": "HEAD~2", "target": "HEAD~1"}, [project["first"], project["second"]]),
        ({"base": "HEAD~1", "staged": True}, ["--cached", project["second"]]),
        ({"context_lines": 0}, ["-U0"]),
        ({"path": "src"}, ["--", "src"]),
    ]
    async with skills_client(jail_root) as client:
        for arguments, args in cases:
            result = text_of(await ok(client, "git_diff", **arguments))
            paths = [] if "--" in args else ["--"]
            expected = git(
                jail_root, "-c", "core.quotePath=false", "diff", *args, *paths, ":(exclude).env"
            ).rstrip("\n")
            assert body(result) == expected, arguments
            assert "hunter2" not in result
        stat = await ok(client, "git_diff", base="HEAD~2", stat=True)
        empty = await ok(client, "git_diff", base="HEAD", target="HEAD")
    numstat = git(jail_root, "diff", "--numstat", project["first"]).splitlines()
    assert "5\t1\ta.txt" in numstat
    assert "  +5 -1  a.txt" in text_of(stat)
    assert "  +1 -0  src/m.py" in text_of(stat)
    assert "sp ace.txt -> moved space.txt" in text_of(stat)
    assert text_of(empty).endswith("no differences")


async def test_diff_leaves_blocked_files_out(jail_root: Path, project: dict[str, str]) -> None:
    async with skills_client(jail_root) as client:
        result = text_of(await ok(client, "git_diff", base="HEAD~2", target="HEAD"))
        refused_target = await refused(client, "git_diff", target="HEAD")
    assert "hunter2" not in result
    assert "correct horse" not in result
    assert "left out (blocked by the [skills] blocked_paths setting): .env" in result
    assert "+five" in result
    assert "target needs base" in refused_target


# --- blame ----------------------------------------------------------------------------------


def _line_porcelain(repo: Path, *args: str) -> list[tuple[str, int, str, str]]:
    lines = git_bytes(repo, "blame", "--line-porcelain", *args).split(b"\n")
    found: list[tuple[str, int, str, str]] = []
    header: list[str] = []
    author = ""
    for raw in lines:
        if raw.startswith(b"\t"):
            found.append((header[0], int(header[2]), author, raw[1:].decode()))
        elif raw.startswith(b"author "):
            author = raw[7:].decode()
        elif raw and len(raw.split(b" ")[0]) == 40 and not raw.startswith(b"author"):
            header = raw.decode().split(" ")
    return found


async def test_blame_matches_git_blame(jail_root: Path, project: dict[str, str]) -> None:
    write(jail_root / "a.txt", "one\nTWO\nthree\nfour\nfive\nuncommitted\n")
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"path": "a.txt"}, ["--", "a.txt"]),
        ({"path": "a.txt", "start_line": 2, "end_line": 4}, ["-L2,4", "--", "a.txt"]),
        ({"path": "a.txt", "start_line": 5}, ["-L5,", "--", "a.txt"]),
        ({"path": "a.txt", "revision": "HEAD~1"}, [project["second"], "--", "a.txt"]),
        ({"path": "moved space.txt"}, ["--", "moved space.txt"]),
        ({"path": "new\nline.txt", "revision": "HEAD"}, ["HEAD", "--", "new\nline.txt"]),
    ]
    async with skills_client(jail_root) as client:
        for arguments, args in cases:
            result = await ok(client, "git_blame", **arguments)
            lines = result["structuredContent"]["lines"]
            got = [(line["hash"], line["line"], line["author"], line["content"]) for line in lines]
            assert got == _line_porcelain(jail_root, *args), arguments
        result = await ok(client, "git_blame", path="a.txt")
        beyond = await refused(client, "git_blame", path="a.txt", start_line=50)
        backwards = await refused(client, "git_blame", path="a.txt", start_line=3, end_line=2)
    first = result["structuredContent"]["lines"][0]
    assert first["author"] == "Ada Lovelace"
    assert first["date"] == "2024-01-01T12:00:00+02:00"
    assert first["hash"] == project["first"]
    assert first["summary"] == "first"
    assert "Not Committed Yet" in text_of(result)
    assert "fewer lines" in beyond
    assert "before start_line" in backwards


# --- branches -------------------------------------------------------------------------------


async def test_branches_match_git(jail_root: Path, tmp_path: Path) -> None:
    origin = tmp_path / "outside" / "origin"
    make_project(origin)
    git(origin, "branch", "feature", "HEAD~1")
    git(jail_root, "clone", "-q", str(origin), "clone")
    clone = jail_root / "clone"
    git(clone, "branch", "--track", "feature", "origin/feature")
    git(clone, "branch", "plain", "HEAD~2")
    git(clone, "checkout", "-q", "feature")
    write(clone / "f", "f\n")
    git(clone, "add", "f")
    commit(clone, "ahead", day=9)
    git(clone, "branch", "-q", "--track", "behind", "origin/main")
    git(clone, "update-ref", "refs/heads/behind", "HEAD~2")
    async with skills_client(jail_root) as client:
        local = await ok(client, "git_branches", repo="clone")
        remote = await ok(client, "git_branches", repo="clone", remote=True)
        git(clone, "checkout", "-q", "--detach", "HEAD~1")
        detached = await ok(client, "git_branches", repo="clone")
    branches = {branch["name"]: branch for branch in local["structuredContent"]["branches"]}
    assert (
        list(branches)
        == git(clone, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()
    )
    assert [name for name, branch in branches.items() if branch["current"]] == ["feature"]
    assert (branches["feature"]["ahead"], branches["feature"]["behind"]) == (1, 0)
    assert branches["feature"]["upstream"] == "origin/feature"
    assert branches["plain"]["upstream"] is None
    assert branches["main"]["hash"] == git(clone, "rev-parse", "main").strip()
    assert branches["main"]["subject"] == "third"
    counts = git(clone, "rev-list", "--left-right", "--count", "behind...origin/main").split()
    assert (branches["behind"]["ahead"], branches["behind"]["behind"]) == tuple(map(int, counts))
    assert "* feature" in text_of(local)
    names = [branch["name"] for branch in remote["structuredContent"]["branches"]]
    assert names == ["origin/HEAD", "origin/feature", "origin/main"]
    assert detached["structuredContent"]["detached_head"] == git(clone, "rev-parse", "HEAD").strip()


# --- refusals -------------------------------------------------------------------------------


INJECTIONS: list[tuple[str, dict[str, Any]]] = [
    ("git_log", {"revision_range": "--output={marker}"}),
    ("git_log", {"revision_range": "HEAD..--output={marker}"}),
    ("git_log", {"revision_range": "-p"}),
    ("git_log", {"author": "--output={marker}"}),
    ("git_log", {"since": "--output={marker}"}),
    ("git_log", {"until": "-c core.pager=touch {marker}"}),
    ("git_diff", {"base": "--output={marker}"}),
    ("git_diff", {"base": "HEAD", "target": "--upload-pack=touch {marker}"}),
    ("git_show", {"revision": "--output={marker}"}),
    ("git_show", {"revision": "-c"}),
    ("git_blame", {"path": "a.txt", "revision": "--output={marker}"}),
]


@pytest.mark.parametrize(("tool", "arguments"), INJECTIONS)
async def test_option_injection_is_refused(
    jail_root: Path, project: dict[str, str], tool: str, arguments: dict[str, Any]
) -> None:
    marker = jail_root.parent / "outside" / "marker"
    filled = {key: value.format(marker=marker) for key, value in arguments.items()}
    async with skills_client(jail_root) as client:
        message = await refused(client, tool, **filled)
    assert "git option injection refused" in message
    assert not marker.exists()


@pytest.mark.parametrize("tool", ["git_log", "git_diff", "git_blame"])
async def test_option_like_paths_are_only_paths(
    jail_root: Path, project: dict[str, str], tool: str
) -> None:
    marker = jail_root.parent / "outside" / "marker"
    async with skills_client(jail_root) as client:
        for path in (f"--output={marker}", "-p", "-dash.txt"):
            await call(client, tool, path=path)
        blamed = await ok(client, "git_blame", path="-dash.txt")
        logged = await ok(client, "git_log", path="-dash.txt")
    assert not marker.exists()
    assert not [name for name in os.listdir(jail_root) if name.startswith("--output")]
    assert blamed["structuredContent"]["lines"][0]["content"] == "-dash.txt"
    assert len(logged["structuredContent"]["commits"]) == 1


async def test_a_ref_named_like_an_option(jail_root: Path, project: dict[str, str]) -> None:
    marker = jail_root.parent / "outside" / "marker"
    git(jail_root, "update-ref", f"refs/heads/--output={marker}", project["first"])
    async with skills_client(jail_root) as client:
        branches = await ok(client, "git_branches")
        full = await ok(client, "git_log", revision_range=f"refs/heads/--output={marker}")
        short = await refused(client, "git_log", revision_range=f"--output={marker}")
    names = [branch["name"] for branch in branches["structuredContent"]["branches"]]
    assert f"--output={marker}" in names
    assert [entry["hash"] for entry in full["structuredContent"]["commits"]] == [project["first"]]
    assert "refs/heads/<name>" in short
    assert not marker.exists()


async def test_paths_outside_the_jail_or_the_repository_are_refused(
    jail_root: Path, tmp_path: Path
) -> None:
    make_project(jail_root / "one")
    make_project(jail_root / "two")
    write(tmp_path / "outside" / "secret.txt", "s\n")
    (jail_root / "one" / "link").symlink_to(tmp_path / "outside")
    async with skills_client(jail_root) as client:
        outside = await refused(client, "git_log", repo="one", path="../../outside/secret.txt")
        absolute = await refused(client, "git_blame", repo="one", path=str(tmp_path / "outside"))
        linked = await refused(client, "git_blame", repo="one", path="link/secret.txt")
        other = await refused(client, "git_log", repo="one", path="../two/a.txt")
        repo = await refused(client, "git_status", repo="../outside")
        shown_other = await refused(client, "git_show", repo="one", path="../two/a.txt")
    for message in (outside, absolute, linked, repo):
        assert "outside the allowed folders" in message
    assert "outside the repository" in other
    assert "outside the repository" in shown_other
    assert "secret" not in linked.replace("link/secret.txt", "")


async def test_the_servers_git_environment_does_not_redirect_git(
    jail_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: dict[str, str]
) -> None:
    other = tmp_path / "outside" / "other"
    make_project(other)
    write(other / "extra", "x\n")
    git(other, "add", "extra")
    commit(other, "other's commit", day=20)
    marker = tmp_path / "outside" / "marker"
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.pager'='touch {marker}'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {marker}")
    monkeypatch.setenv("GIT_PAGER", f"touch {marker}")
    write(jail_root / "a.txt", "changed\n")
    async with skills_client(jail_root) as client:
        log = await ok(client, "git_log")
        status = await ok(client, "git_status")
        diff = await ok(client, "git_diff")
    hashes = [entry["hash"] for entry in log["structuredContent"]["commits"]]
    assert hashes == [project["third"], project["second"], project["first"]]
    assert status["structuredContent"]["unstaged"] == [{"path": "a.txt", "status": "modified"}]
    assert "+changed" in text_of(diff)
    assert not marker.exists()


async def test_a_repository_above_the_jail_is_not_used(tmp_path: Path) -> None:
    make_project(tmp_path / "repo")
    jail = tmp_path / "repo" / "src"
    async with skills_client(jail) as client:
        for tool in VCS_TOOLS:
            arguments = {"path": "m.py"} if tool == "git_blame" else {}
            message = await refused(client, tool, **arguments)
            assert "not in a git repository inside the allowed folders" in message
            assert "above" in message


async def test_a_repository_reaching_outside_is_refused(jail_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_project(outside / "real")
    # A .git file pointing at an outside git folder.
    write(jail_root / "pointer" / ".git", f"gitdir: {outside / 'real' / '.git'}\n")
    # A linked worktree of an outside repository.
    git(outside / "real", "worktree", "add", "-q", str(jail_root / "worktree"))
    # A working tree set outside by core.worktree.
    make_project(jail_root / "moved")
    git(jail_root / "moved", "config", "core.worktree", str(outside / "real"))
    # Objects borrowed from outside.
    git(jail_root, "clone", "-q", "--shared", str(outside / "real"), "borrowing")
    # A bare repository inside the jail.
    git(jail_root, "init", "-q", "--bare", "bare.git")
    async with skills_client(jail_root) as client:
        pointer = await refused(client, "git_log", repo="pointer")
        worktree = await refused(client, "git_status", repo="worktree")
        moved = await refused(client, "git_status", repo="moved")
        borrowing = await refused(client, "git_log", repo="borrowing")
        bare = await refused(client, "git_log", repo="bare.git")
    assert "git folder outside the allowed folders" in pointer
    assert "git folder outside the allowed folders" in worktree
    assert "working tree outside the allowed folders" in moved
    assert "borrows objects" in borrowing
    assert "bare" in bare
    for message in (pointer, worktree, moved, borrowing, bare):
        assert str(outside) not in message


async def test_a_linked_worktree_inside_the_jail_is_used(jail_root: Path) -> None:
    hashes = make_project(jail_root / "main")
    git(jail_root / "main", "worktree", "add", "-q", "-b", "wt", str(jail_root / "wt"), "HEAD~1")
    async with skills_client(jail_root) as client:
        result = await ok(client, "git_log", repo="wt")
    assert result["structuredContent"]["commits"][0]["hash"] == hashes["second"]


async def test_no_hook_filter_or_other_program_ever_runs(jail_root: Path, tmp_path: Path) -> None:
    hashes = make_project(jail_root)
    markers = tmp_path / "outside" / "markers"
    markers.mkdir()
    script = write(tmp_path / "outside" / "mark", f'#!/bin/sh\ntouch "{markers}/$1"\ncat\n')
    script.chmod(0o755)
    gpg = write(tmp_path / "outside" / "gpg", f"#!/bin/sh\ntouch {markers}/gpg\n")
    gpg.chmod(0o755)  # gpg.program is run without a shell: no arguments
    write(jail_root / ".gitattributes", "* filter=evil diff=evil\n")
    git(jail_root, "add", ".gitattributes")
    commit(jail_root, "attributes", day=5)
    git(jail_root, "tag", "-a", "-m", "signed?", "v1")
    # A commit carrying a (fake) signature: showing it could run gpg.program.
    signed = (
        f"tree {git(jail_root, 'rev-parse', 'HEAD^{tree}').strip()}\n"
        f"parent {git(jail_root, 'rev-parse', 'HEAD').strip()}\n"
        "author Ada <ada@example.com> 1700000000 +0000\n"
        "committer Ada <ada@example.com> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    write(tmp_path / "outside" / "signed", signed)
    signed_hash = git(jail_root, "hash-object", "-t", "commit", "-w", "../outside/signed").strip()
    git(jail_root, "update-ref", "refs/heads/main", signed_hash)
    # Installed after the test's own git commands, which would run them.
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc"):
        write(jail_root / ".git" / "hooks" / hook, f"#!/bin/sh\ntouch {markers}/hook-{hook}\n")
        (jail_root / ".git" / "hooks" / hook).chmod(0o755)
    settings = {
        "core.pager": f"{script} pager",
        "pager.log": f"{script} pager-log",
        "diff.external": f"{script} external",
        "diff.evil.command": f"{script} command",
        "diff.evil.textconv": f"{script} textconv",
        "filter.evil.clean": f"{script} clean",
        "filter.evil.smudge": f"{script} smudge",
        "filter.evil.process": f"{script} process",
        "filter.evil.required": "true",
        "core.fsmonitor": f"{script} fsmonitor",
        "core.hooksPath": str(jail_root / ".git" / "hooks"),
        "log.showSignature": "true",
        "gpg.program": str(gpg),
        "status.submoduleSummary": "true",
        "core.sshCommand": f"{script} ssh",
        "credential.helper": f"!{script} credential",
    }
    with (jail_root / ".git" / "config").open("a", encoding="utf-8") as config:
        for key, value in settings.items():  # one write instead of sixteen git config runs
            section, _, name = key.rpartition(".")
            head, _, sub = section.partition(".")
            config.write(f'[{head} "{sub}"]\n' if sub else f"[{head}]\n")
            config.write(f'\t{name} = "{value}"\n')
    assert git(jail_root, "config", "filter.evil.clean") == f"{script} clean\n"
    # Same size, new time: git must read a.txt again, which would run the clean filter.
    write(jail_root / "a.txt", "one\nTWO\nthree\nfour\nfivE\n")
    write(jail_root / "src" / "m.py", "print('M')\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("git_status", {}),
        ("git_log", {"patch": True}),
        ("git_log", {"path": "a.txt"}),
        ("git_diff", {}),
        ("git_diff", {"staged": True}),
        ("git_diff", {"base": hashes["first"]}),
        ("git_diff", {"stat": True, "base": "v1"}),
        ("git_show", {}),
        ("git_show", {"revision": "v1", "path": "a.txt"}),
        ("git_blame", {"path": "a.txt"}),
        ("git_blame", {"path": "a.txt", "revision": "HEAD~1"}),
        ("git_branches", {}),
    ]
    async with skills_client(jail_root) as client:
        for tool, arguments in calls:
            result = await ok(client, tool, **arguments)
            assert "pager" not in text_of(result) or tool == "git_show"
    assert sorted(path.name for path in markers.iterdir()) == []


async def test_a_slow_git_is_killed_at_the_timeout(
    jail_root: Path, project: dict[str, str], autojump_clock: Any
) -> None:
    # git status opens .git/info/exclude; as a FIFO nobody writes to, that open never ends.
    fifo = jail_root / ".git" / "info" / "exclude"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    async with skills_client(jail_root, git_timeout=5.0) as client:
        message = await refused(client, "git_status")
    assert "did not finish within the 5 s allowed" in message
    assert "git_timeout" in message
    # git was killed: nobody has the FIFO open for reading any more.
    with pytest.raises(OSError, match="No such device or address"):
        os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)


async def test_output_is_capped_and_says_so(jail_root: Path) -> None:
    make_project(jail_root)
    write(jail_root / "big.txt", "".join(f"line {number}\n" for number in range(5000)))
    git(jail_root, "add", "big.txt")
    commit(jail_root, "big", day=7)
    for number in range(12):
        commit(jail_root, f"empty {number} " + "x" * 200, day=8)
    async with skills_client(jail_root, max_result_bytes=2048) as client:
        log = await ok(client, "git_log", max_count=12)
        show = await ok(client, "git_show", revision="HEAD~12")
        blame = await ok(client, "git_blame", path="big.txt")
        file = await ok(client, "git_show", path="big.txt")
    for result in (log, show, blame, file):
        text = text_of(result)
        assert len(text.encode()) < 2048 + 300
        assert "[output cut at 2048 bytes (max_result_bytes)" in text
    assert log["structuredContent"]["truncated"] is True
    assert 0 < len(log["structuredContent"]["commits"]) < 12
    assert blame["structuredContent"]["truncated"] is True


async def test_git_errors_are_clear_and_leak_no_outside_path(
    jail_root: Path, tmp_path: Path
) -> None:
    empty = jail_root / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    make_project(jail_root / "broken")
    bad = write(tmp_path / "outside" / "bad.cfg", "[[[ not a config\n")
    git(jail_root / "broken", "config", "include.path", str(bad))
    (jail_root / "plain").mkdir()
    async with skills_client(jail_root) as client:
        no_commits = await refused(client, "git_log", repo="empty")
        status = await ok(client, "git_status", repo="empty")
        broken = await refused(client, "git_log", repo="broken")
        plain = await refused(client, "git_status", repo="plain")
        unknown = await refused(client, "git_show", repo="empty", revision="nope")
        a_file = await refused(client, "git_status", repo="broken/a.txt")
    assert "no commits yet" in no_commits
    assert "no commits yet" in text_of(status)
    assert str(tmp_path / "outside") not in broken
    assert "a path outside the allowed folders" in broken
    assert "not in a git repository inside the allowed folders" in plain
    assert "names no commit" in unknown
    assert "not a folder" in a_file


async def test_odd_names_round_trip(jail_root: Path, project: dict[str, str]) -> None:
    async with skills_client(jail_root) as client:
        for name in ODD_NAMES:
            if name == "sp ace.txt":
                continue  # renamed by the third commit
            blame = await ok(client, "git_blame", path=name)
            assert blame["structuredContent"]["path"] == name
            lines = blame["structuredContent"]["lines"]
            assert "\n".join(line["content"] for line in lines) == name
            log = await ok(client, "git_log", path=name, patch=True)
            assert [entry["hash"] for entry in log["structuredContent"]["commits"]] == [
                project["first"]
            ]
            assert name in log["structuredContent"]["commits"][0]["files"]


async def test_a_merge_is_shown_against_its_first_parent_without_blocked_files(
    jail_root: Path, project: dict[str, str]
) -> None:
    git(jail_root, "checkout", "-q", "-b", "side", project["second"])
    write(jail_root / ".env", "SECRET=from the side branch\n")
    write(jail_root / "side.txt", "side\n")
    git(jail_root, "add", ".")
    commit(jail_root, "side work", day=4)
    git(jail_root, "checkout", "-q", "main")
    git(jail_root, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge side", "side")
    async with skills_client(jail_root) as client:
        shown_merge = text_of(await ok(client, "git_show"))
        logged = await ok(client, "git_log", patch=True, max_count=2)
    assert "Merge: " in shown_merge
    assert "+side" in shown_merge
    assert "from the side branch" not in shown_merge
    assert "from the side branch" not in text_of(logged)
    assert logged["structuredContent"]["left_out"] == [".env"]


async def test_a_folder_inside_the_repository_finds_it(
    jail_root: Path, project: dict[str, str]
) -> None:
    write(jail_root / "src" / "m.py", "print('changed')\n")
    async with skills_client(jail_root) as client:
        status = await ok(client, "git_status", repo="src")
        blame = await ok(client, "git_blame", repo="src", path="src/m.py")
        log = await ok(client, "git_log", repo="src", path="src")
    assert status["structuredContent"]["repository"] == str(jail_root)
    assert status["structuredContent"]["unstaged"] == [{"path": "src/m.py", "status": "modified"}]
    assert blame["structuredContent"]["path"] == "src/m.py"
    assert [entry["hash"] for entry in log["structuredContent"]["commits"]] == [project["second"]]


async def test_client_roots_narrowing_the_jail_below_a_repository(
    jail_root: Path, project: dict[str, str]
) -> None:
    async def roots(params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": (jail_root / "src").as_uri(), "name": "src"}]}

    capabilities = ClientCapabilities(roots=True)
    async with skills_client(
        jail_root, capabilities=capabilities, handlers={"roots/list": roots}
    ) as client:
        message = await refused(client, "git_log")
        inside = await refused(client, "git_status", repo=str(jail_root))
    assert "not in a git repository inside the allowed folders" in message
    assert "outside the allowed folders" in inside
