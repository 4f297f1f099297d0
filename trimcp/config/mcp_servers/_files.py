"""Find the MCP server config files, read them, and merge them into one ClientConfig.

Which files, lowest layer first (a later layer overrides an earlier one):

- **sys_config** (only when asked, ``sys_config=PATH``): the ``[upstreams.NAME]`` tables of
  the daemon's sys_config.toml; its other tables are left to ``trimcp.config``.
- **user**: the first file that exists of ``$XDG_CONFIG_HOME/trimcp/mcp.json``, then
  ``mcp.toml``, ``mcp.yaml``, ``mcp.yml`` in that folder (``XDG_CONFIG_HOME`` unset, empty or
  relative means ``~/.config``, on every OS), then ``~/.trimcp/mcp.json`` (and ``.toml``,
  ``.yaml``, ``.yml``), the short spelling for people who keep dot-folders.
- **project**: the first that exists of ``./.mcp.json`` (the file Claude Code reads, so one
  project file serves both) and ``./mcp.json``, in the current directory only.

An explicit list of paths (the CLI's repeatable ``--config``) replaces the user and project
files; those files are read in order, a later one overriding an earlier one, and each must
exist. The format follows the suffix: ``.toml``, ``.yaml``/``.yml``, anything else JSON.

Merging is by server name and whole entries: a later file's ``github`` replaces an earlier
``github`` completely (its fields are not mixed in), keeping the name's place in the order.
The one exception is an entry holding only ``enabled`` / ``disabled`` / ``auto_connect``: it
switches the earlier definition on or off, so a project can turn off a user-wide server with
``"github": {"enabled": false}``.

Every problem of every file is collected before anything is raised. Reading is blocking
file I/O: call it before ``trio.run`` or through ``trio.to_thread.run_sync``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, final

from ._errors import ConfigProblem, config_error, render_problems
from ._expand import expandable_fields, references, unset_problem
from ._model import INLINE, ClientConfig, ConfigSource, ServerConfig
from ._parse import ParsedFile, parse_servers
from ._syntax import format_of, parse_document

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ._entry import Toggle

CONFIG_FILE_NAMES = ("mcp.json", "mcp.toml", "mcp.yaml", "mcp.yml")
"""The names looked for in each user config folder, in order."""

PROJECT_FILE_NAMES = (".mcp.json", "mcp.json")
"""The names looked for in the current directory, in order."""

PathLike = str | os.PathLike[str]


@final
@dataclass(frozen=True, slots=True)
class ConfigReport:
    """Everything reading the configuration found, for ``trimcp config check``.

    Attributes:
        config: the servers that loaded without an error, merged; its ``warnings`` are the
            warnings below.
        errors: what stops the configuration from loading, in file order.
        warnings: what was ignored or may fail at connect time.
    """

    config: ClientConfig
    errors: tuple[ConfigProblem, ...]
    warnings: tuple[ConfigProblem, ...]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors

    def render(self) -> str:
        """Return every error and warning as text for people, or "" when there is none."""
        return render_problems((*self.errors, *self.warnings))

    def raise_for_errors(self) -> ClientConfig:
        """Return ``config``, or raise ConfigError describing every problem if there are errors."""
        if self.errors:
            raise config_error((*self.errors, *self.warnings))
        return self.config


def user_config_candidates(
    *, environ: Mapping[str, str] | None = None, home: PathLike | None = None
) -> tuple[Path, ...]:
    """Return the user config files looked for, in order; the first that exists is read."""
    environ = os.environ if environ is None else environ
    home_dir = Path.home() if home is None else Path(home)
    xdg = environ.get("XDG_CONFIG_HOME", "")
    # The XDG Base Directory spec: a relative path in the variable is invalid and ignored.
    config_home = Path(xdg) if xdg and Path(xdg).is_absolute() else home_dir / ".config"
    folders = (config_home / "trimcp", home_dir / ".trimcp")
    return tuple(folder / name for folder in folders for name in CONFIG_FILE_NAMES)


def project_config_candidates(cwd: PathLike | None = None) -> tuple[Path, ...]:
    """Return the project config files looked for, in order; the first that exists is read."""
    folder = Path.cwd() if cwd is None else Path(cwd)
    return tuple(folder / name for name in PROJECT_FILE_NAMES)


def default_config_sources(
    *,
    environ: Mapping[str, str] | None = None,
    home: PathLike | None = None,
    cwd: PathLike | None = None,
) -> tuple[ConfigSource, ...]:
    """Return the user file and the project file that exist (zero, one or two sources)."""
    found: list[ConfigSource] = []
    user = _first_file(user_config_candidates(environ=environ, home=home))
    if user is not None:
        found.append(ConfigSource(str(user), "user"))
    project = _first_file(project_config_candidates(cwd))
    if project is not None:
        found.append(ConfigSource(str(project), "project"))
    return tuple(found)


def inspect_client_config(
    paths: Sequence[PathLike] | None = None,
    *,
    sys_config: PathLike | None = None,
    environ: Mapping[str, str] | None = None,
    home: PathLike | None = None,
    cwd: PathLike | None = None,
) -> ConfigReport:
    """Read and merge the configuration, and report every problem instead of raising.

    Args:
        paths: files to read instead of the user and project files, later ones winning;
            relative paths start at ``cwd``.
        sys_config: the daemon's sys_config.toml, read first for its ``[upstreams]``.
        environ: for the default file locations and for the unset-variable warnings;
            ``os.environ`` if None.
        home: the home folder; ``Path.home()`` if None.
        cwd: the current directory, where the project file is looked for.
    """
    environ = os.environ if environ is None else environ
    base = Path.cwd() if cwd is None else Path(cwd)
    sources: list[ConfigSource] = []
    if sys_config is not None:
        sources.append(ConfigSource(str(_absolute(base, sys_config)), "sys_config"))
    if paths is None:
        sources.extend(default_config_sources(environ=environ, home=home, cwd=base))
    else:
        sources.extend(ConfigSource(str(_absolute(base, path)), "explicit") for path in paths)
    return read_config_sources(sources, environ=environ)


def load_client_config(
    paths: Sequence[PathLike] | None = None,
    *,
    sys_config: PathLike | None = None,
    environ: Mapping[str, str] | None = None,
    home: PathLike | None = None,
    cwd: PathLike | None = None,
) -> ClientConfig:
    """Read and merge the configuration; see :func:`inspect_client_config` for the arguments.

    With no file at all the result has no servers, which is not an error.

    Raises:
        ConfigError: any file is unreadable, not valid JSON/TOML/YAML, or holds an entry
            with an error. The message lists every problem of every file (warnings too).
    """
    report = inspect_client_config(
        paths, sys_config=sys_config, environ=environ, home=home, cwd=cwd
    )
    return report.raise_for_errors()


def read_config_sources(
    sources: Sequence[ConfigSource], *, environ: Mapping[str, str] | None = None
) -> ConfigReport:
    """Read the files ``sources`` name, in order, merge them and report every problem."""
    parsed = [_read_file(source) for source in sources]
    return _report(parsed, tuple(sources), os.environ if environ is None else environ)


def client_config_from_mapping(
    data: Mapping[str, object],
    *,
    environ: Mapping[str, str] | None = None,
    source: ConfigSource = INLINE,
) -> ClientConfig:
    """Build a ClientConfig from a mapping given in code, e.g. ``{"mcpServers": {...}}``.

    Raises:
        ConfigError: the mapping holds an entry with an error.
    """
    # A dict as given, so that anything else (a list by mistake) is reported, not converted.
    parsed = parse_servers(data if isinstance(data, dict) else _as_dict(data), source)
    report = _report([parsed], (), os.environ if environ is None else environ)
    return report.raise_for_errors()


def _report(
    parsed: Sequence[ParsedFile], sources: tuple[ConfigSource, ...], environ: Mapping[str, str]
) -> ConfigReport:
    problems = [problem for each in parsed for problem in each.problems]
    servers, merge_problems = merge_files(parsed)
    problems.extend(merge_problems)
    problems.extend(unset_variables(servers.values(), environ))
    warnings = tuple(problem for problem in problems if problem.severity == "warning")
    errors = tuple(problem for problem in problems if problem.severity == "error")
    return ConfigReport(ClientConfig(servers, sources, warnings), errors, warnings)


def merge_files(
    parsed: Iterable[ParsedFile],
) -> tuple[dict[str, ServerConfig], list[ConfigProblem]]:
    """Merge files' servers by name, lowest layer first; apply each toggle to what precedes it."""
    servers: dict[str, ServerConfig] = {}
    problems: list[ConfigProblem] = []
    for each in parsed:
        servers.update(each.servers)
        for toggle in each.toggles.values():
            base = servers.get(toggle.name)
            if base is None:
                problems.append(_toggle_without_server(toggle))
            else:
                servers[toggle.name] = _switch(base, toggle)
    return servers, problems


