"""Every code block of README.md and docs/*.md runs, or is checked, as written.

``_blocks.py`` says how a block is marked and what each language means; ``_run.py`` how a
page is run; ``_match.py`` how expected output is compared. The fast tests check what needs
no process: the blocks are well formed, python compiles, every toml block is a
configuration ``trimcp config check`` accepts, every mcpServers file passes the mcpServers
parser, and the README begins with the set-up commands CI runs. The slow test runs each
page's blocks in order in a folder of its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.docs._blocks import REPO, Block, page_name, pages, problems, read_blocks
from tests.docs._run import PageRun
from trimcp.cli import main as trimcp_main
from trimcp.client import inspect_client_config

#: The README's first block: the set-up commands, verbatim (.ci/run and users rely on them).
SETUP = (
    "python3 -m venv .venv && . .venv/bin/activate\n"
    "python3 -m pip install -e . && trimcp serve --config sys_config.toml\n"
    "python3 -m pip install -e '.[test]' && python3 -m pytest\n"
)
#: The README stays a front page; depth goes to docs/.
README_MAX_LINES = 250

ALL_BLOCKS = [block for page in pages() for block in read_blocks(page)]


def _blocks(*languages: str) -> list[Any]:
    return [
        pytest.param(block, id=block.where)
        for block in ALL_BLOCKS
        if block.language in languages and block.marks.skip is None
    ]


def test_every_block_is_written_to_be_run() -> None:
    found = [problem for block in ALL_BLOCKS for problem in problems(block)]
    assert not found, "\n".join(found)


def test_the_readme_begins_with_the_setup_commands() -> None:
    readme = REPO / "README.md"
    first = read_blocks(readme)[0]
    assert first.text == SETUP
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


def test_the_quickstart_server_is_short() -> None:
    [demo] = [b for b in read_blocks(REPO / "README.md") if b.marks.file == "demo.py"]
    assert len(demo.text.strip().splitlines()) < 20


@pytest.mark.parametrize("block", _blocks("python"))
def test_python_blocks_compile(block: Block) -> None:
    compile(block.text, block.where, "exec")


def _write_files_before(block: Block, folder: Path) -> None:
    """Write the page's ``file`` blocks that come before ``block`` into ``folder``."""
    for earlier in read_blocks(REPO / block.page):
        if earlier.line >= block.line:
            return
        if earlier.marks.file is not None and earlier.marks.skip is None:
            path = folder / earlier.marks.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(earlier.text, encoding="utf-8")


@pytest.mark.parametrize("block", _blocks("toml"))
def test_toml_blocks_are_configurations_trimcp_accepts(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In a folder of its own, beside the files the page wrote before it (a [server] object's
    # module), with no user or project mcpServers file to read.
    _write_files_before(block, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("TRIMCP_CONFIG", raising=False)
    # config check imports a [server] object as serve would, adding its path to sys.path.
    monkeypatch.setattr(sys, "path", list(sys.path))
    path = tmp_path / (block.marks.file or "sys_config.toml")
    path.write_text(block.text, encoding="utf-8")
    try:
        status = trimcp_main(["config", "check", str(path)])
    finally:
        for name, module in list(sys.modules.items()):
            if Path(getattr(module, "__file__", None) or "/").is_relative_to(tmp_path):
                del sys.modules[name]
    out, err = capsys.readouterr()
    if block.marks.invalid:
        assert status == 1, f"{block.where} is marked invalid, but config check accepts it"
        assert "config error in" in err
    else:
        assert status == 0, f"{block.where}: trimcp config check refuses it:\n{err}"
        assert out.startswith("OK: configuration is valid")


@pytest.mark.parametrize("block", _blocks("json"))
def test_json_blocks_parse_and_mcp_servers_files_load(block: Block, tmp_path: Path) -> None:
    value = json.loads(block.text)
    if not (isinstance(value, dict) and {"mcpServers", "servers"} & value.keys()):
        return
    path = tmp_path / (block.marks.file or "mcp.json")
    path.write_text(block.text, encoding="utf-8")
    report = inspect_client_config([path], environ={}, home=tmp_path, cwd=tmp_path)
    if block.marks.invalid:
        assert not report.ok, f"{block.where} is marked invalid, but it loads"
    else:
        assert report.ok, f"{block.where} does not load:\n{report.render()}"


_RUNNABLE = {"python", "console", "bash", "sh"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "page",
    [
        pytest.param(page, id=page_name(page))
        for page in pages()
        if any(b.language in _RUNNABLE and b.marks.skip is None for b in read_blocks(page))
    ],
)
def test_the_page_runs(page: Path, tmp_path: Path) -> None:
    run = PageRun(read_blocks(page), tmp_path)
    run.run()
    assert not run.failures, f"{len(run.failures)} block(s) of {page_name(page)} failed:\n" + (
        "\n\n".join(run.failures)
    )
