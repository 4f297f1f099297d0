"""The fenced code blocks of README.md and docs/*.md, and the marks that say how to run them.

A block is marked by an HTML comment on the line right before its opening fence (the
comment is invisible on GitHub and in the built site)::

    <!-- test: file demo.py -->
    ```python
    ...
    ```

Marks, separated by ``;``:

``file NAME``
    Write the block to NAME in the page's work folder, for the blocks after it
    (a server that a later shell command runs, a configuration file). A python file is
    compiled, not run; a toml or json file is still validated as below.
``background``
    A console block of one command, or a python block: start it, wait until every port its
    text or its expected output names accepts connections and that output has appeared
    (in order, anything around it), and leave it running until the page is done; then
    SIGTERM its process group, by PID.
``exit N``
    Every command of a console (or bash) block must exit with status N (default 0).
``pytest``
    A python block holding tests: run it with pytest (trio mode on).
``invalid``
    A toml or json block showing a broken file: it must be refused.
``skip: REASON``
    Not run, for what cannot run here (another platform, a proxy's configuration). The
    reason is printed in the test summary; keep these rare.

What a block's language means (anything else must be skipped, with a reason):

``python``
    Run as a script (``python block.py``) in the page's work folder.
``console``
    Lines starting with ``$ `` are commands (a line ending in `` \\`` continues on the
    next); the lines after a command, up to the next ``$ ``, are its expected output
    (``_match.py`` says how loosely they are compared).
``bash`` / ``sh``
    A script; it must exit 0 (or the ``exit`` mark's status). No output is compared.
``toml``
    A ``sys_config.toml`` (or a part of one): ``trimcp config check`` must accept it.
``json``
    Parsed; an ``mcpServers`` (or ``servers``) file must pass the mcpServers parser.
``text``
    Not code: diagrams, synopses, log excerpts. A ``text`` block may not hold ``$ ``
    lines: a command shown is a command run, so it belongs in a console block.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Languages whose blocks the tests run or check, and the one that is shown only.
RUN_LANGUAGES = frozenset({"python", "console", "bash", "sh", "toml", "json"})
SHOWN_LANGUAGES = frozenset({"text"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_MARK = re.compile(r"^\s*<!--\s*test:\s*(?P<marks>.*?)\s*-->\s*$")
_FILE_NAME = re.compile(r"^[\w.-]+(/[\w.-]+)*$")


def pages() -> list[Path]:
    """README.md, then every page of docs/, in name order."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def page_name(page: Path) -> str:
    """The page's path from the repository root, as failures and ids show it."""
    return page.relative_to(REPO).as_posix()