def unset_variables(
    servers: Iterable[ServerConfig], environ: Mapping[str, str]
) -> list[ConfigProblem]:
    """Warn about each ``${NAME}`` without a default whose variable is unset, per enabled server."""
    return [
        unset_problem(server, field, reference.name)
        for server in servers
        if server.enabled
        for field, text in expandable_fields(server)
        for reference in references(text)
        if reference.default is None and reference.name not in environ
    ]


def _switch(base: ServerConfig, toggle: Toggle) -> ServerConfig:
    enabled = base.enabled if toggle.enabled is None else toggle.enabled
    auto_connect = base.auto_connect if toggle.auto_connect is None else toggle.auto_connect
    return dataclasses.replace(base, enabled=enabled, auto_connect=auto_connect)


def _toggle_without_server(toggle: Toggle) -> ConfigProblem:
    return ConfigProblem(
        source=toggle.source,
        server=toggle.name,
        detail=(
            "no transport configured: this entry only switches enabled/auto_connect, which"
            " changes a server an earlier file defines, and no earlier file defines it",
        ),
        expected='"command" (a program to launch) or "url" (a running server to connect to)',
        fix='add "command" (with "args") or "url" to define the server here, or correct the'
        " name to match the earlier file's",
    )


def _read_file(source: ConfigSource) -> ParsedFile:
    path = Path(source.path or "")
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ParsedFile(problems=[_unreadable(source, exc)])
    fmt = format_of(path)
    data, problem = parse_document(text, fmt, source)
    if problem is not None:
        return ParsedFile(problems=[problem])
    return parse_servers(data, source, fmt=fmt)


def _unreadable(source: ConfigSource, exc: OSError | UnicodeDecodeError) -> ConfigProblem:
    if isinstance(exc, UnicodeDecodeError):
        reason = f"it is not UTF-8 text (byte {exc.start})"
        fix = "save the file as UTF-8"
    else:
        reason = exc.strerror or str(exc)
        fix = "check the path and the file's permissions"
        if source.layer == "explicit":
            fix = "check the path given with --config, and the file's permissions"
    return ConfigProblem(source=source, detail=(f"cannot read the file: {reason}",), fix=fix)


def _as_dict(data: object) -> object:
    # Reading files yields dicts; a Mapping given in code (MappingProxyType) counts as one.
    return dict(data) if isinstance(data, Mapping) else data


def _first_file(candidates: Iterable[Path]) -> Path | None:
    return next((path for path in candidates if path.is_file()), None)


def _absolute(base: Path, path: PathLike) -> Path:
    # Lexically, like os.path.abspath, so that messages name the path as given, normalised.
    return Path(os.path.normpath(base / Path(path)))
