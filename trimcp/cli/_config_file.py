"""A host's JSON configuration file: read strictly, one server entry placed, written back safely.

The file belongs to the host and to the user, so everything in it survives: other servers,
other top-level keys, their order (Python dicts keep it), non-ASCII text as written. What
cannot survive a JSON round trip stops the command before anything is written: a file that
is not valid JSON (comments, trailing commas: VS Code and Gemini CLI accept both, and they
would be lost), a key written twice in one object (only one would be kept). The file is
then left exactly as it is and the message says where the problem is and how to go on.

Writing keeps a copy of the previous file (``<file>.bak``, or a timestamped name when that
exists), goes through a temporary file in the same folder and ``os.replace``, so that the
host never reads a half-written file, keeps the file's permission bits (``~/.claude.json``
holds account data), and writes through a symbolic link to its target rather than over the
link, so that dotfiles kept in a repository stay linked.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["Placement", "backup_path", "place_entry", "read_document", "write_document"]

Change = Literal["added", "replaced", "unchanged"]


@final
@dataclass(frozen=True, slots=True)
class Placement:
    """The file's new content, what happens to the entry, and the entry it replaces."""

    document: dict[str, object]
    change: Change
    previous: object = None

    def refused(self, where: str, name: str) -> ConfigError:
        """The error for replacing ``previous`` without ``--force`` (values as ``***``)."""
        shown = json.dumps(_redacted(self.previous), ensure_ascii=False)
        return ConfigError(
            f'{where} already has a server named "{name}": {shown}. Add --force to replace '
            "it, or choose another name with --name"
        )


def read_document(path: Path) -> dict[str, object] | None:
    """Return the JSON object in ``path``; None if the file does not exist.

    An empty file (or only whitespace) reads as ``{}``.

    Raises:
        ConfigError: the file cannot be read, is not valid JSON (with line and column), has a
            key twice in one object, or holds something other than a JSON object.
    """
    try:
        # Some Windows editors start a file with a BOM; JSON has none, so it is not written back.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; trimcp left it as it is") from exc
    return parse_document(text, str(path))


def parse_document(text: str, where: str) -> dict[str, object]:
    """Return the JSON object ``text`` holds (``where`` names it in messages).

    Raises:
        ConfigError: as ``read_document``.
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ConfigError(_not_json(exc, where)) from exc
    except _DuplicateKey as exc:
        raise ConfigError(
            f"{where} has the key {exc.key!r} twice in one object; JSON readers keep only "
            "one of them, so trimcp does not rewrite the file: remove the copy you do not "
            "want and run the command again"
        ) from exc
    except RecursionError as exc:
        raise ConfigError(f"{where} is nested too deeply to read; trimcp left it as it is") from exc
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where} holds a JSON {_kind(value)}, not an object: a configuration file is one "
            "object ({...}); fix or move the file and run the command again"
        )
    return value


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    document: dict[str, object] = {}
    for key, value in pairs:
        if key in document:
            raise _DuplicateKey(key)
        document[key] = value
    return document


def _not_json(error: json.JSONDecodeError, where: str) -> str:
    at = f"line {error.lineno}, column {error.colno}"
    rest = error.doc[error.pos : error.pos + 2]
    if rest in ("//", "/*"):
        cause = (
            f"it has a comment at {at}: the host may accept comments, but trimcp would "
            "lose them writing the file back"
        )
    else:
        cause = f"{error.msg} at {at}"
    return (
        f"{where} is not valid JSON: {cause}. trimcp left the file as it is: fix it and run "
        "the command again, or add the entry by hand (--print shows it)"
    )


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def place_entry(
    document: Mapping[str, object],
    table: str,
    name: str,
    entry: Mapping[str, object],
    where: str,
) -> Placement:
    """Return ``document`` with ``entry`` as ``document[table][name]``; the input is not changed.

    A new table goes last; a new name goes last in its table; a replaced entry keeps its
    place (``change`` says "replaced": the caller decides whether that is allowed). Every
    other key, at every depth, is kept with its value and order.

    Raises:
        ConfigError: ``document[table]`` is not an object; ``where`` (the file) is named.
    """
    servers = document.get(table, {})
    if not isinstance(servers, dict):
        raise ConfigError(
            f'"{table}" in {where} is a JSON {_kind(servers)}, not an object of servers: '
            "fix it and run the command again"
        )
    existing = servers.get(name)
    if name in servers and existing == entry:
        return Placement(dict(document), "unchanged", existing)
    new_servers = dict(servers)
    new_servers[name] = dict(entry)
    new_document = dict(document)
    new_document[table] = new_servers
    return Placement(new_document, "replaced" if name in servers else "added", existing)


def _redacted(entry: object) -> object:
    """An existing entry as messages show it: ``env`` and ``headers`` values as ``***``."""
    if not isinstance(entry, dict):
        return entry
    shown = dict(entry)
    for key in ("env", "headers"):
        values = shown.get(key)
        if isinstance(values, dict):
            shown[key] = dict.fromkeys(values, "***")
    return shown


def render(document: Mapping[str, object]) -> str:
    """The file's text: 2-space indent, non-ASCII as is, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_document(path: Path, document: Mapping[str, object]) -> Path | None:
    """Write ``document`` to ``path`` (module docstring); return the backup, None for a new file.

    The folder is created when missing.

    Raises:
        ConfigError: the file or its backup cannot be written; the original is unchanged.
    """
    target = path.resolve() if path.is_symlink() else path
    backup: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            backup = backup_path(target)
            shutil.copy2(target, backup)
        _replace(target, render(document))
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc}; the file is unchanged") from exc
    return backup


def backup_path(path: Path, now: float | None = None) -> Path:
    """``<file>.bak``, else ``<file>.<YYYYmmdd-HHMMSS>.bak``, else that with ``-2``, ``-3``..."""
    plain = path.with_name(path.name + ".bak")
    if not plain.exists():
        return plain
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    candidate = path.with_name(f"{path.name}.{stamp}.bak")
    counter = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{stamp}-{counter}.bak")
        counter += 1
    return candidate


def _replace(target: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    replaced = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():
            shutil.copymode(target, temporary)
        else:
            # mkstemp makes the file private (0600); a new file gets the usual mode instead.
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
        replaced = True
    finally:
        if not replaced:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it; put it straight back
    os.umask(mask)
    return mask