@dataclass(frozen=True, slots=True)
class Marks:
    """What a block's ``<!-- test: ... -->`` comment asks for (module docstring)."""

    file: str | None = None
    background: bool = False
    exit_status: int = 0
    pytest: bool = False
    invalid: bool = False
    skip: str | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: where it is, its language, its text (indent removed), its marks."""

    page: str
    line: int
    language: str
    text: str
    marks: Marks = field(default_factory=Marks)

    @property
    def where(self) -> str:
        """``page:line`` of the opening fence."""
        return f"{self.page}:{self.line}"


def parse_marks(text: str) -> Marks:
    """Read the marks of one ``<!-- test: ... -->`` comment.

    Raises:
        ValueError: an unknown mark, a mark without its argument, or ``skip`` with others.
    """
    if text.startswith("skip:"):
        reason = text.removeprefix("skip:").strip()
        if not reason:
            raise ValueError("skip needs a reason: <!-- test: skip: why it cannot run here -->")
        return Marks(skip=reason)
    marks = Marks()
    for part in (part.strip() for part in text.split(";")):
        word, _, argument = part.partition(" ")
        argument = argument.strip()
        if word == "file" and _FILE_NAME.match(argument):
            marks = dataclasses.replace(marks, file=argument)
        elif word == "exit" and argument.isdigit():
            marks = dataclasses.replace(marks, exit_status=int(argument))
        elif word == "background" and not argument:
            marks = dataclasses.replace(marks, background=True)
        elif word == "pytest" and not argument:
            marks = dataclasses.replace(marks, pytest=True)
        elif word == "invalid" and not argument:
            marks = dataclasses.replace(marks, invalid=True)
        else:
            raise ValueError(
                f"unknown test mark {part!r}: use file NAME, background, exit N, pytest, "
                "invalid, or skip: REASON (alone)"
            )
    return marks


def read_blocks(page: Path) -> list[Block]:
    """Return the fenced blocks of ``page`` in order.

    Raises:
        ValueError: a fence is not closed, a test comment has no block right after it, or
            its marks do not parse; the message names the line.
    """
    name = page_name(page)
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        mark = _MARK.match(lines[index])
        if mark is not None and (index + 1 >= len(lines) or not _FENCE.match(lines[index + 1])):
            raise ValueError(f"{name}:{index + 1}: a test comment must be right before a fence")
        if opening is None:
            index += 1
            continue
        index, block = _read_block(name, lines, index, opening)
        blocks.append(block)
    return blocks


def _read_block(
    name: str, lines: list[str], start: int, opening: re.Match[str]
) -> tuple[int, Block]:
    indent, fence = len(opening["indent"]), opening["fence"]
    language = opening["info"].strip().split(" ")[0].lower()
    body: list[str] = []
    index = start + 1
    while index < len(lines):
        closing = _FENCE.match(lines[index])
        if (
            closing is not None
            and closing["fence"][0] == fence[0]
            and len(closing["fence"]) >= len(fence)
            and not closing["info"].strip()
        ):
            break
        line = lines[index]
        body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
        index += 1
    else:
        raise ValueError(f"{name}:{start + 1}: the code block is never closed")
    marks = Marks()
    if start > 0 and (mark := _MARK.match(lines[start - 1])) is not None:
        try:
            marks = parse_marks(mark["marks"])
        except ValueError as exc:
            raise ValueError(f"{name}:{start}: {exc}") from exc
    text = "\n".join(body) + "\n" if body else ""
    return index + 1, Block(name, start + 1, language, text, marks)


def problems(block: Block) -> list[str]:
    """What is wrong with how ``block`` is written or marked (empty when it can run)."""
    marks, language = block.marks, block.language
    if marks.skip is not None:
        return []
    found: list[str] = []
    if language not in RUN_LANGUAGES | SHOWN_LANGUAGES:
        found.append(
            f"language {language or '(none)'!r}: write python, console, bash, sh, toml, json "
            "or text, or mark the block <!-- test: skip: REASON -->"
        )
    if language == "text" and any(line.startswith("$ ") for line in block.text.splitlines()):
        found.append("a text block shows a command ($ ...): make it a console block")
    if language == "console":
        first = block.text.splitlines()[:1]
        if not first or not first[0].startswith("$ "):
            found.append("a console block must start with a command line ($ ...)")
        elif marks.background and len(console_commands(block.text)) != 1:
            found.append("a background console block holds exactly one command")
    allowed = {
        "file": language not in ("console", "bash", "sh"),
        "background": language in ("console", "python"),
        "exit_status": language in ("console", "bash", "sh"),
        "pytest": language == "python",
        "invalid": language in ("toml", "json"),
    }
    for mark, ok in allowed.items():
        if getattr(marks, mark) not in (None, False, 0) and not ok:
            found.append(f"the mark {mark!r} does not apply to a {language} block")
    return [f"{block.where}: {problem}" for problem in found]


@dataclass(frozen=True, slots=True)
class Command:
    """One ``$ `` command of a console block and the output shown after it."""

    text: str
    expected: tuple[str, ...]


def console_commands(text: str) -> list[Command]:
    """Split a console block into commands (continued lines joined) and expected output."""
    commands: list[Command] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if not lines[index].startswith("$ "):
            index += 1  # output before the first command: problems() reports it
            continue
        command = [lines[index][2:]]
        while command[-1].endswith("\\") and index + 1 < len(lines):
            index += 1
            command.append(lines[index])
        index += 1
        expected: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            expected.append(lines[index])
            index += 1
        commands.append(Command("\n".join(command), tuple(expected)))
    return commands
