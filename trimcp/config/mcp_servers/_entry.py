"""Check one server entry and build its ServerConfig (or Toggle), collecting every problem.

The fields' canonical names are snake_case; the aliases below let a config written for
another host load (camelCase spellings, ``type``, ``disabled``, ``serverUrl``/``httpUrl``),
and keys only other hosts use are ignored with a warning. Each field's type and value is
checked by ``_fields``; the rules between fields (one transport, the command's shape)
by ``_rules``. An entry with no ``command`` or ``url`` and only ``enabled`` /
``disabled`` / ``auto_connect`` is a :class:`Toggle` of a server defined in an earlier file.

Server names are ``[A-Za-z0-9_-]+`` without ``__``, because tools are exposed as
``mcp__<server>__<tool>``, a name the LLM APIs must accept.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast, final

from ._auth_parse import parse_auth
from ._errors import ConfigProblem, describe_value, kind_of
from ._fields import EXAMPLE_COMMAND, FieldChecker, Rejected, Section, split_words
from ._model import ServerConfig
from ._rules import command_rules, ignored_fields, malformed_references, resolve_transport
from ._syntax import JsonObject

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._model import ConfigSource, Transport

FIELDS = (
    "command", "args", "env", "env_passthrough", "cwd", "url", "headers", "transport",
    "enabled", "disabled", "auto_connect", "startup_timeout", "request_timeout",
    "reset_timeout_on_progress", "max_request_timeout", "always_allow", "auth",
)  # fmt: skip

ALIASES = {
    "type": "transport",
    "autoConnect": "auto_connect",
    "envPassthrough": "env_passthrough",
    "startupTimeout": "startup_timeout",
    "requestTimeout": "request_timeout",
    "resetTimeoutOnProgress": "reset_timeout_on_progress",
    "maxRequestTimeout": "max_request_timeout",
    "serverUrl": "url",  # Windsurf
    "httpUrl": "url",  # Gemini CLI
    "alwaysAllow": "always_allow",  # Cline, Roo Code
    "autoApprove": "always_allow",  # Cline's older spelling, Windsurf
}

_SYNONYMS = {
    "environment": "env", "argv": "args", "arguments": "args", "cmd": "command",
    "workingdirectory": "cwd", "working_directory": "cwd", "endpoint": "url", "uri": "url",
}  # fmt: skip

_SAME = "other MCP hosts use it; trimcp has no such setting"

_FOREIGN = {
    "timeout": "trimcp's timeouts are request_timeout and startup_timeout, in seconds",
    "disabledTools": "tool permissions are rules on the host, not part of a server entry",
    "includeTools": "tool permissions are rules on the host, not part of a server entry",
    "excludeTools": "tool permissions are rules on the host, not part of a server entry",
    "trust": "tool permissions are rules on the host, not part of a server entry",
    "envFile": "trimcp reads no env files: put the variables in env or env_passthrough",
    "oauth": 'trimcp reads "auth" instead: "auth": "oauth"',
    "description": _SAME,
    "icon": _SAME,
}

_TOGGLES = frozenset({"enabled", "disabled", "auto_connect"})

_NAME = re.compile(r"[A-Za-z0-9_-]+")


@final
@dataclass(frozen=True, slots=True)
class Toggle:
    """An entry that only switches ``enabled`` / ``auto_connect`` of an earlier definition."""

    name: str
    enabled: bool | None
    auto_connect: bool | None
    source: ConfigSource


def parse_entry(
    checker: FieldChecker, name: object, entry: object, section: Section
) -> ServerConfig | Toggle | None:
    """Return the definition (or toggle) ``entry`` makes; None when it has an error.

    Every problem, errors and warnings, is recorded on ``checker``.
    """
    _check_name(checker, name)
    if not isinstance(entry, dict):
        _not_an_object(checker, entry)
        return None
    for key in duplicates(entry):
        checker.report(
            str(key), given=None, expected="each field once", fix="remove one of the two"
        )
    written = _canonical_keys(checker, entry)
    values: dict[str, object] = {}
    for canonical, (key, value) in written.items():
        try:
            values[canonical] = _check_field(checker, canonical, key, value, section)
        except Rejected:
            continue
    if not ("command" in written or "url" in written) and written and written.keys() <= _TOGGLES:
        return _toggle(checker, values)
    way = resolve_transport(checker, written, values)
    command_rules(checker, written, values, section)
    ignored_fields(checker, written, way)
    malformed_references(checker, values)
    if way is None:
        return None
    return _build(checker, values, way)


def _check_name(checker: FieldChecker, name: object) -> None:
    if isinstance(name, str) and _NAME.fullmatch(name) and "__" not in name:
        return
    text = str(name)
    suggestion = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_-]+", "_", text)).strip("_") or "server"
    checker.report(
        None,
        given=describe_value(name, toml=checker.toml),
        expected="a server name of letters, digits, - and _, without __ (tools are named"
        " mcp__<server>__<tool>)",
        fix=f'rename it, e.g. "{suggestion}"',
    )


def _not_an_object(checker: FieldChecker, entry: object) -> None:
    if isinstance(entry, str) and entry.strip():
        words = split_words(entry)
        fix = f"write {json.dumps({'command': words[0], 'args': words[1:]})}" if words else ""
    else:
        fix = "write {" + EXAMPLE_COMMAND + '} or {"url": "https://example.com/mcp"}'
    checker.report(
        None,
        given=checker.describe(entry),
        expected='an object with "command" (a program to launch) or "url" (a server to reach)',
        fix=fix or "write {" + EXAMPLE_COMMAND + "}",
    )


def _canonical_keys(
    checker: FieldChecker, entry: dict[object, object]
) -> dict[str, tuple[str, object]]:
    """Map each field's canonical name to (the key as written, its value)."""
    written: dict[str, tuple[str, object]] = {}
    for raw_key, value in entry.items():
        key = str(raw_key)
        canonical = ALIASES.get(key, key)
        if key in _FOREIGN:
            checker.problems.append(ignored(checker.source, checker.server, key, _FOREIGN[key]))
        elif canonical not in FIELDS:
            _unknown_field(checker, key, value)
        elif canonical in written:
            first = written[canonical][0]
            checker.report(
                key,
                given=None,
                expected=f'"{canonical}" given once',
                fix=f'"{first}" and "{key}" mean the same: keep one',
            )
        else:
            written[canonical] = (key, value)
    return written


