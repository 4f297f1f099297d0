"""The docs tests' summary: how many blocks each kind the pages hold, and every skip, with why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.docs._blocks import pages, read_blocks

if TYPE_CHECKING:
    import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a run that included the docs tests, count the blocks and list the skipped ones."""
    reports = [r for reports in terminalreporter.stats.values() for r in reports]
    if not any(str(getattr(r, "nodeid", "")).startswith("tests/docs/") for r in reports):
        return
    blocks = [block for page in pages() for block in read_blocks(page)]
    skipped = [block for block in blocks if block.marks.skip is not None]
    counts: dict[str, int] = {}
    for block in blocks:
        if block.marks.skip is None:
            counts[block.language] = counts.get(block.language, 0) + 1
    terminalreporter.section("docs code blocks")
    shown = ", ".join(f"{language} {n}" for language, n in sorted(counts.items()))
    terminalreporter.write_line(
        f"{len(blocks)} blocks in {len(pages())} pages: {shown} (text blocks are not run); "
        f"{len(skipped)} skipped"
    )
    for block in skipped:
        terminalreporter.write_line(f"  skipped {block.where}: {block.marks.skip}")
