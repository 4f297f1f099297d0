"""Find the configuration file and load it: the one entry point the rest of trimcp uses."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ._files import absolute_path, read_config_files
from ._settings import SysConfig
from ._validate import build_config

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

CONFIG_ENV_VAR = "TRIMCP_CONFIG"
"""The environment variable naming the configuration file when no path is given."""

DEFAULT_CONFIG_FILE = "sys_config.toml"
"""The file looked for in the current directory when neither a path nor the variable is set."""


def find_config_file(
    path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> Path | None:
    """Return the file :func:`load_config` would read, or None when it would use defaults.

    The first of these wins: ``path``; the file named by ``TRIMCP_CONFIG`` (when set and not
    empty); ``sys_config.toml`` in the current directory, if it exists. An explicitly named
    file is returned even when it does not exist, so that loading it reports the mistake.
    The path is made absolute against the current directory.

    Args:
        path: an explicit file, e.g. from the command line.
        environ: the environment to read ``TRIMCP_CONFIG`` from; ``os.environ`` if None.
    """
    return _choose(path, os.environ if environ is None else environ)[0]


def load_config(
    path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> SysConfig:
    """Read, merge and validate the configuration; see :func:`find_config_file` for which file.

    The file's ``include`` list is merged after it, recursively (see ``_files.py``). With no
    file at all, every setting has its default and ``sources`` is empty. Blocking file I/O:
    call it before ``trio.run``, or through ``trio.to_thread.run_sync``.

    Raises:
        ConfigError: a named file is missing or unreadable, a file is not valid TOML, the
            includes are wrong or cyclic, or a key or value is not accepted. The message
            names the file that wrote the offending key.
    """
    chosen, chosen_by = _choose(path, os.environ if environ is None else environ)
    if chosen is None:
        return SysConfig()
    merged = read_config_files(chosen, chosen_by=chosen_by)
    return build_config(merged.data, merged.origins, sources=tuple(merged.files))


def _choose(
    path: str | os.PathLike[str] | None, environ: Mapping[str, str]
) -> tuple[Path | None, str]:
    if path is not None:
        return absolute_path(path), "named explicitly (e.g. on the command line)"
    # An empty variable counts as unset, the way shells make `TRIMCP_CONFIG= trimcp ...` read.
    from_env = environ.get(CONFIG_ENV_VAR, "")
    if from_env:
        return absolute_path(from_env), f"named by the {CONFIG_ENV_VAR} environment variable"
    local = absolute_path(DEFAULT_CONFIG_FILE)
    if local.exists():
        return local, f"found as ./{DEFAULT_CONFIG_FILE} in the current directory"
    return None, "not found"
