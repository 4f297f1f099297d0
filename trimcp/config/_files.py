"""Read a configuration file and the files it includes, merged in order.

A file may name others in a top-level ``include = ["a.toml", ...]``. They are merged after
the including file, in the order listed, so an include overrides what included it; each
included file's own includes are merged right after it (depth first). Relative paths start
at the including file's folder. A file that includes itself, directly or through others, is
an error naming the chain. The same file reached twice without a cycle is read twice.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ._merge import Origins, merge_table
from ._problem import Problem, config_error
from ._toml_text import describe

INCLUDE_KEY = "include"

# tomllib puts the position only into its message, e.g. "Invalid value (at line 3, column 9)"
# or "... (at end of document)"; Python 3.14 adds attributes, 3.11 does not.
_POSITION = re.compile(
    r"^(?P<what>.*) \(at (?:line (?P<line>\d+), column (?P<column>\d+)|end of document)\)$"
)
_TOML_SPEC = "https://toml.io/en/v1.0.0"


@dataclass(slots=True)
class MergedFiles:
    """The merged tables of a file and its includes.

    Attributes:
        data: the merged top-level table, without ``include`` keys.
        origins: which file wrote each key.
        files: every file read, in merge order.
    """

    data: dict[str, object]
    origins: Origins
    files: list[str] = field(default_factory=list)


def read_config_files(root: Path, *, chosen_by: str) -> MergedFiles:
    """Read ``root`` and, recursively, its includes, and merge them.

    Args:
        root: the first file to read.
        chosen_by: how ``root`` was chosen, for the error when it cannot be read,
            e.g. "named by TRIMCP_CONFIG".

    Raises:
        ConfigError: a file is missing, unreadable, not UTF-8, or not valid TOML; an
            ``include`` is not an array of strings; the includes form a cycle.
    """
    root = absolute_path(root)
    merged = MergedFiles(data={}, origins=Origins(str(root)))
    table = _parse(root, _read_root(root, chosen_by))
    _merge_with_includes(root, table, (), merged)
    return merged


def _merge_with_includes(
    path: Path, table: dict[str, object], chain: tuple[Path, ...], merged: MergedFiles
) -> None:
    includes = _pop_includes(path, table)
    merge_table(merged.data, table, merged.origins, str(path))
    merged.files.append(str(path))
    chain = (*chain, path)
    for written in includes:
        target = absolute_path(path.parent / written)
        _refuse_cycle(path, written, target, chain)
        text = _read_include(target, path, written)
        _merge_with_includes(target, _parse(target, text), chain, merged)


def absolute_path(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` made absolute against the current directory and normalised.

    Lexically, like ``os.path.abspath``: messages then say /etc/trimcp/base.toml rather than
    /etc/trimcp/conf.d/../base.toml, and the file read is the one the message names.
    """
    return Path(os.path.abspath(path))


def _pop_includes(path: Path, table: dict[str, object]) -> list[str]:
    includes = table.pop(INCLUDE_KEY, [])
    if isinstance(includes, list) and all(isinstance(item, str) and item for item in includes):
        return [str(item) for item in includes]
    raise config_error(
        Problem(
            file=str(path),
            key=INCLUDE_KEY,
            given=describe(includes),
            expected="an array of non-empty file paths, relative to this file's folder",
            fix='write e.g.  include = ["local.toml"]  at the top, before any [table]',
        )
    )


def _refuse_cycle(path: Path, written: str, target: Path, chain: tuple[Path, ...]) -> None:
    # resolve() so that symlinks and "a/../b" spellings of one file count as the same file.
    resolved = [known.resolve() for known in chain]
    target_resolved = target.resolve()
    if target_resolved not in resolved:
        return
    start = resolved.index(target_resolved)
    cycle = [str(known) for known in chain[start:]] + [str(target)]
    raise config_error(
        Problem(
            file=str(path),
            key=INCLUDE_KEY,
            given=describe(written),
            expected="a file that is not already being read (includes may not form a cycle)",
            fix="remove one of the includes in the cycle shown above",
            detail=(
                "include cycle:",
                *(f"  {'-> ' if i else ''}{f}" for i, f in enumerate(cycle)),
            ),
        )
    )


def _read_root(path: Path, chosen_by: str) -> str:
    try:
        return _read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise config_error(
            Problem(
                file=str(path),
                detail=(f"cannot read the file: {_reason(exc)}",),
                fix=f"the file was {chosen_by}; check the path and the file's permissions",
            )
        ) from exc


def _read_include(target: Path, including: Path, written: str) -> str:
    try:
        return _read_text(target)
    except (OSError, UnicodeDecodeError) as exc:
        raise config_error(
            Problem(
                file=str(including),
                key=INCLUDE_KEY,
                given=describe(written),
                expected="a readable UTF-8 TOML file (relative to this file's folder)",
                fix=f"cannot read {target}: {_reason(exc)}; correct the path or create it",
            )
        ) from exc


def _read_text(path: Path) -> str:
    # Decoded here, not by tomllib.load, so that a syntax error can quote the bad line.
    return path.read_bytes().decode("utf-8")


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"it is not UTF-8 text (byte {exc.start})"
    return exc.strerror or str(exc)


def _parse(path: Path, text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise config_error(_syntax_problem(path, text, str(exc))) from exc


def _syntax_problem(path: Path, text: str, message: str) -> Problem:
    match = _POSITION.match(message)
    if match is None:
        return Problem(file=str(path), detail=(message,), fix=f"correct the TOML ({_TOML_SPEC})")
    what = match["what"]
    if match["line"] is None:
        where = "at the end of the file"
        excerpt: tuple[str, ...] = ()
    else:
        line, column = int(match["line"]), int(match["column"])
        where = f"line {line}, column {column}"
        excerpt = _excerpt(text, line, column)
    return Problem(
        file=str(path),
        detail=(f"{where}: {what}", *excerpt),
        fix=f"correct the TOML syntax there; strings need quotes (see {_TOML_SPEC})",
    )


def _excerpt(text: str, line: int, column: int) -> tuple[str, ...]:
    # tomllib counts lines by "\n" alone; str.splitlines() would also split on \f and others.
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ()
    gutter = f"{line} | "
    return (
        gutter + lines[line - 1].rstrip("\r"),
        " " * (len(gutter) - 2) + "| " + " " * (column - 1) + "^",
    )
