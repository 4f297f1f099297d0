"""``${VAR}`` references in server definitions, expanded at connect time.

The rules, for ``command``, ``args``, ``env`` values, ``cwd``, ``url``, ``headers`` values
and the strings of ``auth`` (never keys or names):

- ``${NAME}`` becomes the variable's value. ``${env:NAME}`` (VS Code's and Cursor's
  spelling) means the same.
- ``${NAME:-default}`` becomes ``default`` when NAME is unset *or empty*, as in a POSIX
  shell. The default is literal text: it may not contain ``}`` and is not expanded itself.
- ``$${`` writes a literal ``${``, so ``$${NAME}`` stays ``${NAME}``. Every other ``$`` is
  literal: ``$NAME`` is not expanded and ``pa$$word`` stays as written, because env values
  are often secrets that happen to contain dollars.
- A ``${`` that does not form a reference (``${}``, ``${1X}``, ``${A-b}``, no closing
  brace) is left as written; loading warns about it.
- NAME is ``[A-Za-z_][A-Za-z0-9_]*``. Values come only from the mapping passed in (the
  host's environment), not from the server's own ``env``.

After expansion, a ``cwd`` starting with ``~`` gets the home folder (``HOME``, else
``USERPROFILE``, from the same mapping), and a relative ``cwd`` is taken from the folder of
the file that defined the server, so a project's ``"cwd": "tools/server"`` works wherever
trimcp is started.

An unset variable without a default is not silently blanked: :func:`expand_server` raises
ConfigError naming it (loading only warns, since the environment at connect time may differ).
Everything here is a pure function of its arguments.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, final
from urllib.parse import urlsplit

from ._auth import auth_strings, expand_auth
from ._errors import ConfigProblem, Severity, config_error, describe_value

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from ._model import ServerConfig

_TOKEN = re.compile(r"\$\$\{|\$\{(?P<body>[^}]*)(?P<close>\})?")
_BODY = re.compile(r"(?:env:)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>.*))?", re.DOTALL)

_SCHEMES = {"stdio": (), "http": ("http", "https"), "websocket": ("ws", "wss")}
_WANTED = {"stdio": "no", "http": "an http:// or https://", "websocket": "a ws:// or wss://"}


@final
@dataclass(frozen=True, slots=True)
class Reference:
    """One ``${...}`` in a string: the variable's name, and its default if one was given."""

    name: str
    default: str | None


