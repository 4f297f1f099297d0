"""The environment a launched MCP server gets: a short safe list, then what the user asked for.

A server started over stdio is someone else's program. Handing it trimcp's whole environment
would hand it every API key and token the host happens to hold, so it starts from a short
list of variables that programs need to find things and that hold no secrets, as the official
MCP SDKs do (python-sdk ``mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS``, typescript-sdk
``getDefaultEnvironment``), then adds what the configuration names:

1. the safe keys below that the parent has, except values starting with ``()``: that is how
   bash exports functions (``BASH_FUNC_x%%=() { ...; }``, the Shellshock vector), and no
   variable on the list legitimately starts that way;
2. ``env_passthrough``: each name listed is copied from the parent as is, when it is set;
3. ``env``: explicit values, which win over both.

Beyond the SDKs' lists we keep the locale (``LANG``, ``LANGUAGE``, ``LC_*``) and ``TMPDIR`` on
POSIX: neither is a secret, and without the locale a server may fall back to ASCII and mangle
non-ASCII file names or print its errors in the wrong language; macOS gives each user a
private ``TMPDIR``. On Windows we add ``COMSPEC`` (``.cmd``/``.bat`` servers such as ``npx``
run through ``cmd``) and ``PROGRAMFILES`` (the TypeScript SDK keeps it; Node tooling looks
there). Windows variable names are case-insensitive, so there keys match regardless of case
and one spelling survives per name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

POSIX_SAFE_KEYS: tuple[str, ...] = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
)
"""Variables a POSIX server inherits by default; every ``LC_*`` variable is kept as well."""

WINDOWS_SAFE_KEYS: tuple[str, ...] = (
    "APPDATA",
    "COMSPEC",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
)
"""Variables a Windows server inherits by default (matched case-insensitively)."""

# The prefix bash gives exported functions' values.
_FUNCTION_PREFIX = "()"


def safe_keys(platform: str) -> tuple[str, ...]:
    """Return the default key list for ``platform`` (a ``sys.platform`` value)."""
    return WINDOWS_SAFE_KEYS if platform == "win32" else POSIX_SAFE_KEYS


def child_environment(
    parent: Mapping[str, str],
    env: Mapping[str, str],
    passthrough: Sequence[str],
    platform: str,
) -> dict[str, str]:
    """Return the environment for a server process: safe keys, then passthrough, then ``env``.

    Args:
        parent: trimcp's own environment (``os.environ``).
        env: explicit values from the server's configuration; they win.
        passthrough: names copied from ``parent`` as they are, when set there.
        platform: ``sys.platform`` of the machine the server runs on; ``"win32"`` selects the
            Windows key list and case-insensitive names.
    """
    windows = platform == "win32"
    result = _Environment(case_insensitive=windows)
    for key, value in _safe_items(parent, windows=windows):
        result.set(key, value)
    lookup = _Environment(case_insensitive=windows)
    for key, value in parent.items():
        lookup.set(key, value)
    for name in passthrough:
        found = lookup.get(name)
        if found is not None:
            result.set(found[0], found[1])
    for key, value in env.items():
        result.set(key, value)
    return result.as_dict()


def _safe_items(parent: Mapping[str, str], *, windows: bool) -> Iterable[tuple[str, str]]:
    """Yield the parent's variables on the default list, skipping exported functions."""
    wanted = {key.upper() if windows else key for key in safe_keys("win32" if windows else "")}
    for key, value in parent.items():
        name = key.upper() if windows else key
        if value.startswith(_FUNCTION_PREFIX):
            continue
        if name in wanted or (not windows and name.startswith("LC_")):
            yield key, value


class _Environment:
    """A dict of variables whose names compare without case on Windows (last spelling wins)."""

    __slots__ = ("_case_insensitive", "_items")

    def __init__(self, *, case_insensitive: bool) -> None:
        self._case_insensitive = case_insensitive
        self._items: dict[str, tuple[str, str]] = {}

    def _key(self, name: str) -> str:
        return name.upper() if self._case_insensitive else name

    def set(self, name: str, value: str) -> None:
        self._items[self._key(name)] = (name, value)

    def get(self, name: str) -> tuple[str, str] | None:
        return self._items.get(self._key(name))

    def as_dict(self) -> dict[str, str]:
        return dict(self._items.values())


def variable(environment: Mapping[str, str], name: str, platform: str) -> str | None:
    """Return ``environment[name]``, ignoring the case of names on Windows; None when unset."""
    if platform != "win32":
        return environment.get(name)
    wanted = name.upper()
    found = [value for key, value in environment.items() if key.upper() == wanted]
    return found[-1] if found else None