def _unknown_field(checker: FieldChecker, key: str, value: object) -> None:
    known = {name.lower(): name for name in (*FIELDS, *ALIASES)}
    fix = did_you_mean(key, known)
    if fix is None and key.lower() in _SYNONYMS:
        fix = f'did you mean "{_SYNONYMS[key.lower()]}"?'
    if fix is None and key.isupper() and isinstance(value, str):
        fix = f'an environment variable? Put it in "env": {{"{key}": "..."}}'
    checker.report(
        key,
        given=kind_of(value, toml=checker.toml),
        expected="a known field: " + ", ".join(FIELDS),
        fix=fix or "remove it or correct its spelling",
    )


def _check_field(  # noqa: PLR0911 - one branch per kind of field
    checker: FieldChecker, canonical: str, key: str, value: object, section: Section
) -> object:
    if canonical == "command":
        return _command(checker, key, value, section)
    if canonical in ("args", "env_passthrough", "always_allow"):
        return checker.strings(key, value, *_ARRAYS[canonical])
    if canonical in ("env", "headers"):
        return checker.string_map(key, value, headers=canonical == "headers")
    if canonical == "cwd":
        return checker.text(key, value, "a string: the folder to start the server in")
    if canonical == "url":
        return checker.url(key, value)
    if canonical == "transport":
        return checker.transport(key, value)
    if canonical == "auth":
        return parse_auth(checker, key, value)
    if canonical in ("startup_timeout", "request_timeout", "max_request_timeout"):
        return checker.seconds(key, value, nullable=canonical == "max_request_timeout")
    return checker.boolean(key, value)


_ARRAYS = {
    "args": ("an array of strings", '["-y", "@modelcontextprotocol/server-everything"]'),
    "env_passthrough": ("an array of environment variable names", '["HOME", "AWS_PROFILE"]'),
    "always_allow": ("an array of this server's tool names", '["read_file", "search"]'),
}


