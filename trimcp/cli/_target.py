"""What a command's TARGET names: a configured server, a Python file, a module, a URL or a command.

::

    trimcp tools demo                     a server of the mcpServers files (or [upstreams])
    trimcp tools demo.py                  the one MCPServer in demo.py (or demo.py:name)
    trimcp tools myapp.server:server      an MCPServer (or a function returning one) by module
    trimcp tools http://127.0.0.1:8000/mcp
    trimcp tools -- node server.js        a command speaking MCP on stdin/stdout

A Python target is served by a child process, ``python -m trimcp run TARGET --stdio`` with
this interpreter, so that the user's module runs in its own process (its prints, its
crashes and its imports stay there) and the command talks to it as to any stdio server.

:func:`parse_target` only classifies the text; it does not touch the file system beyond
asking whether a ``.py`` path exists, so that a typo in a configured server's name is not
mistaken for a file.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, final

from trimcp.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trimcp.config.mcp_servers import ServerConfig

__all__ = ["Target", "TargetKind", "parse_target"]

TargetKind = Literal["configured", "file", "module", "url", "command"]

# package.module:attribute, each part a Python identifier.
_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_URL_SCHEMES = ("http://", "https://", "ws://", "wss://")
# Programs that run the server named by their first argument: that argument names the server.
_LAUNCHERS = re.compile(r"^(python[0-9.]*|node|npx|uvx|uv|bunx?|deno|pipx|docker|java)$")


@final
@dataclass(frozen=True, slots=True)
class Target:
    """A classified TARGET.

    Attributes:
        kind: what the text names.
        text: the TARGET as given (for ``command``: the command line joined by spaces).
        name: the server's name in listings and qualified tool names: a configured server's
            own name, a file's stem, a module's last part, a URL's host, a command's
            program name.
        path: the file (absolute) for ``file``; None otherwise.
        attribute: the ``:name`` part of a ``file`` or ``module`` target, if given.
        command: the program and its arguments, for ``command``.
    """

    kind: TargetKind
    text: str
    name: str
    path: Path | None = None
    attribute: str | None = None
    command: tuple[str, ...] = ()

    @property
    def is_python(self) -> bool:
        """A file or a module: something ``trimcp run`` can serve."""
        return self.kind in ("file", "module")

    def run_spec(self) -> str:
        """The TARGET as ``trimcp run`` takes it: an absolute file path (with ``:name``) or
        ``module:attribute``."""
        if self.kind == "file" and self.path is not None:
            return f"{self.path}:{self.attribute}" if self.attribute else str(self.path)
        if self.kind == "module":
            return self.text
        raise ValueError(f"{self.text!r} is not a Python target")

    def server_config(self, *, cwd: str | None = None) -> ServerConfig:
        """The upstream definition that reaches this target (not for ``configured``).

        A Python target becomes ``<this python> -m trimcp run <spec> --stdio``, started in
        ``cwd`` (default: the current folder), so that its relative imports and files work
        as when the user runs it.
        """
        from trimcp.config.mcp_servers import ServerConfig

        here = cwd if cwd is not None else os.getcwd()
        if self.is_python:
            return ServerConfig(
                name=self.name,
                transport="stdio",
                command=sys.executable,
                args=("-m", "trimcp", "run", self.run_spec(), "--stdio"),
                cwd=here,
            )
        if self.kind == "url":
            transport: Literal["http", "websocket"] = (
                "websocket" if self.text.startswith(("ws://", "wss://")) else "http"
            )
            return ServerConfig(name=self.name, transport=transport, url=self.text)
        if self.kind == "command":
            return ServerConfig(
                name=self.name,
                transport="stdio",
                command=self.command[0],
                args=self.command[1:],
                cwd=here,
            )
        raise ValueError(f"{self.text!r} names a configured server, not a definition")


def parse_target(text: str | None, command: Sequence[str] = ()) -> Target:
    """Classify a TARGET (``command``: the words after ``--``, which win when given).

    Raises:
        ConfigError: both a TARGET and a command were given, neither was, or a ``.py``
            file does not exist; the message says what to write instead.
    """
    if command:
        if text:
            raise ConfigError(f"give either a TARGET ({text!r}) or a command after --, not both")
        words = tuple(command)
        return Target("command", " ".join(words), _command_name(words), command=words)
    if not text:
        raise ConfigError(
            "no TARGET: name a configured server, a file.py, a module:object, a URL, "
            "or a command after --"
        )
    if text.startswith(_URL_SCHEMES):
        from urllib.parse import urlsplit

        host = urlsplit(text).hostname or "server"
        return Target("url", text, _safe_name(host))
    file, colon, attribute = text.rpartition(":") if ".py:" in text else (text, "", "")
    if file.endswith(".py"):
        path = Path(file).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"no such Python file: {file} (looked in {Path.cwd()}); give the path to "
                "the file that defines your server, e.g. trimcp run ./server.py"
            )
        name = attribute or path.stem
        if colon and not attribute.isidentifier():
            raise ConfigError(
                f"{text!r}: after the colon comes the name of the server object in "
                f"{file}, e.g. {file}:server"
            )
        return Target("file", text, _safe_name(name), path.resolve(), attribute or None)
    if _MODULE.match(text):
        module, _, attribute = text.partition(":")
        return Target("module", text, _safe_name(module.rpartition(".")[2]), None, attribute)
    return Target("configured", text, text)


def _command_name(words: Sequence[str]) -> str:
    """``node server.js`` -> ``server``; ``npx -y @scope/server-x`` -> ``server-x``;
    ``my-server --port 1`` -> ``my-server``."""
    program = Path(words[0]).name
    if _LAUNCHERS.match(program):
        for word in words[1:]:
            if not word.startswith("-") and word not in ("run", "exec", "-m"):
                return _safe_name(Path(word.rpartition("/")[2]).stem or program)
    return _safe_name(program)


def _safe_name(text: str) -> str:
    """A server name from free text: letters, digits, ``-`` and ``_`` (the rest become ``-``),
    without ``__``, which separates the parts of a qualified tool name."""
    cleaned = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_-]+", "-", text)).strip("-_")
    return cleaned or "server"
