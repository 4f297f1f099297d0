"""Turn one file's parsed data into server definitions, collecting every problem.

Three top-level tables hold servers, in any of the formats:

- ``mcpServers`` (Claude Desktop, Claude Code, Cursor, ...): ``command`` is the program as a
  string and its arguments go in ``args``.
- ``servers``: ``command`` may be the whole argv as one array (``["npx", "-y", "pkg"]``), or a
  string with ``args`` as above (VS Code's ``mcp.json`` spelling).
- ``upstreams``: as ``servers``; written ``[upstreams.NAME]`` in a sys_config.toml-style file.
  A file holding ``upstreams`` (or read as the sys_config layer) may have other top-level
  tables, the daemon's own; they are not looked at here.

Each entry is checked by ``_entry``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._entry import (
    ALIASES,
    FIELDS,
    Toggle,
    did_you_mean,
    duplicates,
    ignored,
    parse_entry,
)
from ._errors import ConfigProblem, describe_value, kind_of
from ._fields import EXAMPLE_COMMAND, FieldChecker, Section
from ._model import ServerConfig

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._model import ConfigSource
    from ._syntax import Format

_SECTIONS: tuple[Section, ...] = ("mcpServers", "servers", "upstreams")
_IGNORED_TOP = frozenset({"$schema"})

_FOREIGN_TOP = {"inputs": "VS Code's input prompts; trimcp reads ${NAME} from the environment"}


@dataclass(slots=True)
class ParsedFile:
    """What one file defines, and everything wrong with it (errors and warnings)."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    toggles: dict[str, Toggle] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)


def parse_servers(data: object, source: ConfigSource, *, fmt: Format = "json") -> ParsedFile:
    """Return the servers and toggles ``data`` defines, with every problem found.

    Never raises for bad data: whatever the value, bad parts become problems. Servers with
    an error are left out of the result.

    Args:
        data: a parsed file (``json.loads``, ``tomllib.loads``, ``yaml.safe_load``) or a
            mapping given in code.
        source: named in every problem.
        fmt: the format the data was read from, for wording (TOML has tables, YAML has
            unquoted booleans).
    """
    parsed = ParsedFile()
    for section, entries in _sections(data, source, fmt == "toml", parsed.problems):
        for key in duplicates(entries):
            parsed.problems.append(_twice(source, str(key), f"in {section}"))
        for name, entry in entries.items():
            label = str(name)
            if label in parsed.servers or label in parsed.toggles:
                parsed.problems.append(_twice(source, label, f"in more than one table ({section})"))
                continue
            checker = FieldChecker(source, label, fmt=fmt)
            built = parse_entry(checker, name, entry, section)
            parsed.problems.extend(checker.problems)
            if isinstance(built, ServerConfig):
                parsed.servers[built.name] = built
            elif isinstance(built, Toggle):
                parsed.toggles[built.name] = built
    return parsed


def _sections(
    data: object, source: ConfigSource, toml: bool, problems: list[ConfigProblem]
) -> list[tuple[Section, dict[object, object]]]:
    """Return the server tables in ``data``, recording what is wrong at the top level."""
    if not isinstance(data, dict):
        problems.append(
            ConfigProblem(
                source=source,
                given=describe_value(data, toml=toml),
                expected='an object holding "mcpServers": {"NAME": {...}, ...}',
                fix='write e.g. {"mcpServers": {"everything": {' + EXAMPLE_COMMAND + "}}}",
            )
        )
        return []
    problems.extend(_twice(source, None, f"the top-level key {key!r}") for key in duplicates(data))
    daemon_file = "upstreams" in data or source.layer == "sys_config"
    found: list[tuple[Section, dict[object, object]]] = []
    stray: list[object] = []
    for key, value in data.items():
        section = next((s for s in _SECTIONS if s == key), None)
        if section is not None and isinstance(value, dict):
            found.append((section, value))
        elif section is not None:
            problems.append(
                ConfigProblem(
                    source=source,
                    field=section,
                    given=describe_value(value, toml=toml),
                    expected="an object of server names to server entries",
                    fix=f'write e.g. "{section}": {{"everything": {{{EXAMPLE_COMMAND}}}}}',
                )
            )
        elif key in _FOREIGN_TOP:
            problems.append(ignored(source, None, str(key), _FOREIGN_TOP[str(key)]))
        elif not (key in _IGNORED_TOP or daemon_file):
            stray.append(key)
    problems.extend(_stray_problems(data, stray, source))
    return found


def _stray_problems(
    data: dict[object, object], stray: list[object], source: ConfigSource
) -> Iterator[ConfigProblem]:
    """Explain top-level keys that are not server tables, guessing what was meant."""
    entry_keys = [key for key in stray if key in FIELDS or key in ALIASES]
    if entry_keys:
        yield ConfigProblem(
            source=source,
            field=", ".join(map(str, entry_keys)),
            expected='server entries inside "mcpServers"',
            fix="these look like one server's fields at the top level: wrap them as"
            ' {"mcpServers": {"NAME": {...}}}',
        )
    for key in stray:
        if key in entry_keys:
            continue
        value = data[key]
        if isinstance(value, dict) and ("command" in value or "url" in value):
            fix = (
                'this looks like a server at the top level: move it inside "mcpServers":'
                f' {{"{key}": {{...}}}}'
            )
        else:
            known = {section.lower(): section for section in _SECTIONS}
            fix = did_you_mean(str(key), known) or 'remove it; servers go in "mcpServers"'
        yield ConfigProblem(
            source=source,
            field=str(key),
            given=kind_of(value),
            expected='"mcpServers", "servers" or "upstreams" (an object of server entries)',
            fix=fix,
        )


def _twice(source: ConfigSource, server: str | None, where: str) -> ConfigProblem:
    """Return the problem of a name or key written twice; json would keep the last silently."""
    return ConfigProblem(
        source=source,
        server=server,
        expected="each server name (and each key) once",
        fix=f"written twice {where}; the later one would win: remove or rename one",
    )