def _command(
    checker: FieldChecker, key: str, value: object, section: Section
) -> tuple[str, tuple[str, ...] | None]:
    """Return the program and, for the one-array form, the arguments that followed it."""
    if not isinstance(value, list):
        expected = 'a string: the program to launch, e.g. "npx" (its arguments go in "args")'
        return checker.text(key, value, expected).strip(), None
    strings = all(isinstance(item, str) for item in value)
    if section != "mcpServers":
        if value and strings and str(value[0]).strip():
            return str(value[0]), tuple(str(item) for item in value[1:])
        expected = (
            'the program and its arguments as one array of strings, e.g. ["npx", "-y", "pkg"]'
        )
        raise checker.reject(
            key, value, expected, "the first item is the program: it must be a non-empty string"
        )
    if strings and value:
        rest = json.dumps(value[1:])
        fix = (
            f'move the arguments into "args": "command": {json.dumps(value[0])}, "args": {rest};'
            ' or use the "servers" form, where "command" is one array'
        )
    else:
        fix = 'write the program as a string and its arguments in "args": ' + EXAMPLE_COMMAND
    raise checker.reject(
        key, value, 'a string in "mcpServers": the program alone; its arguments go in "args"', fix
    )


def _toggle(checker: FieldChecker, values: dict[str, object]) -> Toggle | None:
    enabled = _enabled(checker, values)
    auto_connect = values.get("auto_connect")
    if checker.failed():
        return None
    return Toggle(
        checker.server,
        enabled if isinstance(enabled, bool) else None,
        auto_connect if isinstance(auto_connect, bool) else None,
        checker.source,
    )


def _enabled(checker: FieldChecker, values: dict[str, object]) -> bool | None:
    enabled, disabled = values.get("enabled"), values.get("disabled")
    if isinstance(enabled, bool) and isinstance(disabled, bool) and enabled == disabled:
        checker.report(
            "disabled",
            given=checker.describe(disabled),
            expected=f"the opposite of enabled ({json.dumps(enabled)})",
            fix='keep "enabled" and remove "disabled"',
        )
        return None
    if isinstance(disabled, bool):
        return not disabled
    return enabled if isinstance(enabled, bool) else None


def _build(
    checker: FieldChecker, values: dict[str, object], transport: Transport
) -> ServerConfig | None:
    enabled = _enabled(checker, values)
    if checker.failed():
        return None
    # Every value below passed its field's check, which fixes its type.
    command = values.get("command", (None, None))
    program, rest = cast("tuple[str | None, tuple[str, ...] | None]", command)
    args = rest if rest is not None else cast("tuple[str, ...]", values.get("args", ()))
    passed_on = {key: values[key] for key in _PASSED_ON if key in values}
    return ServerConfig(
        name=checker.server,
        transport=transport,
        command=program,
        args=args,
        enabled=True if enabled is None else enabled,
        source=checker.source,
        **cast("dict[str, Any]", passed_on),
    )


_PASSED_ON = (
    "env", "env_passthrough", "cwd", "url", "headers", "auto_connect", "startup_timeout",
    "request_timeout", "reset_timeout_on_progress", "max_request_timeout", "always_allow",
    "auth",
)  # fmt: skip


def duplicates(table: dict[object, object]) -> tuple[str, ...]:
    """Return the keys written twice in a JSON object (other formats refuse or merge them)."""
    return table.duplicates if isinstance(table, JsonObject) else ()


def ignored(source: ConfigSource, server: str | None, key: str, why: str) -> ConfigProblem:
    """Return the warning for a key other hosts use and trimcp does not."""
    return ConfigProblem(
        source=source,
        server=server,
        field=key,
        expected=None,
        fix=f"trimcp ignores it ({why}); remove it to silence this warning",
        severity="warning",
    )


def did_you_mean(key: str, known: Mapping[str, str]) -> str | None:
    """Return 'did you mean "x"?' for the closest of ``known`` (lower-cased -> as spelled)."""
    close = difflib.get_close_matches(key.lower(), list(known), n=1)
    return f'did you mean "{known[close[0]]}"?' if close else None
