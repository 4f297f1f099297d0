"""The layout shared by every plain-language launch and exit error of a stdio server.

One block per error, meant to be printed to a person as is::

    MCP server "files" could not be started: command "npx" was not found
      config:   /home/me/.config/trimcp/mcp.json (user config)
      command:  npx -y @modelcontextprotocol/server-filesystem /tmp
      searched: /usr/local/bin
                /usr/bin
      likely causes:
        - ...
      how to fix:
        - ...

The labelled lines align like the blocks of ``trimcp.config.mcp_servers._errors``, so
configuration and launch errors read alike. Command lines are quoted as a POSIX shell would
take them, and values of arguments that look like secrets (``--token=...``, ``--api-key X``,
``API_KEY=...``) are shown as ``REDACTED``: these messages end up in logs and bug reports.
Environment values are never shown. Everything here is pure.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

# Labels are padded to one width so that the values line up (as in _config_errors).
_LABEL_WIDTH = len("searched: ")
_INDENT = "  "

# An argument name (without leading dashes) that probably introduces a secret.
_SECRET_NAME = re.compile(
    r"(?i)(token|secret|passw(or)?d|passphrase|api[-_]?key|access[-_]?key|auth|credential)"
)
_REDACTED = "REDACTED"

#: What stands for an ``env`` value wherever one would be shown (as in the configuration's
#: own ``repr``): the name is kept, the value never.
HIDDEN = "***"

# Arguments longer than this are cut in messages.
_MAX_ARGUMENT = 120


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchContext:
    """What an error message says about the server being launched.

    Attributes:
        server: the server's configured name.
        source: where it was defined (e.g. ``ConfigSource.describe()``), or None if unknown.
        argv: the command and its arguments, as configured (before resolution).
        platform: the ``sys.platform`` the server runs on; selects Windows hints.
    """

    server: str
    source: str | None
    argv: tuple[str, ...]
    platform: str

    @property
    def program(self) -> str:
        """The configured command, without arguments."""
        return self.argv[0] if self.argv else ""

    def command_line(self) -> str:
        """Return the command line for a message, on one line: shell-quoted, secrets hidden.

        Newlines show as ``\\n`` and an argument over ``_MAX_ARGUMENT`` characters (an
        inline script, say) is cut, so the message keeps its shape.
        """
        shown = [_shorten(argument) for argument in redact_arguments(self.argv)]
        return shlex.join(shown).replace("\r", "\\r").replace("\n", "\\n")

    def report(
        self,
        summary: str,
        *,
        facts: Sequence[tuple[str, Sequence[str]]] = (),
        blocks: Sequence[tuple[str, Sequence[str]]] = (),
        causes: Sequence[str] = (),
        fixes: Sequence[str] = (),
    ) -> str:
        """Return an error block: summary line, labelled facts, quoted blocks, causes, fixes.

        Args:
            summary: the first line, after ``MCP server "NAME" ``.
            facts: ``(label, lines)`` pairs, after the config source and the command line;
                further lines align under the first.
            blocks: ``(heading, lines)`` pairs shown with a ``|`` gutter (the server's output).
            causes: what probably went wrong, most likely first.
            fixes: what to do about it.
        """
        lines = [f"MCP server {_quoted(self.server)} {summary}"]
        known: list[tuple[str, Sequence[str]]] = []
        if self.source is not None:
            known.append(("config", (self.source,)))
        known.append(("command", (self.command_line(),)))
        for label, values in (*known, *facts):
            lines.extend(_labelled(label, values))
        for heading, body in blocks:
            lines.append(f"{_INDENT}{heading}:")
            lines.extend(f"{_INDENT * 2}| {line}" for line in body)
        for heading, items in (("likely causes", causes), ("how to fix", fixes)):
            if items:
                lines.append(f"{_INDENT}{heading}:")
                lines.extend(f"{_INDENT * 2}- {item}" for item in items)
        return "\n".join(lines)


def redact_arguments(argv: Sequence[str]) -> list[str]:
    """Return ``argv`` with the values of secret-looking arguments replaced by ``REDACTED``.

    ``--token=X`` and ``API_KEY=X`` keep their name; after a bare ``--token`` or
    ``--api-key`` flag the next argument is hidden. The command itself is kept.
    """
    shown: list[str] = []
    hide_next = False
    for index, argument in enumerate(argv):
        if hide_next:
            shown.append(_REDACTED)
            hide_next = False
            continue
        name, equals, _ = argument.partition("=")
        if index and equals and _SECRET_NAME.search(name):
            shown.append(f"{name}={_REDACTED}")
            continue
        hide_next = bool(index and argument.startswith("-") and _SECRET_NAME.search(argument))
        shown.append(argument)
    return shown


def _labelled(label: str, values: Iterable[str]) -> list[str]:
    out: list[str] = []
    for index, value in enumerate(values):
        head = f"{label}: " if index == 0 else ""
        out.append(f"{_INDENT}{head:<{_LABEL_WIDTH}}{value}".rstrip())
    if not out:
        out.append(f"{_INDENT}{label}:")
    return out


def _shorten(argument: str) -> str:
    if len(argument) <= _MAX_ARGUMENT:
        return argument
    rest = len(argument) - _MAX_ARGUMENT
    return f"{argument[:_MAX_ARGUMENT]}... ({rest} more characters)"


def _quoted(text: str) -> str:
    """Return ``text`` in double quotes (the config files are JSON, so JSON's quoting)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
