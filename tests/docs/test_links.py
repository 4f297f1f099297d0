"""Every relative link of README.md and docs/*.md leads to a file, and to a heading if it names one.

An anchor must be a heading's id both as GitHub makes it (where the README is read) and as
mkdocs makes it (the built site), so that a link works in both. Pages under docs/ link only
within docs/ (mkdocs --strict refuses anything else; name other files of the repository in
code, e.g. ``bench/RESULTS.md``), and every page is in mkdocs.yml's nav.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

import pytest

from tests.docs._blocks import REPO, page_name, pages

if TYPE_CHECKING:
    from pathlib import Path

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_HEADING = re.compile(r"^(#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def _prose_lines(path: Path) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with their numbers."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        opening = _FENCE.match(line)
        if opening is not None:
            marker = opening.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is None:
            lines.append((number, line))
    return lines


def _heading_text(title: str) -> str:
    """The heading as rendered text: links reduced to their text, code and emphasis marks gone."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
    return text.replace("`", "").replace("*", "")


def github_slug(text: str) -> str:
    """GitHub's heading id: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def mkdocs_slug(text: str) -> str:
    """Python-Markdown's toc id (mkdocs' default): ASCII, punctuation dropped, runs joined."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip().lower())


def anchors(path: Path) -> set[str]:
    """The ids of ``path``'s headings that GitHub and mkdocs both give."""
    github: dict[str, int] = {}
    mkdocs: dict[str, int] = {}
    found_github: set[str] = set()
    found_mkdocs: set[str] = set()
    for _, line in _prose_lines(path):
        heading = _HEADING.match(line)
        if heading is None:
            continue
        text = _heading_text(heading["title"])
        for slug, seen, found, joiner in (
            (github_slug(text), github, found_github, "-"),
            (mkdocs_slug(text), mkdocs, found_mkdocs, "_"),
        ):
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(f"{slug}{joiner}{count}" if count else slug)
    return found_github & found_mkdocs


def links(path: Path) -> list[tuple[int, str]]:
    """The relative link targets of ``path``'s prose (not its code), with line numbers."""
    found: list[tuple[int, str]] = []
    for number, line in _prose_lines(path):
        for match in _LINK.finditer(_CODE_SPAN.sub("", line)):
            target = match["target"]
            if not _SCHEME.match(target):
                found.append((number, target))
    return found


@pytest.mark.parametrize("page", [pytest.param(p, id=page_name(p)) for p in pages()])
def test_relative_links_resolve(page: Path) -> None:
    broken: list[str] = []
    for number, target in links(page):
        where = f"{page_name(page)}:{number}: {target}"
        file_part, _, anchor = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        if not destination.exists():
            broken.append(f"{where}: no such file")
            continue
        if page.parent.name == "docs" and not destination.is_relative_to(REPO / "docs"):
            broken.append(f"{where}: a docs page may link only within docs/ (mkdocs)")
        if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{where}: no heading #{anchor} in {page_name(destination)}")
    assert not broken, "\n".join(broken)


def test_every_docs_page_is_in_the_nav() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?(\S+\.md)\s*$", config, re.MULTILINE))
    on_disk = {path.name for path in (REPO / "docs").glob("*.md")}
    assert listed == on_disk
