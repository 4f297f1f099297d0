"""Building real git repositories for the vcs tests, with ``git`` itself."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

AUTHORS = {"ada": ("Ada Lovelace", "ada@example.com"), "bob": ("Bob Ünïcode", "bob@example.com")}


def git_env(**extra: str) -> dict[str, str]:
    """The test's own git environment: no GIT_* of the caller, no user or system config."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env |= {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": AUTHORS["ada"][0],
        "GIT_AUTHOR_EMAIL": AUTHORS["ada"][1],
        "GIT_COMMITTER_NAME": AUTHORS["ada"][0],
        "GIT_COMMITTER_EMAIL": AUTHORS["ada"][1],
        "LC_ALL": "C",
    }
    return env | extra


def git(repo: Path, *args: str, **extra: str) -> str:
    """Run git in ``repo`` and return its output (bad UTF-8 replaced)."""
    return git_bytes(repo, *args, **extra).decode("utf-8", "replace")


def git_bytes(repo: Path, *args: str, **extra: str) -> bytes:
    """Run git in ``repo`` and return its output."""
    command = ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args]
    done = subprocess.run(command, cwd=repo, env=git_env(**extra), capture_output=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"git {args} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def commit(repo: Path, message: str, *, day: int, author: str = "ada") -> str:
    """Commit what is staged on 2024-01-<day> by ``author``; return the hash."""
    name, email = AUTHORS[author]
    date = f"2024-01-{day:02d}T12:00:00+02:00"
    git(
        repo,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        message,
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, making its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


#: Names that need care: spaces, non-ASCII, a line feed, a quote, a leading dash.
ODD_NAMES = ("sp ace.txt", "ünï cødé.txt", "new\nline.txt", 'quo"te.txt', "-dash.txt")


def make_project(repo: Path) -> dict[str, str]:
    """A repository with three commits, odd names and a blocked ``.env``; return the hashes."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    write(repo / "a.txt", "one\ntwo\nthree\n")
    for name in ODD_NAMES:
        write(repo / name, f"{name}\n")
    git(repo, "add", ".")
    first = commit(repo, "first", day=1)
    write(repo / "a.txt", "one\nTWO\nthree\nfour\n")
    write(repo / ".env", "SECRET=hunter2\n")
    write(repo / "src" / "m.py", "print('m')\n")
    git(repo, "add", ".")
    second = commit(repo, "second: bob's change", day=2, author="bob")
    git(repo, "mv", "sp ace.txt", "moved space.txt")
    write(repo / "a.txt", "one\nTWO\nthree\nfour\nfive\n")
    write(repo / ".env", "SECRET=correct horse\n")
    git(repo, "add", ".")
    third = commit(repo, "third\n\nA body line.\nAnother one.", day=3)
    return {"first": first, "second": second, "third": third}