def expand(text: str, environ: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """Return ``text`` with references replaced, and the unset variables that had no default.

    An unset variable without a default becomes the empty string in the returned text.
    """
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        reference = _reference(match)
        if reference is None:
            return "${" if match.group(0) == "$${" else match.group(0)
        value = environ.get(reference.name)
        if reference.default is not None and not value:
            return reference.default
        if value is None:
            missing.append(reference.name)
            return ""
        return value

    return _TOKEN.sub(replace, text), tuple(dict.fromkeys(missing))


def references(text: str) -> tuple[Reference, ...]:
    """Return every well-formed reference in ``text``, in order."""
    found = (_reference(match) for match in _TOKEN.finditer(text))
    return tuple(reference for reference in found if reference is not None)


def malformed(text: str) -> tuple[str, ...]:
    """Return each ``${...`` in ``text`` that is not a reference and so stays as written."""
    return tuple(
        match.group(0)
        for match in _TOKEN.finditer(text)
        if match.group(0) != "$${" and _reference(match) is None
    )


def expandable_fields(server: ServerConfig) -> Iterator[tuple[str, str]]:
    """Yield ``(field, raw text)`` for every string that is expanded, e.g. ``("args[1]", ..)``."""
    if server.command is not None:
        yield "command", server.command
    for index, arg in enumerate(server.args):
        yield f"args[{index}]", arg
    for key, value in server.env.items():
        yield f"env.{key}", value
    if server.cwd is not None:
        yield "cwd", server.cwd
    if server.url is not None:
        yield "url", server.url
    for key, value in server.headers.items():
        yield f"headers.{key}", value
    yield from auth_strings(server.auth)


def expand_server(server: ServerConfig, environ: Mapping[str, str]) -> ServerConfig:
    """Return a copy of ``server`` with every reference expanded from ``environ``.

    Call it when connecting, with the host's environment (``os.environ``); keep the raw
    definition for comparing on reload.

    Raises:
        ConfigError: a variable without a default is unset (every one is named), or the
            expanded ``url`` does not suit the server's transport.
    """
    missing: list[tuple[str, str]] = []

    def one(field: str, text: str) -> str:
        value, unset = expand(text, environ)
        missing.extend((field, name) for name in unset)
        return value

    def optional(field: str, text: str | None) -> str | None:
        return None if text is None else one(field, text)

    expanded = dataclasses.replace(
        server,
        command=optional("command", server.command),
        args=tuple(one(f"args[{i}]", arg) for i, arg in enumerate(server.args)),
        env={key: one(f"env.{key}", value) for key, value in server.env.items()},
        cwd=_resolve_cwd(optional("cwd", server.cwd), server, environ),
        url=optional("url", server.url),
        headers={key: one(f"headers.{key}", value) for key, value in server.headers.items()},
        auth=expand_auth(server.auth, one),
    )
    problems = [unset_problem(server, field, name, "error") for field, name in missing]
    problems.extend(_url_problems(server, expanded))
    if problems:
        raise config_error(problems)
    return expanded


def unset_problem(
    server: ServerConfig, field: str, name: str, severity: Severity = "warning"
) -> ConfigProblem:
    """Describe the unset variable ``name`` referenced in ``field`` of ``server``."""
    return ConfigProblem(
        source=server.source,
        server=server.name,
        field=field,
        expected=f"the environment variable {name} to be set (it is not set now)",
        fix=f"set {name} in the environment trimcp starts from (e.g. export {name}=...),"
        f" or give a default: ${{{name}:-value}}",
        severity=severity,
    )


def _resolve_cwd(cwd: str | None, server: ServerConfig, environ: Mapping[str, str]) -> str | None:
    if cwd is None:
        return None
    home = environ.get("HOME") or environ.get("USERPROFILE")
    if home and (cwd == "~" or cwd.startswith(("~/", "~\\"))):
        cwd = home + cwd[1:]
    if server.source.path is not None and not os.path.isabs(cwd):
        cwd = os.path.normpath(os.path.join(os.path.dirname(server.source.path), cwd))
    return cwd


def _url_problems(raw: ServerConfig, expanded: ServerConfig) -> Iterator[ConfigProblem]:
    if expanded.url is None or raw.url == expanded.url:
        return
    schemes = _SCHEMES[expanded.transport]
    try:
        parts = urlsplit(expanded.url)
        scheme, host = parts.scheme.lower(), parts.hostname
    except ValueError:
        scheme, host = "", None
    if scheme in schemes and host:
        return
    other = "websocket" if expanded.transport == "http" else "http"
    # The expanded URL itself is not quoted: variables often carry tokens.
    yield ConfigProblem(
        source=raw.source,
        server=raw.name,
        field="url",
        given=describe_value(raw.url),
        detail=(
            f"after expansion the scheme is {scheme or '(none)'!r} and the host"
            f" {host or '(none)'!r}",
        ),
        expected=f"{_WANTED[expanded.transport]} URL with a host, for the {expanded.transport}"
        " transport",
        fix=f'correct the variable\'s value, or set "transport": "{other}" if the URL is right',
    )


def _reference(match: re.Match[str]) -> Reference | None:
    body, close = match.group("body"), match.group("close")
    if body is None or close is None:
        return None
    parts = _BODY.fullmatch(body)
    if parts is None:
        return None
    return Reference(parts.group("name"), parts.group("default"))
