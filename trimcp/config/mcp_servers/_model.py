"""Upstream server definitions as frozen values, and the diff a reload acts on.

A :class:`ServerConfig` is one entry of an ``mcpServers`` (or ``servers`` / ``[upstreams]``)
table after validation, still *raw*: ``${VAR}`` references are kept as written, so that two
loads of the same files compare equal whatever the environment holds. They are expanded only
at connect time (``_expand.expand_server``). Equality, hashing and
:meth:`ServerConfig.fingerprint` cover every field except ``source``: moving a definition
from the user file to the project file does not make it "changed".

This module holds no parsing and no I/O; ``_parse`` builds these values and
``_files`` finds and merges the files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, final

from ._source import INLINE as INLINE
from ._source import ConfigSource as ConfigSource
from ._source import Layer as Layer

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._auth import ServerAuth
    from ._errors import ConfigProblem

Transport = Literal["stdio", "http", "websocket"]
"""How trimcp reaches a server: launch ``command`` and talk over its stdin/stdout, or dial
``url`` with Streamable HTTP (legacy HTTP+SSE servers included) or WebSocket."""

DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds from launch or dial to a finished initialize handshake. Servers started with
``npx``/``uvx`` may download a package first, so this is generous."""

DEFAULT_REQUEST_TIMEOUT = 60.0
"""Seconds a request waits for its response; the MCP TypeScript SDK's default as well."""

REDACTED = "***"
"""What is shown instead of an ``env`` or ``headers`` value."""

#: The fields whose values are credentials: their keys are shown, never their values.
SECRET_FIELDS = ("env", "headers")


def redact_values(values: Mapping[str, str]) -> dict[str, str]:
    """Return ``values`` with every value replaced by ``REDACTED`` (the keys are kept)."""
    return dict.fromkeys(values, REDACTED)


def _no_entries() -> Mapping[str, str]:
    return MappingProxyType({})


@final
@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ServerConfig:
    """One upstream MCP server: how to reach it, and how patient to be with it.

    ``env`` and ``headers`` are read-only copies of what was given. Values may hold
    ``${VAR}`` / ``${VAR:-default}`` references until expanded.

    Attributes:
        name: the key of the entry; tools appear as ``mcp__<name>__<tool>``.
        transport: "stdio" when ``command`` is set; for ``url``, "websocket" for ws:// and
            wss://, else "http", unless the entry named a transport.
        command: the program to launch (stdio only), without its arguments.
        args: the arguments after ``command``.
        env: variables set for the launched program, on top of a sanitised environment.
        env_passthrough: names of variables copied from trimcp's own environment.
        cwd: the launched program's working directory; None means trimcp's.
        url: where to dial (http and websocket only).
        headers: extra HTTP headers sent on every request and the WebSocket upgrade.
        enabled: False keeps the definition but never connects it. Default True.
        auto_connect: False leaves it to an explicit ``connect(name)``. Default True.
        startup_timeout: seconds for launch or dial plus the initialize handshake.
            Default 30.
        request_timeout: seconds a request waits for its response. Default 60.
        reset_timeout_on_progress: a progress notification for a request restarts its
            ``request_timeout``. Default True.
        max_request_timeout: seconds a request may take in all, progress or not; None
            (the default) sets no cap.
        always_allow: names of this server's tools that a host calls without asking, even
            when the server marks them destructive (``alwaysAllow`` / ``autoApprove`` in the
            files other hosts read). Exact names, as the server spells them. Default none.
        auth: how requests to an http server are authorized (``OAuthSettings``,
            ``ClientCredentialsSettings``); None: by ``headers`` alone. Its secrets are shown
            as ``***``.
        source: where the definition was read; not part of equality or the fingerprint.
    """

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=_no_entries)
    env_passthrough: tuple[str, ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=_no_entries)
    enabled: bool = True
    auto_connect: bool = True
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    reset_timeout_on_progress: bool = True
    max_request_timeout: float | None = None
    always_allow: tuple[str, ...] = ()
    auth: ServerAuth | None = None
    source: ConfigSource = field(default=INLINE, compare=False)

    def __post_init__(self) -> None:
        # Copies, so that a caller mutating its dict afterwards cannot change a frozen value.
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env_passthrough", tuple(self.env_passthrough))
        object.__setattr__(self, "always_allow", tuple(self.always_allow))

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def __repr__(self) -> str:
        # Every field as the dataclass repr would show it, but env and headers values as
        # ``***``: a config in a log line or a traceback must not carry its credentials.
        parts = []
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name in SECRET_FIELDS:
                value = redact_values(value)
            parts.append(f"{item.name}={value!r}")  # auth's own repr hides its secrets
        return f"ServerConfig({', '.join(parts)})"

    def shown(self) -> dict[str, object]:
        """Return ``definition()`` with ``env`` and ``headers`` values (and ``auth``'s
        secrets) as ``***``.

        What any display of a server's configuration (a listing, ``config show``, a log
        line) uses: which variables and headers are set stays visible, their values do not.
        """
        values = self.definition()
        for key in SECRET_FIELDS:
            values[key] = redact_values(getattr(self, key))
        if self.auth is not None:
            values["auth"] = self.auth.shown()
        return values

    def definition(self) -> dict[str, object]:
        """Return every field but ``name`` and ``source`` as plain JSON-ready values.

        With the ``env`` and ``headers`` values as they are: for comparing, never for
        showing (``shown`` is for that).
        """
        values: dict[str, object] = {}
        for item in dataclasses.fields(self):
            if item.name in ("name", "source"):
                continue
            value = getattr(self, item.name)
            if isinstance(value, MappingProxyType):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            elif item.name == "auth" and self.auth is not None:
                value = self.auth.to_json()
            values[item.name] = value
        return values

    def fingerprint(self) -> str:
        """Return a hex digest that changes exactly when the definition does.

        Stable across processes and Python versions (canonical JSON, SHA-256), so a host may
        save it to tell, after a restart, whether a server's definition changed meanwhile.
        """
        canonical = json.dumps(
            {"name": self.name, **self.definition()},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@final
@dataclass(frozen=True, slots=True)
class ClientConfig:
    """The merged server definitions of every file read, and what was worth a warning.

    Attributes:
        servers: definitions by name, in the order names first appeared.
        sources: every file read, lowest layer first.
        warnings: problems that did not stop loading (ignored keys, unset variables).
    """

    servers: Mapping[str, ServerConfig]
    sources: tuple[ConfigSource, ...] = ()
    warnings: tuple[ConfigProblem, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", MappingProxyType(dict(self.servers)))


@final
@dataclass(frozen=True, slots=True)
class ConfigDiff:
    """Which server names a reload must act on; every name is in exactly one set."""

    added: frozenset[str]
    removed: frozenset[str]
    changed: frozenset[str]
    unchanged: frozenset[str]


def diff_configs(
    old: Mapping[str, ServerConfig] | ClientConfig, new: Mapping[str, ServerConfig] | ClientConfig
) -> ConfigDiff:
    """Compare two sets of definitions by name.

    A server is changed when any field but ``source`` differs, raw (unexpanded) values
    compared; a change in the environment alone changes nothing here.
    """
    before = old.servers if isinstance(old, ClientConfig) else old
    after = new.servers if isinstance(new, ClientConfig) else new
    common = before.keys() & after.keys()
    changed = frozenset(name for name in common if before[name] != after[name])
    return ConfigDiff(
        added=frozenset(after.keys() - before.keys()),
        removed=frozenset(before.keys() - after.keys()),
        changed=changed,
        unchanged=frozenset(common - changed),
    )
