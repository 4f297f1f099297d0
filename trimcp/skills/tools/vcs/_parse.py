"""Reading git's machine formats into the vcs tools' structured results.

Every format read here separates names with NUL (``-z``, ``%x00``) or a random marker, so a
file name, author or message holding spaces, quotes or newlines comes out exactly as git
stored it (decoded as UTF-8, bad bytes replaced). The shapes are the tools' outputSchemas.
"""

from __future__ import annotations

import datetime
import re
from typing import NotRequired, TypedDict

__all__ = [
    "BRANCH_FIELDS",
    "BlameLine",
    "Branch",
    "Commit",
    "NumStat",
    "Status",
    "StatusEntry",
    "log_format",
    "parse_blame",
    "parse_branches",
    "parse_log",
    "parse_numstat",
    "parse_status",
    "split_patches",
]


class StatusEntry(TypedDict):
    """One changed file of ``git_status``."""

    path: str
    status: str
    orig_path: NotRequired[str]


class Status(TypedDict):
    """``git_status``: the branch and the changed files."""

    repository: str
    branch: str | None
    head: str | None
    upstream: str | None
    ahead: int | None
    behind: int | None
    stash: int
    staged: list[StatusEntry]
    unstaged: list[StatusEntry]
    untracked: list[str]
    conflicted: list[StatusEntry]
    truncated: bool


_CHANGE = {
    "M": "modified",
    "T": "type changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
}

_CONFLICT = {
    "DD": "both deleted",
    "AU": "added by us",
    "UD": "deleted by them",
    "UA": "added by them",
    "DU": "deleted by us",
    "AA": "both added",
    "UU": "both modified",
}


def _entry(path: str, code: str, orig: str | None = None) -> StatusEntry:
    entry = StatusEntry(path=path, status=_CHANGE.get(code, code))
    if orig is not None:
        entry["orig_path"] = orig
    return entry


def parse_status(data: str, repository: str, *, truncated: bool) -> Status:
    """Read ``git status --porcelain=v2 -z --branch --show-stash`` output."""
    status = Status(
        repository=repository,
        branch=None,
        head=None,
        upstream=None,
        ahead=None,
        behind=None,
        stash=0,
        staged=[],
        unstaged=[],
        untracked=[],
        conflicted=[],
        truncated=truncated,
    )
    items = data.split("\0")
    if truncated:
        items = items[:-1]  # the last one may be cut short
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        kind = item[:2]
        if kind == "# ":
            _branch_header(status, item[2:])
        elif kind == "1 ":
            fields = item.split(" ", 8)
            _changes(status, fields[1], fields[8])
        elif kind == "2 " and index < len(items):
            fields = item.split(" ", 9)
            _changes(status, fields[1], fields[9], items[index])
            index += 1  # -z: the original path is the next item
        elif kind == "u ":
            fields = item.split(" ", 10)
            conflict = _CONFLICT.get(fields[1], fields[1])
            status["conflicted"].append(StatusEntry(path=fields[10], status=conflict))
        elif kind == "? ":
            status["untracked"].append(item[2:])
    return status


def _branch_header(status: Status, header: str) -> None:
    key, _, value = header.partition(" ")
    if key == "branch.oid":
        status["head"] = None if value == "(initial)" else value
    elif key == "branch.head":
        status["branch"] = None if value == "(detached)" else value
    elif key == "branch.upstream":
        status["upstream"] = value
    elif key == "branch.ab":
        ahead, _, behind = value.partition(" ")
        status["ahead"], status["behind"] = int(ahead), -int(behind)
    elif key == "stash":
        status["stash"] = int(value)


def _changes(status: Status, codes: str, path: str, orig: str | None = None) -> None:
    staged, unstaged = codes[0], codes[1]
    if staged != ".":
        status["staged"].append(_entry(path, staged, orig if staged in "RC" else None))
    if unstaged != ".":
        status["unstaged"].append(_entry(path, unstaged))


# --- log ---------------------------------------------------------------------------------------


class Commit(TypedDict):
    """One commit of ``git_log``."""

    hash: str
    parents: list[str]
    author: str
    author_email: str
    date: str
    committer: str
    committer_date: str
    refs: list[str]
    subject: str
    body: NotRequired[str]
    files: NotRequired[list[str]]
    patch: NotRequired[str]


# Fields of one commit, NUL-separated; the body is last since only it may hold anything.
_LOG_FIELDS = ("%H", "%P", "%an", "%ae", "%aI", "%cn", "%cI", "%D", "%s", "%b")


def log_format(marker: str) -> str:
    """Return the ``--format`` of commits starting ``<marker>S`` and ending ``<marker>E``."""
    return f"%x00{marker}S%x00" + "%x00".join(_LOG_FIELDS) + f"%x00{marker}E"


def parse_log(data: str, marker: str, *, truncated: bool) -> list[Commit]:
    """Read ``git log --format=log_format(marker)`` output, with ``--name-only -z`` or not."""
    commits: list[Commit] = []
    chunks = data.split(f"\0{marker}S\0")[1:]
    for number, chunk in enumerate(chunks):
        fields_text, ended, names = chunk.partition(f"\0{marker}E")
        if not ended:
            if truncated and number == len(chunks) - 1:
                break  # cut short inside this commit
            continue
        fields = fields_text.split("\0", len(_LOG_FIELDS) - 1)
        if len(fields) != len(_LOG_FIELDS):
            continue
        hash_, parents, author, email, date, committer, cdate, refs, subject, body = fields
        commit = Commit(
            hash=hash_,
            parents=parents.split(),
            author=author,
            author_email=email,
            date=date,
            committer=committer,
            committer_date=cdate,
            refs=[ref for ref in refs.split(", ") if ref],
            subject=subject,
        )
        if body.strip():
            commit["body"] = body.rstrip("\n")
        # --name-only -z puts "\0\n" between the format and the names (git 2.39).
        names = names.removeprefix("\0").removeprefix("\n")
        listed = [name for name in names.split("\0") if name]
        if listed:
            commit["files"] = listed
        commits.append(commit)
    return commits


