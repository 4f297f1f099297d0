"""Rules between the fields of one server entry, which no single field's check can see.

One way to reach the server (``command`` or ``url``, and a ``transport`` that agrees with
it), the shape of ``command`` (not a whole command line in one string), fields that the
chosen transport does not use, and ``${`` that is not a variable reference. Each rule reads
which fields were *written* (even when a field's own check failed, "both command and url"
is still worth saying) and the *values* that passed their checks.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, cast

from ._errors import ConfigProblem
from ._expand import malformed
from ._fields import EXAMPLE_COMMAND, URL_SCHEMES, FieldChecker, Section, split_words

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._model import Transport

Written = dict[str, tuple[str, object]]
"""Each field given, by canonical name: (the key as written, its value)."""

_STDIO_ONLY = ("args", "env", "env_passthrough", "cwd")


def resolve_transport(
    checker: FieldChecker, written: Written, values: dict[str, object]
) -> Transport | None:
    """Return how the server is reached, or None after recording why the entry cannot say."""
    has_command, has_url = "command" in written, "url" in written
    if has_command and has_url:
        checker.report(
            written["url"][0],
            given=None,
            expected='either "command" (launch a local server) or "url" (reach a running one),'
            " not both",
            fix='remove "url" to launch the command, or remove "command" to connect to the URL',
        )
        return None
    if not (has_command or has_url):
        _no_transport(checker, written)
        return None
    given = cast("Transport | None", values.get("transport"))
    if has_command:
        return _command_transport(checker, written, given)
    return _url_transport(checker, written, values.get("url"), given)


def _no_transport(checker: FieldChecker, written: Written) -> None:
    has = [key for key, _ in written.values()]
    checker.problems.append(
        ConfigProblem(
            source=checker.source,
            server=checker.server,
            detail=(
                'no transport configured: the entry has neither "command" nor "url"'
                + (f" (it has {', '.join(map(json.dumps, has))})" if has else ""),
            ),
            expected='"command" (a program to launch) or "url" (a running server to reach)',
            fix=f"to launch a local server add e.g. {EXAMPLE_COMMAND};"
            ' to connect to a running one add e.g. "url": "https://example.com/mcp"',
        )
    )


def _command_transport(
    checker: FieldChecker, written: Written, given: Transport | None
) -> Transport | None:
    if given in (None, "stdio"):
        return "stdio"
    key, value = written["transport"]
    checker.report(
        key,
        given=checker.describe(value),
        expected='"stdio" (or nothing): a server launched with "command" talks over stdin/stdout',
        fix=f'remove "{key}", or replace "command" with "url" to reach a running server',
    )
    return None


def _url_transport(
    checker: FieldChecker, written: Written, url: object, given: Transport | None
) -> Transport | None:
    if given == "stdio":
        key, value = written["transport"]
        checker.report(
            key,
            given=checker.describe(value),
            expected='"http" or "websocket" for a server reached by "url"',
            fix=f'remove "{key}", or replace "url" with "command" to launch a local server',
        )
        return None
    if not isinstance(url, str):
        return None  # its own problem is already recorded
    implied = URL_SCHEMES.get(url.strip().partition(":")[0].lower())
    if implied is None:
        # The scheme is (part of) a ${VAR}; expand_server checks it once it is known.
        return given or "http"
    if given is None or given == implied:
        return implied
    wanted = "ws:// or wss://" if given == "websocket" else "http:// or https://"
    checker.report(
        written["url"][0],
        given=checker.describe(url),
        expected=f"a {wanted} URL, since the transport is {given}",
        fix=f'correct the URL, or remove "{written["transport"][0]}": the scheme says {implied}',
    )
    return None


def command_rules(
    checker: FieldChecker, written: Written, values: dict[str, object], section: Section
) -> None:
    """Record arguments given twice, and a whole command line written as the program."""
    command = values.get("command")
    if not isinstance(command, tuple):
        return
    program, rest = cast("tuple[str, tuple[str, ...] | None]", command)
    if rest is not None and "args" in written:
        checker.report(
            written["args"][0],
            given=None,
            expected='the arguments once: "command" is already an array holding them',
            fix='move these into the "command" array, or make "command" the program alone',
        )
    if rest is not None or values.get("args") or ("args" in written and "args" not in values):
        return
    words = split_words(program)
    # A path with spaces ("C:\Program Files\...\node.exe") that exists is a program.
    if len(words) < 2 or "${" in program or os.path.exists(program):
        return
    split = f'"command": {json.dumps(words[0])}, "args": {json.dumps(words[1:])}'
    if section != "mcpServers":
        split += f'; or "command": {json.dumps(words)}'
    checker.report(
        written["command"][0],
        given=checker.describe(program),
        expected='the program alone; its arguments go in "args"',
        fix=f"split it: {split}",
    )


def ignored_fields(checker: FieldChecker, written: Written, transport: Transport | None) -> None:
    """Warn about fields the transport does not use (``cwd`` for a URL, ``headers`` for stdio)."""
    if transport is None:
        return
    unused: tuple[str, ...]
    if transport == "stdio":
        unused, used = ("headers", "auth"), "for servers reached by url"
    else:
        unused, used = _STDIO_ONLY, 'for servers launched with "command"'
    if transport == "websocket" and "auth" in written:
        # The WebSocket transport sends headers on the upgrade but has no OAuth flow.
        checker.report(
            written["auth"][0],
            given=None,
            expected=None,
            fix='remove it: "auth" is used for http servers; give a WebSocket server its '
            "token in headers",
            warning=True,
        )
    for canonical in unused:
        if canonical in written:
            checker.report(
                written[canonical][0],
                given=None,
                expected=None,
                fix=f"remove it: it is only used {used}",
                warning=True,
            )


def malformed_references(checker: FieldChecker, values: dict[str, object]) -> None:
    """Warn about each ``${`` that is not a variable reference (and so stays as written)."""
    for field_name, text in _strings_of(values):
        # In env and headers values the fragment may be part of a secret: it is not quoted.
        secret = field_name.startswith(("env.", "headers."))
        for bad in malformed(text):
            what = "a ${ there" if secret else json.dumps(bad)
            checker.report(
                field_name,
                given=None,
                expected="${NAME} or ${NAME:-default}",
                fix=f"{what} is not a variable reference and stays as written;"
                " write $${ for a literal ${",
                warning=True,
            )


def _strings_of(values: dict[str, object]) -> Iterator[tuple[str, str]]:
    command = values.get("command")
    if isinstance(command, tuple):
        program, rest = cast("tuple[str, tuple[str, ...] | None]", command)
        yield "command", program
        yield from ((f"command[{i + 1}]", arg) for i, arg in enumerate(rest or ()))
    for key in ("cwd", "url"):
        value = values.get(key)
        if isinstance(value, str):
            yield key, value
    args = values.get("args")
    if isinstance(args, tuple):
        yield from ((f"args[{i}]", str(arg)) for i, arg in enumerate(args))
    for key in ("env", "headers"):
        mapping = values.get(key)
        if isinstance(mapping, dict):
            yield from ((f"{key}.{name}", str(text)) for name, text in mapping.items())
