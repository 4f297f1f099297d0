"""Reading the ``WWW-Authenticate`` challenges of a 401 or 403 (pure).

RFC 9110 section 11.6.1 gives the grammar: a header holds one or more challenges separated
by commas, each an auth scheme followed by either a ``token68`` or comma-separated
``name=value`` parameters, the value a token or a quoted string. The commas make the list
ambiguous to split naively (``Bearer realm="a", error="b", Basic realm="c"``), so the
parser walks it: after a comma, a token followed by ``=`` is another parameter, any other
token starts the next challenge.

What MCP needs from the ``Bearer`` challenge (RFC 6750 section 3, RFC 9728 section 5.1):
``resource_metadata`` (where the Protected Resource Metadata lives), ``scope`` (the scopes
to ask for, authoritative per MCP 2025-11-25, Basic > Authorization > Scope Selection
Strategy) and ``error`` (``insufficient_scope`` on a 403 asks for a step-up).

Never raises: an unreadable header yields what could be read before the fault.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#protected-resource-metadata-discovery-requirements
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["BearerChallenge", "Challenge", "bearer_challenge", "parse_challenges"]

# RFC 9110 section 5.6.2: token = 1*tchar
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110 section 11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_TOKEN68: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SPACE: Final = re.compile(r"[ \t]*")
# Bounds what one header may make the parser hold: a challenge is a few hundred bytes.
_MAX_HEADER: Final = 16 * 1024


@final
@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (lower-cased), parameters (names lower-cased) or token68."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class BearerChallenge:
    """What a ``Bearer`` challenge asks for.

    Attributes:
        error: the RFC 6750 error code (``invalid_token``, ``insufficient_scope``, ...).
        error_description: the server's words about it, for a person.
        scopes: the scopes the server wants, in its order (empty: it named none).
        resource_metadata: the URL of the Protected Resource Metadata document.
    """

    error: str | None = None
    error_description: str | None = None
    scopes: tuple[str, ...] = ()
    resource_metadata: str | None = None


def parse_challenges(header: str) -> list[Challenge]:
    """Return every challenge in one ``WWW-Authenticate`` value, in order."""
    return _Parser(header[:_MAX_HEADER]).challenges()


def bearer_challenge(headers: Iterable[str]) -> BearerChallenge | None:
    """Return the first ``Bearer`` challenge among ``headers`` (each a header value)."""
    for header in headers:
        for challenge in parse_challenges(header):
            if challenge.scheme == "bearer":
                params = challenge.params
                scope = params.get("scope", "")
                return BearerChallenge(
                    error=params.get("error") or None,
                    error_description=params.get("error_description") or None,
                    scopes=tuple(dict.fromkeys(scope.split())),
                    resource_metadata=params.get("resource_metadata") or None,
                )
    return None


@final
class _Parser:
    """A cursor over one header value (module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def challenges(self) -> list[Challenge]:
        found: list[Challenge] = []
        while True:
            self._skip_separators()
            scheme = self._match(_TOKEN)
            if scheme is None:
                return found  # the end, or a fault: keep what was read
            found.append(self._challenge(scheme.lower()))

    def _challenge(self, scheme: str) -> Challenge:
        spaced = self._match(_SPACE)
        if not spaced or self._at_end() or self._peek() == ",":
            return Challenge(scheme)
        params: dict[str, str] = {}
        first = self._param()
        if first is None:
            token68 = self._match(_TOKEN68)
            self._match(_SPACE)
            if not (self._at_end() or self._peek() == ","):
                token68 = None  # a malformed parameter, not a token68
            return Challenge(scheme, token68=token68)
        params.setdefault(*first)
        while True:
            start = self.pos
            self._match(_SPACE)
            if self._peek() != ",":
                return Challenge(scheme, params)
            self._skip_separators()
            param = self._param()
            if param is None:
                self.pos = start  # not a parameter: the next challenge begins here
                return Challenge(scheme, params)
            params.setdefault(*param)  # RFC 9110: each name at most once; the first counts

    def _param(self) -> tuple[str, str] | None:
        """Read ``name BWS = BWS value``; None (position unchanged) if that is not next."""
        start = self.pos
        name = self._match(_TOKEN)
        self._match(_SPACE)
        if name is None or self._peek() != "=":
            self.pos = start
            return None
        self.pos += 1
        self._match(_SPACE)
        value = self._quoted() if self._peek() == '"' else self._match(_TOKEN)
        if value is None:
            self.pos = start
            return None
        return name.lower(), value

    def _quoted(self) -> str | None:
        """Read a quoted string (RFC 9110 section 5.6.4), undoing its backslash escapes."""
        text = self.text
        index = self.pos + 1
        chars: list[str] = []
        while index < len(text):
            char = text[index]
            if char == '"':
                self.pos = index + 1
                return "".join(chars)
            if char == "\\" and index + 1 < len(text):
                index += 1
                char = text[index]
            chars.append(char)
            index += 1
        return None  # unterminated

    def _skip_separators(self) -> None:
        while True:
            self._match(_SPACE)
            if self._peek() != ",":
                return
            self.pos += 1

    def _match(self, pattern: re.Pattern[str]) -> str | None:
        found = pattern.match(self.text, self.pos)
        if found is None or (not found.group() and pattern is not _SPACE):
            return None
        self.pos = found.end()
        return found.group()

    def _peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def _at_end(self) -> bool:
        return self.pos >= len(self.text)