def split_patches(data: str, marker: str) -> dict[str, str]:
    """Read ``git show --format=<marker>%H -p`` output: each commit's patch by hash."""
    patches: dict[str, str] = {}
    for chunk in data.split(f"\0{marker}")[1:]:
        hash_, _, patch = chunk.partition("\n")
        patches[hash_] = patch.strip("\n")
    return patches


# --- blame -------------------------------------------------------------------------------------


class BlameLine(TypedDict):
    """One line of ``git_blame``."""

    line: int
    hash: str
    author: str
    author_email: str
    date: str
    summary: str
    content: str


def _iso(seconds: str, zone: str) -> str:
    match = re.fullmatch(r"([+-])(\d\d)(\d\d)", zone)
    offset = datetime.timedelta(0)
    if match:
        offset = datetime.timedelta(hours=int(match[2]), minutes=int(match[3]))
        offset = -offset if match[1] == "-" else offset
    moment = datetime.datetime.fromtimestamp(int(seconds), datetime.timezone(offset))
    return moment.isoformat()


_BLAME_HEADER = re.compile(r"([0-9a-f]{40}|[0-9a-f]{64}) \d+ (\d+)(?: \d+)?$")


def parse_blame(data: bytes) -> list[BlameLine]:
    """Read ``git blame --porcelain`` output (commit details come once per commit)."""
    commits: dict[str, dict[str, str]] = {}
    lines: list[BlameLine] = []
    current: dict[str, str] = {}
    hash_ = ""
    final = 0
    for raw in data.split(b"\n"):
        if raw.startswith(b"\t"):
            info = current
            date = ""
            if info.get("author-time", "").isdigit():
                date = _iso(info["author-time"], info.get("author-tz", "+0000"))
            lines.append(
                BlameLine(
                    line=final,
                    hash=hash_,
                    author=info.get("author", ""),
                    author_email=info.get("author-mail", "").strip("<>"),
                    date=date,
                    summary=info.get("summary", ""),
                    content=raw[1:].decode("utf-8", "replace"),
                )
            )
            continue
        text = raw.decode("utf-8", "replace")
        header = _BLAME_HEADER.match(text)
        if header:
            hash_, final = header[1], int(header[2])
            current = commits.setdefault(hash_, {})
        elif text:
            key, _, value = text.partition(" ")
            current[key] = value
    return lines


# --- branches ----------------------------------------------------------------------------------


class Branch(TypedDict):
    """One branch of ``git_branches``."""

    name: str
    current: bool
    hash: str
    upstream: str | None
    ahead: int | None
    behind: int | None
    upstream_gone: bool
    points_to: NotRequired[str]
    date: str
    author: str
    subject: str


#: ``git for-each-ref`` fields, in the order ``parse_branches`` reads them.
BRANCH_FIELDS = (
    "%(HEAD)",
    "%(refname:short)",
    "%(objectname)",
    "%(upstream:short)",
    "%(upstream:track,nobracket)",
    "%(symref:short)",
    "%(committerdate:iso-strict)",
    "%(authorname)",
    "%(subject)",
)


def parse_branches(data: str) -> list[Branch]:
    """Read ``for-each-ref --format`` output: ``BRANCH_FIELDS`` each followed by NUL, then LF."""
    tokens = data.split("\0")
    width = len(BRANCH_FIELDS)
    branches: list[Branch] = []
    for start in range(0, len(tokens) - width + 1, width):
        record = tokens[start : start + width]
        record[0] = record[0].removeprefix("\n")  # the line feed ending the record before
        head, name, hash_, upstream, track, symref, date, author, subject = record
        ahead = re.search(r"ahead (\d+)", track)
        behind = re.search(r"behind (\d+)", track)
        branch = Branch(
            name=name,
            current=head == "*",
            hash=hash_,
            upstream=upstream or None,
            ahead=int(ahead[1]) if ahead else (0 if upstream and track != "gone" else None),
            behind=int(behind[1]) if behind else (0 if upstream and track != "gone" else None),
            upstream_gone=track == "gone",
            date=date,
            author=author,
            subject=subject,
        )
        if symref:
            branch["points_to"] = symref
        branches.append(branch)
    return branches


# --- numstat -----------------------------------------------------------------------------------


class NumStat(TypedDict):
    """One file of ``git diff --numstat -z``."""

    path: str
    added: int | None
    deleted: int | None
    orig_path: NotRequired[str]


def parse_numstat(data: str) -> list[NumStat]:
    """Read ``git diff --numstat -z``: ``a\\td\\tpath\\0`` or ``a\\td\\t\\0old\\0new\\0``."""
    items = data.split("\0")
    stats: list[NumStat] = []
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        added, tab, rest = item.partition("\t")
        deleted, tab2, path = rest.partition("\t")
        if not (tab and tab2):
            continue
        stat = NumStat(
            path=path,
            added=int(added) if added.isdigit() else None,
            deleted=int(deleted) if deleted.isdigit() else None,
        )
        if not path and index + 1 < len(items):
            stat["orig_path"], stat["path"] = items[index], items[index + 1]
            index += 2
        stats.append(stat)
    return stats
