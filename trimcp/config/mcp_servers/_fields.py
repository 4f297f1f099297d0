"""Check one field of a server entry: its type, its value, and a fix that fits the mistake.

Each check returns the converted value or raises :class:`Rejected` after recording a
:class:`ConfigProblem`; the entry parser (``_parse``) catches it per field, so every
bad field of every server is reported in one go. Fixes are built from what was given: a
string where an array belongs is shown split into the array, ``"true"`` in quotes is shown
without them.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from typing import TYPE_CHECKING, Literal, final
from urllib.parse import urlsplit

from ._errors import ConfigProblem, describe_value, kind_of

if TYPE_CHECKING:
    from ._model import ConfigSource, Transport
    from ._syntax import Format

Section = Literal["mcpServers", "servers", "upstreams"]

TRANSPORT_SPELLINGS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "https": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "http",
    "websocket": "websocket",
    "ws": "websocket",
    "wss": "websocket",
}
"""Every accepted ``transport``/``type`` value, lower-cased, and what it means here. "sse"
(other hosts' name for the 2024-11-05 HTTP+SSE transport) is HTTP: the HTTP transport
falls back to it for servers that answer the old way."""

URL_SCHEMES: dict[str, Transport] = {
    "http": "http",
    "https": "http",
    "ws": "websocket",
    "wss": "websocket",
}

_ENV_NAME = re.compile(r"[^=\x00]+")
_USERINFO = re.compile(r"//[^/@]*@")
# RFC 9110 section 5.6.2, "token".
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")

_SECONDS = "a number of seconds greater than 0"

EXAMPLE_COMMAND = '"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]'
"""An entry's launch fields, as error messages suggest them."""


class Rejected(Exception):
    """A field's problem has been recorded; the field has no value."""


@final
class FieldChecker:
    """Checks the fields of one server entry, recording a problem for each bad one."""

    __slots__ = ("fmt", "problems", "server", "source")

    def __init__(self, source: ConfigSource, server: str, *, fmt: Format) -> None:
        self.source = source
        self.server = server
        self.fmt = fmt
        self.problems: list[ConfigProblem] = []

    @property
    def toml(self) -> bool:
        """True when values are described in TOML's words ("a table")."""
        return self.fmt == "toml"

    def report(
        self,
        field: str | None,
        *,
        given: str | None,
        expected: str | None,
        fix: str,
        warning: bool = False,
    ) -> None:
        """Record a problem about ``field`` of this server."""
        self.problems.append(
            ConfigProblem(
                source=self.source,
                server=self.server,
                field=field,
                given=given,
                expected=expected,
                fix=fix,
                severity="warning" if warning else "error",
            )
        )

    def failed(self) -> bool:
        """Return True when an error (not just a warning) has been recorded."""
        return any(problem.severity == "error" for problem in self.problems)

    def reject(self, field: str, value: object, expected: str, fix: str) -> Rejected:
        """Record a problem showing ``value``, and return the exception to raise."""
        self.report(field, given=self.describe(value), expected=expected, fix=fix)
        return Rejected(field)

    def describe(self, value: object) -> str:
        """Describe a value in the words of this file's format."""
        return describe_value(value, toml=self.toml)

    def text(self, field: str, value: object, expected: str) -> str:
        """Return a non-empty string."""
        if isinstance(value, str) and value.strip():
            return value
        raise self.reject(field, value, expected, _quote_fix(value, "a string"))

    def strings(self, field: str, value: object, expected: str, example: str) -> tuple[str, ...]:
        """Return an array of strings; a lone string gets a fix showing it split."""
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        if isinstance(value, str):
            fix = f"write it as an array: {json.dumps(split_words(value))}"
        elif isinstance(value, list):
            bad = next(i for i, item in enumerate(value) if not isinstance(item, str))
            fix = f"item {bad} is {kind_of(value[bad], toml=self.toml)}: put it in double quotes"
        else:
            fix = f"write e.g. {example}"
        raise self.reject(field, value, expected, fix)

    def string_map(self, field: str, value: object, *, headers: bool) -> dict[str, str]:
        """Return an object of names to strings: ``env`` or ``headers``.

        Values are never quoted in problems, since they are often secrets: a problem names
        the field (``env.API_KEY``) and the kind of value, and a fix shows ``...`` for it.
        """
        what = "header names" if headers else "variable names"
        example = '{"Authorization": "Bearer ${TOKEN}"}' if headers else '{"API_KEY": "${API_KEY}"}'
        expected = f"an object of {what} to string values, e.g. {example}"
        if not isinstance(value, dict):
            self.report(
                field,
                given=kind_of(value, toml=self.toml),
                expected=expected,
                fix=_map_fix(value, example),
            )
            raise Rejected(field)
        result: dict[str, str] = {}
        failed = False
        for key, item in value.items():
            try:
                result[str(key)] = self._map_item(field, key, item, headers=headers)
            except Rejected:
                failed = True
        if failed:
            raise Rejected(field)
        return result

    def _map_item(self, field: str, key: object, item: object, *, headers: bool) -> str:
        name_ok = isinstance(key, str) and (_HEADER_NAME if headers else _ENV_NAME).fullmatch(key)
        if not name_ok:
            if headers:
                expected = "a header name (letters, digits and !#$%&'*+-.^_`|~)"
                fix = "rename it: header names have no spaces or colons"
            else:
                expected, fix = "a variable name (not empty, no '=')", "rename it"
            raise self.reject(f"{field} (a name)", key, expected, fix)
        where = f"{field}.{key}"
        if isinstance(item, str):
            if headers and ("\r" in item or "\n" in item):
                self.report(
                    where, given=None, expected="a value on one line", fix="remove the line break"
                )
                raise Rejected(where)
            return item
        if item is None:
            fix = 'write "" for an empty value, or remove the entry'
            if not headers:
                fix += (
                    "; to pass the variable from trimcp's environment, list it in env_passthrough"
                )
        elif isinstance(item, list | dict):
            fix = "write a string: these values cannot be arrays or objects"
        else:
            fix = "put it in double quotes"
            if isinstance(item, bool) and self.fmt == "yaml":
                fix += " (YAML reads unquoted yes, no, on and off as true and false)"
        # The kind, not the value: a number may be a PIN or an account key as well.
        self.report(where, given=kind_of(item, toml=self.toml), expected="a string", fix=fix)
        raise Rejected(where)

    def boolean(self, field: str, value: object) -> bool:
        """Return true or false; ``"true"`` in quotes gets a fix without them."""
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            fix = f"write {value.strip().lower()} without quotes"
        else:
            fix = "write true or false, without quotes"
        raise self.reject(field, value, "true or false", fix)

    def seconds(self, field: str, value: object, *, nullable: bool = False) -> float | None:
        """Return a finite number of seconds above 0 (or None, when ``nullable``)."""
        if value is None and nullable:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:
                number = math.inf
            if math.isfinite(number) and number > 0:
                return number
        expected = _SECONDS + (", or null for no limit" if nullable else "")
        if isinstance(value, str) and _is_number(value):
            fix = f"write {value.strip()} without quotes"
        else:
            fix = "write a number of seconds, e.g. 30"
        raise self.reject(field, value, expected, fix)

    def transport(self, field: str, value: object) -> Transport:
        """Return a transport from any accepted spelling."""
        if isinstance(value, str) and value.strip().lower() in TRANSPORT_SPELLINGS:
            return TRANSPORT_SPELLINGS[value.strip().lower()]
        raise self.reject(
            field,
            value,
            'one of "stdio", "http", "websocket" (also read: "sse", "streamable-http",'
            ' "streamableHttp", "ws")',
            "leave it out: trimcp infers it from command (stdio) or the url's scheme",
        )

    def url(self, field: str, value: object) -> str:
        """Return a URL with an http, https, ws or wss scheme and a host.

        A URL holding ``${`` is checked only after expansion, at connect time.
        """
        expected = 'an http://, https://, ws:// or wss:// URL, e.g. "https://example.com/mcp"'
        # Stripped: a stray space pasted with the URL is no reason to fail at connect time.
        url = self.text(field, value, expected).strip()
        if "${" in url:
            return url
        try:
            parts = urlsplit(url)
            scheme, host = parts.scheme.lower(), parts.hostname
        except ValueError:
            scheme, host = "", None
        shown = _USERINFO.sub("//***@", url)  # a password in the URL is not repeated
        if scheme not in URL_SCHEMES:
            raise self.reject(field, shown, expected, _scheme_fix(url, scheme))
        if not host:
            raise self.reject(
                field, shown, expected, "add the host: e.g. https://localhost:8000/mcp"
            )
        return url


def split_words(text: str) -> list[str]:
    """Split a command line the way a POSIX shell would; plain whitespace if quotes are off."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _scheme_fix(url: str, scheme: str) -> str:
    if not scheme or "://" not in url:
        return f"write the scheme too, e.g. https://{url.strip().lstrip('/')}"
    if scheme in ("file", "stdio", "unix"):
        return 'to launch a local server, use "command" instead of "url"'
    return "use http:// or https:// for Streamable HTTP, ws:// or wss:// for WebSocket"


def _quote_fix(value: object, what: str) -> str:
    if isinstance(value, str):
        return f"write {what} that is not empty"
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return f"write {what}, e.g. {json.dumps(' '.join(value))}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"put it in double quotes: {json.dumps(str(value))}"
    return f"write {what}"


def _map_fix(value: object, example: str) -> str:
    if isinstance(value, list) and value and all(isinstance(i, str) and "=" in i for i in value):
        # The names only: the values after "=" are the secrets themselves.
        pairs = {item.split("=", 1)[0]: "..." for item in value}
        return f"write it as an object: {json.dumps(pairs)}"
    return f"write e.g. {example}"


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
